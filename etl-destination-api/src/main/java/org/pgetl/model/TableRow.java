package org.pgetl.model;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.math.BigDecimal;
import java.nio.ByteBuffer;
import java.time.Instant;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.time.LocalTime;
import java.time.OffsetTime;
import java.util.AbstractList;
import java.util.Arrays;
import java.util.List;
import java.util.Objects;
import java.util.UUID;
import org.jspecify.annotations.Nullable;
import org.pgetl.destination.internal.WireDecoder;
import org.pgetl.destination.internal.WireRows;

/**
 * The values of one row, in the order of {@link ReplicatedTableSchema#columns()}.
 *
 * <p>Each value is the Java value of its column type as {@code docs/types.md} lists it (for example
 * {@code Long} for {@code int8}, {@link PgNumeric} for {@code numeric}, {@link Instant} for {@code
 * timestamptz}), or null for SQL NULL. The typed getters cast and say which column did not match.
 * Immutable and safe to share between threads.
 *
 * <h2>Rows decoded when read</h2>
 *
 * The rows the engine hands out (copied rows and the rows of change events) keep the bytes
 * PostgreSQL sent and decode a value only when it is first read ({@link #get}, a typed getter,
 * {@link #values()}, {@link #equals}); the value is then kept, so each is decoded at most once and
 * every reader gets the same instance. {@link #isNull}, {@link #size}, {@link #wireFormat} and
 * {@link #wireValue} never decode. A destination that passes values through in PostgreSQL's own
 * form (a binary {@code COPY} into PostgreSQL, a text format) reads {@link #wireValue} and never
 * pays for the Java objects.
 *
 * <p>A row owns its bytes: it stays valid for as long as the destination keeps it, after its batch
 * or event is answered too. It is safe to read from several threads; two threads that read an
 * unread value at the same moment may both decode it, and both then get the instance that was kept
 * first. A value that cannot be decoded (which only a pgetl bug or a corrupt server would produce)
 * throws an {@link org.pgetl.error.EtlException} of kind {@code INVALID_DATA} naming the column,
 * from the getter that read it.
 */
// its signatures carry @Nullable of org.jspecify, read at compile time only (requires static)
@SuppressWarnings("exports")
public final class TableRow {
  /**
   * The form in which PostgreSQL sent a value: its text form (what {@code SELECT} prints with
   * pgetl's session settings: {@code DateStyle=ISO}, {@code TimeZone=UTC}, {@code
   * extra_float_digits=3}, {@code bytea_output=hex}, UTF-8) or its binary form (the type's {@code
   * send} function, as in {@code COPY ... (FORMAT binary)}). See {@link #wireValue(int)}.
   */
  public enum WireFormat {
    /** The type's text form, UTF-8. */
    TEXT,
    /** The type's binary form, as its {@code send} function writes it. */
    BINARY
  }

  private static final VarHandle VALUE = MethodHandles.arrayElementVarHandle(Object[].class);
  private static final VarHandle DECODED;

  static {
    try {
      DECODED = MethodHandles.lookup().findVarHandle(TableRow.class, "decoded", Object[].class);
    } catch (ReflectiveOperationException e) {
      throw new ExceptionInInitializerError(e);
    }
    WireRows.register(TableRow::new);
  }

  private final int size;
  private final long sizeHintBytes;
  // a row of Java values: the values; null for a row of wire bytes
  private final @Nullable Object @Nullable [] values;
  // a row of wire bytes: the bytes, each value's span in them from spanBase on (WireRows.NULL for
  // NULL; the span array may be shared with the rows read before and after), the decoder
  private final byte @Nullable [] bytes;
  private final long @Nullable [] spans;
  private final int spanBase;
  private final @Nullable WireDecoder decoder;

  // a row of wire bytes: the values read so far (null until the first), through DECODED
  @SuppressWarnings("unused") // read and written through DECODED
  private @Nullable Object @Nullable [] decoded;

  private TableRow(@Nullable Object[] values, long sizeHintBytes) {
    this.size = values.length;
    this.values = values;
    this.sizeHintBytes = sizeHintBytes;
    this.bytes = null;
    this.spans = null;
    this.spanBase = 0;
    this.decoder = null;
  }

