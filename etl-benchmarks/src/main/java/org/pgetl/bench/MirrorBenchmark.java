package org.pgetl.bench;

import static org.pgetl.bench.Bench.config;
import static org.pgetl.bench.Bench.exec;
import static org.pgetl.bench.Bench.fmt;
import static org.pgetl.bench.Bench.load;
import static org.pgetl.bench.Bench.median;
import static org.pgetl.bench.Bench.waitReady;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Random;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.pgetl.PgConnectionConfig;
import org.pgetl.Pipeline;
import org.pgetl.PipelineConfig;
import org.pgetl.destination.postgres.PostgresMirrorDestination;
import org.pgetl.store.MemoryStore;
import org.pgetl.testkit.EmbeddedPostgres;

/**
 * A harness, not a test: {@link PostgresMirrorDestination} behind a pgetl pipeline against
 * PostgreSQL's own logical-replication subscriber, in one run on one embedded PostgreSQL 17 server
 * with {@code fsync} on, so that the ratios hold however loaded the machine is. Both replicate from
 * the database {@code src} into databases of their own on the same server; pgetl runs with the
 * library's defaults ({@link PipelineConfig}, {@link
 * PostgresMirrorDestination#DEFAULT_COPY_CONNECTIONS}), the subscriber with PostgreSQL's ({@code
 * streaming = off}, {@code synchronous_commit = off} for its apply worker, one table-sync worker
 * per table).
 *
 * <ul>
 *   <li><b>copy</b>: a table of N rows (int8 key, int4, text, numeric(12,2), timestamptz, jsonb)
 *       into a fresh database: the subscriber from {@code CREATE SUBSCRIPTION} (its slot made
 *       before, as a subscription in the same cluster cannot make it) to the table in state {@code
 *       r}; pgetl from {@code Pipeline.start()} to the table {@code READY} in its store;
 *   <li><b>large transaction</b>: M inserts in one transaction, from its COMMIT returning to its
 *       last row visible in the target;
 *   <li><b>pgbench</b>: 4 clients running pgbench's TPC-B-like transaction (3 updates, 1 insert), K
 *       transactions in all, with {@code synchronous_commit = off} in the clients so that the load
 *       outruns the apply; rate = rows changed / time from the first commit returning to the last
 *       history row visible in the target. Both sides apply the load at once, as it runs, so the
 *       figure is bound by the load when both keep up;
 *   <li><b>pgbench backlog</b>: after the rounds, 16 × K transactions of the same load run while
 *       both sides are stopped, then each side is resumed alone ({@code ALTER SUBSCRIPTION ...
 *       ENABLE}; a new {@code Pipeline} over the same store, {@code start()}): rate = rows changed
 *       / time from the resume to the last history row visible in the target, start-up included.
 * </ul>
 *
 * <p>Each side has its own copy of the apply tables (schemas {@code n} and {@code p}, each in a
 * publication of its own) and is measured alone, one after the other, the order alternating per
 * round; the other side stays connected, so its walsender decodes (and filters out) the same WAL in
 * both cases.
 *
 * <p>Run, after {@code mvn -B -q -pl etl-benchmarks -am package -DskipTests}: {@code java -cp
 * etl-benchmarks/target/pgetl-benchmarks.jar org.pgetl.bench.MirrorBenchmark [copyRows largeTxRows
 * pgbenchTransactions rounds]} (default {@code 500000 200000 8000 3}).
 */
public final class MirrorBenchmark {
  private static final String ROW_VALUES =
      "g, g % 500, 'customer ' || g || ' of the benchmark', g * 1.25,"
          + " '2024-01-01'::timestamptz + g * interval '1 second',"
          + " jsonb_build_object('tier', 'gold', 'score', g % 97)";
  private static final String COLUMNS =
      "(id int8 PRIMARY KEY, qty int4, name text, price numeric(12,2), created timestamptz,"
          + " attrs jsonb)";
  private static final int CLIENTS = 4;
  private static final int BRANCHES = 4;
  private static final int TELLERS = 10 * BRANCHES;
  private static final int ACCOUNTS = 10_000 * BRANCHES;
  private static final long POLL_MILLIS = 5;
  // the backlog load is this many times the live pgbench load, so that start-up is a small share
  private static final int BACKLOG_TRANSACTIONS_PER_LOAD_TRANSACTION = 16;

