package org.pgetl.examples.cli;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import org.jspecify.annotations.Nullable;
import org.pgetl.PgConnectionConfig;
import org.pgetl.Pipeline;
import org.pgetl.PipelineConfig;
import org.pgetl.PipelineStatus;
import org.pgetl.destination.Destination;
import org.pgetl.destination.duckdb.DuckDbDestination;
import org.pgetl.destination.iceberg.IcebergDestination;
import org.pgetl.error.EtlException;
import org.pgetl.error.RetryDirective;
import org.pgetl.model.TableId;
import org.pgetl.store.TableState;
import org.pgetl.store.postgres.PostgresStore;
import org.pgetl.testkit.EmbeddedPostgres;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code pgetl demo}: replicates a sample database into a DuckDB file while a workload changes it,
 * then proves that both hold the same rows.
 *
 * <p>Steps: start an embedded PostgreSQL; load the sample tables ({@link DemoDatabase}) and publish
 * them; start a pipeline whose state lives in that database ({@link PostgresStore}) and whose
 * destination is a {@link DuckDbDestination}; start the {@link Workload}; show the copy, then the
 * live stream, for {@code --duration} (or until Ctrl-C); stop the workload, wait until the pipeline
 * has confirmed everything the workload wrote, shut the pipeline down, and compare every table in
 * both databases ({@link TableChecksum}). The exit code is 0 only when every table matches.
 */
@Command(
    name = "demo",
    mixinStandardHelpOptions = true,
    description = {
      "Replicates a sample database into a DuckDB file while a workload changes it, then checks"
          + " that both hold the same rows.",
      "",
      "Starts an embedded PostgreSQL (no installation or Docker needed), loads about --rows rows"
          + " into four tables, publishes them, and runs a pipeline (state in the same database)"
          + " into --duckdb-file. Shows the copy per table, then the live stream for --duration,"
          + " then stops the workload, lets the pipeline catch up, shuts it down, and compares"
          + " every table (row count and checksum). Ctrl-C stops early, just as cleanly."
    },
    footer = {
      "",
      "Exit codes: 0 every table matches, 1 a difference or a failure, 2 invalid input,"
          + " 130 interrupted before the copy finished."
    })
final class DemoCommand implements Callable<Integer> {
  private static final String PIPELINE_ID = "demo";
  private static final String DATABASE = "demo";
  private static final String ICEBERG_CHECK_DATABASE = "demo_iceberg_read_back";
  private static final Duration CATCH_UP_TIMEOUT = Duration.ofMinutes(2);

  @Option(
      names = "--rows",
      paramLabel = "N",
      defaultValue = "1000000",
      converter = Converters.CountConverter.class,
      description =
          "About how many rows the sample tables hold in all (default: ${DEFAULT-VALUE};"
              + " 20k, 1_000_000 and 1m are understood).")
  long rows;

  @Option(
      names = "--duration",
      paramLabel = "TIME",
      defaultValue = "30s",
      converter = Converters.DurationConverter.class,
      description =
          "How long the live workload runs once the initial copy is done"
              + " (default: ${DEFAULT-VALUE}; e.g. 15s, 2m, 1h).")
  Duration duration;

  @Option(
      names = "--rate",
      paramLabel = "TX_PER_S",
      defaultValue = "200",
      description = "Workload transactions per second, 0 for none (default: ${DEFAULT-VALUE}).")
  int rate;

  @Option(
      names = "--duckdb-file",
      paramLabel = "PATH",
      defaultValue = "pgetl-demo.duckdb",
      description =
          "The DuckDB file to replicate into; replaced if it exists"
              + " (default: ${DEFAULT-VALUE}).")
  Path duckdbFile;

  @Option(
      names = "--iceberg-warehouse",
      paramLabel = "DIR",
      description =
          "Replicate into Apache Iceberg tables under DIR (a filesystem catalog, upsert mode,"
              + " a commit every second) instead of the DuckDB file; the demo's tables written"
              + " there by an earlier run are replaced.")
  @Nullable Path icebergWarehouse;