  private TableRow(
      byte[] bytes, long[] spans, int spanBase, int size, WireDecoder decoder, long sizeHintBytes) {
    this.size = size;
    this.values = null;
    this.sizeHintBytes = sizeHintBytes;
    this.bytes = bytes;
    this.spans = spans;
    this.spanBase = spanBase;
    this.decoder = decoder;
  }

  /**
   * Creates a row from values (copied).
   *
   * @param values the values in column order; nulls for SQL NULL
   * @return the row
   */
  public static TableRow of(@Nullable Object... values) {
    @Nullable Object[] copy = values.clone();
    return new TableRow(copy, estimateSize(copy));
  }

  /**
   * Creates a row from a list of values (copied).
   *
   * @param values the values in column order; nulls for SQL NULL
   * @return the row
   */
  public static TableRow ofList(List<?> values) {
    @Nullable Object[] copy = values.toArray();
    return new TableRow(copy, estimateSize(copy));
  }

  /**
   * Creates a row that takes ownership of an array without copying it; the caller must not change
   * the array afterwards. Meant for decoders on the hot path.
   *
   * @param values the values in column order; nulls for SQL NULL
   * @param sizeHintBytes an estimate of the row's size in memory, used to size batches
   * @return the row
   */
  public static TableRow wrap(@Nullable Object[] values, long sizeHintBytes) {
    return new TableRow(values, sizeHintBytes);
  }

  private static long estimateSize(@Nullable Object[] values) {
    long size = 16 + 8L * values.length;
    for (Object v : values) {
      if (v instanceof String s) {
        size += 40 + s.length();
      } else if (v instanceof byte[] b) {
        size += 16 + b.length;
      } else if (v != null) {
        size += 24;
      }
    }
    return size;
  }

  /**
   * Returns the number of values.
   *
   * @return the column count
   */
  public int size() {
    return size;
  }

  /**
   * Returns an estimate of the row's size in memory, used to bound batches by bytes.
   *
   * @return the estimated size in bytes
   */
  public long sizeHintBytes() {
    return sizeHintBytes;
  }

  /**
   * Returns the value at a column index.
   *
   * @param index the index into the schema's published columns
   * @return the value, or null for SQL NULL
   */
  public @Nullable Object get(int index) {
    Object[] v = values;
    if (v != null) {
      return v[index];
    }
    Object[] d = (Object[]) DECODED.getAcquire(this);
    if (d != null) {
      // a value read before (the array has the row's size, so this checks the index too)
      Object kept = VALUE.getAcquire(d, index);
      if (kept != null) {
        return kept;
      }
    }
    long span = span(index);
    return span == WireRows.NULL ? null : decode(d, index, span);
  }

  // the span of a value of a row of wire bytes (bounds-checked against the row, not the array)
  private long span(int index) {
    if (index < 0 || index >= size) {
      throw new IndexOutOfBoundsException("column " + index + " of a row of " + size);
    }
    return requireWire(spans)[spanBase + index];
  }

  private @Nullable Object decode(@Nullable Object @Nullable [] read, int index, long span) {
    @Nullable Object[] d = read;
    if (d == null) {
      @Nullable Object[] fresh = new Object[size];
      d = (Object[]) DECODED.compareAndExchange(this, null, fresh);
      if (d == null) {
        d = fresh;
      }
    }
    WireDecoder wd = decoder;
    byte[] b = bytes;
    if (wd == null || b == null) {
      throw new IllegalStateException("a row of Java values has no wire bytes");
    }
    Object v = wd.decode(index, b, WireRows.offset(span), WireRows.length(span));
    // volatile, not release only: a thread whose exchange fails returns the other thread's value,
    // and must see that value's contents (a byte[] has no final fields to publish them)
    Object kept = VALUE.compareAndExchange(d, index, null, v);
    return kept == null ? v : kept;
  }

  private static <T> T requireWire(@Nullable T part) {
    if (part == null) {
      throw new IllegalStateException("a row of Java values has no wire bytes");
    }
    return part;
  }

