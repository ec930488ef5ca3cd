package org.pgetl.testkit.destination;

import java.sql.Array;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.ResultSetMetaData;
import java.sql.SQLException;
import java.time.Instant;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.time.LocalTime;
import java.time.OffsetDateTime;
import java.time.OffsetTime;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import org.jspecify.annotations.Nullable;
import org.pgetl.model.PgArray;
import org.pgetl.model.PgInterval;
import org.pgetl.model.PgNumeric;
import org.pgetl.model.TableName;
import org.pgetl.testkit.TestDatabase;
import org.pgetl.testkit.TestkitException;
import org.postgresql.util.PGInterval;

/**
 * Reads a source table through JDBC into rows of the same Java values the pipeline delivers, so
 * that a test can compare a destination's contents with the source: {@code
 * assertThat(recording.rows(t)).isEqualTo(SourceTables.read(db, t))}.
 *
 * <p>Supported column types ({@link #SUPPORTED_TYPES}) and their Java values:
 *
 * <table>
 *   <caption>PostgreSQL type to Java value</caption>
 *   <tr><th>PostgreSQL</th><th>Java</th></tr>
 *   <tr><td>int2 / int4 / int8, oid</td><td>Short / Integer / Long, Long</td></tr>
 *   <tr><td>float4 / float8</td><td>Float / Double</td></tr>
 *   <tr><td>numeric</td><td>{@link PgNumeric} (scale kept; NaN, ±Infinity)</td></tr>
 *   <tr><td>bool</td><td>Boolean</td></tr>
 *   <tr><td>text, varchar, bpchar, name, json, jsonb</td><td>String (jsonb as the server prints
 *       it)</td></tr>
 *   <tr><td>bytea</td><td>byte[]</td></tr>
 *   <tr><td>uuid</td><td>UUID</td></tr>
 *   <tr><td>date</td><td>LocalDate ({@code LocalDate.MAX/MIN} for ±infinity)</td></tr>
 *   <tr><td>timestamp</td><td>LocalDateTime ({@code MAX/MIN} for ±infinity)</td></tr>
 *   <tr><td>timestamptz</td><td>Instant ({@code Instant.MAX/MIN} for ±infinity)</td></tr>
 *   <tr><td>time / timetz</td><td>LocalTime ({@code LocalTime.MAX} for 24:00) / OffsetTime</td></tr>
 *   <tr><td>interval</td><td>{@link PgInterval}</td></tr>
 *   <tr><td>one-dimensional arrays of the types above</td><td>{@link PgArray} (element oid,
 *       bounds from 1; an empty array has no dimensions)</td></tr>
 * </table>
 *
 * <p>Any other type (domains and enums included) is read as its text form, which is what the
 * pipeline delivers for a type it does not know, but not for one it knows: compare such columns
 * with care. Arrays with more than one dimension or explicit lower bounds are refused with a {@link
 * TestkitException}.
 */
public final class SourceTables {
  /** The type names ({@code pg_type.typname}) whose values are converted as the pipeline does. */
  public static final Set<String> SUPPORTED_TYPES =
      Set.of(
          "int2",
          "int4",
          "int8",
          "oid",
          "float4",
          "float8",
          "numeric",
          "bool",
          "text",
          "varchar",
          "bpchar",
          "name",
          "json",
          "jsonb",
          "bytea",
          "uuid",
          "date",
          "timestamp",
          "timestamptz",
          "time",
          "timetz",
          "interval");

  private static final Map<String, Integer> ELEMENT_OIDS =
      Map.ofEntries(
          Map.entry("bool", 16),
          Map.entry("bytea", 17),
          Map.entry("name", 19),
          Map.entry("int8", 20),
          Map.entry("int2", 21),
          Map.entry("int4", 23),
          Map.entry("text", 25),
          Map.entry("oid", 26),
          Map.entry("json", 114),
          Map.entry("float4", 700),
          Map.entry("float8", 701),
          Map.entry("bpchar", 1042),
          Map.entry("varchar", 1043),
          Map.entry("date", 1082),
          Map.entry("time", 1083),
          Map.entry("timestamp", 1114),
          Map.entry("timestamptz", 1184),
          Map.entry("interval", 1186),
          Map.entry("timetz", 1266),
          Map.entry("numeric", 1700),
          Map.entry("uuid", 2950),
          Map.entry("jsonb", 3802));

