package org.pgetl.examples.conformance;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.io.IOException;
import java.io.Writer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.ConcurrentSkipListMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Stream;
import org.awaitility.core.ConditionTimeoutException;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.TestFactory;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.pgetl.PgConnectionConfig;
import org.pgetl.Pipeline;
import org.pgetl.PipelineConfig;
import org.pgetl.destination.postgres.PostgresMirrorDestination;
import org.pgetl.examples.ChildJvm;
import org.pgetl.store.MemoryStore;
import org.pgetl.testkit.PostgresServer;
import org.pgetl.testkit.TestDatabase;
import org.pgetl.testkit.WithPostgres;

/**
 * Replays the publisher side of PostgreSQL's own logical replication tests ({@code
 * src/test/subscription/t/*.pl}) through pgetl into a {@link PostgresMirrorDestination}, and
 * compares the mirror with the source row by row. See {@code README.md} in this package for the
 * scenarios, what was left out and why, and the results.
 *
 * <p>Each scenario ({@code src/test/resources/conformance/*.sql}, format in {@link ScenarioScript})
 * runs twice, each time in a source database and a mirror database of its own on the shared test
 * server: straight, with the pipeline in this JVM; and killed, with the pipeline in a child JVM
 * ({@link ConformanceChild}) that is killed with SIGKILL at the scenario's kill point and started
 * again at once while the workload goes on. After the initial copy and after the workload, every
 * published table (published columns only, the publication's row filter applied, as {@code
 * pg_publication_tables} lists them) must come to hold the same rows, as sorted text, in the source
 * and in the mirror, within {@link #CATCH_UP_WAIT}, and the scenario's explicit expectations must
 * hold.
 *
 * <p>The runs go side by side, three at a time ({@code -Dpgetl.conformance.parallel=N}); {@code
 * -Dpgetl.conformance.scenarios=001,013} runs only the scenarios whose names start with one of the
 * prefixes.
 */
@WithPostgres
@Timeout(value = 15, unit = TimeUnit.MINUTES)
class SubscriptionConformanceIT {
  /** The scenarios, in the order of PostgreSQL's test files. */
  static final List<String> SCENARIOS =
      List.of(
          "001_rep_changes",
          "001_rep_changes_ins_only",
          "002_types",
          "003_constraints",
          "004_sync",
          "006_rewrite",
          "008_diff_schema",
          "010_truncate",
          "010_truncate_insert_only",
          "011_generated",
          "013_partition",
          "013_partition_root",
          "014_binary",
          "015_stream",
          "016_stream_subxact",
          "017_stream_ddl",
          "018_stream_subxact_abort",
          "019_stream_subxact_ddl_abort",
          "024_add_drop_pub",
          "025_rep_changes_for_schema",
          "028_row_filter",
          "031_column_list",
          "100_bugs");

  /** The longest wait for the mirror to catch up with the source. */
  private static final Duration CATCH_UP_WAIT = Duration.ofSeconds(45);

  private static final Duration POLL = Duration.ofMillis(50);

  /** The longest a dynamic test waits for its run, from the moment it starts waiting. */
  private static final Duration RUN_LIMIT = Duration.ofMinutes(6);

  /** The outcome of each scenario and pass, printed after the class. */
  private static final Map<String, String> RESULTS = new ConcurrentSkipListMap<>();

  /** The two ways a scenario runs. */
  enum Pass {
    STRAIGHT,
    KILLED
  }

  /** The pipeline settings of both passes: small batches, a fast publication refresh. */
  static PipelineConfig pipelineConfig(
      String pipelineId, String publication, PgConnectionConfig source, boolean binary) {
    return PipelineConfig.builder()
        .pipelineId(pipelineId)
        .publication(publication)
        .source(source)
        .batchMaxBytes(256 * 1024)
        .batchMaxFill(Duration.ofMillis(50))
        .maxTableSyncWorkers(2)
        .copyConnectionsPerTable(1)
        .retryDelay(Duration.ofMillis(500))
        .retryMaxAttempts(3)
        .statusInterval(Duration.ofSeconds(1))
        .publicationRefreshInterval(Duration.ofSeconds(1))
        .shutdownTimeout(Duration.ofSeconds(10))
        .pgoutputBinary(binary)
        .pgoutputStreaming(true)
        .build();
  }

  /** Runs the scenarios side by side on the one server; its threads end with the class. */
  private static @Nullable ExecutorService runner;

