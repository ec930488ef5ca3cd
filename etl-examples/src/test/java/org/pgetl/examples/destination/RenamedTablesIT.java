package org.pgetl.examples.destination;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.io.StringWriter;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.pgetl.Pipeline;
import org.pgetl.PipelineConfig;
import org.pgetl.destination.Destination;
import org.pgetl.destination.duckdb.DuckDbDestination;
import org.pgetl.destination.postgres.PostgresMirrorDestination;
import org.pgetl.model.TableId;
import org.pgetl.store.MemoryStore;
import org.pgetl.store.TableState;
import org.pgetl.testing.destination.SqlRows;
import org.pgetl.testkit.PostgresServer;
import org.pgetl.testkit.TestDatabase;
import org.pgetl.testkit.WithPostgres;

/**
 * Regression for issue #9 item 15, with the schema-rename case of PostgreSQL's own {@code
 * src/test/subscription/t/100_bugs.pl}: a table {@code sch1.t1} is published ({@code FOR ALL
 * TABLES}) and copied; then one transaction inserts into it, renames its schema to {@code sch2},
 * creates a new {@code sch1} with a new {@code t1}, and inserts into both; the pipeline restarts
 * (PostgreSQL's test refreshes the subscription) and copies the new table. The mirror kept writing
 * the renamed table into {@code "sch1"."t1"}, then dropped it and forgot it when the new table of
 * that name was copied, while the engine counted the renamed table ready. Both tables' rows must be
 * in the destination under their current names, followed by oid.
 */
@WithPostgres
@Timeout(value = 5, unit = TimeUnit.MINUTES)
class RenamedTablesIT {
  private static final Duration WAIT = Duration.ofSeconds(90);
  private static final String PUBLICATION = "tap_pub_sch";

  @TempDir Path dir;

  @Test
  void theMirrorFollowsASchemaRenameByOidAndKeepsBothTablesRows(PostgresServer server)
      throws Exception {
    TestDatabase source = database(server, "rename_mirror_src");
    TestDatabase mirror = database(server, "rename_mirror_dst");
    try {
      Story story =
          new Story(source, () -> new PostgresMirrorDestination(Jdbc.config(mirror), 2)).run();
      try (Connection c = mirror.connect()) {
        assertThat(rows(c, "sch1.t1")).as("the new sch1.t1").containsExactly("2", "5");
        assertThat(rows(c, "sch2.t1")).as("the renamed table").containsExactly("1", "3", "4");
        assertThat(
                SqlRows.query(
                    c,
                    "SELECT target_schema || '.' || target_table FROM _pgetl.mirror_tables"
                        + " WHERE table_oid = "
                        + story.renamed.oid()))
            .containsExactly("sch2.t1");
      }
    } finally {
      server.dropDatabase(source.name());
      server.dropDatabase(mirror.name());
    }
  }

  @Test
  void duckDbFollowsASchemaRenameByOidAndKeepsBothTablesRows(PostgresServer server)
      throws Exception {
    TestDatabase source = database(server, "rename_duckdb_src");
    Path file = dir.resolve("renamed.duckdb");
    try {
      new Story(source, () -> new DuckDbDestination(file)).run();
      try (Connection c = DriverManager.getConnection("jdbc:duckdb:" + file)) {
        assertThat(rows(c, "renamed.sch1.t1")).as("the new sch1.t1").containsExactly("2", "5");
        assertThat(rows(c, "renamed.sch2.t1"))
            .as("the renamed table")
            .containsExactly("1", "3", "4");
      }
    } finally {
      server.dropDatabase(source.name());
    }
  }

  @Test
  void jsonLinesNameEachTableAsItIsNamedWhenTheChangeHappened(PostgresServer server)
      throws Exception {
    TestDatabase source = database(server, "rename_json_src");
    StringWriter out = new StringWriter();
    try {
      Story story = new Story(source, () -> new StdoutJsonDestination(out)).run();
      JsonLinesReader reader = new JsonLinesReader();
      reader.read(out.toString());
      assertThat(values(reader, story.renamed)).containsExactlyInAnyOrder("1", "3", "4");
      assertThat(values(reader, story.created)).containsExactlyInAnyOrder("2", "5");
      List<String> renamedLines = new ArrayList<>();
      for (String line : out.toString().split("\n")) {
        Map<String, Object> l = StrictJson.object(line);
        Object id = l.get("table_id");
        if (id != null && ((Number) id).longValue() == story.renamed.oid()) {
          renamedLines.add(l.get("kind") + " " + l.get("table"));
        }
      }
      assertThat(renamedLines)
          .as("lines of the renamed table")
          .containsSubsequence(
              "insert sch1.t1", "relation sch2.t1", "insert sch2.t1", "insert sch2.t1");
      assertThat(renamedLines.get(renamedLines.size() - 1)).isEqualTo("insert sch2.t1");
    } finally {
      server.dropDatabase(source.name());
    }
  }