  @Option(
      names = "--postgres-version",
      paramLabel = "MAJOR",
      description = "The embedded PostgreSQL major version: 14, 15, 16, 17 or 18 (default: 17).")
  @Nullable String postgresVersion;

  @Option(
      names = "--plain",
      description =
          "Print plain progress lines even on a terminal (the default when the output"
              + " is not a terminal).")
  boolean plain;

  @Option(
      names = {"-v", "--verbose"},
      description = "Show the engine's log lines and the stack trace of a failure.")
  boolean verbose;

  private final CliContext context;
  // plain lines until call() knows --plain and whether the output is a terminal
  private ProgressView view;

  DemoCommand(CliContext context) {
    this.context = context;
    this.view = new ProgressView(context.out(), false);
  }

  /** How the run ended before the verification. */
  private enum Outcome {
    FINISHED,
    INTERRUPTED_DURING_COPY,
    FAILED
  }

  @Override
  public Integer call() throws Exception {
    if (rows < 100 || rows > 1_000_000_000L) {
      throw new CliException("--rows must be between 100 and 1,000,000,000, was " + rows, 2);
    }
    if (duration.isNegative()) {
      throw new CliException("--duration must not be negative, was " + duration, 2);
    }
    if (rate < 0 || rate > 100_000) {
      throw new CliException("--rate must be between 0 and 100000, was " + rate, 2);
    }
    EmbeddedPostgres.Builder builder = EmbeddedPostgres.builder();
    if (postgresVersion != null) {
      try {
        builder.version(postgresVersion);
      } catch (IllegalArgumentException e) {
        throw new CliException("--postgres-version: " + e.getMessage(), Main.EXIT_USAGE);
      }
    }
    view = new ProgressView(context.out(), !plain && isTerminal());
    long started = System.nanoTime();
    DemoDatabase.Sizes sizes = DemoDatabase.sizes(rows);
    view.println(
        "pgetl demo: "
            + ProgressView.number(sizes.total())
            + " rows in 4 tables, a live workload of "
            + rate
            + " transactions/s for "
            + ProgressView.duration(duration)
            + " after the copy, into "
            + (icebergWarehouse != null ? "Iceberg tables under " + icebergWarehouse : duckdbFile));

    long t = System.nanoTime();
    try (EmbeddedPostgres pg = builder.start()) {
      view.println(
          "  started PostgreSQL "
              + pg.serverVersion()
              + " on "
              + pg.host()
              + ":"
              + pg.port()
              + " in "
              + since(t));
      pg.createDatabase(DATABASE);
      t = System.nanoTime();
      DemoDatabase db;
      try (Connection c = pg.connect(DATABASE)) {
        db = DemoDatabase.create(c, rows);
      }
      view.println(
          "  loaded "
              + ProgressView.number(sizes.total())
              + " rows and created publication "
              + DemoDatabase.PUBLICATION
              + " in "
              + since(t));
      if (icebergWarehouse != null) {
        dropIcebergTables(db);
      } else {
        deleteDuckDbFile();
      }
      PgConnectionConfig source =
          PgConnectionConfig.builder()
              .host(pg.host())
              .port(pg.port())
              .database(DATABASE)
              .user(pg.superuser())
              .password(pg.password())
              .build();
      return replicate(pg, source, db, sizes, started);
    }
  }

