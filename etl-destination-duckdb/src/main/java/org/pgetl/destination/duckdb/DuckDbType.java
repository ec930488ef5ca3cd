package org.pgetl.destination.duckdb;

import java.math.BigDecimal;
import java.math.RoundingMode;
import java.time.Instant;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.time.LocalTime;
import java.time.OffsetTime;
import java.time.ZoneOffset;
import java.time.temporal.ChronoField;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.UUID;
import org.jspecify.annotations.Nullable;
import org.pgetl.model.ColumnSchema;
import org.pgetl.model.PgArray;
import org.pgetl.model.PgInterval;
import org.pgetl.model.PgNumeric;

/**
 * The DuckDB column type {@link DuckDbDestination} uses for a PostgreSQL column, and the rules for
 * values that the type cannot hold.
 *
 * <h2>Mapping (by {@code ColumnSchema.typeOid})</h2>
 *
 * <table>
 *   <caption>PostgreSQL type to DuckDB type</caption>
 *   <tr><th>PostgreSQL</th><th>DuckDB</th></tr>
 *   <tr><td>bool, int2, int4, int8, oid</td><td>BOOLEAN, SMALLINT, INTEGER, BIGINT, BIGINT</td></tr>
 *   <tr><td>float4, float8</td><td>FLOAT, DOUBLE (NaN and infinities included)</td></tr>
 *   <tr><td>numeric(p,s) with 0 &lt;= s &lt;= p &lt;= 38</td><td>DECIMAL(p,s)</td></tr>
 *   <tr><td>numeric without precision, or p &gt; 38</td><td>VARCHAR (the exact decimal text,
 *       {@code NaN}, {@code Infinity})</td></tr>
 *   <tr><td>text, varchar, char, bpchar, name</td><td>VARCHAR</td></tr>
 *   <tr><td>bytea</td><td>BLOB</td></tr>
 *   <tr><td>date, time, timetz, timestamp, timestamptz</td><td>DATE, TIME, TIMETZ, TIMESTAMP,
 *       TIMESTAMPTZ (DuckDB has {@code infinity}, {@code 24:00:00} and years BC)</td></tr>
 *   <tr><td>interval</td><td>INTERVAL (months, days and microseconds, as PostgreSQL)</td></tr>
 *   <tr><td>uuid</td><td>UUID</td></tr>
 *   <tr><td>json, jsonb</td><td>JSON</td></tr>
 *   <tr><td>arrays of bool, int2, int4, int8, float4, float8, text, varchar, bpchar, name,
 *       uuid</td><td>a LIST of the element type ({@code INTEGER[]})</td></tr>
 *   <tr><td>every other type, other arrays, domains</td><td>VARCHAR holding PostgreSQL's text
 *       form</td></tr>
 * </table>
 *
 * A primary key column that maps to DECIMAL or a LIST is made VARCHAR instead, because DuckDB
 * cannot change the type of a key column later (see widening below). The one value that can still
 * not be stored is a key timestamp after 294247-01-10: that write fails with {@code
 * DESTINATION_SCHEMA_ERROR} (as does dropping or retyping a key column at the source), and the
 * table must be copied again.
 *
 * <h2>Widening: values a column type cannot hold</h2>
 *
 * Some values have no exact form in the mapped type: {@code NaN} in a {@code numeric(p,s)} column,
 * timestamps after 294247-01-10 (DuckDB's limit; PostgreSQL's is 294276-12-31), and in a LIST
 * column an array that is not one-dimensional with lower bound 1. Such a value is never rounded,
 * clipped or dropped: before it is written, its column is changed to VARCHAR, the existing values
 * are converted to PostgreSQL's text form ({@link #widenUsing}), and from then on every value of
 * the column is stored in that text form. The change is recorded in the destination's metadata so
 * it survives restarts. {@link #fits} decides; a value of an unexpected Java class also widens its
 * column, so an unforeseen value never fails the pipeline.
 *
 * @param kind the DuckDB type
 * @param precision the DECIMAL precision, else 0
 * @param scale the DECIMAL scale, else 0
 * @param element the element type of a LIST, else null
 */
