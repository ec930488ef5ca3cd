package org.pgetl.destination.duckdb;

import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.time.Instant;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.util.Objects;
import org.duckdb.DuckDBAppender;
import org.jspecify.annotations.Nullable;
import org.pgetl.model.PgArray;
import org.pgetl.model.PgInterval;
import org.pgetl.model.PgNumeric;
import org.pgetl.model.PgText;

/**
 * How {@link DuckDbDestination} hands a model value to DuckDB, as a prepared-statement parameter or
 * through the appender.
 *
 * <p>Numbers, strings, bytes, UUIDs and lists go as Java values. Dates, times, timestamps,
 * intervals and JSON go as text in DuckDB's literal syntax, which is mostly PostgreSQL's text form
 * ({@link #text}), and are cast in SQL ({@code CAST(? AS DATE)}): the JDBC driver's own conversions
 * are not exact for every PostgreSQL value (it moves BC dates to AD, truncates {@code 24:00:00},
 * and binds no interval or timetz), while DuckDB's parser reads {@code infinity}, {@code 0044-03-15
 * (BC)}, {@code 24:00:00} and {@code 14 months 3 days 5 microseconds} exactly.
 *
 * <p>Callers pass only values that {@link DuckDbType#fits fit} the column type.
 */
final class DuckDbValues {
  private DuckDbValues() {}

  /**
   * Returns true for the types whose values travel as text and are cast in SQL.
   *
   * @param type the column type
   * @return whether values are sent as DuckDB literal text
   */
  static boolean travelsAsText(DuckDbType type) {
    return switch (type.kind()) {
      case DATE, TIME, TIMETZ, TIMESTAMP, TIMESTAMPTZ, INTERVAL, JSON -> true;
      default -> false;
    };
  }

  /**
   * Returns the SQL for one parameter of this type: {@code ?} or {@code CAST(? AS DATE)}.
   *
   * @param type the column type
   * @return the placeholder
   */
  static String placeholder(DuckDbType type) {
    return travelsAsText(type) ? "CAST(? AS " + type.sql() + ")" : "?";
  }

  /**
   * Binds a value to a parameter made by {@link #placeholder}.
   *
   * @param ps the statement
   * @param index the 1-based parameter index
   * @param type the column type
   * @param value the value (fits the type), or null
   * @throws SQLException when binding fails
   */
  static void bind(PreparedStatement ps, int index, DuckDbType type, @Nullable Object value)
      throws SQLException {
    if (value == null) {
      ps.setObject(index, null);
    } else if (travelsAsText(type)) {
      ps.setString(index, text(value));
    } else {
      switch (type.kind()) {
        case DECIMAL -> ps.setBigDecimal(index, type.decimal((PgNumeric) value));
        case VARCHAR -> ps.setString(index, varchar(value));
        case BLOB -> ps.setBytes(index, (byte[]) value);
        case LIST ->
            ps.setObject(
                index,
                ps.getConnection()
                    .createArrayOf(
                        Objects.requireNonNull(type.element()).name(),
                        ((PgArray) value).elements().toArray()));
        default -> ps.setObject(index, value); // Boolean, Short, Integer, Long, Float, Double, UUID
      }
    }
  }

  /**
   * Returns the column type of a staging table that the appender fills: the column's own type, or
   * VARCHAR for the types that travel as text (the appender cannot write intervals).
   *
   * @param type the destination column type
   * @return the staging column type in SQL
   */
  static String stagingType(DuckDbType type) {
    return travelsAsText(type) ? "VARCHAR" : type.sql();
  }

  /**
   * Appends a value to the current appender row, for a staging column of {@link #stagingType}.
   *
   * @param appender the appender, inside a row
   * @param type the destination column type
   * @param value the value (fits the type), or null
   * @throws SQLException when appending fails
   */
  static void append(DuckDBAppender appender, DuckDbType type, @Nullable Object value)
      throws SQLException {
    if (value == null) {
      appender.appendNull();
    } else if (travelsAsText(type)) {
      appender.append(text(value));
    } else {
      switch (type.kind()) {
        case BOOLEAN -> appender.append((Boolean) value);
        case SMALLINT -> appender.append((Short) value);
        case INTEGER -> appender.append((Integer) value);
        case BIGINT -> appender.append((Long) value);
        case FLOAT -> appender.append((Float) value);
        case DOUBLE -> appender.append((Double) value);
        case DECIMAL -> appender.append(type.decimal((PgNumeric) value));
        case VARCHAR -> appender.append(varchar(value));
        case BLOB -> appender.append((byte[]) value);
        case UUID -> appender.append((java.util.UUID) value);
        case LIST -> appender.append(((PgArray) value).elements());
        default -> throw new IllegalStateException("no appender path for " + type.sql());
      }
    }
  }

  /**
   * PostgreSQL's text form of a value in a VARCHAR column. A value of a class outside pgetl's model
   * (its column was widened to VARCHAR, see {@link DuckDbType}) is stored as its {@code
   * toString()}, so that an unforeseen value never fails the pipeline.
   */
  private static String varchar(Object value) {
    try {
      return Objects.requireNonNull(PgText.format(value), "only SQL NULL has no text form");
    } catch (IllegalArgumentException notAModelValue) {
      return value.toString();
    }
  }

  /**
   * Returns DuckDB's literal text of a temporal, interval or JSON value.
   *
   * <p>DuckDB reads PostgreSQL's text form of times, timetz values and JSON as it is ({@code
   * 24:00:00}, {@code 10:15:30.5-05:30}, {@code infinity}), and of dates and timestamps too but for
   * the era of years BC (see {@link #eraAfterDate}). Intervals alone need a form of their own:
   * DuckDB does not read PostgreSQL's {@code 1 year 2 mons 3 days 04:05:06}, so they travel as
   * {@code 14 months 3 days 14706000000 microseconds}, which it reads exactly.
   *
   * @param value the value
   * @return the text DuckDB casts back to the same value
   */
  static String text(Object value) {
    if (value instanceof PgInterval i) {
      return i.months() + " months " + i.days() + " days " + i.microseconds() + " microseconds";
    }
    String pg = Objects.requireNonNull(PgText.format(value), "only SQL NULL has no text form");
    return value instanceof LocalDate || value instanceof LocalDateTime || value instanceof Instant
        ? eraAfterDate(pg)
        : pg;
  }

  /**
   * Moves PostgreSQL's era marker to where DuckDB reads it: PostgreSQL ends a date or timestamp BC
   * with {@code BC} ({@code 0044-03-15 01:02:00+00 BC}), DuckDB wants {@code (BC)} right after the
   * date ({@code 0044-03-15 (BC) 01:02:00+00}). DuckDB would read {@code 0044-03-15 BC} without an
   * error, as the year 44 AD.
   */
  private static String eraAfterDate(String pg) {
    if (!pg.endsWith(" BC")) {
      return pg;
    }
    String ad = pg.substring(0, pg.length() - " BC".length());
    int afterDate = ad.indexOf(' ');
    return afterDate < 0
        ? ad + " (BC)"
        : ad.substring(0, afterDate) + " (BC)" + ad.substring(afterDate);
  }
}
