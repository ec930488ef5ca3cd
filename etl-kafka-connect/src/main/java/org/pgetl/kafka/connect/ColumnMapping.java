package org.pgetl.kafka.connect;

import java.math.BigDecimal;
import java.math.RoundingMode;
import java.time.Instant;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.time.LocalTime;
import java.time.OffsetTime;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.time.temporal.ChronoField;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Objects;
import java.util.UUID;
import org.apache.kafka.connect.data.Decimal;
import org.apache.kafka.connect.data.Schema;
import org.apache.kafka.connect.data.SchemaBuilder;
import org.apache.kafka.connect.data.Struct;
import org.jspecify.annotations.Nullable;
import org.pgetl.error.ErrorKind;
import org.pgetl.error.EtlException;
import org.pgetl.model.ColumnSchema;
import org.pgetl.model.PgArray;
import org.pgetl.model.PgInterval;
import org.pgetl.model.PgNumeric;
import org.pgetl.model.PgText;

/**
 * How one column's Java values (see {@code docs/types.md}) become Connect values: the field's
 * schema and the conversion, chosen once per column from its type oid and modifier.
 *
 * <p>The semantic schema names are the ones Debezium's PostgreSQL connector uses, so that sinks and
 * converters that know them (JDBC sinks, the Avro converter's logical types) read our records as
 * they read Debezium's. Where a Java value has no exact Connect form (NaN in a {@code Decimal}, an
 * array with two dimensions in a Connect array), the conversion fails with {@link
 * ErrorKind#UNSUPPORTED_VALUE_IN_DESTINATION} naming the column and the setting that keeps it;
 * nothing is replaced by a made-up value.
 */
final class ColumnMapping {
  static final String JSON = "io.debezium.data.Json";
  static final String XML = "io.debezium.data.Xml";
  static final String UUID_NAME = "io.debezium.data.Uuid";
  static final String DATE = "io.debezium.time.Date";
  static final String MICRO_TIME = "io.debezium.time.MicroTime";
  static final String MICRO_TIMESTAMP = "io.debezium.time.MicroTimestamp";
  static final String ZONED_TIMESTAMP = "io.debezium.time.ZonedTimestamp";
  static final String ZONED_TIME = "io.debezium.time.ZonedTime";
  static final String INTERVAL = "io.debezium.time.Interval";
  static final String VARIABLE_SCALE_DECIMAL = "io.debezium.data.VariableScaleDecimal";

  /** 24:00:00 in microseconds: PostgreSQL's {@code time} includes the end of the day. */
  static final long END_OF_DAY_MICROS = 86_400_000_000L;

  /** How {@code numeric} values are written. */
  enum DecimalMode {
    /** Connect {@code Decimal} with the column's scale; a variable-scale struct without one. */
    PRECISE,
    /** The exact decimal text, {@code NaN} and {@code Infinity} included. */
    STRING,
    /** A {@code float64}: approximate, but every sink reads it. */
    DOUBLE
  }

  /** How array values are written. */
  enum ArrayMode {
    /** A Connect array of the element type (one dimension, lower bound 1). */
    ARRAY,
    /** PostgreSQL's text form, {@code {{1,2},{3,NULL}}}: any dimension and bounds. */
    STRING
  }

  /** Converts one non-null Java value to its Connect value. */
  @FunctionalInterface
  interface Conversion {
    Object apply(Object value);
  }

  private final Schema schema;
  private final Conversion conversion;

  private ColumnMapping(Schema schema, Conversion conversion) {
    this.schema = schema;
    this.conversion = conversion;
  }

  /** The field's schema. */
  Schema schema() {
    return schema;
  }

  /** Converts a value of the column; null stays null. */
  @Nullable Object convert(@Nullable Object value) {
    return value == null ? null : conversion.apply(value);
  }