  private final EmbeddedPostgres pg;
  private final PgConnectionConfig source;
  private final int copyRows;
  private final int largeRows;
  private final int transactions;
  private final long[] largeRowsSoFar = new long[2]; // per side
  private long historyRows;

  private MirrorBenchmark(EmbeddedPostgres pg, int copyRows, int largeRows, int transactions) {
    this.pg = pg;
    this.source = config(pg, "src");
    this.copyRows = copyRows;
    this.largeRows = largeRows;
    this.transactions = transactions;
  }

  /**
   * Runs the harness.
   *
   * @param args copy rows, large transaction rows, pgbench transactions, rounds
   * @throws Exception on failure
   */
  public static void main(String[] args) throws Exception {
    int copyRows = args.length > 0 ? Integer.parseInt(args[0]) : 500_000;
    int largeRows = args.length > 1 ? Integer.parseInt(args[1]) : 200_000;
    int transactions = args.length > 2 ? Integer.parseInt(args[2]) : 8_000;
    int rounds = args.length > 3 ? Integer.parseInt(args[3]) : 3;
    System.out.printf(
        Locale.ROOT,
        "JVM %s, max heap %d MiB, %d CPUs, load average %.2f; pgetl library defaults"
            + " (copyConnectionsPerTable %d, batch.maxBytes %d MiB, batch.maxFill %s, mirror copy"
            + " connections %d)%n",
        System.getProperty("java.vm.version"),
        Runtime.getRuntime().maxMemory() >> 20,
        Runtime.getRuntime().availableProcessors(),
        load(),
        PipelineConfig.DEFAULT_COPY_CONNECTIONS_PER_TABLE,
        PipelineConfig.DEFAULT_BATCH_MAX_BYTES >> 20,
        PipelineConfig.DEFAULT_BATCH_MAX_FILL,
        PostgresMirrorDestination.DEFAULT_COPY_CONNECTIONS);
    try (EmbeddedPostgres pg =
        EmbeddedPostgres.builder()
            .version(17)
            .setting("fsync", "on")
            .setting("full_page_writes", "on")
            .setting("wal_sender_timeout", "60s")
            .setting("max_logical_replication_workers", "8")
            .start()) {
      System.out.printf(
          Locale.ROOT,
          "PostgreSQL %s, fsync on; copy %,d rows, large transaction %,d rows, pgbench %,d"
              + " transactions from %d clients, %d rounds%n",
          pg.serverVersion(),
          copyRows,
          largeRows,
          transactions,
          CLIENTS,
          rounds);
      new MirrorBenchmark(pg, copyRows, largeRows, transactions).run(rounds);
    }
  }