  private int replicate(
      EmbeddedPostgres pg,
      PgConnectionConfig source,
      DemoDatabase db,
      DemoDatabase.Sizes sizes,
      long started)
      throws Exception {
    PipelineConfig config =
        PipelineConfig.builder()
            .pipelineId(PIPELINE_ID)
            .publication(DemoDatabase.PUBLICATION)
            .source(source)
            // confirm progress to the server every second, so the lag shown drops quickly
            .statusInterval(Duration.ofSeconds(1))
            .build();
    SimpleMeterRegistry registry = new SimpleMeterRegistry();
    Path warehouse = icebergWarehouse;
    Destination destination =
        warehouse != null
            ? IcebergDestination.hadoop(warehouse).commitInterval(Duration.ofSeconds(1)).build()
            : new DuckDbDestination(duckdbFile);
    Map<TableId, DemoTable> tables = tableIds(pg, db);
    Map<TableId, Long> estimates = estimates(pg, tables);
    try (PostgresStore store =
            PostgresStore.builder().connection(source).pipelineId(PIPELINE_ID).build();
        Workload workload = new Workload(pg.connect(DATABASE), sizes, rate, 42)) {
      view.println(
          "  pipeline "
              + PIPELINE_ID
              + ": state in schema etl of "
              + source.describe()
              + " (user "
              + pg.superuser()
              + "), destination "
              + destination.name());
      Pipeline pipeline = Pipeline.create(config, store, destination, registry);
      pipeline.start();
      if (rate > 0) {
        workload.start();
      }
      view.println("");
      view.println("Initial copy (the workload runs meanwhile):");
      long copyStarted = System.nanoTime();
      Outcome outcome = showCopy(pipeline, registry, tables, estimates);
      view.endCopy();
      if (outcome == Outcome.FINISHED) {
        view.println("  copied in " + since(copyStarted));
        view.println("");
        view.println(
            "Streaming changes for "
                + ProgressView.duration(duration)
                + " (Ctrl-C to stop early):");
        outcome = showLive(pipeline, registry, tables, workload);
      }
      workload.stop();
      SQLException workloadFailure = workload.failure();
      if (workloadFailure != null) {
        view.println(
            "  the workload stopped early: "
                + ErrorReport.singleLine(workloadFailure.getMessage()));
      }
      if (outcome == Outcome.FINISHED) {
        view.println(
            "  workload stopped after "
                + ProgressView.number(workload.transactions())
                + " transactions ("
                + ProgressView.number(workload.changes())
                + " row changes)");
        catchUp(pg, pipeline, registry);
      }
      long stopping = System.nanoTime();
      pipeline.shutdown();
      if (!pipeline.awaitTermination(config.shutdownTimeout().plusSeconds(30))) {
        view.println("error: the pipeline did not stop within " + config.shutdownTimeout());
        return Main.EXIT_FAILURE;
      }
      Optional<EtlException> failure = pipeline.failure();
      if (failure.isPresent()) {
        view.println(ErrorReport.describe(failure.get()));
        if (verbose) {
          failure.get().printStackTrace(context.err());
        }
        return Main.EXIT_FAILURE;
      }
      view.println("  pipeline stopped cleanly in " + since(stopping));
      if (outcome == Outcome.INTERRUPTED_DURING_COPY) {
        view.println("Interrupted before the initial copy finished: nothing to verify.");
        return Main.EXIT_INTERRUPTED;
      }
      if (outcome == Outcome.FAILED) {
        return Main.EXIT_FAILURE;
      }
      printMetrics(registry);
      boolean match = verify(pg, db);
      view.println("Total time " + since(started) + ".");
      return match ? 0 : Main.EXIT_FAILURE;
    }
  }

  // ---------------------------------------------------------------- the copy

