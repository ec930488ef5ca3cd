package org.pgetl.examples.cli;

import java.math.BigDecimal;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.sql.Array;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.ResultSetMetaData;
import java.sql.SQLException;
import java.sql.Statement;
import java.sql.Timestamp;
import java.time.OffsetDateTime;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.List;
import java.util.Locale;
import org.jspecify.annotations.Nullable;

/**
 * The row count and a content checksum of one table: the MD5 of every row, read in key order, with
 * each value written in one normal form — so the same rows give the same checksum in PostgreSQL and
 * in DuckDB, whatever types each driver returns.
 *
 * <p>Normal forms: numbers without trailing zeros ({@code 12.50} and {@code 12.5} are equal),
 * timestamps with a time zone as UTC instants, JSON without white space outside strings, arrays
 * element by element, NULL as {@code \N}. Values are separated by a byte that no text holds.
 *
 * @param rows the row count
 * @param md5 the checksum, in hex
 */
record TableChecksum(long rows, String md5) {
  private static final int FETCH_SIZE = 5_000;

  /**
   * Reads a table and computes its checksum.
   *
   * @param c the connection (its auto-commit mode is restored)
   * @param table the demo table
   * @param qualifiedName the quoted name of the table in this database
   * @return the count and checksum
   * @throws SQLException when the query fails
   */
  static TableChecksum of(Connection c, DemoTable table, String qualifiedName) throws SQLException {
    MessageDigest md5 = newDigest();
    long rows = 0;
    boolean autoCommit = c.getAutoCommit();
    c.setAutoCommit(
        false); // PostgreSQL streams a result set with a fetch size only in a transaction
    try (Statement s = c.createStatement()) {
      s.setFetchSize(FETCH_SIZE);
      try (ResultSet rs =
          s.executeQuery(
              "SELECT "
                  + table.selectList()
                  + " FROM "
                  + qualifiedName
                  + " ORDER BY "
                  + table.orderBy())) {
        ResultSetMetaData md = rs.getMetaData();
        int n = md.getColumnCount();
        String[] types = new String[n];
        for (int i = 0; i < n; i++) {
          types[i] = md.getColumnTypeName(i + 1).toLowerCase(Locale.ROOT);
        }
        StringBuilder row = new StringBuilder(256);
        while (rs.next()) {
          row.setLength(0);
          for (int i = 0; i < n; i++) {
            if (i > 0) {
              row.append('\u0001');
            }
            row.append(value(rs, i + 1, types[i]));
          }
          row.append('\n');
          md5.update(row.toString().getBytes(StandardCharsets.UTF_8));
          rows++;
        }
      }
    } finally {
      c.commit();
      c.setAutoCommit(autoCommit);
    }
    return new TableChecksum(rows, HexFormat.of().formatHex(md5.digest()));
  }

  /**
   * Finds the first rows that differ between two copies of a table, by a merge of both in key
   * order: keys only in one side, or keys whose values differ (the differing columns are named;
   * values are not shown). The demo's keys are integers.
   *
   * @param expected the connection to the source
   * @param actual the connection to the copy
   * @param table the table
   * @param limit the most differences to return
   * @return one line per difference
   * @throws SQLException when a query fails
   */
  static List<String> differences(
      Connection expected, Connection actual, DemoTable table, int limit) throws SQLException {
    List<String> out = new ArrayList<>();
    String sql =
        "SELECT "
            + table.selectList()
            + " FROM "
            + table.name().quoted()
            + " ORDER BY "
            + table.orderBy();
    boolean eAuto = expected.getAutoCommit();
    boolean aAuto = actual.getAutoCommit();
    expected.setAutoCommit(false);
    actual.setAutoCommit(false);
    try (Statement es = expected.createStatement();
        Statement as = actual.createStatement()) {
      es.setFetchSize(FETCH_SIZE);
      as.setFetchSize(FETCH_SIZE);
      try (ResultSet e = es.executeQuery(sql);
          ResultSet a = as.executeQuery(sql)) {
        Cursor left = new Cursor(e, table);
        Cursor right = new Cursor(a, table);
        while (out.size() < limit) {
          String[] l = left.row;
          String[] r = right.row;
          if (l == null && r == null) {
            break;
          }
          if (r == null || (l != null && Arrays.compare(left.key, right.key) < 0)) {
            out.add("key " + Arrays.toString(left.key) + " only in the source");
            left.next();
          } else if (l == null || Arrays.compare(left.key, right.key) > 0) {
            out.add("key " + Arrays.toString(right.key) + " only in the copy");
            right.next();
          } else {
            List<String> columns = new ArrayList<>();
            for (int i = 0; i < l.length; i++) {
              if (!l[i].equals(r[i])) {
                columns.add(table.columns().get(i));
              }
            }
            if (!columns.isEmpty()) {
              out.add("key " + Arrays.toString(left.key) + " differs in " + columns);
            }
            left.next();
            right.next();
          }
        }
      }
    } finally {
      expected.commit();
      actual.commit();
      expected.setAutoCommit(eAuto);
      actual.setAutoCommit(aAuto);
    }
    return out;
  }