  private void run(int rounds) throws Exception {
    setUp();
    List<List<Double>> copy = List.of(new ArrayList<>(), new ArrayList<>());
    List<List<Double>> large = List.of(new ArrayList<>(), new ArrayList<>());
    List<List<Double>> bench = List.of(new ArrayList<>(), new ArrayList<>());
    List<List<Double>> backlog = List.of(new ArrayList<>(), new ArrayList<>());
    MemoryStore applyStore = new MemoryStore("mirror_apply");
    try (Pipeline apply = startApplyPipeline(applyStore)) {
      for (int r = 0; r < rounds; r++) {
        int[] order = r % 2 == 0 ? new int[] {0, 1} : new int[] {1, 0};
        for (int side : order) {
          copy.get(side).add(side == 0 ? nativeCopy(r) : pgetlCopy(r));
        }
        for (int side : order) {
          large.get(side).add(largeTransaction(side));
        }
        double[] b = pgbench(r);
        bench.get(0).add(b[0]);
        bench.get(1).add(b[1]);
        System.out.printf(
            Locale.ROOT,
            "round %d (%s first, load %.2f): copy native %s rows/s, pgetl %s rows/s; large tx"
                + " native %s rows/s, pgetl %s rows/s; pgbench native %s rows/s, pgetl %s"
                + " rows/s%n",
            r + 1,
            order[0] == 0 ? "native" : "pgetl",
            load(),
            fmt(copy.get(0).get(r)),
            fmt(copy.get(1).get(r)),
            fmt(large.get(0).get(r)),
            fmt(large.get(1).get(r)),
            fmt(bench.get(0).get(r)),
            fmt(bench.get(1).get(r)));
      }
      if (apply.failure().isPresent()) {
        throw apply.failure().get();
      }
    }
    // the apply pipeline is stopped now: each backlog round restarts it over the same store
    for (int r = 0; r < rounds; r++) {
      double[] b = backlog(r, applyStore);
      backlog.get(0).add(b[0]);
      backlog.get(1).add(b[1]);
    }
    double[] ratio = {
      median(copy.get(1)) / median(copy.get(0)),
      median(large.get(1)) / median(large.get(0)),
      median(bench.get(1)) / median(bench.get(0)),
      median(backlog.get(1)) / median(backlog.get(0))
    };
    System.out.println();
    System.out.printf(
        Locale.ROOT,
        "medians: copy native %s rows/s, pgetl %s rows/s (%.2fx); large tx native %s rows/s,"
            + " pgetl %s rows/s (%.2fx); pgbench native %s rows/s, pgetl %s rows/s (%.2fx)%n",
        fmt(median(copy.get(0))),
        fmt(median(copy.get(1))),
        ratio[0],
        fmt(median(large.get(0))),
        fmt(median(large.get(1))),
        ratio[1],
        fmt(median(bench.get(0))),
        fmt(median(bench.get(1))),
        ratio[2]);
    System.out.printf(
        Locale.ROOT,
        "medians: pgbench backlog native %s rows/s, pgetl %s rows/s (%.2fx)%n",
        fmt(median(backlog.get(0))),
        fmt(median(backlog.get(1))),
        ratio[3]);
    System.out.printf(
        Locale.ROOT,
        "SUMMARY load %.2f: copy %.2fx native (target 1.0x), large tx %.2fx native (target 1.5x),"
            + " pgbench live %.2fx native (bound by the load), pgbench backlog %.2fx native"
            + " (target 1.2x)%n",
        load(),
        ratio[0],
        ratio[1],
        ratio[2],
        ratio[3]);
  }

  // --- set-up

  private void setUp() throws Exception {
    pg.createDatabase("src");
    pg.createDatabase("an");
    pg.createDatabase("ap");
    try (Connection c = connect("src")) {
      exec(
          c,
          "CREATE TABLE bench_copy " + COLUMNS,
          "INSERT INTO bench_copy SELECT "
              + ROW_VALUES
              + " FROM generate_series(1, "
              + copyRows
              + ") g",
          "VACUUM ANALYZE bench_copy",
          "CREATE PUBLICATION pub_copy FOR TABLE bench_copy");
      exec(c, "CREATE SCHEMA n", "CREATE SCHEMA p", "CREATE SCHEMA b");
      exec(c, applyTables(true));
      exec(
          c,
          "INSERT INTO b.pgbench_branches SELECT g, 0, '' FROM generate_series(1, "
              + BRANCHES
              + ") g",
          "INSERT INTO b.pgbench_tellers SELECT g, 1 + (g - 1) / 10, 0, ''"
              + " FROM generate_series(1, "
              + TELLERS
              + ") g",
          "INSERT INTO b.pgbench_accounts SELECT g, 1 + (g - 1) / 10000, 0, ''"
              + " FROM generate_series(1, "
              + ACCOUNTS
              + ") g",
          "VACUUM ANALYZE");
      exec(
          c,
          "CREATE PUBLICATION pub_n FOR TABLE n.large, TABLES IN SCHEMA b",
          "CREATE PUBLICATION pub_p FOR TABLE p.large, TABLES IN SCHEMA b",
          "SELECT pg_create_logical_replication_slot('native_n', 'pgoutput')");
    }
    try (Connection c = connect("an")) {
      exec(c, "CREATE SCHEMA n", "CREATE SCHEMA b");
      exec(c, applyTables(false));
      exec(
          c,
          "CREATE SUBSCRIPTION native_n CONNECTION '"
              + conninfo("src")
              + "' PUBLICATION pub_n"
              + " WITH (create_slot = false, slot_name = 'native_n')");
      waitSubscriptionReady(c, "native_n");
    }
  }

