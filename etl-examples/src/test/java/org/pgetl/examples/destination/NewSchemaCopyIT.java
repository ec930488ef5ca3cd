package org.pgetl.examples.destination;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Supplier;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.pgetl.Pipeline;
import org.pgetl.PipelineConfig;
import org.pgetl.destination.Destination;
import org.pgetl.destination.duckdb.DuckDbDestination;
import org.pgetl.destination.postgres.PostgresMirrorDestination;
import org.pgetl.examples.destination.CanonicalTables.Col;
import org.pgetl.examples.destination.CanonicalTables.Kind;
import org.pgetl.store.MemoryStore;
import org.pgetl.store.TableState;
import org.pgetl.testkit.TestDatabase;
import org.pgetl.testkit.WithPostgres;

/**
 * Regression for issue #9 item 11: four tables of one schema that does not exist in the target yet
 * are copied at once (four table-sync workers, two copy connections per table, the destination's
 * copy threads writing concurrently) under a pgbench-like load. The mirror created the schema from
 * two threads at once, one of them failed with a duplicate key in {@code pg_namespace} (SQLSTATE
 * 23505, {@code DESTINATION_QUERY_FAILED}), and its table stayed {@code Errored} for good. No table
 * may error, and the target must equal the source.
 */
@WithPostgres
@Timeout(value = 5, unit = TimeUnit.MINUTES)
class NewSchemaCopyIT {
  private static final Duration WAIT = Duration.ofSeconds(120);
  private static final int TRANSACTIONS = 2_000;
  private static final List<String> TABLES = List.of("accounts", "branches", "tellers", "history");
  private static final Map<String, List<Col>> COLUMNS =
      Map.of(
          "accounts",
          List.of(
              new Col("aid", Kind.INT), new Col("bid", Kind.INT), new Col("abalance", Kind.INT)),
          "branches",
          List.of(new Col("bid", Kind.INT), new Col("bbalance", Kind.INT)),
          "tellers",
          List.of(
              new Col("tid", Kind.INT), new Col("bid", Kind.INT), new Col("tbalance", Kind.INT)),
          "history",
          List.of(
              new Col("hid", Kind.INT),
              new Col("tid", Kind.INT),
              new Col("aid", Kind.INT),
              new Col("delta", Kind.INT)));

  @TempDir Path dir;

  @Test
  void fourTablesOfANewSchemaCopiedAtOnceIntoTheMirrorAllBecomeReady(TestDatabase db)
      throws Exception {
    String mirrorName = db.name() + "_mirror";
    db.server().createDatabase(mirrorName);
    try {
      TestDatabase mirror = new TestDatabase(db.server(), mirrorName);
      run(db, "bench_mirror", () -> new PostgresMirrorDestination(Jdbc.config(mirror), 4));
      try (Connection c = mirror.connect()) {
        assertSameAsSource(db, "bench_mirror", read(c, "", "bench_mirror"));
      }
    } finally {
      db.server().dropDatabase(mirrorName);
    }
  }

  @Test
  void fourTablesOfANewSchemaCopiedAtOnceIntoDuckDbAllBecomeReady(TestDatabase db)
      throws Exception {
    Path file = dir.resolve("bench.duckdb");
    run(db, "bench_duckdb", () -> new DuckDbDestination(file));
    try (Connection c = DriverManager.getConnection("jdbc:duckdb:" + file)) {
      assertSameAsSource(db, "bench_duckdb", read(c, "bench.", "bench_duckdb"));
    }
  }

  /**
   * Creates the source (once per database), copies it with a workload running, waits until every
   * table is ready and a last change arrived, and stops.
   */
  private static void run(TestDatabase db, String pipelineId, Supplier<Destination> destination)
      throws Exception {
    String schema = pipelineId; // one schema per test
    createSource(db, schema);
    MemoryStore store = new MemoryStore(pipelineId);
    PipelineConfig config =
        PipelineConfig.builder()
            .pipelineId(pipelineId)
            .publication(schema + "_pub")
            .source(Jdbc.config(db))
            .maxTableSyncWorkers(4)
            .copyConnectionsPerTable(2)
            .copyMinBytesPerConnection(0) // small tables, copied over every connection
            .batchMaxFill(Duration.ofMillis(200))
            .build();
    ObservedDestination observed = new ObservedDestination(destination.get(), "branches", "none");
    AtomicBoolean stop = new AtomicBoolean();
    ExecutorService load = Executors.newSingleThreadExecutor(r -> new Thread(r, "bench-load"));
    try (Pipeline p = Pipeline.create(config, store, observed)) {
      p.start();
      Future<?> workload = load.submit(() -> workload(db, schema, stop));
      await()
          .atMost(WAIT)
          .failFast(
              "a table is errored",
              () ->
                  store.tableStates().values().stream()
                      .anyMatch(s -> s.type() == TableState.Type.ERRORED))
          .until(
              () ->
                  store.tableStates().size() == TABLES.size()
                      && store.tableStates().values().stream()
                          .allMatch(s -> s.type() == TableState.Type.READY));
      workload.get(WAIT.toSeconds(), TimeUnit.SECONDS);
      db.execute("INSERT INTO " + schema + ".branches VALUES (1000000, 0)"); // the marker
      observed.markerDurable.get(WAIT.toSeconds(), TimeUnit.SECONDS);
      assertThat(observed.failures).as("failures answered by the destination").isEmpty();
    } finally {
      stop.set(true);
      load.shutdownNow();
    }
  }