  @TestFactory
  Stream<DynamicTest> scenarios(TestDatabase db, @TempDir Path dir) {
    String only = System.getProperty("pgetl.conformance.scenarios", "");
    List<String> prefixes = only.isBlank() ? List.of("") : Arrays.asList(only.split(","));
    int parallel = Integer.getInteger("pgetl.conformance.parallel", 3);
    AtomicInteger threads = new AtomicInteger();
    ExecutorService pool =
        Executors.newFixedThreadPool(
            parallel,
            r -> {
              Thread t = new Thread(r, "conformance-" + threads.incrementAndGet());
              t.setDaemon(true);
              return t;
            });
    runner = pool;
    // every run is submitted at once; each dynamic test waits for its own and reports it
    List<DynamicTest> tests = new ArrayList<>();
    for (String s : SCENARIOS) {
      if (prefixes.stream().noneMatch(p -> s.startsWith(p.strip()))) {
        continue;
      }
      for (Pass pass : Pass.values()) {
        Future<?> run =
            pool.submit(
                () -> {
                  runAndRecord(db.server(), dir, s, pass);
                  return null;
                });
        tests.add(
            DynamicTest.dynamicTest(
                s + " " + pass.name().toLowerCase(Locale.ROOT),
                () -> {
                  try {
                    run.get(RUN_LIMIT.toMillis(), TimeUnit.MILLISECONDS);
                  } catch (ExecutionException e) {
                    throw e.getCause();
                  }
                }));
      }
    }
    return tests.stream();
  }

  @AfterAll
  static void printResults() {
    if (runner != null) {
      runner.shutdownNow();
    }
    StringBuilder sb = new StringBuilder("SubscriptionConformanceIT results:\n");
    RESULTS.forEach((k, v) -> sb.append(String.format("  %-40s %s%n", k, v)));
    System.out.println(sb);
  }

  private static void runAndRecord(PostgresServer server, Path dir, String scenario, Pass pass)
      throws Exception {
    long started = System.nanoTime();
    String key = scenario + " " + pass.name().toLowerCase(Locale.ROOT);
    try {
      new Run(server, dir, ScenarioScript.load(scenario), pass).run();
      RESULTS.put(key, String.format("pass (%.1f s)", (System.nanoTime() - started) / 1e9));
    } catch (Throwable e) {
      String first = String.valueOf(e.getMessage()).lines().findFirst().orElse("");
      RESULTS.put(
          key,
          String.format(
              "FAIL (%.1f s): %s", (System.nanoTime() - started) / 1e9, abbreviate(first, 300)));
      throw e;
    }
  }

  private static String abbreviate(String s, int max) {
    return s.length() <= max ? s : s.substring(0, max) + "...";
  }

  /** One scenario in one pass: its databases, sessions and pipeline. */
  private static final class Run {
    private final PostgresServer server;
    private final Path dir;
    private final ScenarioScript script;
    private final Pass pass;
    private final String pipelineId;
    private final TestDatabase source;
    private final TestDatabase mirror;
    private final Map<Integer, Connection> sessions = new HashMap<>();
    private Connection control;
    private Connection mirrorConn;
    private Pipeline pipeline;
    private ChildJvm child;
    private final List<ChildJvm> children = new ArrayList<>();

    Run(PostgresServer server, Path dir, ScenarioScript script, Pass pass) {
      this.server = server;
      this.dir = dir;
      this.script = script;
      this.pass = pass;
      String tag = script.name.substring(0, 3) + "_" + Math.abs(script.name.hashCode() % 1000);
      String suffix = pass == Pass.STRAIGHT ? "s" : "k";
      this.pipelineId = "conf_" + tag + "_" + suffix;
      String base = "pgetl_conf_" + tag + "_" + suffix + "_" + ProcessHandle.current().pid();
      this.source = new TestDatabase(server, base);
      this.mirror = new TestDatabase(server, base + "_mirror");
    }