record DuckDbType(
    DuckDbType.Kind kind, int precision, int scale, DuckDbType.@Nullable Kind element) {

  /** The DuckDB types this destination creates. */
  enum Kind {
    BOOLEAN(Boolean.class),
    SMALLINT(Short.class),
    INTEGER(Integer.class),
    BIGINT(Long.class),
    FLOAT(Float.class),
    DOUBLE(Double.class),
    DECIMAL(PgNumeric.class),
    VARCHAR(Object.class),
    BLOB(byte[].class),
    UUID(UUID.class),
    JSON(String.class),
    DATE(LocalDate.class),
    TIME(LocalTime.class),
    TIMETZ(OffsetTime.class),
    TIMESTAMP(LocalDateTime.class),
    TIMESTAMPTZ(Instant.class),
    INTERVAL(PgInterval.class),
    LIST(PgArray.class);

    /** The Java class of the model values this type holds. */
    final Class<?> javaType;

    Kind(Class<?> javaType) {
      this.javaType = javaType;
    }
  }

  /** VARCHAR: holds anything in PostgreSQL's text form. */
  static final DuckDbType VARCHAR = of(Kind.VARCHAR);

  private static final Map<Integer, Kind> SCALARS =
      Map.ofEntries(
          Map.entry(16, Kind.BOOLEAN),
          Map.entry(17, Kind.BLOB),
          Map.entry(18, Kind.VARCHAR),
          Map.entry(19, Kind.VARCHAR),
          Map.entry(20, Kind.BIGINT),
          Map.entry(21, Kind.SMALLINT),
          Map.entry(23, Kind.INTEGER),
          Map.entry(25, Kind.VARCHAR),
          Map.entry(26, Kind.BIGINT),
          Map.entry(114, Kind.JSON),
          Map.entry(700, Kind.FLOAT),
          Map.entry(701, Kind.DOUBLE),
          Map.entry(1042, Kind.VARCHAR),
          Map.entry(1043, Kind.VARCHAR),
          Map.entry(1082, Kind.DATE),
          Map.entry(1083, Kind.TIME),
          Map.entry(1114, Kind.TIMESTAMP),
          Map.entry(1184, Kind.TIMESTAMPTZ),
          Map.entry(1186, Kind.INTERVAL),
          Map.entry(1266, Kind.TIMETZ),
          Map.entry(2950, Kind.UUID),
          Map.entry(3802, Kind.JSON));

  /** Array type oid to element kind, for the arrays stored as LISTs. */
  private static final Map<Integer, Kind> LISTS =
      Map.ofEntries(
          Map.entry(1000, Kind.BOOLEAN),
          Map.entry(1005, Kind.SMALLINT),
          Map.entry(1007, Kind.INTEGER),
          Map.entry(1016, Kind.BIGINT),
          Map.entry(1021, Kind.FLOAT),
          Map.entry(1022, Kind.DOUBLE),
          Map.entry(1009, Kind.VARCHAR),
          Map.entry(1015, Kind.VARCHAR),
          Map.entry(1014, Kind.VARCHAR),
          Map.entry(1003, Kind.VARCHAR),
          Map.entry(2951, Kind.UUID));

  // DuckDB TIMESTAMP: microseconds since 1970 in a signed 64-bit number; the two extremes are
  // infinity and -infinity.
  private static final long MAX_TIMESTAMP_MICROS = Long.MAX_VALUE - 1;
  private static final long MIN_TIMESTAMP_MICROS = -Long.MAX_VALUE + 1;

  private static DuckDbType of(Kind kind) {
    return new DuckDbType(kind, 0, 0, null);
  }

  /**
   * Returns the DuckDB type for a PostgreSQL column (see the class comment).
   *
   * @param column the column
   * @return the type
   */
  static DuckDbType forColumn(ColumnSchema column) {
    DuckDbType type = mapped(column);
    boolean widenable = type.kind == Kind.DECIMAL || type.kind == Kind.LIST;
    return column.isPrimaryKey() && widenable ? VARCHAR : type;
  }

  private static DuckDbType mapped(ColumnSchema column) {
    int oid = column.typeOid();
    if (oid == 1700) {
      return numeric(column.typeModifier());
    }
    if (LISTS.containsKey(oid)) {
      return new DuckDbType(Kind.LIST, 0, 0, LISTS.get(oid));
    }
    return of(SCALARS.getOrDefault(oid, Kind.VARCHAR));
  }

  /** numeric's typmod is ((precision << 16) | scale) + 4, the scale an 11-bit signed number. */
  private static DuckDbType numeric(int typmod) {
    if (typmod < 4) {
      return VARCHAR; // unconstrained: any scale, and Infinity
    }
    int precision = ((typmod - 4) >> 16) & 0xFFFF;
    int scale = (((typmod - 4) & 0x7FF) ^ 1024) - 1024;
    if (precision > 38 || scale < 0 || scale > precision) {
      return VARCHAR;
    }
    return new DuckDbType(Kind.DECIMAL, precision, scale, null);
  }

  /**
   * Returns the SQL spelling, as stored in the destination's metadata: {@code DECIMAL(10,2)},
   * {@code INTEGER[]}.
   *
   * @return the type in DuckDB SQL
   */
  String sql() {
    return switch (kind) {
      case DECIMAL -> "DECIMAL(" + precision + "," + scale + ")";
      case LIST -> element + "[]";
      default -> kind.name();
    };
  }

  /**
   * Parses {@link #sql()}.
   *
   * @param sql the stored spelling
   * @return the type
   */
  static DuckDbType parse(String sql) {
    String s = sql.trim().toUpperCase(Locale.ROOT);
    if (s.endsWith("[]")) {
      return new DuckDbType(Kind.LIST, 0, 0, Kind.valueOf(s.substring(0, s.length() - 2)));
    }
    if (s.startsWith("DECIMAL(")) {
      String[] ps = s.substring(8, s.length() - 1).split(",", -1);
      return new DuckDbType(
          Kind.DECIMAL, Integer.parseInt(ps[0].trim()), Integer.parseInt(ps[1].trim()), null);
    }
    return of(Kind.valueOf(s));
  }

  /**
   * Returns true when the column type holds this value exactly; false means: widen the column to
   * VARCHAR first (see the class comment).
   *
   * @param value a non-null model value
   * @return whether the value fits
   */
  boolean fits(Object value) {
    if (!kind.javaType.isInstance(value)) {
      return false;
    }
    return switch (kind) {
      case DECIMAL -> decimal((PgNumeric) value) != null;
      case TIMESTAMP -> timestampFits((LocalDateTime) value);
      case TIMESTAMPTZ ->
          value.equals(Instant.MAX)
              || value.equals(Instant.MIN)
              || timestampFits(LocalDateTime.ofInstant((Instant) value, ZoneOffset.UTC));
      case LIST -> listFits((PgArray) value);
      default -> true;
    };
  }

  /**
   * Returns a numeric at this DECIMAL's scale, or null when it is not finite or has too many
   * digits.
   *
   * @param n the value
   * @return the decimal with exactly {@link #scale()} digits after the point, or null
   */
  @Nullable BigDecimal decimal(PgNumeric n) {
    if (!n.isFinite()) {
      return null;
    }
    try {
      BigDecimal d = n.bigDecimalValue().setScale(scale, RoundingMode.UNNECESSARY);
      return d.precision() - d.scale() <= precision - scale ? d : null;
    } catch (ArithmeticException e) {
      return null; // more fractional digits than the scale
    }
  }

  private static boolean timestampFits(LocalDateTime t) {
    if (t.equals(LocalDateTime.MAX) || t.equals(LocalDateTime.MIN)) {
      return true;
    }
    try {
      long seconds = t.toEpochSecond(ZoneOffset.UTC);
      long micros =
          Math.addExact(
              Math.multiplyExact(seconds, 1_000_000L), t.get(ChronoField.MICRO_OF_SECOND));
      return micros >= MIN_TIMESTAMP_MICROS && micros <= MAX_TIMESTAMP_MICROS;
    } catch (ArithmeticException e) {
      return false;
    }
  }

  private boolean listFits(PgArray a) {
    if (a.dimensionCount() > 1 || !a.hasDefaultLowerBounds()) {
      return false;
    }
    Kind el = Objects.requireNonNull(element, "a LIST's element");
    Class<?> elementClass = el == Kind.VARCHAR ? String.class : el.javaType;
    for (Object e : a.elements()) {
      if (e != null && !elementClass.isInstance(e)) {
        return false;
      }
    }
    return true;
  }

  /**
   * Returns the SQL expression that converts a column of this type to PostgreSQL's text form, for
   * {@code ALTER TABLE ... SET DATA TYPE VARCHAR USING ...}.
   *
   * @param column the quoted column name
   * @return the expression
   */
  String widenUsing(String column) {
    return switch (kind) {
      case DATE, TIMESTAMP, TIMESTAMPTZ ->
          // DuckDB prints "0044-03-15 (BC) 01:02:00"; PostgreSQL "0044-03-15 01:02:00 BC"
          "replace(CAST(%1$s AS VARCHAR), ' (BC)', '') || CASE WHEN isfinite(%1$s) AND year(%1$s) <= 0 THEN ' BC' ELSE '' END"
              .formatted(column);
      case BOOLEAN -> "CASE WHEN %1$s THEN 't' WHEN NOT %1$s THEN 'f' END".formatted(column);
      case LIST ->
          "CASE WHEN %1$s IS NOT NULL THEN '{' || array_to_string(list_transform(%1$s, lambda x: %2$s), ',') || '}' END"
              .formatted(column, elementText());
      default -> "CAST(" + column + " AS VARCHAR)";
    };
  }

  /** PostgreSQL's array element text of {@code x}: quoted strings, NULL, t/f, NaN, Infinity. */
  private String elementText() {
    return switch (Objects.requireNonNull(element, "a LIST's element")) {
      case BOOLEAN -> "CASE WHEN x IS NULL THEN 'NULL' WHEN x THEN 't' ELSE 'f' END";
      case FLOAT, DOUBLE ->
          "CASE WHEN x IS NULL THEN 'NULL' WHEN isnan(x) THEN 'NaN' WHEN isinf(x) AND x > 0"
              + " THEN 'Infinity' WHEN isinf(x) THEN '-Infinity' ELSE CAST(x AS VARCHAR) END";
      case VARCHAR ->
          "CASE WHEN x IS NULL THEN 'NULL' ELSE '\"' || replace(replace(x, '\\', '\\\\'), '\"',"
              + " '\\\"') || '\"' END";
      default -> "coalesce(CAST(x AS VARCHAR), 'NULL')";
    };
  }
}