  private Outcome showCopy(
      Pipeline pipeline,
      SimpleMeterRegistry registry,
      Map<TableId, DemoTable> tables,
      Map<TableId, Long> estimates)
      throws InterruptedException {
    Map<TableId, RateMeter> rates = new LinkedHashMap<>();
    Duration tick = view.ansi() ? Duration.ofMillis(200) : Duration.ofMillis(500);
    while (true) {
      PipelineStatus status = pipeline.status();
      boolean allDone = true;
      List<ProgressView.CopyLine> lines = new ArrayList<>();
      String stuck = null;
      for (Map.Entry<TableId, DemoTable> e : tables.entrySet()) {
        TableState state = stateOf(status, e.getKey());
        long copied = count(registry, "pgetl.rows.copied", e.getValue().name().toString());
        boolean done = isSynced(state);
        allDone &= done;
        double perSecond = rates.computeIfAbsent(e.getKey(), id -> new RateMeter()).sample(copied);
        lines.add(
            new ProgressView.CopyLine(
                e.getValue().name().toString(),
                label(state),
                copied,
                Math.max(estimates.getOrDefault(e.getKey(), 0L), copied),
                perSecond,
                done));
        if (state instanceof TableState.Errored errored
            && errored.retry() != RetryDirective.TIMED) {
          stuck = e.getValue().name() + ": " + errored.reason() + " (" + errored.hint() + ")";
        }
      }
      boolean ended = isEnded(status);
      view.copy(lines, allDone || ended || stuck != null);
      if (allDone) {
        return Outcome.FINISHED;
      }
      if (ended) {
        return Outcome.FAILED;
      }
      if (stuck != null) {
        view.println("error: table " + ErrorReport.singleLine(stuck));
        return Outcome.FAILED;
      }
      if (context.stop().awaitRequested(tick)) {
        return Outcome.INTERRUPTED_DURING_COPY;
      }
    }
  }

  /**
   * Whether the demo runs in a terminal. From JDK 22 on, {@code System.console()} is not null even
   * when the output is redirected, and {@code Console.isTerminal()} (JDK 22) tells; before JDK 22 a
   * console exists only for a terminal.
   */
  @SuppressWarnings("SystemConsoleNull") // the null test is for JDK 17 to 21; isTerminal() after
  private static boolean isTerminal() {
    java.io.Console console = System.console();
    if (console == null) {
      return false;
    }
    try {
      return (Boolean) java.io.Console.class.getMethod("isTerminal").invoke(console);
    } catch (ReflectiveOperationException e) {
      return true;
    }
  }

  private static boolean isSynced(@Nullable TableState state) {
    return state != null
        && (state.type() == TableState.Type.READY || state.type() == TableState.Type.SYNC_DONE);
  }

  private static boolean isEnded(PipelineStatus status) {
    return status.phase() == PipelineStatus.Phase.FAILED
        || status.phase() == PipelineStatus.Phase.STOPPED
        || status.phase() == PipelineStatus.Phase.STOPPING;
  }

  private static @Nullable TableState stateOf(PipelineStatus status, TableId id) {
    PipelineStatus.TableStatus s = status.tables().get(id);
    return s == null ? null : s.state();
  }

  private static String label(@Nullable TableState state) {
    if (state == null) {
      return "waiting";
    }
    return switch (state.type()) {
      case INIT -> "waiting";
      case DATA_SYNC -> "copying";
      case FINISHED_COPY -> "copied";
      case SYNC_WAIT, CATCHUP -> "catching up";
      case SYNC_DONE, READY -> "ready";
      case ERRORED -> "error, retrying";
    };
  }

  // ---------------------------------------------------------------- the live stream

  private Outcome showLive(
      Pipeline pipeline,
      SimpleMeterRegistry registry,
      Map<TableId, DemoTable> tables,
      Workload workload)
      throws InterruptedException {
    long end = System.nanoTime() + duration.toNanos();
    RateMeter events = new RateMeter();
    events.sample(count(registry, "pgetl.events.delivered", null));
    while (true) {
      long tickMillis = Math.max(1, Math.min((end - System.nanoTime()) / 1_000_000 + 1, 1000));
      if (context.stop().awaitRequested(Duration.ofMillis(tickMillis))) {
        view.println("");
        view.println("  stopping early on request");
        return Outcome.FINISHED;
      }
      PipelineStatus status = pipeline.status();
      long delivered = count(registry, "pgetl.events.delivered", null);
      double perSecond = events.sample(delivered);
      long left = end - System.nanoTime();
      view.live(liveLine(status, registry, tables, workload, delivered, perSecond, left), false);
      if (isEnded(status)) {
        view.println("");
        return Outcome.FAILED;
      }
      if (left <= 0) {
        view.live(liveLine(status, registry, tables, workload, delivered, perSecond, 0), true);
        view.println("");
        return Outcome.FINISHED;
      }
    }
  }