  /**
   * Chooses the mapping of a column.
   *
   * @param table the table, for error messages
   * @param column the column
   * @param optional whether the field may be null
   * @param decimals how numeric values are written
   * @param arrays how array values are written
   */
  static ColumnMapping of(
      String table, ColumnSchema column, boolean optional, DecimalMode decimals, ArrayMode arrays) {
    String where = table + "." + column.name();
    int elementOid = ArrayTypes.elementOf(column.typeOid());
    boolean isArray = elementOid != 0 || column.typeName().endsWith("[]");
    if (isArray && arrays == ArrayMode.ARRAY) {
      ColumnMapping element = scalar(where, elementOid, column.typeModifier(), true, decimals);
      SchemaBuilder b = SchemaBuilder.array(element.schema);
      if (optional) {
        b.optional();
      }
      return new ColumnMapping(
          b.build(),
          v -> {
            PgArray a = (PgArray) v;
            if (a.dimensionCount() > 1 || !a.hasDefaultLowerBounds()) {
              throw unsupported(
                  where,
                  "an array with "
                      + a.dimensionCount()
                      + " dimensions and lower bounds "
                      + a.lowerBounds(),
                  "set array.handling.mode=string to write arrays in PostgreSQL's text form");
            }
            List<Object> out = new ArrayList<>(a.elements().size());
            for (Object e : a.elements()) {
              out.add(element.convert(e));
            }
            return out;
          });
    }
    if (isArray) {
      return new ColumnMapping(string(optional, null), ColumnMapping::text);
    }
    return scalar(where, column.typeOid(), column.typeModifier(), optional, decimals);
  }

  private static ColumnMapping scalar(
      String where, int oid, int typmod, boolean optional, DecimalMode decimals) {
    return switch (oid) {
      case 16 ->
          new ColumnMapping(
              optional ? Schema.OPTIONAL_BOOLEAN_SCHEMA : Schema.BOOLEAN_SCHEMA, v -> v);
      case 21 ->
          new ColumnMapping(optional ? Schema.OPTIONAL_INT16_SCHEMA : Schema.INT16_SCHEMA, v -> v);
      case 23 ->
          new ColumnMapping(optional ? Schema.OPTIONAL_INT32_SCHEMA : Schema.INT32_SCHEMA, v -> v);
      case 20, 26, 28, 29, 5069 ->
          new ColumnMapping(optional ? Schema.OPTIONAL_INT64_SCHEMA : Schema.INT64_SCHEMA, v -> v);
      case 700 ->
          new ColumnMapping(
              optional ? Schema.OPTIONAL_FLOAT32_SCHEMA : Schema.FLOAT32_SCHEMA, v -> v);
      case 701 ->
          new ColumnMapping(
              optional ? Schema.OPTIONAL_FLOAT64_SCHEMA : Schema.FLOAT64_SCHEMA, v -> v);
      case 17 ->
          new ColumnMapping(optional ? Schema.OPTIONAL_BYTES_SCHEMA : Schema.BYTES_SCHEMA, v -> v);
      case 1700 -> numeric(where, typmod, optional, decimals);
      case 1082 ->
          new ColumnMapping(named(SchemaBuilder.int32(), DATE, optional), ColumnMapping::date);
      case 1083 ->
          new ColumnMapping(
              named(SchemaBuilder.int64(), MICRO_TIME, optional), ColumnMapping::time);
      case 1114 ->
          new ColumnMapping(
              named(SchemaBuilder.int64(), MICRO_TIMESTAMP, optional), ColumnMapping::timestamp);
      case 1184 -> new ColumnMapping(string(optional, ZONED_TIMESTAMP), ColumnMapping::instant);
      case 1266 -> new ColumnMapping(string(optional, ZONED_TIME), ColumnMapping::timeTz);
      case 1186 -> new ColumnMapping(string(optional, INTERVAL), v -> interval((PgInterval) v));
      case 2950 -> new ColumnMapping(string(optional, UUID_NAME), v -> ((UUID) v).toString());
      case 114, 3802 -> new ColumnMapping(string(optional, JSON), v -> v);
      case 142 -> new ColumnMapping(string(optional, XML), v -> v);
      default -> {
        // text types, enums, network and geometric types, ranges, domains, extension types: their
        // text form (the Java value is that String already, or PgText prints it)
        yield new ColumnMapping(string(optional, null), v -> v instanceof String s ? s : text(v));
      }
    };
  }

  /** Returns PostgreSQL's text form of a value that is not null. */
  private static String text(Object value) {
    return Objects.requireNonNull(PgText.format(value), "only SQL NULL has no text form");
  }

