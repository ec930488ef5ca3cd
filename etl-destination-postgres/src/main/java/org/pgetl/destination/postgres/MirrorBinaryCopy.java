package org.pgetl.destination.postgres;

import java.math.BigDecimal;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.sql.SQLException;
import java.time.Instant;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.time.ZoneOffset;
import java.time.temporal.ChronoField;
import java.util.Arrays;
import java.util.List;
import java.util.Objects;
import java.util.UUID;
import org.jspecify.annotations.Nullable;
import org.pgetl.destination.postgres.MirrorCatalog.Column;
import org.pgetl.model.PgNumeric;
import org.pgetl.model.TableRow;
import org.pgetl.model.TableRow.WireFormat;
import org.postgresql.copy.CopyIn;

/**
 * Writes copy batches in {@code COPY ... (FORMAT binary)} for {@link MirrorRows#copy}: each value
 * goes in the binary form its type's receive function reads, so neither side formats or parses
 * text.
 *
 * <p>A value that arrived in its binary wire form ({@link TableRow#wireFormat} {@code BINARY}: a
 * copied row's value) in a column that {@link MirrorCatalog#passesBinaryThrough} passes goes in as
 * it is, its length then its bytes, never decoded. Any other value is encoded from its Java value,
 * which only columns of the types below can do, with the Java classes pgetl decodes them to; a
 * batch with a value neither way can write (a column of another type without its binary wire form,
 * a value of another class) is copied as text. A column that the target stores as {@code text}
 * because it lacks the source's type takes the value's text form, which is {@code text}'s binary
 * form too.
 *
 * <p>{@code int2}, {@code int4}, {@code int8}, {@code bool}, {@code float4}, {@code float8}, {@code
 * numeric} (also NaN and ±Infinity), {@code text}, {@code varchar}, {@code json}, {@code jsonb}
 * (version byte 1, then the text), {@code uuid}, {@code bytea}, {@code date}, {@code timestamp} and
 * {@code timestamptz} (±infinity from the {@code MAX}/{@code MIN} sentinels).
 */
final class MirrorBinaryCopy {
  private static final int BOOL = 16;
  private static final int BYTEA = 17;
  private static final int INT8 = 20;
  private static final int INT2 = 21;
  private static final int INT4 = 23;
  private static final int TEXT = 25;
  private static final int JSON = 114;
  private static final int FLOAT4 = 700;
  private static final int FLOAT8 = 701;
  private static final int VARCHAR = 1043;
  private static final int DATE = 1082;
  private static final int TIMESTAMP = 1114;
  private static final int TIMESTAMPTZ = 1184;
  private static final int NUMERIC = 1700;
  private static final int UUID_OID = 2950;
  private static final int JSONB = 3802;

  /** Not an oid: a column {@link #storedAsText stored as text}. */
  private static final int AS_TEXT = -1;

  /** Seconds from 1970-01-01 to PostgreSQL's epoch, 2000-01-01. */
  private static final long PG_EPOCH_SECONDS = 946_684_800L;

  private static final long PG_EPOCH_DAYS = 10_957L;

  private static final byte[] HEADER = {
    'P', 'G', 'C', 'O', 'P', 'Y', '\n', (byte) 0xff, '\r', '\n', 0, 0, 0, 0, 0, 0, 0, 0, 0
  };

  private static final int CHUNK = 1 << 20;

  private MirrorBinaryCopy() {}

  /** The text form of a value, as a text {@code COPY} would write it. */
  interface TextForm {
    /**
     * Returns the text form of a value of a column.
     *
     * @param c the column
     * @param value the value, not null
     * @return its text
     */
    String of(Column c, Object value);
  }

  /**
   * Whether a column is stored as {@code text} because the target lacks the source's type (an enum,
   * a domain, a composite of the source): its values go in their text form, which is also text's
   * binary form.
   */
  static boolean storedAsText(Column c) {
    return "text".equals(c.targetType()) && !"text".equals(c.sourceType());
  }

  /**
   * Whether every column can be written in binary: its wire form passes through ({@code
   * passThrough}), it is {@link #storedAsText stored as text}, or it has an encoder here and the
   * target column has the source's type.
   */
  static boolean supports(List<Column> columns, boolean[] passThrough) {
    if (columns.isEmpty()) {
      return false;
    }
    for (int i = 0; i < passThrough.length; i++) {
      Column c = columns.get(i);
      if (!passThrough[i]
          && !storedAsText(c)
          && (!c.targetType().equals(c.sourceType()) || expected(c.typeOid()) == null)) {
        return false;
      }
    }
    return true;
  }