  /** A result set read row by row, each row normalised, with its integer key. */
  private static final class Cursor {
    private final ResultSet rs;
    private final String[] types;
    private final int[] keyColumns;
    // the current row and its key; both null once the result set is read to its end
    String @Nullable [] row;
    long @Nullable [] key;

    Cursor(ResultSet rs, DemoTable table) throws SQLException {
      this.rs = rs;
      ResultSetMetaData md = rs.getMetaData();
      types = new String[md.getColumnCount()];
      for (int i = 0; i < types.length; i++) {
        types[i] = md.getColumnTypeName(i + 1).toLowerCase(Locale.ROOT);
      }
      keyColumns = new int[table.key().size()];
      for (int k = 0; k < keyColumns.length; k++) {
        keyColumns[k] = table.columns().indexOf(table.key().get(k));
      }
      next();
    }

    void next() throws SQLException {
      if (!rs.next()) {
        row = null;
        key = null;
        return;
      }
      row = new String[types.length];
      for (int i = 0; i < types.length; i++) {
        row[i] = value(rs, i + 1, types[i]);
      }
      key = new long[keyColumns.length];
      for (int k = 0; k < keyColumns.length; k++) {
        key[k] = rs.getLong(keyColumns[k] + 1);
      }
    }
  }

  private static String value(ResultSet rs, int column, String type) throws SQLException {
    if (type.contains("json")) {
      String json = rs.getString(column);
      return json == null ? "\\N" : minifyJson(json);
    }
    if (type.equals("timestamptz") || type.equals("timestamp with time zone")) {
      OffsetDateTime t = rs.getObject(column, OffsetDateTime.class);
      return t == null ? "\\N" : t.toInstant().toString();
    }
    return normal(rs.getObject(column));
  }

  /** The normal form of a value as a driver returns it. */
  static String normal(@Nullable Object v) throws SQLException {
    if (v == null) {
      return "\\N";
    }
    if (v instanceof BigDecimal d) {
      return d.signum() == 0 ? "0" : d.stripTrailingZeros().toPlainString();
    }
    if (v instanceof Boolean b) {
      return b ? "t" : "f";
    }
    if (v instanceof Timestamp t) {
      return t.toInstant().toString();
    }
    if (v instanceof OffsetDateTime t) {
      return t.toInstant().toString();
    }
    if (v instanceof java.sql.Date d) {
      return d.toLocalDate().toString();
    }
    if (v instanceof byte[] bytes) {
      return HexFormat.of().formatHex(bytes);
    }
    if (v instanceof Array a) {
      Object elements = a.getArray();
      return elements instanceof Object[] list ? normalList(list) : String.valueOf(elements);
    }
    if (v instanceof Object[] list) {
      return normalList(list);
    }
    return v.toString();
  }

  private static String normalList(@Nullable Object[] list) throws SQLException {
    StringBuilder sb = new StringBuilder("{");
    for (int i = 0; i < list.length; i++) {
      if (i > 0) {
        sb.append('\u0002');
      }
      sb.append(normal(list[i]));
    }
    return sb.append('}').toString();
  }

  /** Removes the white space outside strings: {@code {"a": 1}} and {@code {"a":1}} are equal. */
  static String minifyJson(String json) {
    StringBuilder sb = new StringBuilder(json.length());
    boolean inString = false;
    for (int i = 0; i < json.length(); i++) {
      char ch = json.charAt(i);
      if (inString) {
        sb.append(ch);
        if (ch == '\\' && i + 1 < json.length()) {
          sb.append(json.charAt(++i));
        } else if (ch == '"') {
          inString = false;
        }
      } else if (ch == '"') {
        inString = true;
        sb.append(ch);
      } else if (!Character.isWhitespace(ch)) {
        sb.append(ch);
      }
    }
    return sb.toString();
  }

  private static MessageDigest newDigest() {
    try {
      return MessageDigest.getInstance("MD5");
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("every JVM has MD5", e);
    }
  }
}