  private static void createSource(TestDatabase db, String schema) {
    db.execute(
        "CREATE SCHEMA " + schema,
        "CREATE TABLE " + schema + ".branches (bid int PRIMARY KEY, bbalance int)",
        "CREATE TABLE " + schema + ".tellers (tid int PRIMARY KEY, bid int, tbalance int)",
        "CREATE TABLE " + schema + ".accounts (aid int PRIMARY KEY, bid int, abalance int)",
        "CREATE TABLE " + schema + ".history (hid int PRIMARY KEY, tid int, aid int, delta int)",
        // every table large enough that its first batches take a while to write
        "INSERT INTO " + schema + ".branches SELECT g, 0 FROM generate_series(1, 20000) g",
        "INSERT INTO "
            + schema
            + ".tellers SELECT g, 1 + g % 20000, 0 FROM generate_series(1, 20000) g",
        "INSERT INTO "
            + schema
            + ".accounts SELECT g, 1 + g % 20000, 0 FROM generate_series(1, 50000) g",
        "INSERT INTO "
            + schema
            + ".history SELECT g, 1 + g % 20000, 1 + g % 50000, g % 7"
            + " FROM generate_series(1, 20000) g",
        "CREATE PUBLICATION "
            + schema
            + "_pub FOR TABLE "
            + String.join(", ", TABLES.stream().map(t -> schema + "." + t).toList()));
  }

  /** Pgbench-like transactions (three updates and an insert each), until stopped or done. */
  private static Void workload(TestDatabase db, String schema, AtomicBoolean stop)
      throws SQLException {
    Random random = new Random(11);
    int hid = 100_000;
    try (Connection c = db.connect()) {
      c.setAutoCommit(false);
      for (int n = 0; n < TRANSACTIONS && !stop.get(); n++) {
        int aid = 1 + random.nextInt(50_000);
        int tid = 1 + random.nextInt(20_000);
        int bid = 1 + random.nextInt(20_000);
        int delta = random.nextInt(10_000) - 5_000;
        update(
            c,
            "UPDATE " + schema + ".accounts SET abalance = abalance + ? WHERE aid = ?",
            delta,
            aid);
        update(
            c,
            "UPDATE " + schema + ".tellers SET tbalance = tbalance + ? WHERE tid = ?",
            delta,
            tid);
        update(
            c,
            "UPDATE " + schema + ".branches SET bbalance = bbalance + ? WHERE bid = ?",
            delta,
            bid);
        try (PreparedStatement ps =
            c.prepareStatement("INSERT INTO " + schema + ".history VALUES (?, ?, ?, ?)")) {
          ps.setInt(1, ++hid);
          ps.setInt(2, tid);
          ps.setInt(3, aid);
          ps.setInt(4, delta);
          ps.executeUpdate();
        }
        c.commit();
      }
    }
    return null;
  }

  private static void update(Connection c, String sql, int delta, int id) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement(sql)) {
      ps.setInt(1, delta);
      ps.setInt(2, id);
      ps.executeUpdate();
    }
  }

  /** Reads the four tables of a schema; {@code prefix} qualifies them (a DuckDB catalog). */
  private static Map<String, CanonicalTables.Table> read(Connection c, String prefix, String schema)
      throws SQLException {
    List<CanonicalTables.Table> tables = new ArrayList<>();
    for (String t : TABLES) {
      List<Col> columns = COLUMNS.get(t);
      String select = CanonicalTables.select(columns, col -> "\"" + col.name() + "\"");
      tables.add(
          CanonicalTables.read(
              c, t, "SELECT " + select + " FROM " + prefix + schema + "." + t, columns));
    }
    return CanonicalTables.byName(tables);
  }

  private static void assertSameAsSource(
      TestDatabase db, String schema, Map<String, CanonicalTables.Table> target)
      throws SQLException {
    Map<String, CanonicalTables.Table> source;
    try (Connection c = db.connect()) {
      source = read(c, "", schema);
    }
    assertThat(CanonicalTables.differences(source, target))
        .as("tables that differ from the source")
        .isEmpty();
    assertThat(source.get("history").rows()).hasSize(20_000 + TRANSACTIONS); // the load ran
  }
}
