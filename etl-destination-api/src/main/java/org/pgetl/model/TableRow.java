package org.pgetl.model;

import java.math.BigDecimal;
import java.time.Instant;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.time.LocalTime;
import java.time.OffsetTime;
import java.util.AbstractList;
import java.util.Arrays;
import java.util.List;
import java.util.UUID;
import org.jspecify.annotations.Nullable;

/**
 * The values of one row, in the order of {@link ReplicatedTableSchema#columns()}.
 *
 * <p>Each value is the Java value of its column type as {@code docs/types.md} lists it (for example
 * {@code Long} for {@code int8}, {@link PgNumeric} for {@code numeric}, {@link Instant} for {@code
 * timestamptz}), or null for SQL NULL. The typed getters cast and say which column did not match.
 * Immutable and safe to share between threads.
 */
// its signatures carry @Nullable of org.jspecify, read at compile time only (requires static)
@SuppressWarnings("exports")
public final class TableRow {
  private final @Nullable Object[] values;
  private final long sizeHintBytes;

  private TableRow(@Nullable Object[] values, long sizeHintBytes) {
    this.values = values;
    this.sizeHintBytes = sizeHintBytes;
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
    return values.length;
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
    return values[index];
  }

  /**
   * Returns true when the value at a column index is SQL NULL.
   *
   * @param index the column index
   * @return whether the value is null
   */
  public boolean isNull(int index) {
    return values[index] == null;
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
        return values[index];
      }

      @Override
      public int size() {
        return values.length;
      }
    };
  }

  private <T> @Nullable T typed(int index, Class<T> type) {
    Object v = values[index];
    if (v == null) {
      return null;
    }
    if (!type.isInstance(v)) {
      throw new ClassCastException(
          "column "
              + index
              + " holds a "
              + v.getClass().getSimpleName()
              + ", not a "
              + type.getSimpleName());
    }
    return type.cast(v);
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
    return o instanceof TableRow other && Arrays.deepEquals(values, other.values);
  }

  @Override
  public int hashCode() {
    return Arrays.deepHashCode(values);
  }

  /** Returns the column count only: rows may hold personal data, which must not reach logs. */
  @Override
  public String toString() {
    return "TableRow[" + values.length + " values]";
  }
}