  private static String liveLine(
      PipelineStatus status,
      SimpleMeterRegistry registry,
      Map<TableId, DemoTable> tables,
      Workload workload,
      long delivered,
      double perSecond,
      long nanosLeft) {
    int ready = 0;
    List<String> others = new ArrayList<>();
    for (TableId id : tables.keySet()) {
      TableState s = stateOf(status, id);
      if (isSynced(s)) {
        ready++;
      } else {
        others.add(tables.get(id).name().name() + " " + label(s));
      }
    }
    Gauge lag = registry.find("pgetl.replication.lag").gauge();
    long lagBytes = lag == null ? status.lagBytes() : (long) lag.value();
    String lifecycle =
        status.lifecycle() == org.pgetl.lifecycle.LifecycleState.ACTIVE
            ? ""
            : "  lifecycle " + ProgressView.lifecycle(status.lifecycle());
    return String.format(
        java.util.Locale.ROOT,
        "  live  events %s (%s/s)  lag %s  workload %s tx  tables %d/%d ready%s%s  %s left",
        ProgressView.number(delivered),
        ProgressView.number((long) perSecond),
        ProgressView.bytes(lagBytes),
        ProgressView.number(workload.transactions()),
        ready,
        tables.size(),
        others.isEmpty() ? "" : " (" + String.join(", ", others) + ")",
        lifecycle,
        ProgressView.duration(Duration.ofNanos(Math.max(0, nanosLeft))));
  }

  // ---------------------------------------------------------------- stopping

  /**
   * Waits until the server says the pipeline confirmed every change made so far: the apply slot's
   * {@code confirmed_flush_lsn} reaches the WAL position taken after the workload stopped.
   */
  private void catchUp(EmbeddedPostgres pg, Pipeline pipeline, SimpleMeterRegistry registry)
      throws SQLException, InterruptedException {
    long t = System.nanoTime();
    String slot = pipeline.config().applySlotName();
    try (Connection c = pg.connect(DATABASE)) {
      String target;
      try (PreparedStatement ps = c.prepareStatement("SELECT pg_current_wal_lsn()::text");
          ResultSet rs = ps.executeQuery()) {
        rs.next();
        target = rs.getString(1);
      }
      long deadline = System.nanoTime() + CATCH_UP_TIMEOUT.toNanos();
      try (PreparedStatement ps =
          c.prepareStatement(
              "SELECT pg_wal_lsn_diff(?::pg_lsn, confirmed_flush_lsn)::bigint"
                  + " FROM pg_replication_slots WHERE slot_name = ?")) {
        ps.setString(1, target);
        ps.setString(2, slot);
        while (true) {
          long behind = -1; // -1: the slot or its confirmed position is unknown
          try (ResultSet rs = ps.executeQuery()) {
            if (rs.next()) {
              long diff = rs.getLong(1);
              behind = rs.wasNull() ? -1 : Math.max(0, diff);
            }
          }
          if (behind == 0) {
            view.live("  caught up: the server confirms every change (" + since(t) + ")", true);
            view.println("");
            return;
          }
          if (isEnded(pipeline.status())) {
            view.println("");
            return;
          }
          if (System.nanoTime() > deadline) {
            view.println("");
            view.println(
                "  warning: the pipeline did not confirm every change within "
                    + ProgressView.duration(CATCH_UP_TIMEOUT)
                    + " ("
                    + ProgressView.bytes(behind)
                    + " behind); verifying anyway");
            return;
          }
          view.live(
              "  catching up: "
                  + ProgressView.bytes(behind)
                  + " of WAL to confirm, events "
                  + ProgressView.number(count(registry, "pgetl.events.delivered", null)),
              false);
          // the slot position lives in the server: poll it, waking early if the pipeline stops
          pipeline.shutdownHandle().awaitRequested(Duration.ofMillis(200));
        }
      }
    }
  }