  /** The large-transaction tables of both sides (n: native, p: pgetl) and the pgbench tables. */
  private static String[] applyTables(boolean source) {
    return new String[] {
      "CREATE TABLE n.large " + COLUMNS,
      source ? "CREATE TABLE p.large " + COLUMNS : "SELECT 1",
      "CREATE TABLE b.pgbench_branches (bid int PRIMARY KEY, bbalance int, filler char(88))",
      "CREATE TABLE b.pgbench_tellers (tid int PRIMARY KEY, bid int, tbalance int,"
          + " filler char(84))",
      "CREATE TABLE b.pgbench_accounts (aid int PRIMARY KEY, bid int, abalance int,"
          + " filler char(84))",
      "CREATE TABLE b.pgbench_history (hid bigint"
          + (source ? " GENERATED ALWAYS AS IDENTITY" : "")
          + " PRIMARY KEY, tid int, bid int, aid int, delta int, mtime timestamp,"
          + " filler char(22))"
    };
  }

  /** The apply pipeline (large transactions, pgbench) over {@code store}, not started. */
  private Pipeline applyPipeline(MemoryStore store) {
    PipelineConfig config =
        PipelineConfig.builder()
            .pipelineId("mirror_apply")
            .publication("pub_p")
            .source(source)
            .build();
    return Pipeline.create(config, store, new PostgresMirrorDestination(config(pg, "ap")));
  }

  private Pipeline startApplyPipeline(MemoryStore store) throws Exception {
    Pipeline p = applyPipeline(store);
    p.start();
    waitReady(store, 5);
    return p;
  }