  private static ColumnMapping numeric(
      String where, int typmod, boolean optional, DecimalMode mode) {
    if (mode == DecimalMode.STRING) {
      return new ColumnMapping(string(optional, null), Object::toString);
    }
    if (mode == DecimalMode.DOUBLE) {
      return new ColumnMapping(
          optional ? Schema.OPTIONAL_FLOAT64_SCHEMA : Schema.FLOAT64_SCHEMA,
          v -> numericDouble((PgNumeric) v));
    }
    int scale = numericScale(typmod);
    if (scale >= 0) {
      SchemaBuilder b = Decimal.builder(scale);
      b.parameter("connect.decimal.precision", Integer.toString(numericPrecision(typmod)));
      if (optional) {
        b.optional();
      }
      return new ColumnMapping(
          b.build(), v -> finite(where, (PgNumeric) v).setScale(scale, RoundingMode.UNNECESSARY));
    }
    SchemaBuilder b =
        SchemaBuilder.struct()
            .name(VARIABLE_SCALE_DECIMAL)
            .version(1)
            .doc("Variable scaled decimal")
            .field("scale", Schema.INT32_SCHEMA)
            .field("value", Schema.BYTES_SCHEMA);
    if (optional) {
      b.optional();
    }
    Schema s = b.build();
    return new ColumnMapping(
        s,
        v -> {
          BigDecimal d = finite(where, (PgNumeric) v);
          return new Struct(s)
              .put("scale", d.scale())
              .put("value", d.unscaledValue().toByteArray());
        });
  }

  /** The declared scale of {@code numeric(p,s)}, or -1 for an unconstrained (or negative) one. */
  static int numericScale(int typmod) {
    if (typmod < 4) {
      return -1;
    }
    // PostgreSQL 15+ stores the scale as an 11-bit signed number; a negative scale has no
    // Connect Decimal form that every converter reads, so it is written as variable-scale
    int raw = (typmod - 4) & 0x7ff;
    int scale = (raw ^ 0x400) - 0x400;
    return scale >= 0 ? scale : -1;
  }

  static int numericPrecision(int typmod) {
    return ((typmod - 4) >> 16) & 0xffff;
  }

  private static BigDecimal finite(String where, PgNumeric n) {
    if (!n.isFinite()) {
      throw unsupported(
          where,
          "the numeric value " + n,
          "set decimal.handling.mode=string (exact text, NaN and Infinity included) or double");
    }
    return n.bigDecimalValue();
  }

  private static double numericDouble(PgNumeric n) {
    return switch (n.kind()) {
      case NAN -> Double.NaN;
      case POSITIVE_INFINITY -> Double.POSITIVE_INFINITY;
      case NEGATIVE_INFINITY -> Double.NEGATIVE_INFINITY;
      default -> n.bigDecimalValue().doubleValue();
    };
  }

  /** Days since 1970-01-01; {@code infinity} and {@code -infinity} as int32 max and min. */
  static Object date(Object v) {
    LocalDate d = (LocalDate) v;
    if (d.equals(LocalDate.MAX)) {
      return Integer.MAX_VALUE;
    }
    if (d.equals(LocalDate.MIN)) {
      return Integer.MIN_VALUE;
    }
    return Math.toIntExact(d.toEpochDay());
  }

  /** Microseconds since midnight; {@code 24:00:00} is 86,400,000,000. */
  static Object time(Object v) {
    LocalTime t = (LocalTime) v;
    return t.equals(LocalTime.MAX) ? END_OF_DAY_MICROS : t.toNanoOfDay() / 1000;
  }

  /** Microseconds since 1970-01-01 00:00; {@code infinity}, {@code -infinity} as int64 max, min. */
  static Object timestamp(Object v) {
    LocalDateTime t = (LocalDateTime) v;
    if (t.equals(LocalDateTime.MAX)) {
      return Long.MAX_VALUE;
    }
    if (t.equals(LocalDateTime.MIN)) {
      return Long.MIN_VALUE;
    }
    return Math.addExact(
        Math.multiplyExact(t.toEpochSecond(ZoneOffset.UTC), 1_000_000L),
        t.get(ChronoField.MICRO_OF_SECOND));
  }

  /** ISO-8601 in UTC, {@code 2024-01-31T10:15:30.123456Z}; {@code infinity}, {@code -infinity}. */
  static Object instant(Object v) {
    Instant i = (Instant) v;
    if (i.equals(Instant.MAX)) {
      return "infinity";
    }
    if (i.equals(Instant.MIN)) {
      return "-infinity";
    }
    return DateTimeFormatter.ISO_INSTANT.format(i);
  }

