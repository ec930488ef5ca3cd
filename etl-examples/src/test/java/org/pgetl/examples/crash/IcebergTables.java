package org.pgetl.examples.crash;

import java.nio.file.Path;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.List;
import org.pgetl.destination.iceberg.IcebergTableReader;
import org.pgetl.examples.cli.IcebergCopy;
import org.pgetl.model.TableName;

/**
 * Reads the Iceberg tables of a filesystem warehouse the way a user would, for {@link CrashLoopIT}:
 * counts rows, and loads tables into a PostgreSQL database (as the demo's verification does) so
 * that they are compared with the source by the same SQL as a mirror.
 */
final class IcebergTables {
  private IcebergTables() {}

  /** The rows of {@code public.<table>}, 0 while the table does not exist. */
  static long count(Path warehouse, String table) {
    IcebergTableReader reader = IcebergTableReader.hadoop(warehouse);
    TableName name = new TableName("public", table);
    if (!reader.exists(name)) {
      return 0;
    }
    long[] n = {0};
    reader.forEachRow(name, List.of(), row -> n[0]++);
    return n[0];
  }

  /**
   * Creates each table in {@code target} with the source's column types and fills it with the rows
   * of the Iceberg table of the same name.
   */
  static void load(Path warehouse, List<String> tables, Connection source, Connection target)
      throws SQLException {
    IcebergCopy copy = new IcebergCopy(warehouse);
    for (String table : tables) {
      copy.load(new TableName("public", table), source, target);
    }
  }
}