  private SourceTables() {}

  /**
   * Reads every row of a table, sorted by {@link Rows#order()}.
   *
   * @param db the test database
   * @param table the table
   * @return the rows, each a list of values in column order
   * @throws TestkitException when the query fails or a value cannot be converted
   */
  public static List<List<@Nullable Object>> read(TestDatabase db, TableName table) {
    try (Connection c = db.connect()) {
      return read(c, table);
    } catch (SQLException e) {
      throw new TestkitException("cannot read " + table + ": " + e.getMessage(), e);
    }
  }

  /**
   * Reads every row of a table ({@code SELECT *}), sorted by {@link Rows#order()}.
   *
   * @param connection an open connection to the source database
   * @param table the table
   * @return the rows, each a list of values in column order
   * @throws TestkitException when the query fails or a value cannot be converted
   */
  public static List<List<@Nullable Object>> read(Connection connection, TableName table) {
    return Rows.sorted(query(connection, "SELECT * FROM " + table.quoted()));
  }

  /**
   * Reads some columns of every row of a table, sorted by {@link Rows#order()}: for a publication
   * that publishes a column list, or a destination that keeps some columns only.
   *
   * @param connection an open connection to the source database
   * @param table the table
   * @param columns the column names, as stored in the catalog, in the order wanted
   * @return the rows, each a list of the values of {@code columns}
   * @throws TestkitException when the query fails or a value cannot be converted
   */
  public static List<List<@Nullable Object>> read(
      Connection connection, TableName table, List<String> columns) {
    if (columns.isEmpty()) {
      throw new IllegalArgumentException("columns must not be empty");
    }
    StringBuilder sql = new StringBuilder("SELECT ");
    for (int i = 0; i < columns.size(); i++) {
      sql.append(i == 0 ? "" : ", ").append(TableName.quoteIdentifier(columns.get(i)));
    }
    sql.append(" FROM ").append(table.quoted());
    return Rows.sorted(query(connection, sql.toString()));
  }

  /**
   * Runs a query and converts its rows, in the order the query returns them.
   *
   * @param connection an open connection
   * @param sql the query; {@code ?} placeholders take the parameters
   * @param params the parameters
   * @return the rows
   * @throws TestkitException when the query fails or a value cannot be converted
   */
  public static List<List<@Nullable Object>> query(
      Connection connection, String sql, @Nullable Object... params) {
    try (PreparedStatement ps = connection.prepareStatement(sql)) {
      for (int i = 0; i < params.length; i++) {
        ps.setObject(i + 1, params[i]);
      }
      try (ResultSet rs = ps.executeQuery()) {
        ResultSetMetaData md = rs.getMetaData();
        int n = md.getColumnCount();
        String[] types = new String[n];
        for (int i = 0; i < n; i++) {
          types[i] = md.getColumnTypeName(i + 1);
        }
        List<List<@Nullable Object>> rows = new ArrayList<>();
        while (rs.next()) {
          @Nullable Object[] values = new Object[n];
          for (int i = 0; i < n; i++) {
            values[i] = value(rs, i + 1, types[i]);
          }
          rows.add(Rows.row(values));
        }
        return Collections.unmodifiableList(rows);
      }
    } catch (SQLException e) {
      throw new TestkitException(
          "query failed: " + e.getMessage() + " [SQLSTATE " + e.getSQLState() + "]\n" + sql, e);
    }
  }