    void run() throws Exception {
      server.dropDatabase(source.name());
      server.dropDatabase(mirror.name());
      server.createDatabase(source.name());
      server.createDatabase(mirror.name());
      try {
        if (script.streaming != null) {
          String setting =
              script.streaming.equals("immediate")
                  ? "debug_logical_replication_streaming = immediate"
                  : "logical_decoding_work_mem = '" + script.streaming + "'";
          source.execute("ALTER DATABASE " + source.name() + " SET " + setting);
        }
        control = source.connect();
        mirrorConn = mirror.connect();
        for (String sql : script.setup) {
          execute(session(1), sql);
        }
        startPipeline();
        // as the original tests wait for the initial sync before their workload: every table,
        // those that differ after the workload included, equals the source once copied
        assertMirrorEqualsSource(true);
        List<ScenarioScript.Step> steps = withKillPoint(script);
        for (ScenarioScript.Step step : steps) {
          if (step instanceof ScenarioScript.Sql sql) {
            execute(session(sql.session()), sql.text());
          } else if (step instanceof ScenarioScript.Kill) {
            if (pass == Pass.KILLED) {
              // as the original tests, which restart the subscriber once its tables are synced: a
              // kill during a table's catch-up copies it again, which for a publication of inserts
              // only legitimately differs from a subscriber that did not restart
              awaitTablesSynced();
              killAndRestart();
            }
          } else if (step instanceof ScenarioScript.Expect expect) {
            awaitExpectation(expect);
          } else {
            throw new IllegalStateException("unknown step " + step);
          }
        }
        assertMirrorEqualsSource(false);
        for (String table : script.absent) {
          assertThat(query(mirrorConn, "SELECT to_regclass('" + table + "') IS NULL"))
              .as("the mirror has no table %s", table)
              .isEqualTo("t");
        }
        if (script.streaming != null) {
          assertStreamed();
        }
      } finally {
        stopPipeline();
        for (Connection c : sessions.values()) {
          closeQuietly(c);
        }
        closeQuietly(control);
        closeQuietly(mirrorConn);
        server.dropDatabase(source.name());
        server.dropDatabase(mirror.name());
      }
    }

    /** The steps with a kill point: the script's, or half-way through its statements. */
    private static List<ScenarioScript.Step> withKillPoint(ScenarioScript script) {
      if (script.hasKillPoint()) {
        return script.workload;
      }
      List<ScenarioScript.Step> steps = new ArrayList<>(script.workload);
      long statements = steps.stream().filter(s -> s instanceof ScenarioScript.Sql).count();
      int seen = 0;
      for (int i = 0; i < steps.size(); i++) {
        if (steps.get(i) instanceof ScenarioScript.Sql && ++seen > statements / 2) {
          steps.add(i, new ScenarioScript.Kill());
          break;
        }
      }
      return steps;
    }

    private Connection session(int n) throws SQLException {
      Connection c = sessions.get(n);
      if (c == null) {
        c = source.connect();
        sessions.put(n, c);
      }
      return c;
    }

    private void execute(Connection c, String sql) {
      try (Statement s = c.createStatement()) {
        s.execute(sql);
      } catch (SQLException e) {
        throw new AssertionError("scenario statement failed: " + sql + ": " + e.getMessage(), e);
      }
    }

    // --- the pipeline

    private PgConnectionConfig connection(TestDatabase db) {
      return PgConnectionConfig.builder()
          .host(db.host())
          .port(db.port())
          .database(db.name())
          .user(db.user())
          .password(db.password())
          .build();
    }

    private void startPipeline() throws Exception {
      if (pass == Pass.STRAIGHT) {
        pipeline =
            Pipeline.create(
                pipelineConfig(pipelineId, script.publication, connection(source), script.binary),
                new MemoryStore(pipelineId),
                new PostgresMirrorDestination(connection(mirror), 2));
        try {
          pipeline.start();
        } catch (RuntimeException e) {
          throw new AssertionError("pipeline failed to start: " + e, e);
        }
      } else {
        spawn();
        if (!child.awaitLine(
            l -> l.startsWith(ConformanceChild.STARTED) || l.startsWith(ConformanceChild.FAILED),
            1)) {
          throw new AssertionError("pipeline failed to start:\n" + tail(child));
        }
        assertPipelineRuns();
      }
    }

    private void spawn() throws IOException {
      Path settings = dir.resolve(pipelineId + ".properties");
      Properties p = new Properties();
      p.setProperty("host", source.host());
      p.setProperty("port", String.valueOf(source.port()));
      p.setProperty("user", source.user());
      p.setProperty("password", source.password());
      p.setProperty("source", source.name());
      p.setProperty("target", mirror.name());
      p.setProperty("pipeline", pipelineId);
      p.setProperty("publication", script.publication);
      p.setProperty("binary", String.valueOf(script.binary));
      try (Writer w = Files.newBufferedWriter(settings)) {
        p.store(w, null);
      }
      child =
          ChildJvm.start(
              dir,
              ConformanceChild.class,
              List.of("-Xmx256m", "-XX:TieredStopAtLevel=1", "-Xshare:auto"),
              List.of(settings.toString()));
      children.add(child);
    }

    /** Waits until every table of the pipeline is SyncDone or Ready in the store. */
    private void awaitTablesSynced() {
      await()
          .atMost(CATCH_UP_WAIT)
          .pollInterval(POLL)
          .until(
              () -> {
                assertPipelineRuns();
                try {
                  return query(
                          mirrorConn,
                          "SELECT count(*) FROM etl.replication_state WHERE is_current"
                              + " AND pipeline_id = '"
                              + pipelineId
                              + "' AND state NOT IN ('sync_done', 'ready')")
                      .equals("0");
                } catch (java.sql.SQLException e) {
                  return false; // the store's schema is not there yet
                }
              });
    }

