package org.pgetl.testing.destination;

import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/** Plain JDBC reads that destination tests compare tables with. */
public final class SqlRows {
  private SqlRows() {}

  /** Runs a query; returns each row as the text of its columns joined by {@code |}. */
  public static List<String> query(Connection c, String sql) throws SQLException {
    List<String> out = new ArrayList<>();
    try (Statement s = c.createStatement();
        ResultSet rs = s.executeQuery(sql)) {
      int n = rs.getMetaData().getColumnCount();
      while (rs.next()) {
        List<String> cells = new ArrayList<>();
        for (int i = 1; i <= n; i++) {
          cells.add(rs.getString(i));
        }
        out.add(String.join("|", cells));
      }
    }
    return out;
  }

  /**
   * Runs a query that selects {@code columns}; returns each row as {@code {name=text, ...}} (SQL
   * NULL as {@code NULL}), sorted.
   */
  public static List<String> namedRows(Connection c, String sql, List<String> columns)
      throws SQLException {
    List<String> out = new ArrayList<>();
    try (Statement s = c.createStatement();
        ResultSet rs = s.executeQuery(sql)) {
      while (rs.next()) {
        Map<String, String> row = new LinkedHashMap<>();
        for (int i = 0; i < columns.size(); i++) {
          String v = rs.getString(i + 1);
          row.put(columns.get(i), v == null ? "NULL" : v);
        }
        out.add(row.toString());
      }
    }
    out.sort(null);
    return out;
  }
}