  /**
   * Whether every non-null value passes through, goes into a column stored as text, or has the
   * class its column's encoder takes; reads (decodes) only the values of the last kind.
   */
  static boolean accepts(List<Column> columns, boolean[] passThrough, List<TableRow> rows) {
    Class<?>[] classes = new Class<?>[columns.size()];
    boolean[] anyClass = new boolean[columns.size()];
    for (int i = 0; i < classes.length; i++) {
      classes[i] = expected(columns.get(i).typeOid());
      anyClass[i] = storedAsText(columns.get(i));
    }
    for (TableRow row : rows) {
      for (int i = 0; i < classes.length; i++) {
        if (row.isNull(i)
            || anyClass[i]
            || (passThrough[i] && row.wireFormat(i) == WireFormat.BINARY)) {
          continue;
        }
        Object v = row.get(i);
        if (v != null && v.getClass() != classes[i]) {
          return false;
        }
      }
    }
    return true;
  }

  private static @Nullable Class<?> expected(int typeOid) {
    return switch (typeOid) {
      case BOOL -> Boolean.class;
      case BYTEA -> byte[].class;
      case INT8 -> Long.class;
      case INT2 -> Short.class;
      case INT4 -> Integer.class;
      case TEXT, VARCHAR, JSON, JSONB -> String.class;
      case FLOAT4 -> Float.class;
      case FLOAT8 -> Double.class;
      case DATE -> LocalDate.class;
      case TIMESTAMP -> LocalDateTime.class;
      case TIMESTAMPTZ -> Instant.class;
      case NUMERIC -> PgNumeric.class;
      case UUID_OID -> UUID.class;
      default -> null;
    };
  }

  /**
   * Sends the rows in binary COPY format, the values of {@code passThrough} columns that have their
   * binary wire form as they are, and the values of columns {@link #storedAsText stored as text} in
   * the form {@code text} gives; the caller started the COPY and ends it.
   */
  static void write(
      CopyIn in, List<Column> columns, boolean[] passThrough, TextForm text, List<TableRow> rows)
      throws SQLException {
    Out out = new Out(in);
    out.bytes(HEADER);
    int[] types = new int[columns.size()];
    for (int i = 0; i < types.length; i++) {
      types[i] = storedAsText(columns.get(i)) ? AS_TEXT : columns.get(i).typeOid();
    }
    for (TableRow row : rows) {
      out.ensure(2);
      out.int16(types.length);
      for (int i = 0; i < types.length; i++) {
        if (row.isNull(i)) {
          out.ensure(4);
          out.int32(-1);
        } else if (passThrough[i] && row.wireFormat(i) == WireFormat.BINARY) {
          ByteBuffer wire = Objects.requireNonNull(row.wireValue(i), "a value in wire form");
          out.ensure(4);
          out.int32(wire.remaining());
          out.bytes(wire);
        } else if (types[i] == AS_TEXT) {
          Object v = Objects.requireNonNull(row.get(i), "a value not null");
          variable(out, text.of(columns.get(i), v).getBytes(StandardCharsets.UTF_8), false);
        } else {
          value(out, types[i], Objects.requireNonNull(row.get(i), "a value not null"));
        }
      }
    }
    out.ensure(2);
    out.int16(-1);
    out.flush();
  }

  private static void value(Out out, int type, Object v) throws SQLException {
    switch (type) {
      case BOOL -> {
        fixed(out, 1);
        out.buf[out.pos++] = (byte) (((Boolean) v) ? 1 : 0);
      }
      case INT2 -> fixed(out, 2).int16((Short) v);
      case INT4 -> fixed(out, 4).int32((Integer) v);
      case INT8 -> fixed(out, 8).int64((Long) v);
      case FLOAT4 -> fixed(out, 4).int32(Float.floatToIntBits((Float) v));
      case FLOAT8 -> fixed(out, 8).int64(Double.doubleToLongBits((Double) v));
      case DATE -> fixed(out, 4).int32(days((LocalDate) v));
      case TIMESTAMP -> fixed(out, 8).int64(micros((LocalDateTime) v));
      case TIMESTAMPTZ -> fixed(out, 8).int64(micros((Instant) v));
      case UUID_OID -> {
        UUID u = (UUID) v;
        fixed(out, 16).int64(u.getMostSignificantBits());
        out.int64(u.getLeastSignificantBits());
      }
      case BYTEA -> variable(out, (byte[]) v, false);
      case JSONB -> variable(out, ((String) v).getBytes(StandardCharsets.UTF_8), true);
      case NUMERIC -> numeric(out, (PgNumeric) v);
      default -> variable(out, ((String) v).getBytes(StandardCharsets.UTF_8), false);
    }
  }

  /** Writes a field's length and makes room for its bytes. */
  private static Out fixed(Out out, int length) throws SQLException {
    out.ensure(4 + length);
    out.int32(length);
    return out;
  }

  private static void variable(Out out, byte[] bytes, boolean jsonbVersion) throws SQLException {
    int length = bytes.length + (jsonbVersion ? 1 : 0);
    out.ensure(5);
    out.int32(length);
    if (jsonbVersion) {
      out.buf[out.pos++] = 1;
    }
    out.bytes(bytes);
  }

