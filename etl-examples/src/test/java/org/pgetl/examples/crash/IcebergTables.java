package org.pgetl.examples.crash;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.hadoop.conf.Configuration;
import org.apache.iceberg.CatalogUtil;
import org.apache.iceberg.catalog.Catalog;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.data.IcebergGenerics;
import org.apache.iceberg.data.Record;
import org.apache.iceberg.io.CloseableIterable;

/**
 * Reads the Iceberg tables of a filesystem warehouse with Iceberg's generic reader, as a user
 * would, for {@link CrashLoopIT}: counts rows, and loads tables into a PostgreSQL database so that
 * they are compared with the source by the same SQL as a mirror.
 */
final class IcebergTables {
  private IcebergTables() {}

  private static Catalog catalog(Path warehouse) {
    return CatalogUtil.buildIcebergCatalog(
        "check",
        Map.of("type", "hadoop", "warehouse", warehouse.toAbsolutePath().toUri().toString()),
        new Configuration());
  }

  /** The rows of {@code public.<table>}, 0 while the table does not exist. */
  static long count(Path warehouse, String table) {
    Catalog c = catalog(warehouse);
    TableIdentifier id = TableIdentifier.of("public", table);
    if (!c.tableExists(id)) {
      return 0;
    }
    long n = 0;
    try (CloseableIterable<Record> rs = IcebergGenerics.read(c.loadTable(id)).build()) {
      for (Record ignored : rs) {
        n++;
      }
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    return n;
  }

  /**
   * Creates each table in {@code target} with the source's column types and fills it with the rows
   * of the Iceberg table of the same name.
   */
  static void load(Path warehouse, List<String> tables, Connection source, Connection target)
      throws SQLException {
    Catalog c = catalog(warehouse);
    for (String table : tables) {
      List<String> names = new ArrayList<>();
      List<String> types = new ArrayList<>();
      try (PreparedStatement ps =
          source.prepareStatement(
              "SELECT attname, format_type(atttypid, atttypmod) FROM pg_attribute"
                  + " WHERE attrelid = ?::regclass AND attnum > 0 AND NOT attisdropped"
                  + " ORDER BY attnum")) {
        ps.setString(1, "public." + table);
        try (ResultSet rs = ps.executeQuery()) {
          while (rs.next()) {
            names.add(rs.getString(1));
            types.add(rs.getString(2));
          }
        }
      }
      List<String> defs = new ArrayList<>();
      List<String> params = new ArrayList<>();
      for (int i = 0; i < names.size(); i++) {
        defs.add("\"" + names.get(i) + "\" " + types.get(i));
        params.add("?::" + types.get(i));
      }
      try (Statement s = target.createStatement()) {
        s.execute("DROP TABLE IF EXISTS public." + table);
        s.execute("CREATE TABLE public." + table + " (" + String.join(", ", defs) + ")");
      }
      try (PreparedStatement insert =
              target.prepareStatement(
                  "INSERT INTO public." + table + " VALUES (" + String.join(", ", params) + ")");
          CloseableIterable<Record> rs =
              IcebergGenerics.read(c.loadTable(TableIdentifier.of("public", table))).build()) {
        for (Record r : rs) {
          for (int i = 0; i < names.size(); i++) {
            Object v = r.getField(names.get(i));
            insert.setString(i + 1, v == null ? null : v.toString());
          }
          insert.addBatch();
        }
        insert.executeBatch();
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      }
    }
  }
}