  private void printMetrics(SimpleMeterRegistry registry) {
    long copied = 0;
    for (Counter c : registry.find("pgetl.rows.copied").counters()) {
      copied += (long) c.count();
    }
    view.println(
        "  metrics: pgetl.rows.copied "
            + ProgressView.number(copied)
            + ", pgetl.events.delivered "
            + ProgressView.number(count(registry, "pgetl.events.delivered", null)));
  }

  // ---------------------------------------------------------------- verification

  /** Opens the connection the verification reads the copy through. */
  private interface CopyConnection {
    Connection open() throws SQLException;
  }

  /** Prepares one table of the copy for reading, before its checksum; false when it is missing. */
  private interface TableLoader {
    boolean load(DemoTable table, Connection source, Connection copy) throws SQLException;
  }

  private boolean verify(EmbeddedPostgres pg, DemoDatabase db) throws SQLException {
    Path warehouse = icebergWarehouse;
    if (warehouse == null) {
      Properties readOnly = new Properties();
      readOnly.setProperty("duckdb.read_only", "true");
      return compare(
          pg,
          db,
          "Verification (row count and MD5 of every row in key order, both sides):",
          "duckdb",
          () -> DriverManager.getConnection("jdbc:duckdb:" + duckdbFile.toAbsolutePath(), readOnly),
          (table, source, copy) -> true,
          "Open the copy with: duckdb " + duckdbFile);
    }
    pg.createDatabase(ICEBERG_CHECK_DATABASE);
    IcebergCopy iceberg = new IcebergCopy(warehouse);
    return compare(
        pg,
        db,
        "Verification (each Iceberg table read back with Iceberg's generic reader into database "
            + ICEBERG_CHECK_DATABASE
            + "; row count and MD5 of every row in key order, both sides):",
        "iceberg",
        () -> pg.connect(ICEBERG_CHECK_DATABASE),
        (table, source, copy) -> iceberg.load(table.name(), source, copy),
        "Read them with any Iceberg reader over the filesystem catalog at "
            + warehouse.toAbsolutePath()
            + ", for example DuckDB: INSTALL iceberg; LOAD iceberg; SELECT count(*) FROM"
            + " iceberg_scan('"
            + warehouse.toAbsolutePath().resolve("public").resolve("orders")
            + "');");
  }

  /** Compares every table's row count and MD5 on both sides, prints them, and says if all match. */
  private boolean compare(
      EmbeddedPostgres pg,
      DemoDatabase db,
      String title,
      String side,
      CopyConnection copyConnection,
      TableLoader loader,
      String hint)
      throws SQLException {
    long t = System.nanoTime();
    view.println("");
    view.println(title);
    view.println(
        String.format(
            java.util.Locale.ROOT,
            "  %-20s %12s %12s  %-12s %-12s  %s",
            "table",
            "postgres",
            side,
            "md5 postgres",
            "md5 " + side,
            "result"));
    boolean all = true;
    long total = 0;
    Map<DemoTable, List<String>> differences = new LinkedHashMap<>();
    try (Connection source = pg.connect(DATABASE);
        Connection copyConn = copyConnection.open()) {
      for (DemoTable table : db.tables()) {
        boolean present = loader.load(table, source, copyConn);
        // both sides at once: each is a single-threaded scan
        CompletableFuture<TableChecksum> copy =
            CompletableFuture.supplyAsync(
                () -> {
                  try {
                    return present
                        ? TableChecksum.of(copyConn, table, table.name().quoted())
                        : new TableChecksum(-1, "missing");
                  } catch (SQLException e) {
                    return new TableChecksum(-1, "missing");
                  }
                },
                runnable -> {
                  Thread thread = new Thread(runnable, "pgetl-demo-verify");
                  thread.setDaemon(true);
                  thread.start();
                });
        TableChecksum expected = TableChecksum.of(source, table, table.name().quoted());
        TableChecksum actual = copy.join();
        boolean match = expected.equals(actual);
        all &= match;
        if (!match && actual.rows() >= 0) {
          differences.put(table, TableChecksum.differences(source, copyConn, table, 5));
        }
        total += expected.rows();
        view.println(
            String.format(
                java.util.Locale.ROOT,
                "  %-20s %12s %12s  %-12s %-12s  %s",
                table.name(),
                ProgressView.number(expected.rows()),
                actual.rows() < 0 ? "-" : ProgressView.number(actual.rows()),
                expected.md5().substring(0, 12),
                actual.md5().substring(0, Math.min(12, actual.md5().length())),
                match ? "match" : "DIFFERENT"));
      }
    }
    if (all) {
      view.println(
          "All "
              + db.tables().size()
              + " tables match ("
              + ProgressView.number(total)
              + " rows, verified in "
              + since(t)
              + "). "
              + hint);
    } else {
      view.println("Some tables differ: see the lines marked DIFFERENT. First differences:");
      differences.forEach(
          (table, lines) -> lines.forEach(l -> view.println("  " + table.name() + ": " + l)));
    }
    return all;
  }

