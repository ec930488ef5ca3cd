package org.pgetl.examples.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.pgetl.model.TableName;

/** The demo's verification, on two in-memory DuckDB databases standing for source and copy. */
class TableChecksumTest {
  private static final DemoTable TABLE =
      new DemoTable(new TableName("shop", "items"), List.of("id"), List.of("id", "label"), 0);

  @Test
  void differencesNameKeysMissingOnEitherSideAndKeysWhoseValuesDiffer() throws SQLException {
    try (Connection source = table("(1, 'a'), (2, 'b'), (3, 'c'), (5, 'e'), (6, 'f')");
        Connection copy = table("(1, 'a'), (2, 'B'), (4, 'd'), (5, 'e'), (7, 'g')")) {
      assertThat(TableChecksum.differences(source, copy, TABLE, 10))
          .containsExactly(
              "key [2] differs in [label]",
              "key [3] only in the source",
              "key [4] only in the copy",
              "key [6] only in the source",
              "key [7] only in the copy");
      assertThat(TableChecksum.differences(source, copy, TABLE, 2)).hasSize(2);
      assertThat(TableChecksum.differences(source, source, TABLE, 10)).isEmpty();
    }
  }

  @Test
  void differencesOfAnEmptySideListEveryRowOfTheOther() throws SQLException {
    try (Connection source = table("(1, 'a'), (2, 'b')");
        Connection copy = table(null)) {
      assertThat(TableChecksum.differences(source, copy, TABLE, 10))
          .containsExactly("key [1] only in the source", "key [2] only in the source");
      assertThat(TableChecksum.differences(copy, source, TABLE, 10))
          .containsExactly("key [1] only in the copy", "key [2] only in the copy");
    }
  }

  /** A new in-memory database holding shop.items with these rows (none when null). */
  private static Connection table(String values) throws SQLException {
    Connection c = DriverManager.getConnection("jdbc:duckdb:");
    try (Statement s = c.createStatement()) {
      s.execute("CREATE SCHEMA shop");
      s.execute("CREATE TABLE shop.items (id BIGINT PRIMARY KEY, label VARCHAR)");
      if (values != null) {
        s.execute("INSERT INTO shop.items VALUES " + values);
      }
    }
    return c;
  }
}