  private static int days(LocalDate d) {
    if (d.equals(LocalDate.MAX)) {
      return Integer.MAX_VALUE;
    }
    if (d.equals(LocalDate.MIN)) {
      return Integer.MIN_VALUE;
    }
    return Math.toIntExact(d.toEpochDay() - PG_EPOCH_DAYS);
  }

  private static long micros(LocalDateTime t) {
    if (t.equals(LocalDateTime.MAX)) {
      return Long.MAX_VALUE;
    }
    if (t.equals(LocalDateTime.MIN)) {
      return Long.MIN_VALUE;
    }
    return (t.toEpochSecond(ZoneOffset.UTC) - PG_EPOCH_SECONDS) * 1_000_000L
        + t.getLong(ChronoField.MICRO_OF_SECOND);
  }

  private static long micros(Instant i) {
    if (i.equals(Instant.MAX)) {
      return Long.MAX_VALUE;
    }
    if (i.equals(Instant.MIN)) {
      return Long.MIN_VALUE;
    }
    return (i.getEpochSecond() - PG_EPOCH_SECONDS) * 1_000_000L + i.getNano() / 1_000;
  }

  /**
   * numeric's binary form: digit count, weight (of the first base-10000 digit), sign, display
   * scale, then the base-10000 digits without leading or trailing zero digits.
   */
  private static void numeric(Out out, PgNumeric n) throws SQLException {
    int special =
        switch (n.kind()) {
          case NAN -> 0xC000;
          case POSITIVE_INFINITY -> 0xD000;
          case NEGATIVE_INFINITY -> 0xF000;
          default -> -1;
        };
    if (special >= 0) {
      fixed(out, 8).int16(0);
      out.int16(0);
      out.int16(special);
      out.int16(0);
      return;
    }
    BigDecimal d = n.bigDecimalValue();
    if (d.scale() < 0) {
      d = d.setScale(0);
    }
    int dscale = d.scale();
    String plain = d.abs().toPlainString();
    int dot = plain.indexOf('.');
    String whole = dot < 0 ? plain : plain.substring(0, dot);
    String fraction = dot < 0 ? "" : plain.substring(dot + 1);
    int wholeGroups = (whole.length() + 3) / 4;
    int fractionGroups = (fraction.length() + 3) / 4;
    String padded =
        "0".repeat(wholeGroups * 4 - whole.length())
            + whole
            + fraction
            + "0".repeat(fractionGroups * 4 - fraction.length());
    int[] digits = new int[wholeGroups + fractionGroups];
    for (int g = 0; g < digits.length; g++) {
      digits[g] = Integer.parseInt(padded, g * 4, g * 4 + 4, 10);
    }
    int weight = wholeGroups - 1;
    int first = 0;
    while (first < digits.length && digits[first] == 0) {
      first++;
      weight--;
    }
    int last = digits.length;
    while (last > first && digits[last - 1] == 0) {
      last--;
    }
    int[] kept = Arrays.copyOfRange(digits, first, last);
    if (kept.length == 0) {
      weight = 0;
    }
    fixed(out, 8 + 2 * kept.length).int16(kept.length);
    out.int16(weight);
    out.int16(d.signum() < 0 ? 0x4000 : 0);
    out.int16(dscale);
    for (int digit : kept) {
      out.int16(digit);
    }
  }

  /** A buffer sent to the COPY whenever it fills. */
  private static final class Out {
    final CopyIn in;
    final byte[] buf = new byte[CHUNK];
    int pos;

    Out(CopyIn in) {
      this.in = in;
    }

    /** Makes room for {@code n} bytes (at most the buffer's size). */
    void ensure(int n) throws SQLException {
      if (pos + n > buf.length) {
        flush();
      }
    }

    void flush() throws SQLException {
      if (pos > 0) {
        in.writeToCopy(buf, 0, pos);
        pos = 0;
      }
    }

    void bytes(byte[] b) throws SQLException {
      if (pos + b.length > buf.length) {
        flush();
        if (b.length > buf.length) {
          in.writeToCopy(b, 0, b.length);
          return;
        }
      }
      System.arraycopy(b, 0, buf, pos, b.length);
      pos += b.length;
    }

    void bytes(ByteBuffer b) throws SQLException {
      int n = b.remaining();
      if (pos + n > buf.length) {
        flush();
        if (n > buf.length) {
          byte[] whole = new byte[n];
          b.get(whole);
          in.writeToCopy(whole, 0, n);
          return;
        }
      }
      b.get(buf, pos, n);
      pos += n;
    }

    void int16(int v) {
      buf[pos++] = (byte) (v >>> 8);
      buf[pos++] = (byte) v;
    }

    void int32(int v) {
      buf[pos++] = (byte) (v >>> 24);
      buf[pos++] = (byte) (v >>> 16);
      buf[pos++] = (byte) (v >>> 8);
      buf[pos++] = (byte) v;
    }

    void int64(long v) {
      int32((int) (v >>> 32));
      int32((int) v);
    }
  }
}
