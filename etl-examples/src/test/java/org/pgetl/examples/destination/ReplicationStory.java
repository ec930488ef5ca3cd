package org.pgetl.examples.destination;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.math.BigDecimal;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import org.pgetl.Pipeline;
import org.pgetl.PipelineConfig;
import org.pgetl.destination.Destination;
import org.pgetl.examples.destination.CanonicalTables.Col;
import org.pgetl.examples.destination.CanonicalTables.Kind;
import org.pgetl.store.MemoryStore;
import org.pgetl.store.TableState;
import org.pgetl.testkit.TestDatabase;

/**
 * One end-to-end story for a destination, against a real source database:
 *
 * <ol>
 *   <li>a source schema with numeric, timestamptz, jsonb and text[] columns, a text column stored
 *       out of line (TOAST, over 2 kB) in a third of the rows, a table keyed on (int, timestamptz),
 *       and a table with REPLICA IDENTITY FULL and no key (with equal rows);
 *   <li>a pipeline copies it while a workload of inserts, updates (many leave the TOASTed column
 *       unchanged, which pgoutput sends as unchanged TOAST: a {@code Partial} update) and deletes
 *       runs concurrently;
 *   <li>{@code ALTER TABLE ... ADD COLUMN} while the workload streams, and a restart in the middle
 *       of the workload: the pipeline is closed and a new one starts with the same store and a new
 *       destination instance over the same data;
 *   <li>more workload, then a marker row; once the marker's insert is answered durable, the
 *       pipeline is closed and the tables can be compared.
 * </ol>
 */
final class ReplicationStory {
  static final String PUBLICATION = "story_pub";
  static final String MARKER_TABLE = "markers";
  static final String ADDED_COLUMN = "status";

  /** Every compared table with its final columns, in order. */
  static final Map<String, List<Col>> TABLES =
      Map.of(
          "accounts",
          List.of(
              new Col("id", Kind.INT),
              new Col("balance", Kind.NUMERIC),
              new Col("opened", Kind.TIMESTAMPTZ),
              new Col("profile", Kind.JSON),
              new Col("tags", Kind.TEXT_ARRAY),
              new Col("note", Kind.TEXT),
              new Col(ADDED_COLUMN, Kind.TEXT)),
          "readings",
          List.of(
              new Col("sensor", Kind.INT),
              new Col("taken", Kind.TIMESTAMPTZ),
              new Col("value", Kind.FLOAT)),
          "audit_log",
          List.of(
              new Col("kind", Kind.TEXT),
              new Col("payload", Kind.TEXT),
              new Col("amount", Kind.NUMERIC)),
          MARKER_TABLE,
          List.of(new Col("id", Kind.INT)));

  private static final Duration CATCH_UP = Duration.ofSeconds(90);
  private static final Instant BASE = Instant.parse("2024-01-01T00:00:00Z");
  private static final String[] WORDS = {"red", "green", "x y", "q\"uote", "a,b", "", "ünï"};

  private final TestDatabase db;
  private final String pipelineId;
  private final Random random = new Random(20241129);
  private int nextAccount;
  private int nextReading;
  private boolean columnAdded;

  /** What the two pipeline runs saw, for assertions. */
  record Seen(int partialUpdates, int relationsWithAddedColumn, int copiedRows) {}

  ReplicationStory(TestDatabase db, String pipelineId) {
    this.db = db;
    this.pipelineId = pipelineId;
  }

  // --- the story