  /**
   * The pgbench load run while both sides are stopped (the subscription disabled, pgetl's pipeline
   * closed), then each side resumed alone, the order alternating per round: rows changed / time
   * from the resume ({@code ALTER SUBSCRIPTION ... ENABLE}, {@code Pipeline.start()}) to the last
   * history row visible in the target. Start-up counts on both sides.
   */
  private double[] backlog(int round, MemoryStore store) throws Exception {
    try (Connection an = connect("an")) {
      exec(an, "ALTER SUBSCRIPTION native_n DISABLE");
      waitUntil(
          an,
          "SELECT count(*) = 0 FROM pg_stat_subscription"
              + " WHERE subname = 'native_n' AND pid IS NOT NULL");
    }
    int count = BACKLOG_TRANSACTIONS_PER_LOAD_TRANSACTION * transactions / CLIENTS;
    ExecutorService clients = Executors.newFixedThreadPool(CLIENTS);
    try {
      List<Future<Long>> done = new ArrayList<>();
      for (int i = 0; i < CLIENTS; i++) {
        Random random = new Random(10_000L + round * 100L + i);
        done.add(clients.submit(() -> client(count, random, new AtomicLong(Long.MAX_VALUE))));
      }
      for (Future<Long> f : done) {
        f.get();
      }
    } finally {
      clients.shutdownNow();
    }
    int total = count * CLIENTS;
    historyRows += total;
    try (Connection src = connect("src")) {
      exec(src, "CHECKPOINT");
    }
    String sql = "SELECT count(*) >= " + historyRows + " FROM b.pgbench_history";
    double[] rates = new double[2];
    int[] order = round % 2 == 0 ? new int[] {0, 1} : new int[] {1, 0};
    for (int side : order) {
      long start;
      if (side == 0) {
        try (Connection an = connect("an")) {
          start = System.nanoTime();
          exec(an, "ALTER SUBSCRIPTION native_n ENABLE");
          waitUntil(an, sql);
        }
      } else {
        try (Connection ap = connect("ap")) {
          start = System.nanoTime();
          try (Pipeline p = applyPipeline(store)) {
            p.start();
            waitUntil(ap, sql);
            if (p.failure().isPresent()) {
              throw p.failure().get();
            }
          }
        }
      }
      rates[side] = 4e9 * total / (System.nanoTime() - start);
    }
    System.out.printf(
        Locale.ROOT,
        "  pgbench backlog round %d (%s first): %,d transactions applied after a resume; native"
            + " %s rows/s, pgetl %s rows/s%n",
        round + 1,
        order[0] == 0 ? "native" : "pgetl",
        total,
        fmt(rates[0]),
        fmt(rates[1]));
    return rates;
  }

  // --- copy

  private double nativeCopy(int round) throws Exception {
    String db = "cn" + round;
    String sub = "native_copy" + round;
    pg.createDatabase(db);
    try (Connection src = connect("src");
        Connection c = connect(db)) {
      exec(c, "CREATE TABLE bench_copy " + COLUMNS);
      exec(
          src,
          "SELECT pg_create_logical_replication_slot('" + sub + "', 'pgoutput')",
          "CHECKPOINT");
      long start = System.nanoTime();
      exec(
          c,
          "CREATE SUBSCRIPTION "
              + sub
              + " CONNECTION '"
              + conninfo("src")
              + "' PUBLICATION"
              + " pub_copy WITH (create_slot = false, slot_name = '"
              + sub
              + "')");
      waitSubscriptionReady(c, sub);
      double seconds = (System.nanoTime() - start) / 1e9;
      check(c, "SELECT count(*) FROM bench_copy", copyRows);
      exec(
          c,
          "ALTER SUBSCRIPTION " + sub + " DISABLE",
          "ALTER SUBSCRIPTION " + sub + " SET (slot_name = NONE)",
          "DROP SUBSCRIPTION " + sub);
      dropSlot(src, sub);
      return copyRows / seconds;
    } finally {
      pg.dropDatabase(db);
    }
  }

  private double pgetlCopy(int round) throws Exception {
    String db = "cp" + round;
    String id = "mirror_copy" + round;
    pg.createDatabase(db);
    try {
      try (Connection src = connect("src")) {
        exec(src, "CHECKPOINT");
      }
      MemoryStore store = new MemoryStore(id);
      PipelineConfig config =
          PipelineConfig.builder().pipelineId(id).publication("pub_copy").source(source).build();
      double seconds;
      try (Pipeline p =
          Pipeline.create(config, store, new PostgresMirrorDestination(config(pg, db)))) {
        long start = System.nanoTime();
        p.start();
        waitReady(store, 1);
        seconds = (System.nanoTime() - start) / 1e9;
      }
      try (Connection c = connect(db);
          Connection src = connect("src")) {
        check(c, "SELECT count(*) FROM public.bench_copy", copyRows);
        dropSlot(src, "pgetl_apply_" + id);
      }
      return copyRows / seconds;
    } finally {
      pg.dropDatabase(db);
    }
  }

  // --- apply