  /** {@code 10:15:30.5+02:00}; {@code 24:00:00+01:00} for the end of the day. */
  static Object timeTz(Object v) {
    OffsetTime t = (OffsetTime) v;
    String time =
        t.toLocalTime().equals(LocalTime.MAX)
            ? "24:00:00"
            : DateTimeFormatter.ISO_LOCAL_TIME.format(t);
    return time + t.getOffset().getId();
  }

  /**
   * ISO-8601 with a sign per part, as PostgreSQL's {@code iso_8601} interval style prints it:
   * {@code P1Y2M3DT4H5M6.789S}, {@code P-1M}, {@code PT0S}; {@code infinity}, {@code -infinity}.
   */
  static String interval(PgInterval i) {
    if (i.equals(PgInterval.INFINITY)) {
      return "infinity";
    }
    if (i.equals(PgInterval.NEGATIVE_INFINITY)) {
      return "-infinity";
    }
    StringBuilder sb = new StringBuilder("P");
    int years = i.months() / 12;
    int months = i.months() % 12;
    if (years != 0) {
      sb.append(years).append('Y');
    }
    if (months != 0) {
      sb.append(months).append('M');
    }
    if (i.days() != 0) {
      sb.append(i.days()).append('D');
    }
    long micros = i.microseconds();
    if (micros != 0) {
      sb.append('T');
      boolean minus = micros < 0;
      // Long.MIN_VALUE has no positive counterpart: work on the unsigned magnitude
      long mag = minus ? -micros : micros;
      long hours = Long.divideUnsigned(mag, 3_600_000_000L);
      long rem = Long.remainderUnsigned(mag, 3_600_000_000L);
      long minutes = rem / 60_000_000L;
      rem %= 60_000_000L;
      String sign = minus ? "-" : "";
      if (hours != 0) {
        sb.append(sign).append(Long.toUnsignedString(hours)).append('H');
      }
      if (minutes != 0) {
        sb.append(sign).append(minutes).append('M');
      }
      if (rem != 0) {
        sb.append(sign).append(rem / 1_000_000L);
        long frac = rem % 1_000_000L;
        if (frac != 0) {
          String f = String.format(Locale.ROOT, "%06d", frac);
          int end = f.length();
          while (f.charAt(end - 1) == '0') {
            end--;
          }
          sb.append('.').append(f, 0, end);
        }
        sb.append('S');
      }
    }
    return sb.length() == 1 ? "PT0S" : sb.toString();
  }

  private static Schema string(boolean optional, @Nullable String name) {
    SchemaBuilder b = SchemaBuilder.string();
    if (name != null) {
      b.name(name).version(1);
    }
    if (optional) {
      b.optional();
    }
    return b.build();
  }

  private static Schema named(SchemaBuilder b, String name, boolean optional) {
    b.name(name).version(1);
    if (optional) {
      b.optional();
    }
    return b.build();
  }

  private static EtlException unsupported(String where, String what, String hint) {
    return new EtlException(
        ErrorKind.UNSUPPORTED_VALUE_IN_DESTINATION,
        "column " + where + " holds " + what + ", which its Connect schema cannot hold",
        hint);
  }

  /** The element types of PostgreSQL's built-in array types. */
  static final class ArrayTypes {
    private static final int[][] PAIRS = {
      {1000, 16},
      {1001, 17},
      {1002, 18},
      {1003, 19},
      {1016, 20},
      {1005, 21},
      {1007, 23},
      {1009, 25},
      {1028, 26},
      {1011, 28},
      {1012, 29},
      {271, 5069},
      {199, 114},
      {143, 142},
      {1021, 700},
      {1022, 701},
      {791, 790},
      {1014, 1042},
      {1015, 1043},
      {1182, 1082},
      {1183, 1083},
      {1115, 1114},
      {1185, 1184},
      {1187, 1186},
      {1270, 1266},
      {1231, 1700},
      {2951, 2950},
      {3807, 3802},
      {1041, 869},
      {651, 650},
      {1040, 829},
      {775, 774},
      {1561, 1560},
      {1563, 1562}
    };

    private ArrayTypes() {}

    /** The element type of a built-in array type, or 0 when the oid is not one. */
    static int elementOf(int arrayOid) {
      for (int[] p : PAIRS) {
        if (p[0] == arrayOid) {
          return p[1];
        }
      }
      return 0;
    }
  }
}
