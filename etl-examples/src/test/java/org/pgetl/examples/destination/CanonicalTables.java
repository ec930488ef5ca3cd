package org.pgetl.examples.destination;

import java.math.BigDecimal;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.sql.Array;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Function;

/**
 * Table contents in a form that does not depend on where they were read: each value of a column
 * kind is turned into one canonical string (numbers without trailing zeros, instants in UTC, arrays
 * as lists), each row into a line, and each table into its sorted lines and a SHA-256 checksum of
 * them. The source and every destination are read through this same normalisation.
 */
final class CanonicalTables {
  /** What a column holds, which decides how its values are normalised. */
  enum Kind {
    INT,
    NUMERIC,
    TIMESTAMPTZ,
    FLOAT,
    TEXT,
    JSON,
    TEXT_ARRAY
  }

  /** A column of a compared table. */
  record Col(String name, Kind kind) {}

  /** One table's canonical rows, sorted, and their checksum. */
  record Table(String name, List<String> rows) {
    String checksum() {
      try {
        MessageDigest md = MessageDigest.getInstance("SHA-256");
        for (String row : rows) {
          md.update(row.getBytes(StandardCharsets.UTF_8));
          md.update((byte) '\n');
        }
        return HexFormat.of().formatHex(md.digest());
      } catch (NoSuchAlgorithmException e) {
        throw new IllegalStateException(e);
      }
    }

    /** Describes how this table differs from the expected one, in a few short lines. */
    String differencesFrom(Table expected) {
      List<String> missing = new ArrayList<>(expected.rows);
      missing.removeAll(rows);
      List<String> extra = new ArrayList<>(rows);
      extra.removeAll(expected.rows);
      return name
          + ": "
          + rows.size()
          + " rows, expected "
          + expected.rows.size()
          + "; missing "
          + shorten(missing)
          + "; unexpected "
          + shorten(extra);
    }

    private static List<String> shorten(List<String> rows) {
      return rows.stream()
          .limit(5)
          .map(r -> r.length() > 160 ? r.substring(0, 160) + "..." : r)
          .toList();
    }
  }

  private CanonicalTables() {}

  /**
   * Reads a table over JDBC: PostgreSQL, or DuckDB with {@code select} adapted to its types.
   *
   * @param c the connection
   * @param name the table name for messages
   * @param sql a query returning the columns in order
   * @param columns the columns
   */
  static Table read(Connection c, String name, String sql, List<Col> columns) throws SQLException {
    List<String> rows = new ArrayList<>();
    try (Statement s = c.createStatement();
        ResultSet rs = s.executeQuery(sql)) {
      while (rs.next()) {
        List<String> row = new ArrayList<>(columns.size());
        for (int i = 0; i < columns.size(); i++) {
          Kind k = columns.get(i).kind();
          Object v =
              k == Kind.TIMESTAMPTZ && isPostgres(c)
                  ? rs.getObject(i + 1, OffsetDateTime.class)
                  : rs.getObject(i + 1);
          row.add(canon(k, v));
        }
        rows.add(String.join(" | ", row));
      }
    }
    rows.sort(null);
    return new Table(name, rows);
  }

  /** Reads a table from rows of name-to-value maps (a JSON lines consumer's rows). */
  static Table fromMaps(String name, List<Map<String, Object>> maps, List<Col> columns) {
    List<String> rows = new ArrayList<>();
    for (Map<String, Object> m : maps) {
      List<String> row = new ArrayList<>(columns.size());
      for (Col c : columns) {
        if (!m.containsKey(c.name())) {
          throw new AssertionError(name + " row lacks column " + c.name() + ": " + m.keySet());
        }
        row.add(canon(c.kind(), m.get(c.name())));
      }
      rows.add(String.join(" | ", row));
    }
    rows.sort(null);
    return new Table(name, rows);
  }

  /** Returns the select list of the columns, each wrapped by {@code expression}. */
  static String select(List<Col> columns, Function<Col, String> expression) {
    return String.join(", ", columns.stream().map(expression).toList());
  }

  private static boolean isPostgres(Connection c) throws SQLException {
    return c.getMetaData().getURL().startsWith("jdbc:postgresql:");
  }

  /** The canonical text of a value read from PostgreSQL, DuckDB or a JSON line. */
  static String canon(Kind kind, Object v) {
    if (v == null) {
      return "<null>";
    }
    try {
      return switch (kind) {
        case INT -> new BigDecimal(v.toString()).toBigIntegerExact().toString();
        case NUMERIC -> {
          BigDecimal d = v instanceof BigDecimal b ? b : new BigDecimal(v.toString());
          yield d.signum() == 0 ? "0" : d.stripTrailingZeros().toPlainString();
        }
        case FLOAT -> Double.toString(Double.parseDouble(v.toString()));
        case TIMESTAMPTZ -> instant(v).toString();
        case TEXT, JSON -> v.toString();
        case TEXT_ARRAY -> elements(v).toString();
      };
    } catch (SQLException e) {
      throw new IllegalStateException(e);
    }
  }

  private static Instant instant(Object v) {
    if (v instanceof OffsetDateTime o) {
      return o.toInstant();
    }
    if (v instanceof Long micros) { // DuckDB's epoch_us
      return Instant.ofEpochSecond(
          Math.floorDiv(micros, 1_000_000), Math.floorMod(micros, 1_000_000) * 1000L);
    }
    return Instant.parse(v.toString()); // JSON lines: ISO-8601 in UTC
  }

  private static List<String> elements(Object v) throws SQLException {
    Object[] items;
    if (v instanceof Array a) {
      items = (Object[]) a.getArray();
    } else if (v instanceof List<?> l) {
      items = l.toArray();
    } else if (v instanceof Object[] o) {
      items = o;
    } else {
      throw new IllegalArgumentException("not an array: " + v.getClass());
    }
    return Arrays.stream(items).map(e -> e == null ? "<null>" : e.toString()).toList();
  }

  /** Compares tables by checksum; returns the differences, empty when every table matches. */
  static List<String> differences(Map<String, Table> expected, Map<String, Table> actual) {
    List<String> out = new ArrayList<>();
    for (Map.Entry<String, Table> e : expected.entrySet()) {
      Table a = actual.get(e.getKey());
      if (a == null) {
        out.add(e.getKey() + ": missing");
      } else if (!a.checksum().equals(e.getValue().checksum())) {
        out.add(a.differencesFrom(e.getValue()));
      }
    }
    return out;
  }

  /** Orders tables by name for stable messages. */
  static Map<String, Table> byName(List<Table> tables) {
    Map<String, Table> m = new LinkedHashMap<>();
    tables.stream().sorted((a, b) -> a.name().compareTo(b.name())).forEach(t -> m.put(t.name(), t));
    return m;
  }
}