    /** SIGKILL, then a new process at once: the workload goes on while it starts. */
    private void killAndRestart() throws Exception {
      child.process.destroyForcibly();
      if (!child.process.waitFor(30, TimeUnit.SECONDS)) {
        throw new AssertionError("the killed child did not end");
      }
      spawn();
    }

    private void stopPipeline() {
      if (pipeline != null) {
        pipeline.close();
      }
      for (ChildJvm c : children) {
        c.process.destroyForcibly();
        try {
          c.process.waitFor(30, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
        }
      }
    }

    /** Fails at once when the pipeline stopped by itself. */
    private void assertPipelineRuns() throws InterruptedException {
      if (pipeline != null && pipeline.awaitTermination(Duration.ZERO)) {
        throw new AssertionError(
            "pipeline failed: " + pipeline.failure().map(String::valueOf).orElse("stopped"));
      }
      if (child != null) {
        String failed =
            child.lines().stream()
                .filter(l -> l.startsWith(ConformanceChild.FAILED))
                .findFirst()
                .orElse(null);
        if (failed != null || !child.process.isAlive()) {
          throw new AssertionError(
              "pipeline failed: "
                  + (failed != null ? failed : "child exited")
                  + "\n"
                  + tail(child));
        }
      }
    }

    /** The child pipeline's last lines, for a failure message of the killed pass. */
    private String childTail() {
      if (child == null) {
        return "";
      }
      StringBuilder b = new StringBuilder();
      for (ChildJvm c : children) {
        if (c != child) {
          // what the killed process did matters as much (a copy it left unfinished)
          b.append("\na killed child pipeline's last lines:\n").append(tail(c));
        }
      }
      return b.append("\nthe child pipeline's last lines:\n").append(tail(child)).toString();
    }

    private static String tail(ChildJvm c) {
      List<String> lines = c.lines();
      return String.join("\n", lines.subList(Math.max(0, lines.size() - 30), lines.size()));
    }

    // --- catching up and comparing

    /** Waits until a query on the mirror yields the expected text, then asserts it. */
    private void awaitExpectation(ScenarioScript.Expect expect) throws Exception {
      String[] last = {null};
      try {
        await()
            .atMost(CATCH_UP_WAIT)
            .pollInterval(POLL)
            .until(
                () -> {
                  assertPipelineRuns();
                  try {
                    last[0] = query(mirrorConn, expect.sql());
                  } catch (SQLException e) {
                    last[0] = "(" + e.getMessage().lines().findFirst().orElse("") + ")";
                  }
                  return expect.expected().equals(last[0]);
                });
      } catch (ConditionTimeoutException e) {
        // reported below with the last answer
      }
      assertThat(last[0])
          .as("mirror: %s%s", expect.sql(), childTail())
          .isEqualTo(expect.expected());
    }

    /**
     * Waits until every published table holds the same rows in the mirror as in the source (a table
     * added late may still be in its copy), then asserts it; after the workload, the tables the
     * script declares different are left out.
     */
    private void assertMirrorEqualsSource(boolean initial) throws Exception {
      Map<String, String>[] last = new Map[1];
      try {
        await()
            .atMost(CATCH_UP_WAIT)
            .pollInterval(Duration.ofMillis(200))
            .until(
                () -> {
                  assertPipelineRuns();
                  last[0] = differences(initial);
                  return last[0].isEmpty();
                });
      } catch (ConditionTimeoutException e) {
        // reported below with the differences
      }
      assertThat(last[0])
          .as("published tables whose mirror differs from the source%s", childTail())
          .isEmpty();
    }

    /** Compares every published table; returns a description of each difference. */
    private Map<String, String> differences(boolean initial) throws SQLException {
      Map<String, String> out = new java.util.TreeMap<>();
      for (PublishedTable t : publishedTables()) {
        if (!initial
            && (script.differs.containsKey(t.name) || script.differs.containsKey(t.qualified()))) {
          continue;
        }
        List<String> src = rows(control, t.sourceQuery());
        List<String> dst;
        if ("t".equals(query(mirrorConn, "SELECT to_regclass('" + t.qualified() + "') IS NULL"))) {
          out.put(t.qualified(), "missing in the mirror (source has " + src.size() + " rows)");
          continue;
        }
        try {
          dst = rows(mirrorConn, t.mirrorQuery());
        } catch (SQLException e) {
          out.put(t.qualified(), "cannot read the mirror: " + e.getMessage());
          continue;
        }
        if (!src.equals(dst)) {
          List<String> missing = new ArrayList<>(src);
          dst.forEach(missing::remove);
          List<String> extra = new ArrayList<>(dst);
          src.forEach(extra::remove);
          out.put(
              t.qualified(),
              String.format(
                  "source %d rows, mirror %d; missing in the mirror %s; extra in the mirror %s",
                  src.size(),
                  dst.size(),
                  abbreviate(missing.toString(), 400),
                  abbreviate(extra.toString(), 400)));
        }
      }
      return out;
    }

    /** A table as {@code pg_publication_tables} lists it for the scenario's publication. */
    private record PublishedTable(
        String schema, String name, List<String> columns, String rowFilter, boolean partitioned) {
      String qualified() {
        return quote(schema) + "." + quote(name);
      }

      String rowText() {
        StringBuilder sb = new StringBuilder("concat_ws('|'");
        for (String c : columns) {
          sb.append(", quote_nullable(").append(quote(c)).append("::text)");
        }
        return sb.append(")").toString();
      }

      String sourceQuery() {
        return "SELECT "
            + rowText()
            + " FROM "
            + (partitioned ? "" : "ONLY ")
            + qualified()
            + (rowFilter == null ? "" : " WHERE " + rowFilter);
      }

      String mirrorQuery() {
        return "SELECT " + rowText() + " FROM " + qualified();
      }
    }

    private List<PublishedTable> publishedTables() throws SQLException {
      List<PublishedTable> out = new ArrayList<>();
      try (PreparedStatement ps =
          control.prepareStatement(
              "SELECT pt.schemaname, pt.tablename, c.relkind = 'p',"
                  + " ARRAY(SELECT a.attname::text FROM unnest(pt.attnames) n(attname)"
                  + "   JOIN pg_attribute a ON a.attrelid = c.oid AND a.attname = n.attname"
                  + "   WHERE a.attgenerated = '' ORDER BY a.attnum), pt.rowfilter"
                  + " FROM pg_publication_tables pt"
                  + " JOIN pg_namespace ns ON ns.nspname = pt.schemaname"
                  + " JOIN pg_class c ON c.relnamespace = ns.oid AND c.relname = pt.tablename"
                  + " WHERE pt.pubname = ? ORDER BY 1, 2")) {
        ps.setString(1, script.publication);
        try (ResultSet rs = ps.executeQuery()) {
          while (rs.next()) {
            out.add(
                new PublishedTable(
                    rs.getString(1),
                    rs.getString(2),
                    List.of((String[]) rs.getArray(4).getArray()),
                    rs.getString(5),
                    rs.getBoolean(3)));
          }
        }
      }
      return out;
    }

    /** The apply slot streamed at least one in-progress transaction. */
    private void assertStreamed() {
      await()
          .atMost(Duration.ofSeconds(10))
          .pollInterval(Duration.ofMillis(200))
          .untilAsserted(
              () ->
                  assertThat(
                          query(
                              control,
                              "SELECT coalesce(sum(stream_txns), 0) FROM pg_stat_replication_slots"
                                  + " WHERE slot_name LIKE 'pgetl%'"))
                      .as("transactions the source streamed while in progress")
                      .isNotEqualTo("0"));
    }
  }