  /** One transaction of {@code largeRows} inserts; returns rows/s from its commit. */
  private double largeTransaction(int side) throws Exception {
    String s = side == 0 ? "n" : "p";
    long from = largeRowsSoFar[side] + 1;
    long to = largeRowsSoFar[side] + largeRows;
    largeRowsSoFar[side] = to;
    try (Connection src = connect("src");
        Connection target = connect(side == 0 ? "an" : "ap")) {
      exec(src, "CHECKPOINT");
      exec(
          src,
          "INSERT INTO "
              + s
              + ".large SELECT "
              + ROW_VALUES
              + " FROM generate_series("
              + from
              + ", "
              + to
              + ") g");
      long committed = System.nanoTime();
      waitUntil(target, "SELECT EXISTS (SELECT 1 FROM " + s + ".large WHERE id = " + to + ")");
      double seconds = (System.nanoTime() - committed) / 1e9;
      check(target, "SELECT count(*) FROM " + s + ".large", to);
      return largeRows / seconds;
    }
  }

  /**
   * Runs the pgbench-like load once, replicated by both sides at the same time; returns each side's
   * source rows changed per second, from the first commit to that side's catch-up.
   */
  private double[] pgbench(int round) throws Exception {
    try (Connection src = connect("src")) {
      exec(src, "CHECKPOINT");
    }
    AtomicLong firstCommit = new AtomicLong(Long.MAX_VALUE);
    ExecutorService clients = Executors.newFixedThreadPool(CLIENTS);
    long loadStart = System.nanoTime();
    long lastCommit;
    try {
      List<Future<Long>> done = new ArrayList<>();
      for (int i = 0; i < CLIENTS; i++) {
        Random random = new Random(round * 100L + i);
        done.add(clients.submit(() -> client(transactions / CLIENTS, random, firstCommit)));
      }
      lastCommit = 0;
      for (Future<Long> f : done) {
        lastCommit = Math.max(lastCommit, f.get());
      }
    } finally {
      clients.shutdownNow();
    }
    int total = transactions / CLIENTS * CLIENTS;
    historyRows += total;
    long[] caughtUp = new long[2];
    String sql = "SELECT count(*) >= " + historyRows + " FROM b.pgbench_history";
    try (Connection an = connect("an");
        Connection ap = connect("ap");
        PreparedStatement native_ = an.prepareStatement(sql);
        PreparedStatement pgetl = ap.prepareStatement(sql)) {
      long deadline = System.nanoTime() + TimeUnit.MINUTES.toNanos(10);
      while (caughtUp[0] == 0 || caughtUp[1] == 0) {
        if (caughtUp[0] == 0 && isTrue(native_)) {
          caughtUp[0] = System.nanoTime();
        }
        if (caughtUp[1] == 0 && isTrue(pgetl)) {
          caughtUp[1] = System.nanoTime();
        }
        if (System.nanoTime() > deadline) {
          throw new IllegalStateException("timed out waiting for: " + sql);
        }
        TimeUnit.MILLISECONDS.sleep(POLL_MILLIS);
      }
    }
    System.out.printf(
        Locale.ROOT,
        "  pgbench: the load ran %.2f s (%s tx/s); after its last commit the native target caught"
            + " up in %.0f ms, pgetl's in %.0f ms%n",
        (lastCommit - loadStart) / 1e9,
        fmt(total / ((lastCommit - loadStart) / 1e9)),
        (caughtUp[0] - lastCommit) / 1e6,
        (caughtUp[1] - lastCommit) / 1e6);
    return new double[] {
      4e9 * total / (caughtUp[0] - firstCommit.get()),
      4e9 * total / (caughtUp[1] - firstCommit.get())
    };
  }

  private static boolean isTrue(PreparedStatement ps) throws SQLException {
    try (ResultSet rs = ps.executeQuery()) {
      rs.next();
      return rs.getBoolean(1);
    }
  }