  private void dropIcebergTables(DemoDatabase db) {
    Path warehouse = java.util.Objects.requireNonNull(icebergWarehouse, "icebergWarehouse");
    IcebergCopy copy = new IcebergCopy(warehouse);
    for (DemoTable table : db.tables()) {
      if (copy.drop(table.name())) {
        view.println("  replaced the earlier Iceberg table " + table.name());
      }
    }
  }

  // ---------------------------------------------------------------- helpers

  private void deleteDuckDbFile() throws java.io.IOException {
    Path wal = duckdbFile.resolveSibling(duckdbFile.getFileName() + ".wal");
    if (Files.deleteIfExists(duckdbFile)) {
      view.println("  replaced the earlier " + duckdbFile);
    }
    Files.deleteIfExists(wal);
  }

  private static Map<TableId, DemoTable> tableIds(EmbeddedPostgres pg, DemoDatabase db)
      throws SQLException {
    Map<TableId, DemoTable> out = new LinkedHashMap<>();
    try (Connection c = pg.connect(DATABASE);
        PreparedStatement ps = c.prepareStatement("SELECT to_regclass(?)::oid::bigint")) {
      for (DemoTable t : db.tables()) {
        ps.setString(1, t.name().quoted());
        try (ResultSet rs = ps.executeQuery()) {
          rs.next();
          out.put(new TableId(rs.getLong(1)), t);
        }
      }
    }
    return out;
  }

  private static Map<TableId, Long> estimates(EmbeddedPostgres pg, Map<TableId, DemoTable> tables)
      throws SQLException {
    Map<TableId, Long> out = new LinkedHashMap<>();
    try (Connection c = pg.connect(DATABASE);
        PreparedStatement ps =
            c.prepareStatement(
                "SELECT greatest(reltuples, 0)::bigint FROM pg_class WHERE oid = ?")) {
      for (TableId id : tables.keySet()) {
        ps.setLong(1, id.oid());
        try (ResultSet rs = ps.executeQuery()) {
          out.put(id, rs.next() ? rs.getLong(1) : 0L);
        }
      }
    }
    return out;
  }

  private static long count(SimpleMeterRegistry registry, String name, @Nullable String table) {
    var search = registry.find(name);
    if (table != null) {
      search = search.tag("table", table);
    }
    Counter c = search.counter();
    return c == null ? 0 : (long) c.count();
  }

  private static String since(long startNanos) {
    return ProgressView.duration(Duration.ofNanos(System.nanoTime() - startNanos));
  }

  /** A rate smoothed over the last few samples. */
  private static final class RateMeter {
    private long lastValue = -1;
    private long lastTime;
    private double rate;

    double sample(long value) {
      long now = System.nanoTime();
      if (lastValue >= 0 && now > lastTime) {
        double instant = (value - lastValue) / ((now - lastTime) / 1e9);
        rate = rate == 0 ? instant : 0.7 * rate + 0.3 * instant;
      }
      lastValue = value;
      lastTime = now;
      return rate;
    }
  }
}