  /**
   * Runs the whole story, with a new destination from {@code destinations} for each pipeline run.
   *
   * @return what the destinations were sent
   */
  Seen run(Supplier<Destination> destinations) throws Exception {
    createSource();
    MemoryStore store = new MemoryStore(pipelineId);
    PipelineConfig config = config();
    ExecutorService workload =
        Executors.newSingleThreadExecutor(r -> new Thread(r, "story-workload-" + pipelineId));
    try (Connection source = db.connect()) {
      source.setAutoCommit(false);
      ObservedDestination first = observe(destinations.get());
      Pipeline p1 = Pipeline.create(config, store, first);
      Future<?> phaseA;
      Future<?> phaseB;
      CountDownLatch halfway = new CountDownLatch(1);
      try {
        p1.start();
        phaseA = workload.submit(() -> transactions(source, 250)); // during the copy
        await()
            .atMost(CATCH_UP)
            .until(
                () ->
                    store.tableStates().size() == TABLES.size()
                        && store.tableStates().values().stream()
                            .allMatch(s -> s.type() == TableState.Type.READY));
        phaseA.get(CATCH_UP.toSeconds(), TimeUnit.SECONDS);
        phaseB =
            workload.submit(
                () -> {
                  transactions(source, 100);
                  execute(source, "ALTER TABLE accounts ADD COLUMN " + ADDED_COLUMN + " text");
                  columnAdded = true;
                  transactions(source, 100);
                  halfway.countDown();
                  transactions(source, 200);
                  return null;
                });
        assertThat(halfway.await(CATCH_UP.toSeconds(), TimeUnit.SECONDS)).isTrue();
        await().atMost(CATCH_UP).until(() -> first.relationsWithColumn.get() > 0);
      } finally {
        p1.close(); // the restart, while the workload goes on
      }
      assertThat(first.failures).as("failures answered by the first destination").isEmpty();

      ObservedDestination second = observe(destinations.get());
      try (Pipeline p2 = Pipeline.create(config, store, second)) {
        p2.start();
        phaseB.get(CATCH_UP.toSeconds(), TimeUnit.SECONDS);
        workload
            .submit(() -> transactions(source, 250))
            .get(CATCH_UP.toSeconds(), TimeUnit.SECONDS);
        execute(source, "INSERT INTO " + MARKER_TABLE + " VALUES (1)");
        second.markerDurable.get(CATCH_UP.toSeconds(), TimeUnit.SECONDS);
      }
      assertThat(second.failures).as("failures answered by the second destination").isEmpty();
      return new Seen(
          first.partialUpdates.get() + second.partialUpdates.get(),
          first.relationsWithColumn.get() + second.relationsWithColumn.get(),
          first.copiedRows.get() + second.copiedRows.get());
    } finally {
      workload.shutdownNow();
    }
  }

  private ObservedDestination observe(Destination d) {
    return new ObservedDestination(d, MARKER_TABLE, ADDED_COLUMN);
  }

  PipelineConfig config() {
    return PipelineConfig.builder()
        .pipelineId(pipelineId)
        .publication(PUBLICATION)
        .source(Jdbc.config(db))
        .batchMaxFill(Duration.ofMillis(200))
        .maxTableSyncWorkers(2)
        .copyConnectionsPerTable(2)
        .copyMinBytesPerConnection(0) // small tables, copied over every connection
        .batchMaxBytes(256 * 1024) // several batches per table, so partitions interleave
        .shutdownTimeout(Duration.ofSeconds(30))
        .build();
  }

  // --- the source

  private void createSource() throws SQLException {
    db.execute(
        "CREATE TABLE accounts (id bigint PRIMARY KEY, balance numeric(12,2),"
            + " opened timestamptz, profile jsonb, tags text[], note text)",
        "ALTER TABLE accounts ALTER COLUMN note SET STORAGE EXTERNAL", // out of line past 2 kB
        "CREATE TABLE readings (sensor int, taken timestamptz, value double precision,"
            + " PRIMARY KEY (sensor, taken))",
        "CREATE TABLE audit_log (kind text, payload text, amount numeric)",
        "ALTER TABLE audit_log REPLICA IDENTITY FULL",
        "CREATE TABLE " + MARKER_TABLE + " (id int PRIMARY KEY)",
        "CREATE PUBLICATION "
            + PUBLICATION
            + " FOR TABLE accounts, readings, audit_log, "
            + MARKER_TABLE);
    try (Connection c = db.connect()) {
      c.setAutoCommit(false);
      for (int i = 0; i < 1200; i++) {
        insertAccount(c);
      }
      for (int i = 0; i < 1000; i++) {
        insertReading(c);
      }
      for (int i = 0; i < 300; i++) {
        insertAudit(c);
      }
      c.commit();
    }
  }