  /** One client: runs transactions back to back; returns when its last commit returned. */
  private long client(int count, Random random, AtomicLong firstCommit) throws SQLException {
    try (Connection c = connect("src")) {
      exec(c, "SET synchronous_commit = off");
      c.setAutoCommit(false);
      try (PreparedStatement account =
              c.prepareStatement(
                  "UPDATE b.pgbench_accounts SET abalance = abalance + ? WHERE aid = ?");
          PreparedStatement teller =
              c.prepareStatement(
                  "UPDATE b.pgbench_tellers SET tbalance = tbalance + ? WHERE tid = ?");
          PreparedStatement branch =
              c.prepareStatement(
                  "UPDATE b.pgbench_branches SET bbalance = bbalance + ? WHERE bid = ?");
          PreparedStatement hist =
              c.prepareStatement(
                  "INSERT INTO b.pgbench_history (tid, bid, aid, delta, mtime)"
                      + " VALUES (?, ?, ?, ?, CURRENT_TIMESTAMP)")) {
        long last = 0;
        for (int i = 0; i < count; i++) {
          int aid = 1 + random.nextInt(ACCOUNTS);
          int tid = 1 + random.nextInt(TELLERS);
          int bid = 1 + random.nextInt(BRANCHES);
          int delta = random.nextInt(10_001) - 5_000;
          bindAndRun(account, delta, aid);
          bindAndRun(teller, delta, tid);
          bindAndRun(branch, delta, bid);
          bindAndRun(hist, tid, bid, aid, delta);
          c.commit();
          last = System.nanoTime();
          firstCommit.accumulateAndGet(last, Math::min);
        }
        return last;
      }
    }
  }

  private static void bindAndRun(PreparedStatement ps, int... params) throws SQLException {
    for (int i = 0; i < params.length; i++) {
      ps.setInt(i + 1, params[i]);
    }
    ps.executeUpdate();
  }

  // --- helpers

  private String conninfo(String db) {
    return "host="
        + pg.host()
        + " port="
        + pg.port()
        + " dbname="
        + db
        + " user="
        + pg.superuser()
        + " password="
        + pg.password();
  }

  private Connection connect(String db) throws SQLException {
    return pg.connect(db);
  }

  private static void waitSubscriptionReady(Connection c, String sub) throws Exception {
    waitUntil(
        c,
        "SELECT count(*) > 0 AND bool_and(r.srsubstate = 'r') FROM pg_subscription_rel r"
            + " JOIN pg_subscription s ON s.oid = r.srsubid WHERE s.subname = '"
            + sub
            + "'");
  }

  /** Polls a query of one boolean until it is true. */
  private static void waitUntil(Connection c, String sql) throws Exception {
    long deadline = System.nanoTime() + TimeUnit.MINUTES.toNanos(10);
    try (PreparedStatement ps = c.prepareStatement(sql)) {
      while (true) {
        try (ResultSet rs = ps.executeQuery()) {
          rs.next();
          if (rs.getBoolean(1)) {
            return;
          }
        }
        if (System.nanoTime() > deadline) {
          throw new IllegalStateException("timed out waiting for: " + sql);
        }
        TimeUnit.MILLISECONDS.sleep(POLL_MILLIS);
      }
    }
  }

  private static void check(Connection c, String sql, long expected) throws SQLException {
    try (Statement st = c.createStatement();
        ResultSet rs = st.executeQuery(sql)) {
      rs.next();
      if (rs.getLong(1) != expected) {
        throw new IllegalStateException(sql + " returned " + rs.getLong(1) + ", not " + expected);
      }
    }
  }

  private static void dropSlot(Connection src, String slot) throws Exception {
    waitUntil(
        src,
        "SELECT NOT EXISTS (SELECT 1 FROM pg_replication_slots WHERE slot_name = '"
            + slot
            + "' AND active)");
    exec(
        src,
        "SELECT pg_drop_replication_slot(slot_name) FROM pg_replication_slots WHERE slot_name = '"
            + slot
            + "'");
  }
}