  // --- SQL helpers

  static String quote(String identifier) {
    return "\"" + identifier.replace("\"", "\"\"") + "\"";
  }

  /** Runs a query; rows joined by {@code ;}, columns by {@code |}, SQL NULL as empty text. */
  static String query(Connection c, String sql) throws SQLException {
    List<String> rows = new ArrayList<>();
    try (Statement s = c.createStatement();
        ResultSet rs = s.executeQuery(sql)) {
      int n = rs.getMetaData().getColumnCount();
      while (rs.next()) {
        List<String> cells = new ArrayList<>();
        for (int i = 1; i <= n; i++) {
          String v = rs.getString(i);
          cells.add(v == null ? "" : v);
        }
        rows.add(String.join("|", cells));
      }
    }
    return String.join(";", rows);
  }

  /** The first column of every row, sorted. */
  static List<String> rows(Connection c, String sql) throws SQLException {
    List<String> out = new ArrayList<>();
    try (Statement s = c.createStatement();
        ResultSet rs = s.executeQuery(sql)) {
      while (rs.next()) {
        out.add(rs.getString(1));
      }
    }
    out.sort(null);
    return out;
  }

  private static void closeQuietly(Connection c) {
    if (c != null) {
      try {
        c.close();
      } catch (SQLException e) {
        // the database is dropped next
      }
    }
  }
}
