package org.pgetl.destination.postgres;

import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.BeforeAll;
import org.pgetl.model.ColumnSchema;
import org.pgetl.model.ReplicatedTableSchema;
import org.pgetl.model.TableName;
import org.pgetl.testkit.TestDatabase;
import org.pgetl.testkit.WithPostgres;
import org.pgetl.testkit.tck.DestinationConformanceTests;

/**
 * The conformance kit on {@link PostgresMirrorDestination}, into a real PostgreSQL database (the
 * test class's own): each test starts from a target without the kit's schema and without pgetl's
 * bookkeeping, and a restart is a new instance over the same database.
 */
@WithPostgres
class PostgresMirrorDestinationConformanceIT
    extends DestinationConformanceTests<PostgresMirrorDestination> {
  private static TestDatabase db;

  @BeforeAll
  static void database(TestDatabase database) {
    db = database;
  }

  @Override
  protected PostgresMirrorDestination newDestination() {
    // the previous test's destination was shut down: its tables can go
    db.execute("DROP SCHEMA IF EXISTS tck CASCADE", "DROP SCHEMA IF EXISTS _pgetl CASCADE");
    return new PostgresMirrorDestination(Jdbc.config(db), 3);
  }

  @Override
  protected PostgresMirrorDestination restart(PostgresMirrorDestination previous) {
    return new PostgresMirrorDestination(Jdbc.config(db), 3);
  }

  @Override
  protected List<List<Object>> contents(
      PostgresMirrorDestination destination, ReplicatedTableSchema table) {
    List<String> names = new ArrayList<>();
    for (ColumnSchema c : table.columns()) {
      names.add(TableName.quoteIdentifier(c.name()));
    }
    List<List<Object>> rows = new ArrayList<>();
    try (Connection c = db.connect();
        Statement s = c.createStatement()) {
      try (ResultSet exists =
          s.executeQuery(
              "SELECT to_regclass('" + table.name().quoted().replace("'", "''") + "') IS NULL")) {
        exists.next();
        if (exists.getBoolean(1)) {
          return rows;
        }
      }
      try (ResultSet rs =
          s.executeQuery("SELECT " + String.join(", ", names) + " FROM " + table.name().quoted())) {
        while (rs.next()) {
          List<Object> row = new ArrayList<>();
          for (int i = 1; i <= names.size(); i++) {
            row.add(rs.getObject(i));
          }
          rows.add(row);
        }
      }
    } catch (SQLException e) {
      throw new AssertionError("reading " + table.name() + " from the mirror failed", e);
    }
    return rows;
  }
}