  /** Runs {@code count} small random transactions of one to four changes each. */
  private Void transactions(Connection c, int count) throws SQLException {
    for (int t = 0; t < count; t++) {
      int changes = 1 + random.nextInt(4);
      for (int i = 0; i < changes; i++) {
        change(c);
      }
      c.commit();
    }
    return null;
  }

  private void change(Connection c) throws SQLException {
    int dice = random.nextInt(100);
    long account = 1 + random.nextInt(Math.max(1, nextAccount));
    if (dice < 20) {
      insertAccount(c);
    } else if (dice < 45) {
      // leaves note unchanged: an unchanged TOAST value for a third of the accounts
      String set = columnAdded && random.nextBoolean() ? ", " + ADDED_COLUMN + " = ?" : "";
      try (PreparedStatement ps =
          c.prepareStatement("UPDATE accounts SET balance = balance + ?" + set + " WHERE id = ?")) {
        ps.setBigDecimal(1, money());
        int p = 2;
        if (!set.isEmpty()) {
          ps.setString(p++, WORDS[random.nextInt(WORDS.length)]);
        }
        ps.setLong(p, account);
        ps.executeUpdate();
      }
    } else if (dice < 52) {
      try (PreparedStatement ps =
          c.prepareStatement("UPDATE accounts SET note = ?, tags = ? WHERE id = ?")) {
        ps.setString(1, note(account + 1)); // a short note becomes long and back
        ps.setArray(2, c.createArrayOf("text", tags()));
        ps.setLong(3, account);
        ps.executeUpdate();
      }
    } else if (dice < 58) {
      update(c, "DELETE FROM accounts WHERE id = ?", account);
    } else if (dice < 70) {
      insertReading(c);
    } else if (dice < 78) {
      try (PreparedStatement ps =
          c.prepareStatement("UPDATE readings SET value = value * 2 + 0.1 WHERE sensor = ?")) {
        ps.setInt(1, 1 + random.nextInt(20));
        ps.executeUpdate();
      }
    } else if (dice < 82) {
      try (PreparedStatement ps =
          c.prepareStatement(
              "DELETE FROM readings WHERE (sensor, taken) IN"
                  + " (SELECT sensor, taken FROM readings WHERE sensor = ? LIMIT 2)")) {
        ps.setInt(1, 1 + random.nextInt(20));
        ps.executeUpdate();
      }
    } else if (dice < 90) {
      insertAudit(c);
    } else if (dice < 95) {
      try (PreparedStatement ps =
          c.prepareStatement(
              "UPDATE audit_log SET amount = amount + 1 WHERE ctid ="
                  + " (SELECT ctid FROM audit_log WHERE kind = ? LIMIT 1)")) {
        ps.setString(1, auditKind());
        ps.executeUpdate();
      }
    } else {
      try (PreparedStatement ps =
          c.prepareStatement(
              "DELETE FROM audit_log WHERE ctid ="
                  + " (SELECT ctid FROM audit_log WHERE kind = ? LIMIT 1)")) {
        ps.setString(1, auditKind());
        ps.executeUpdate();
      }
    }
  }

  private void insertAccount(Connection c) throws SQLException {
    long id = ++nextAccount;
    try (PreparedStatement ps =
        c.prepareStatement(
            "INSERT INTO accounts (id, balance, opened, profile, tags, note)"
                + " VALUES (?, ?, ?, jsonb_build_object('n', ?::int, 'name', ?::text, 'vip', ?::bool),"
                + " ?, ?)")) {
      ps.setLong(1, id);
      ps.setBigDecimal(2, money());
      ps.setObject(
          3,
          OffsetDateTime.ofInstant(
              BASE.plusSeconds(random.nextInt(100_000_000))
                  .plusNanos(random.nextInt(1_000_000) * 1000L),
              ZoneOffset.UTC));
      ps.setInt(4, random.nextInt(1000));
      ps.setString(5, "client " + id + " ✓");
      ps.setBoolean(6, random.nextBoolean());
      ps.setArray(7, id % 7 == 0 ? null : c.createArrayOf("text", tags()));
      ps.setString(8, note(id));
      ps.executeUpdate();
    }
  }