  /** The two pipeline runs of the 100_bugs.pl case, with a destination each. */
  private static final class Story {
    private final TestDatabase db;
    private final Supplier<Destination> destinations;
    private final MemoryStore store = new MemoryStore("renames");
    TableId renamed;
    TableId created;

    Story(TestDatabase db, Supplier<Destination> destinations) {
      this.db = db;
      this.destinations = destinations;
    }

    Story run() throws Exception {
      db.execute(
          "CREATE SCHEMA sch1",
          "CREATE TABLE sch1.t1 (c1 int)",
          "CREATE TABLE public.markers (id int PRIMARY KEY)",
          // inserts only, as in PostgreSQL's test: the keyless tables need no replica identity
          "CREATE PUBLICATION " + PUBLICATION + " FOR ALL TABLES WITH (publish = 'insert')");
      renamed = new TableId(db.queryLong("SELECT 'sch1.t1'::regclass::oid"));
      PipelineConfig config =
          PipelineConfig.builder()
              .pipelineId("renames")
              .publication(PUBLICATION)
              .source(Jdbc.config(db))
              .batchMaxFill(Duration.ofMillis(100))
              .build();

      ObservedDestination first = observe();
      try (Pipeline p = Pipeline.create(config, store, first)) {
        p.start();
        awaitReady(2);
        // the transaction of 100_bugs.pl
        try (Connection c = db.connect();
            Statement s = c.createStatement()) {
          s.execute(
              "begin;\n"
                  + "insert into sch1.t1 values(1);\n"
                  + "alter schema sch1 rename to sch2;\n"
                  + "create schema sch1;\n"
                  + "create table sch1.t1(c1 int);\n"
                  + "insert into sch1.t1 values(2);\n"
                  + "insert into sch2.t1 values(3);\n"
                  + "commit;");
        }
        created = new TableId(db.queryLong("SELECT 'sch1.t1'::regclass::oid"));
        db.execute("INSERT INTO markers VALUES (1)");
        first.markerDurable.get(WAIT.toSeconds(), TimeUnit.SECONDS);
      }
      assertThat(first.failures).as("failures answered in the first run").isEmpty();

      // a restart picks up the new table, as REFRESH PUBLICATION does in PostgreSQL's test
      ObservedDestination second = observe();
      try (Pipeline p = Pipeline.create(config, store, second)) {
        p.start();
        awaitReady(3);
        db.execute(
            "INSERT INTO sch2.t1 VALUES (4)",
            "INSERT INTO sch1.t1 VALUES (5)",
            "INSERT INTO markers VALUES (2)");
        second.markerDurable.get(WAIT.toSeconds(), TimeUnit.SECONDS);
      }
      assertThat(second.failures).as("failures answered in the second run").isEmpty();
      return this;
    }

    private ObservedDestination observe() {
      return new ObservedDestination(destinations.get(), "markers", "none");
    }

    private void awaitReady(int tables) {
      await()
          .atMost(WAIT)
          .until(
              () ->
                  store.tableStates().size() == tables
                      && store.tableStates().values().stream()
                          .allMatch(s -> s.type() == TableState.Type.READY));
    }
  }

  private static TestDatabase database(PostgresServer server, String name) {
    server.createDatabase(name);
    return new TestDatabase(server, name);
  }

  private static List<String> rows(Connection c, String table) throws SQLException {
    return SqlRows.query(c, "SELECT c1 FROM " + table + " ORDER BY c1");
  }

  private static List<String> values(JsonLinesReader reader, TableId table) {
    return reader.rows(table.oid()).stream().map(r -> String.valueOf(r.get("c1"))).toList();
  }
}
