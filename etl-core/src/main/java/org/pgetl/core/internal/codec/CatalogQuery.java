package org.pgetl.core.internal.codec;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/** Reads type descriptions from {@code pg_type}, {@code pg_range} and {@code pg_attribute}. */
final class CatalogQuery {
  private CatalogQuery() {}

  private static final String TYPES =
      """
      SELECT t.oid::int8, n.nspname, t.typname, t.typtype, t.typelem::int8, t.typdelim,
             t.typcategory,
             t.typbasetype::int8, t.typrelid::int8, t.typsend <> 0, %s,
             coalesce(r.rngsubtype, 0)::int8, %s
        FROM pg_catalog.pg_type t
        JOIN pg_catalog.pg_namespace n ON n.oid = t.typnamespace
        LEFT JOIN pg_catalog.pg_range r ON r.rngtypid = t.oid
       WHERE t.oid = ANY (?::pg_catalog.oid[])
      """;

  private static final String ATTRIBUTES =
      """
      SELECT a.attrelid::int8, a.atttypid::int8
        FROM pg_catalog.pg_attribute a
       WHERE a.attrelid = ANY (?::pg_catalog.oid[]) AND a.attnum > 0 AND NOT a.attisdropped
       ORDER BY a.attrelid, a.attnum
      """;

  /** Returns the types found among {@code oids}, keyed by oid. */
  static Map<Integer, TypeInfo> load(Connection c, int serverMajor, Collection<Integer> oids)
      throws SQLException {
    String isArray =
        serverMajor >= 14
            ? "t.typsubscript = 'pg_catalog.array_subscript_handler'::pg_catalog.regproc"
            : "(t.typlen = -1 AND t.typelem <> 0 AND t.typtype = 'b')";
    String multirangeOf =
        serverMajor >= 14
            ? "coalesce((SELECT m.rngtypid FROM pg_catalog.pg_range m"
                + " WHERE m.rngmultitypid = t.oid), 0)::int8"
            : "0::int8";
    Map<Integer, Row> rows = new LinkedHashMap<>();
    try (PreparedStatement ps = c.prepareStatement(TYPES.formatted(isArray, multirangeOf))) {
      ps.setString(1, oidArray(oids));
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          Row r = Row.read(rs);
          rows.put(r.oid(), r);
        }
      }
    }
    Map<Integer, List<Integer>> attributes = new HashMap<>();
    List<Integer> relids = new ArrayList<>();
    for (Row r : rows.values()) {
      if (r.typtype() == 'c' && r.relid() != 0) {
        relids.add(r.relid());
        attributes.put(r.relid(), new ArrayList<>());
      }
    }
    if (!relids.isEmpty()) {
      try (PreparedStatement ps = c.prepareStatement(ATTRIBUTES)) {
        ps.setString(1, oidArray(relids));
        try (ResultSet rs = ps.executeQuery()) {
          while (rs.next()) {
            int relid = (int) rs.getLong(1);
            Objects.requireNonNull(
                    attributes.get(relid), "the query reads only the relids asked for")
                .add((int) rs.getLong(2));
          }
        }
      }
    }
    Map<Integer, TypeInfo> types = new LinkedHashMap<>();
    for (Row r : rows.values()) {
      TypeKind kind =
          switch (r.typtype()) {
            case 'd' -> TypeKind.DOMAIN;
            case 'e' -> TypeKind.ENUM;
            case 'c' -> TypeKind.COMPOSITE;
            case 'r' -> TypeKind.RANGE;
            case 'm' -> TypeKind.MULTIRANGE;
            case 'p' -> TypeKind.PSEUDO;
            default -> r.isArray() ? TypeKind.ARRAY : TypeKind.BASE;
          };
      types.put(
          r.oid(),
          new TypeInfo(
              r.oid(),
              r.name(),
              kind,
              r.category(),
              kind == TypeKind.ARRAY ? r.elem() : 0,
              r.delim(),
              kind == TypeKind.DOMAIN ? r.base() : 0,
              kind == TypeKind.RANGE ? r.subtype() : 0,
              kind == TypeKind.MULTIRANGE ? r.rangeOf() : 0,
              kind == TypeKind.COMPOSITE
                  ? attributes.getOrDefault(r.relid(), List.of())
                  : List.of(),
              r.hasSend()));
    }
    return types;
  }

  private static String oidArray(Collection<Integer> oids) {
    StringBuilder sb = new StringBuilder("{");
    for (int oid : oids) {
      if (sb.length() > 1) {
        sb.append(',');
      }
      sb.append(Integer.toUnsignedString(oid));
    }
    return sb.append('}').toString();
  }

  /** One row of {@link #TYPES}. */
  private record Row(
      int oid,
      String name,
      char typtype,
      int elem,
      char delim,
      char category,
      int base,
      int relid,
      boolean hasSend,
      boolean isArray,
      int subtype,
      int rangeOf) {
    static Row read(ResultSet rs) throws SQLException {
      String delim = rs.getString(6);
      String category = rs.getString(7);
      return new Row(
          (int) rs.getLong(1),
          rs.getString(2) + "." + rs.getString(3),
          rs.getString(4).charAt(0),
          (int) rs.getLong(5),
          delim == null || delim.isEmpty() ? ',' : delim.charAt(0),
          category == null || category.isEmpty() ? 'X' : category.charAt(0),
          (int) rs.getLong(8),
          (int) rs.getLong(9),
          rs.getBoolean(10),
          rs.getBoolean(11),
          (int) rs.getLong(12),
          (int) rs.getLong(13));
    }
  }
}