  private void insertReading(Connection c) throws SQLException {
    int n = ++nextReading;
    try (PreparedStatement ps = c.prepareStatement("INSERT INTO readings VALUES (?, ?, ?)")) {
      ps.setInt(1, 1 + random.nextInt(20));
      ps.setObject(2, OffsetDateTime.ofInstant(BASE.plusMillis(n * 1001L), ZoneOffset.UTC));
      ps.setDouble(3, random.nextInt(10_000) / 100.0 + 1e-9);
      ps.executeUpdate();
    }
  }

  private void insertAudit(Connection c) throws SQLException {
    // few distinct values: the table holds equal rows, which a full-row match must tell apart
    try (PreparedStatement ps = c.prepareStatement("INSERT INTO audit_log VALUES (?, ?, ?)")) {
      ps.setString(1, auditKind());
      ps.setString(2, "payload " + random.nextInt(5));
      ps.setBigDecimal(3, BigDecimal.valueOf(random.nextInt(4), 1));
      ps.executeUpdate();
    }
  }

  private String auditKind() {
    return "kind" + random.nextInt(6);
  }

  private BigDecimal money() {
    return BigDecimal.valueOf(random.nextInt(2_000_000) - 1_000_000, 2);
  }

  private String[] tags() {
    String[] tags = new String[random.nextInt(4)];
    for (int i = 0; i < tags.length; i++) {
      tags[i] = WORDS[random.nextInt(WORDS.length)];
    }
    return tags;
  }

  /** A long, poorly compressible note for every third account, else a short one. */
  private String note(long id) {
    if (id % 3 != 0) {
      return "short note " + id;
    }
    StringBuilder sb = new StringBuilder(3000);
    while (sb.length() < 3000) {
      sb.append(Long.toString(random.nextLong(), 36)).append(' ');
    }
    return sb.toString();
  }

  private static void update(Connection c, String sql, long id) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement(sql)) {
      ps.setLong(1, id);
      ps.executeUpdate();
    }
  }

  private static void execute(Connection c, String sql) throws SQLException {
    try (Statement s = c.createStatement()) {
      s.execute(sql);
    }
    c.commit();
  }

  // --- reading

  /** Reads the source tables, the reference every destination is compared with. */
  Map<String, CanonicalTables.Table> sourceTables() throws SQLException {
    try (Connection c = db.connect()) {
      return postgresTables(c);
    }
  }

  /** Reads the compared tables from a PostgreSQL database (the source or a mirror). */
  static Map<String, CanonicalTables.Table> postgresTables(Connection c) throws SQLException {
    List<CanonicalTables.Table> tables = new ArrayList<>();
    for (Map.Entry<String, List<Col>> t : TABLES.entrySet()) {
      String select = CanonicalTables.select(t.getValue(), col -> "\"" + col.name() + "\"");
      tables.add(
          CanonicalTables.read(
              c, t.getKey(), "SELECT " + select + " FROM public." + t.getKey(), t.getValue()));
    }
    return CanonicalTables.byName(tables);
  }

  /** Fails with the differences when a destination's tables are not the source's. */
  void assertSameAsSource(Map<String, CanonicalTables.Table> destination) throws SQLException {
    Map<String, CanonicalTables.Table> source = sourceTables();
    assertThat(CanonicalTables.differences(source, destination))
        .as("tables that differ from the source")
        .isEmpty();
    assertThat(source.get("accounts").rows()).hasSizeGreaterThan(1000);
    assertThat(source.get("audit_log").rows()).hasSizeGreaterThan(200);
  }

  /** Returns the source table's oid. */
  long tableOid(String table) {
    return db.queryLong("SELECT ?::regclass::oid", "public." + table);
  }
}