  /**
   * Returns the form in which PostgreSQL sent a value, when the row still has it: rows the engine
   * hands out do, rows made from Java values ({@link #of}, {@link #ofList}, {@link #wrap}) do not.
   * Copied rows carry most values in {@link WireFormat#BINARY} (the text form for types without a
   * binary decoder); the rows of change events carry {@link WireFormat#TEXT} (pgoutput's text
   * mode), or {@link WireFormat#BINARY} with {@code PipelineConfig.pgoutputBinary}.
   *
   * @param index the column index
   * @return the form, or null when the row has no wire bytes or the value is SQL NULL
   */
  public @Nullable WireFormat wireFormat(int index) {
    WireDecoder d = decoder;
    if (d == null) {
      Objects.checkIndex(index, size);
      return null;
    }
    return span(index) == WireRows.NULL ? null : d.format(index);
  }

  /**
   * Returns a value's bytes as PostgreSQL sent them, in {@link #wireFormat(int)}, without decoding
   * it: a read-only buffer over the row's own bytes, positioned at the value's first byte and
   * limited after its last, valid for as long as the row. For a pass-through: the binary form goes
   * into a binary {@code COPY} of the same type as it is (a field's length, then these bytes).
   *
   * @param index the column index
   * @return the bytes, or null when the row has no wire bytes or the value is SQL NULL
   */
  public @Nullable ByteBuffer wireValue(int index) {
    byte[] b = bytes;
    if (b == null) {
      Objects.checkIndex(index, size);
      return null;
    }
    long span = span(index);
    if (span == WireRows.NULL) {
      return null;
    }
    return ByteBuffer.wrap(b, WireRows.offset(span), WireRows.length(span))
        .slice()
        .asReadOnlyBuffer();
  }

  /**
   * Returns true when the value at a column index is SQL NULL.
   *
   * @param index the column index
   * @return whether the value is null
   */
  public boolean isNull(int index) {
    Object[] v = values;
    return v != null ? v[index] == null : span(index) == WireRows.NULL;
  }

  /**
   * Returns the values as an unmodifiable list (nulls included).
   *
   * @return the values
   */
  public List<@Nullable Object> values() {
    return new AbstractList<>() {
      @Override
      public @Nullable Object get(int index) {
        return TableRow.this.get(index);
      }

      @Override
      public int size() {
        return size;
      }
    };
  }

  private <T> @Nullable T typed(int index, Class<T> type) {
    Object v = get(index);
    if (v == null) {
      return null;
    }
    if (!type.isInstance(v)) {
      throw notA(index, v, type);
    }
    return type.cast(v);
  }

  // kept out of typed(), which stays small enough to inline into each getter
  private static ClassCastException notA(int index, Object v, Class<?> type) {
    return new ClassCastException(
        "column "
            + index
            + " holds a "
            + v.getClass().getSimpleName()
            + ", not a "
            + type.getSimpleName());
  }

  /**
   * Returns a text-like value ({@code text}, {@code varchar}, {@code json}, ...).
   *
   * @param index the column index
   * @return the string, or null
   */
  public @Nullable String getString(int index) {
    return typed(index, String.class);
  }

  /**
   * Returns a {@code bool} value.
   *
   * @param index the column index
   * @return the boolean, or null
   */
  public @Nullable Boolean getBoolean(int index) {
    return typed(index, Boolean.class);
  }

  /**
   * Returns an {@code int2} value.
   *
   * @param index the column index
   * @return the short, or null
   */
  public @Nullable Short getShort(int index) {
    return typed(index, Short.class);
  }

  /**
   * Returns an {@code int4} value.
   *
   * @param index the column index
   * @return the integer, or null
   */
  public @Nullable Integer getInt(int index) {
    return typed(index, Integer.class);
  }

  /**
   * Returns an {@code int8} or {@code oid} value.
   *
   * @param index the column index
   * @return the long, or null
   */
  public @Nullable Long getLong(int index) {
    return typed(index, Long.class);
  }

