package org.pgetl.examples.cli;

import java.nio.file.Path;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Consumer;
import org.jspecify.annotations.Nullable;
import org.pgetl.destination.iceberg.IcebergTableReader;
import org.pgetl.model.TableName;

/**
 * The demo's Iceberg warehouse, read the way a user would read it: a filesystem catalog over the
 * directory and Iceberg's generic reader. {@link #load} copies a table's rows into a PostgreSQL
 * table of the same name and column types, so that the demo checksums both sides with one query; a
 * changelog table's rows are folded first ({@link IcebergTableReader#forEachFoldedRow}).
 */
public final class IcebergCopy {
  private final IcebergTableReader reader;

  /**
   * Opens the warehouse's filesystem catalog.
   *
   * @param warehouse the warehouse directory
   */
  public IcebergCopy(Path warehouse) {
    this.reader = IcebergTableReader.hadoop(warehouse);
  }

  /**
   * Drops a table an earlier run wrote, with its files.
   *
   * @param name the source table's name
   * @return false when there was none
   */
  public boolean drop(TableName name) {
    return reader.drop(name);
  }

  /**
   * Creates {@code name} in {@code target} with the column types it has in {@code source} and fills
   * it with the rows of its Iceberg table.
   *
   * @param name the source table's name
   * @param source the source database
   * @param target the database to create the table in
   * @return false when the Iceberg table is missing
   * @throws SQLException when a statement fails
   */
  public boolean load(TableName name, Connection source, Connection target) throws SQLException {
    if (!reader.exists(name)) {
      return false;
    }
    List<String> columns = new ArrayList<>();
    List<String> types = new ArrayList<>();
    try (PreparedStatement ps =
        source.prepareStatement(
            "SELECT attname, format_type(atttypid, atttypmod) FROM pg_attribute"
                + " WHERE attrelid = ?::regclass AND attnum > 0 AND NOT attisdropped"
                + " ORDER BY attnum")) {
      ps.setString(1, name.quoted());
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          columns.add(rs.getString(1));
          types.add(rs.getString(2));
        }
      }
    }
    List<String> defs = new ArrayList<>();
    List<String> params = new ArrayList<>();
    for (int i = 0; i < columns.size(); i++) {
      defs.add(TableName.quoteIdentifier(columns.get(i)) + " " + types.get(i));
      params.add("?::" + types.get(i));
    }
    try (Statement s = target.createStatement()) {
      s.execute("CREATE SCHEMA IF NOT EXISTS " + TableName.quoteIdentifier(name.schema()));
      s.execute("DROP TABLE IF EXISTS " + name.quoted());
      s.execute("CREATE TABLE " + name.quoted() + " (" + String.join(", ", defs) + ")");
    }
    boolean autoCommit = target.getAutoCommit();
    target.setAutoCommit(false);
    try (PreparedStatement insert =
        target.prepareStatement(
            "INSERT INTO " + name.quoted() + " VALUES (" + String.join(", ", params) + ")")) {
      int[] pending = {0};
      SQLException[] failed = {null};
      Consumer<List<@Nullable Object>> add =
          values -> {
            if (failed[0] != null) {
              return;
            }
            try {
              for (int i = 0; i < values.size(); i++) {
                Object v = values.get(i);
                insert.setString(i + 1, v == null ? null : text(v));
              }
              insert.addBatch();
              if (++pending[0] == 1000) {
                insert.executeBatch();
                pending[0] = 0;
              }
            } catch (SQLException e) {
              failed[0] = e;
            }
          };
      if (reader.isChangelog(name)) {
        reader.forEachFoldedRow(name, keyColumns(source, name), columns, add);
      } else {
        reader.forEachRow(name, columns, add);
      }
      if (failed[0] != null) {
        throw failed[0];
      }
      insert.executeBatch();
      target.commit();
    } finally {
      target.setAutoCommit(autoCommit);
    }
    return true;
  }

  /**
   * The columns a changelog of the table is folded by: its replica identity index or primary key,
   * none for {@code REPLICA IDENTITY FULL} or a table without either (folded by whole row).
   */
  private static List<String> keyColumns(Connection source, TableName name) throws SQLException {
    List<String> key = new ArrayList<>();
    try (PreparedStatement ps =
        source.prepareStatement(
            "SELECT a.attname FROM pg_index i"
                + " JOIN pg_class c ON c.oid = i.indrelid"
                + " JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = ANY (i.indkey)"
                + " WHERE i.indrelid = ?::regclass"
                + " AND (i.indisreplident OR (i.indisprimary AND c.relreplident = 'd'))"
                + " ORDER BY array_position(i.indkey::int2[], a.attnum)")) {
      ps.setString(1, name.quoted());
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          key.add(rs.getString(1));
        }
      }
    }
    return key;
  }

  /** PostgreSQL's input text of an Iceberg value: lists as array literals, the rest as is. */
  private static String text(Object v) {
    if (v instanceof List<?> list) {
      List<String> items = new ArrayList<>();
      for (Object e : list) {
        items.add(
            e == null
                ? "NULL"
                : "\"" + e.toString().replace("\\", "\\\\").replace("\"", "\\\"") + "\"");
      }
      return "{" + String.join(",", items) + "}";
    }
    if (v instanceof java.nio.ByteBuffer b) {
      StringBuilder sb = new StringBuilder("\\x");
      java.nio.ByteBuffer d = b.duplicate();
      while (d.hasRemaining()) {
        sb.append(String.format("%02x", d.get()));
      }
      return sb.toString();
    }
    return v.toString();
  }
}
