package org.pgetl.examples.destination;

import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.time.Instant;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.time.LocalTime;
import java.time.OffsetTime;
import java.time.ZoneOffset;
import java.util.Locale;
import org.duckdb.DuckDBAppender;
import org.pgetl.model.PgArray;
import org.pgetl.model.PgInterval;
import org.pgetl.model.PgNumeric;

/**
 * How {@link DuckDbDestination} hands a model value to DuckDB, as a prepared-statement parameter or
 * through the appender.
 *
 * <p>Numbers, strings, bytes, UUIDs and lists go as Java values. Dates, times, timestamps,
 * intervals and JSON go as text in DuckDB's own literal syntax and are cast in SQL ({@code CAST(?
 * AS DATE)}): the JDBC driver's own conversions are not exact for every PostgreSQL value (it moves
 * BC dates to AD, truncates {@code 24:00:00}, and binds no interval or timetz), while DuckDB's
 * parser reads {@code infinity}, {@code 0044-03-15 (BC)}, {@code 24:00:00} and {@code 14 months 3
 * days 5 microseconds} exactly.
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
  static void bind(PreparedStatement ps, int index, DuckDbType type, Object value)
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
                    .createArrayOf(type.element().name(), ((PgArray) value).elements().toArray()));
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
  static void append(DuckDBAppender appender, DuckDbType type, Object value) throws SQLException {
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

  private static String varchar(Object value) {
    return value instanceof String s ? s : PgText.format(value);
  }

  /**
   * Returns DuckDB's literal text of a temporal, interval or JSON value.
   *
   * @param value the value
   * @return the text DuckDB casts back to the same value
   */
  static String text(Object value) {
    StringBuilder sb = new StringBuilder(32);
    if (value instanceof LocalDate d) {
      appendDate(sb, d);
    } else if (value instanceof LocalDateTime t) {
      appendTimestamp(sb, t);
    } else if (value instanceof Instant i) {
      if (i.equals(Instant.MAX) || i.equals(Instant.MIN)) {
        sb.append(i.equals(Instant.MAX) ? "infinity" : "-infinity");
      } else {
        appendTimestamp(sb, LocalDateTime.ofInstant(i, ZoneOffset.UTC));
        sb.append("+00");
      }
    } else if (value instanceof LocalTime t) {
      PgText.appendTime(sb, t);
    } else if (value instanceof OffsetTime t) {
      PgText.appendTime(sb, t.toLocalTime());
      appendOffset(sb, t.getOffset());
    } else if (value instanceof PgInterval i) {
      sb.append(i.months()).append(" months ").append(i.days()).append(" days ");
      sb.append(i.microseconds()).append(" microseconds");
    } else {
      sb.append(value); // JSON text
    }
    return sb.toString();
  }

  /** {@code 2024-01-31}, {@code 0044-03-15 (BC)}, {@code infinity}. */
  private static void appendDate(StringBuilder sb, LocalDate d) {
    if (d.equals(LocalDate.MAX) || d.equals(LocalDate.MIN)) {
      sb.append(d.equals(LocalDate.MAX) ? "infinity" : "-infinity");
      return;
    }
    PgText.appendDatePart(sb, d);
    sb.append(d.getYear() <= 0 ? " (BC)" : "");
  }

  /** {@code 2024-01-31 10:15:30.5}, {@code 0044-03-15 (BC) 01:02:00}, {@code infinity}. */
  private static void appendTimestamp(StringBuilder sb, LocalDateTime t) {
    if (t.equals(LocalDateTime.MAX) || t.equals(LocalDateTime.MIN)) {
      sb.append(t.equals(LocalDateTime.MAX) ? "infinity" : "-infinity");
      return;
    }
    appendDate(sb, t.toLocalDate());
    PgText.appendTime(sb.append(' '), t.toLocalTime());
  }

  private static void appendOffset(StringBuilder sb, ZoneOffset offset) {
    int total = offset.getTotalSeconds();
    int abs = Math.abs(total);
    sb.append(total < 0 ? '-' : '+');
    sb.append(String.format(Locale.ROOT, "%02d:%02d:%02d", abs / 3600, abs % 3600 / 60, abs % 60));
  }
}