  /**
   * Converts one value of a result set as the pipeline would deliver it (see the class comment).
   *
   * @param rs the result set, on a row
   * @param column the 1-based column index
   * @param typeName the column's type name, as {@link ResultSetMetaData#getColumnTypeName} gives it
   * @return the value, or null for SQL NULL
   * @throws SQLException when reading fails
   * @throws TestkitException for an array of more than one dimension or with explicit bounds
   */
  public static @Nullable Object value(ResultSet rs, int column, String typeName)
      throws SQLException {
    switch (typeName) {
      case "int2" -> {
        short v = rs.getShort(column);
        return rs.wasNull() ? null : v;
      }
      case "int4" -> {
        int v = rs.getInt(column);
        return rs.wasNull() ? null : v;
      }
      case "int8", "oid" -> {
        long v = rs.getLong(column);
        return rs.wasNull() ? null : v;
      }
      case "float4" -> {
        float v = rs.getFloat(column);
        return rs.wasNull() ? null : v;
      }
      case "float8" -> {
        double v = rs.getDouble(column);
        return rs.wasNull() ? null : v;
      }
      case "bool" -> {
        boolean v = rs.getBoolean(column);
        return rs.wasNull() ? null : v;
      }
      case "numeric" -> {
        String s = rs.getString(column);
        return s == null ? null : PgNumeric.parse(s);
      }
      case "bytea" -> {
        return rs.getBytes(column);
      }
      case "uuid" -> {
        Object o = rs.getObject(column);
        return o == null || o instanceof UUID ? o : UUID.fromString(o.toString());
      }
      case "date" -> {
        String s = rs.getString(column);
        return s == null
            ? null
            : infinity(
                s, LocalDate.MAX, LocalDate.MIN, () -> rs.getObject(column, LocalDate.class));
      }
      case "timestamp" -> {
        String s = rs.getString(column);
        return s == null
            ? null
            : infinity(
                s,
                LocalDateTime.MAX,
                LocalDateTime.MIN,
                () -> rs.getObject(column, LocalDateTime.class));
      }
      case "timestamptz" -> {
        String s = rs.getString(column);
        return s == null
            ? null
            : infinity(
                s,
                Instant.MAX,
                Instant.MIN,
                () -> rs.getObject(column, OffsetDateTime.class).toInstant());
      }
      case "time" -> {
        String s = rs.getString(column);
        if (s == null) {
          return null;
        }
        return s.startsWith("24:") ? LocalTime.MAX : rs.getObject(column, LocalTime.class);
      }
      case "timetz" -> {
        return rs.getObject(column, OffsetTime.class);
      }
      case "interval" -> {
        Object o = rs.getObject(column);
        if (o == null) {
          return null;
        }
        PGInterval i = (PGInterval) o;
        long seconds = ((long) i.getHours() * 60 + i.getMinutes()) * 60 + i.getWholeSeconds();
        return new PgInterval(
            i.getYears() * 12 + i.getMonths(),
            i.getDays(),
            seconds * 1_000_000L + i.getMicroSeconds());
      }
      default -> {
        if (typeName.startsWith("_")) {
          return array(rs, column, typeName.substring(1));
        }
        return rs.getString(column);
      }
    }
  }

  private static @Nullable Object array(ResultSet rs, int column, String elementType)
      throws SQLException {
    String text = rs.getString(column);
    if (text == null) {
      return null;
    }
    if (text.startsWith("[") || text.startsWith("{{")) {
      throw new TestkitException(
          "only one-dimensional arrays with lower bound 1 are supported (column "
              + column
              + " of type "
              + elementType
              + "[])");
    }
    Integer oid = ELEMENT_OIDS.get(elementType);
    if (oid == null) {
      oid = elementOid(rs.getStatement().getConnection(), elementType);
    }
    Array array = rs.getArray(column);
    List<@Nullable Object> elements = new ArrayList<>();
    try (ResultSet er = array.getResultSet()) {
      while (er.next()) {
        elements.add(value(er, 2, elementType));
      }
    } finally {
      array.free();
    }
    return PgArray.ofList(oid, elements);
  }

  private static int elementOid(Connection c, String typeName) throws SQLException {
    try (PreparedStatement ps =
        c.prepareStatement("SELECT oid FROM pg_type WHERE typname = ? ORDER BY oid LIMIT 1")) {
      ps.setString(1, typeName);
      try (ResultSet r = ps.executeQuery()) {
        if (!r.next()) {
          throw new TestkitException("unknown array element type " + typeName);
        }
        return (int) r.getLong(1);
      }
    }
  }

  private interface SqlSupplier<T> {
    T get() throws SQLException;
  }

  private static <T> T infinity(String text, T max, T min, SqlSupplier<T> finite)
      throws SQLException {
    if (text.equals("infinity")) {
      return max;
    }
    if (text.equals("-infinity")) {
      return min;
    }
    return finite.get();
  }
}
