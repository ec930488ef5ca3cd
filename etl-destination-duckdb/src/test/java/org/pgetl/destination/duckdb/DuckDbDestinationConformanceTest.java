package org.pgetl.destination.duckdb;

import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.io.TempDir;
import org.pgetl.model.ColumnSchema;
import org.pgetl.model.ReplicatedTableSchema;
import org.pgetl.model.TableName;
import org.pgetl.testkit.tck.DestinationConformanceTests;

/**
 * The conformance kit on {@link DuckDbDestination}: contents are read from the file through a
 * second connection, and a restart is a new instance over the same file. The file is named after
 * the kit's schema ({@code tck.duckdb}, schema {@code tck}) on purpose: DuckDB calls the file's
 * catalog {@code tck} too, so an unqualified {@code "tck"."items"} is ambiguous.
 */
class DuckDbDestinationConformanceTest extends DestinationConformanceTests<DuckDbDestination> {
  @TempDir Path dir;

  private Path file() {
    return dir.resolve("tck.duckdb");
  }

  @Override
  protected DuckDbDestination newDestination() {
    return new DuckDbDestination(file());
  }

  @Override
  protected DuckDbDestination restart(DuckDbDestination previous) {
    return new DuckDbDestination(file());
  }

  @Override
  protected List<List<Object>> contents(
      DuckDbDestination destination, ReplicatedTableSchema table) {
    List<String> names = new ArrayList<>();
    for (ColumnSchema c : table.columns()) {
      names.add(TableName.quoteIdentifier(c.name()));
    }
    List<List<Object>> rows = new ArrayList<>();
    try (Connection c = DriverManager.getConnection("jdbc:duckdb:" + file());
        Statement s = c.createStatement()) {
      try (ResultSet exists =
          s.executeQuery(
              "SELECT count(*) FROM duckdb_tables() WHERE schema_name = '"
                  + table.name().schema()
                  + "' AND table_name = '"
                  + table.name().name()
                  + "'")) {
        exists.next();
        if (exists.getLong(1) == 0) {
          return rows;
        }
      }
      // qualified by the database: the file's name (tck) is also the schema's
      String qualified = TableName.quoteIdentifier("tck") + "." + table.name().quoted();
      try (ResultSet rs =
          s.executeQuery(
              // a table without source columns holds one placeholder column: its rows are counted
              "SELECT "
                  + (names.isEmpty() ? DuckDbCatalog.NO_COLUMNS : String.join(", ", names))
                  + " FROM "
                  + qualified)) {
        while (rs.next()) {
          List<Object> row = new ArrayList<>();
          for (int i = 1; i <= names.size(); i++) {
            row.add(rs.getObject(i));
          }
          rows.add(row);
        }
      }
    } catch (SQLException e) {
      throw new AssertionError("reading " + table.name() + " from " + file() + " failed", e);
    }
    return rows;
  }
}