  /**
   * Returns a {@code float4} value.
   *
   * @param index the column index
   * @return the float, or null
   */
  public @Nullable Float getFloat(int index) {
    return typed(index, Float.class);
  }

  /**
   * Returns a {@code float8} value.
   *
   * @param index the column index
   * @return the double, or null
   */
  public @Nullable Double getDouble(int index) {
    return typed(index, Double.class);
  }

  /**
   * Returns a {@code numeric} value.
   *
   * @param index the column index
   * @return the numeric, or null
   */
  public @Nullable PgNumeric getNumeric(int index) {
    return typed(index, PgNumeric.class);
  }

  /**
   * Returns a finite {@code numeric} value as a {@link BigDecimal}.
   *
   * @param index the column index
   * @return the decimal, or null
   * @throws ArithmeticException when the value is NaN or infinite
   */
  public @Nullable BigDecimal getBigDecimal(int index) {
    PgNumeric n = getNumeric(index);
    return n == null ? null : n.bigDecimalValue();
  }

  /**
   * Returns a {@code bytea} value (a copy).
   *
   * @param index the column index
   * @return the bytes, or null
   */
  public byte @Nullable [] getBytes(int index) {
    byte[] b = typed(index, byte[].class);
    return b == null ? null : b.clone();
  }

  /**
   * Returns a {@code date} value ({@link LocalDate#MAX} / {@link LocalDate#MIN} for ±infinity).
   *
   * @param index the column index
   * @return the date, or null
   */
  public @Nullable LocalDate getDate(int index) {
    return typed(index, LocalDate.class);
  }

  /**
   * Returns a {@code time} value ({@link LocalTime#MAX} for {@code 24:00:00}).
   *
   * @param index the column index
   * @return the time, or null
   */
  public @Nullable LocalTime getTime(int index) {
    return typed(index, LocalTime.class);
  }

  /**
   * Returns a {@code timetz} value.
   *
   * @param index the column index
   * @return the time with offset, or null
   */
  public @Nullable OffsetTime getTimeTz(int index) {
    return typed(index, OffsetTime.class);
  }

  /**
   * Returns a {@code timestamp} value ({@link LocalDateTime#MAX} / {@link LocalDateTime#MIN} for
   * ±infinity).
   *
   * @param index the column index
   * @return the timestamp, or null
   */
  public @Nullable LocalDateTime getTimestamp(int index) {
    return typed(index, LocalDateTime.class);
  }

  /**
   * Returns a {@code timestamptz} value ({@link Instant#MAX} / {@link Instant#MIN} for ±infinity).
   *
   * @param index the column index
   * @return the instant, or null
   */
  public @Nullable Instant getInstant(int index) {
    return typed(index, Instant.class);
  }

  /**
   * Returns a {@code uuid} value.
   *
   * @param index the column index
   * @return the UUID, or null
   */
  public @Nullable UUID getUuid(int index) {
    return typed(index, UUID.class);
  }

  /**
   * Returns an {@code interval} value.
   *
   * @param index the column index
   * @return the interval, or null
   */
  public @Nullable PgInterval getInterval(int index) {
    return typed(index, PgInterval.class);
  }

  /**
   * Returns an array value.
   *
   * @param index the column index
   * @return the array, or null
   */
  public @Nullable PgArray getArray(int index) {
    return typed(index, PgArray.class);
  }

  /** Equal when both rows hold equal values (arrays of bytes compared by content). */
  @Override
  public boolean equals(@Nullable Object o) {
    return o instanceof TableRow other && Arrays.deepEquals(other.decodedValues(), decodedValues());
  }

  @Override
  public int hashCode() {
    return Arrays.deepHashCode(decodedValues());
  }

  // every value decoded
  private @Nullable Object[] decodedValues() {
    Object[] v = values;
    if (v != null) {
      return v;
    }
    @Nullable Object[] all = new Object[size];
    for (int i = 0; i < size; i++) {
      all[i] = get(i);
    }
    return all;
  }

  /** Returns the column count only: rows may hold personal data, which must not reach logs. */
  @Override
  public String toString() {
    return "TableRow[" + size + " values]";
  }
}
