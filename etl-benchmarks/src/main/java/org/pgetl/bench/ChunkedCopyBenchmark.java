package org.pgetl.bench;

import static org.pgetl.bench.Bench.config;
import static org.pgetl.bench.Bench.exec;
import static org.pgetl.bench.Bench.fmt;
import static org.pgetl.bench.Bench.loadavg;
import static org.pgetl.bench.Bench.median;
import static org.pgetl.bench.Bench.waitReady;

import java.io.OutputStream;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Random;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.pgetl.PgConnectionConfig;
import org.pgetl.Pipeline;
import org.pgetl.PipelineConfig;
import org.pgetl.destination.AsyncResult;
import org.pgetl.destination.Destination;
import org.pgetl.destination.StreamId;
import org.pgetl.destination.TableCopyWrite;
import org.pgetl.destination.WriteDurability;
import org.pgetl.model.Event;
import org.pgetl.model.ReplicatedTableSchema;
import org.pgetl.store.MemoryStore;
import org.pgetl.testkit.EmbeddedPostgres;
import org.postgresql.PGConnection;

/**
 * A harness, not a test: the chunked copy of a large table against the one-snapshot copy of the
 * same table, in one run on one embedded PostgreSQL 17 server with {@code fsync} on and the
 * library's defaults otherwise, while a writer updates one random row of the table every 20 ms.
 *
 * <p>Per round and mode (the order rotating per round), from {@code Pipeline.start()}:
 *
 * <ul>
 *   <li><b>copy</b>: to the table {@code READY} in the store, as rows/s, against the raw limits
 *       measured in the same run, pgjdbc's binary {@code COPY TO STDOUT} with its bytes thrown
 *       away: of the whole table on one connection; of 16 ctid ranges over {@code
 *       copyConnectionsPerTable} connections (what the one-snapshot copy reads); and of key ranges
 *       of about {@code copyChunkBytes} over as many connections, each range in a {@code REPEATABLE
 *       READ} transaction of its own (what the chunked copy reads, without its watermarks, store
 *       writes and destination);
 *   <li><b>longest snapshot</b>: the oldest {@code xact_start} of the pipeline's backends that hold
 *       a snapshot ({@code backend_xmin}), sampled every 50 ms: how long vacuum was held back;
 *   <li><b>update latency</b>: from each writer's commit returning to its update at the
 *       destination, median and p90, for the updates committed while the copy ran that reach the
 *       destination as events (one committed before the copy's snapshot, or before its chunk's
 *       watermark, is in the copied rows instead). The one-snapshot copy sends them at its
 *       catch-up, after the copy; the chunked copy at once, unless a change touches a chunk being
 *       written (it is held until that chunk is durable).
 * </ul>
 *
 * <p>The destination answers durable at once, counts rows and notes the time of each update it
 * receives; it takes chunked copies. Modes: {@code snapshot} ({@code chunkedCopyMinBytes =
 * Long.MAX_VALUE}), {@code chunked} (0, {@code copyChunkBytes} at its default of 16 MiB) and {@code
 * chunked-64MiB}.
 *
 * <p>Run, after {@code mvn -B -q -pl etl-benchmarks -am package -DskipTests}: {@code java -cp
 * etl-benchmarks/target/pgetl-benchmarks.jar org.pgetl.bench.ChunkedCopyBenchmark [rows rounds]}
 * (default {@code 2000000 3}).
 */
public final class ChunkedCopyBenchmark {
  static final String COLUMNS =
      "(id int8 PRIMARY KEY, qty int4, name text, price numeric(12,2), created timestamptz,"
          + " attrs jsonb)";
  static final String ROW_VALUES =
      "g, g % 500, 'customer ' || g || ' of the benchmark', g * 1.25,"
          + " '2024-01-01'::timestamptz + g * interval '1 second',"
          + " jsonb_build_object('tier', 'gold', 'score', g % 97)";
  private static final long UPDATE_EVERY_MILLIS = 20;
  private static final int CONNECTIONS = PipelineConfig.DEFAULT_COPY_CONNECTIONS_PER_TABLE;

  private record Mode(String name, long minBytes, long chunkBytes) {}

  private static final List<Mode> MODES =
      List.of(
          new Mode("snapshot", Long.MAX_VALUE, PipelineConfig.DEFAULT_COPY_CHUNK_BYTES),
          new Mode("chunked", 0, PipelineConfig.DEFAULT_COPY_CHUNK_BYTES),
          new Mode("chunked-64MiB", 0, 64L << 20));

  private record Result(
      double seconds,
      double longestSnapshot,
      double latencyP50,
      double latencyP90,
      int updates,
      int committed) {}

  private final EmbeddedPostgres pg;
  private final int rows;
  private final PgConnectionConfig source;

  private ChunkedCopyBenchmark(EmbeddedPostgres pg, int rows) {
    this.pg = pg;
    this.rows = rows;
    this.source = config(pg, "src");
  }

  /**
   * Runs the harness.
   *
   * @param args rows, rounds
   * @throws Exception on failure
   */
  public static void main(String[] args) throws Exception {
    int rows = args.length > 0 ? Integer.parseInt(args[0]) : 2_000_000;
    int rounds = args.length > 1 ? Integer.parseInt(args[1]) : 3;
    Bench.printJvm(
        "; copyConnectionsPerTable " + PipelineConfig.DEFAULT_COPY_CONNECTIONS_PER_TABLE);
    try (EmbeddedPostgres pg = Bench.postgres17()) {
      new ChunkedCopyBenchmark(pg, rows).run(rounds);
    }
  }

  /**
   * Creates database {@code src} with table {@code bench} of {@code rows} rows and publication
   * {@code pub}, and prints the server and the table's size.
   */
  static void createTable(EmbeddedPostgres pg, int rows) throws SQLException {
    pg.createDatabase("src");
    try (Connection c = pg.connect("src")) {
      exec(
          c,
          "CREATE TABLE bench " + COLUMNS,
          "INSERT INTO bench SELECT " + ROW_VALUES + " FROM generate_series(1, " + rows + ") g",
          "VACUUM ANALYZE bench",
          "CREATE PUBLICATION pub FOR TABLE bench");
      try (Statement st = c.createStatement();
          ResultSet rs = st.executeQuery("SELECT pg_size_pretty(pg_table_size('bench'))")) {
        rs.next();
        System.out.printf(
            Locale.ROOT,
            "PostgreSQL %s, fsync on; table of %,d rows, %s%n",
            pg.serverVersion(),
            rows,
            rs.getString(1));
      }
    }
  }

  /** Drops the replication slots of the pipelines that stopped. */
  static void dropIdleSlots(EmbeddedPostgres pg) throws SQLException {
    try (Connection c = pg.connect("src")) {
      exec(
          c,
          "SELECT pg_drop_replication_slot(slot_name) FROM pg_replication_slots"
              + " WHERE slot_name LIKE 'pgetl_%' AND NOT active");
    }
  }

  private void run(int rounds) throws Exception {
    createTable(pg, rows);
    List<Double> raw = new ArrayList<>();
    List<List<Result>> results = new ArrayList<>();
    for (int m = 0; m < MODES.size(); m++) {
      results.add(new ArrayList<>());
    }
    List<Double> rawCtid = new ArrayList<>();
    List<Double> rawKeys = new ArrayList<>();
    List<String> ctidRanges = ctidRanges();
    List<String> keyRanges = keyRanges();
    for (int r = 0; r < rounds; r++) {
      raw.add(rawCopy());
      rawCtid.add(rawParallel(ctidRanges, false));
      rawKeys.add(rawParallel(keyRanges, true));
      for (int i = 0; i < MODES.size(); i++) {
        int m = (i + r) % MODES.size();
        Result res = copy(MODES.get(m), r);
        results.get(m).add(res);
        System.out.printf(
            Locale.ROOT,
            "round %d %-14s copy %s rows/s (%.1f s), longest snapshot %.1f s, %d of %d updates"
                + " during the copy sent as events: latency p50 %.0f ms, p90 %.0f ms (load %s)%n",
            r + 1,
            MODES.get(m).name(),
            fmt(rows / res.seconds()),
            res.seconds(),
            res.longestSnapshot(),
            res.updates(),
            res.committed(),
            res.latencyP50(),
            res.latencyP90(),
            loadavg());
      }
      System.out.printf(
          Locale.ROOT,
          "round %d raw COPY: 1 connection %s rows/s; %d ctid ranges over %d connections %s rows/s;"
              + " %d key ranges over %d connections %s rows/s%n",
          r + 1,
          fmt(raw.get(r)),
          ctidRanges.size(),
          CONNECTIONS,
          fmt(rawCtid.get(r)),
          keyRanges.size(),
          CONNECTIONS,
          fmt(rawKeys.get(r)));
    }
    double rawRate = median(raw);
    System.out.printf(
        Locale.ROOT,
        "medians (raw COPY: 1 connection %s rows/s, ctid ranges %s rows/s, key ranges %s"
            + " rows/s):%n",
        fmt(rawRate),
        fmt(median(rawCtid)),
        fmt(median(rawKeys)));
    for (int m = 0; m < MODES.size(); m++) {
      List<Result> rs = results.get(m);
      double rate = median(rs.stream().map(x -> rows / x.seconds()).toList());
      // each mode against the raw read of its own method: ctid ranges for the one-snapshot copy,
      // key ranges for the chunked one
      double method = median(MODES.get(m).minBytes() == Long.MAX_VALUE ? rawCtid : rawKeys);
      System.out.printf(
          Locale.ROOT,
          "  %-14s copy %s rows/s (%.2fx raw 1 connection, %.2fx the raw %s ranges), longest"
              + " snapshot %.1f s, update latency p50 %.0f ms, p90 %.0f ms%n",
          MODES.get(m).name(),
          fmt(rate),
          rate / rawRate,
          rate / method,
          MODES.get(m).minBytes() == Long.MAX_VALUE ? "ctid" : "key",
          median(rs.stream().map(Result::longestSnapshot).toList()),
          median(rs.stream().map(Result::latencyP50).toList()),
          median(rs.stream().map(Result::latencyP90).toList()));
    }
  }

  /** 16 ranges of the table's pages, as the one-snapshot copy's planner makes them. */
  private List<String> ctidRanges() throws SQLException {
    long pages;
    try (Connection c = pg.connect("src");
        Statement st = c.createStatement();
        ResultSet rs =
            st.executeQuery(
                "SELECT pg_relation_size('bench') / current_setting('block_size')::int")) {
      rs.next();
      pages = rs.getLong(1);
    }
    List<String> ranges = new ArrayList<>();
    int n = 16;
    for (int i = 0; i < n; i++) {
      long from = pages * i / n;
      String lower = "ctid >= '(" + from + ",0)'::tid";
      ranges.add(i == n - 1 ? lower : lower + " AND ctid < '(" + pages * (i + 1) / n + ",0)'::tid");
    }
    return ranges;
  }

  /** Key ranges of about {@code copyChunkBytes} each (the keys are 1 to rows, evenly spread). */
  private List<String> keyRanges() throws SQLException {
    long bytes;
    try (Connection c = pg.connect("src");
        Statement st = c.createStatement();
        ResultSet rs = st.executeQuery("SELECT pg_table_size('bench')")) {
      rs.next();
      bytes = rs.getLong(1);
    }
    long n =
        Math.max(
            1,
            (bytes + PipelineConfig.DEFAULT_COPY_CHUNK_BYTES - 1)
                / PipelineConfig.DEFAULT_COPY_CHUNK_BYTES);
    List<String> ranges = new ArrayList<>();
    for (long i = 0; i < n; i++) {
      ranges.add("id >= " + (1 + rows * i / n) + " AND id < " + (1 + rows * (i + 1) / n));
    }
    return ranges;
  }

  /**
   * pgjdbc's binary COPY of ranges of the table over {@link #CONNECTIONS} connections, each taking
   * the next range as it finishes one, bytes discarded: rows/s.
   *
   * @param ownSnapshot whether each range is read in a {@code REPEATABLE READ} transaction of its
   *     own (the chunked copy's reads)
   */
  private double rawParallel(List<String> predicates, boolean ownSnapshot) throws Exception {
    java.util.concurrent.ConcurrentLinkedQueue<String> queue =
        new java.util.concurrent.ConcurrentLinkedQueue<>(predicates);
    AtomicLong read = new AtomicLong();
    AtomicReference<Exception> failed = new AtomicReference<>();
    List<Connection> connections = new ArrayList<>();
    try {
      for (int i = 0; i < CONNECTIONS; i++) {
        connections.add(pg.connect("src"));
      }
      List<Thread> threads = new ArrayList<>();
      long start = System.nanoTime();
      for (Connection c : connections) {
        Thread t =
            new Thread(
                () -> {
                  try {
                    for (String p = queue.poll(); p != null; p = queue.poll()) {
                      if (ownSnapshot) {
                        exec(c, "BEGIN ISOLATION LEVEL REPEATABLE READ");
                      }
                      read.addAndGet(
                          c.unwrap(PGConnection.class)
                              .getCopyAPI()
                              .copyOut(
                                  "COPY (SELECT * FROM ONLY bench WHERE "
                                      + p
                                      + ") TO STDOUT (FORMAT binary)",
                                  OutputStream.nullOutputStream()));
                      if (ownSnapshot) {
                        exec(c, "COMMIT");
                      }
                    }
                  } catch (Exception e) {
                    failed.compareAndSet(null, e);
                  }
                },
                "bench-raw-copy");
        threads.add(t);
        t.start();
      }
      for (Thread t : threads) {
        t.join();
      }
      double seconds = (System.nanoTime() - start) / 1e9;
      if (failed.get() != null) {
        throw failed.get();
      }
      if (read.get() != rows) {
        throw new IllegalStateException("raw COPY read " + read.get() + " rows, not " + rows);
      }
      return rows / seconds;
    } finally {
      for (Connection c : connections) {
        c.close();
      }
    }
  }

  /** pgjdbc's binary COPY of the whole table, one connection, bytes discarded: rows/s. */
  private double rawCopy() throws Exception {
    try (Connection c = pg.connect("src")) {
      long start = System.nanoTime();
      long n =
          c.unwrap(PGConnection.class)
              .getCopyAPI()
              .copyOut("COPY bench TO STDOUT (FORMAT binary)", OutputStream.nullOutputStream());
      double seconds = (System.nanoTime() - start) / 1e9;
      if (n != rows) {
        throw new IllegalStateException("raw COPY read " + n + " rows, not " + rows);
      }
      return n / seconds;
    }
  }

  private Result copy(Mode mode, int round) throws Exception {
    String id = "bench_" + mode.name().replace('-', '_').toLowerCase(Locale.ROOT) + round;
    try (Connection src = pg.connect("src")) {
      exec(src, "CHECKPOINT");
    }
    MemoryStore store = new MemoryStore(id);
    PipelineConfig config =
        PipelineConfig.builder()
            .pipelineId(id)
            .publication("pub")
            .source(source)
            .chunkedCopyMinBytes(mode.minBytes())
            .copyChunkBytes(mode.chunkBytes())
            .build();
    Timing dest = new Timing();
    AtomicBoolean stop = new AtomicBoolean();
    Map<Long, Long> committed = new ConcurrentHashMap<>();
    AtomicLong longestSnapshotMillis = new AtomicLong();
    Thread writer = new Thread(() -> update(stop, committed, round), "bench-writer");
    Thread watcher = new Thread(() -> watch(stop, id, longestSnapshotMillis), "bench-watcher");
    double seconds;
    try (Pipeline p = Pipeline.create(config, store, dest)) {
      long start = System.nanoTime();
      writer.start();
      watcher.start();
      p.start();
      waitReady(store, 1);
      seconds = (System.nanoTime() - start) / 1e9;
      stop.set(true);
      writer.join();
      watcher.join();
      // an update committed before the copy's snapshot (or its chunk's) is in the copied rows, not
      // an event; the others arrive: wait until no more come for a second
      int seen = -1;
      while (dest.updates.size() != seen) {
        seen = dest.updates.size();
        TimeUnit.SECONDS.sleep(1);
      }
    } finally {
      stop.set(true);
    }
    dropIdleSlots(pg);
    if (dest.copied.get() < rows) {
      throw new IllegalStateException(dest.copied.get() + " rows copied, not " + rows);
    }
    List<Double> latencies = new ArrayList<>();
    committed.forEach(
        (k, at) -> {
          Long arrived = dest.updates.get(k);
          if (arrived != null) {
            latencies.add((arrived - at) / 1e6);
          }
        });
    latencies.sort(null);
    double p50 = latencies.isEmpty() ? 0 : latencies.get(latencies.size() / 2);
    double p90 = latencies.isEmpty() ? 0 : latencies.get(latencies.size() * 9 / 10);
    return new Result(
        seconds, longestSnapshotMillis.get() / 1e3, p50, p90, latencies.size(), committed.size());
  }

  /** One-row updates of distinct random keys every 20 ms; notes each commit's return. */
  private void update(AtomicBoolean stop, Map<Long, Long> committed, int round) {
    Random random = new Random(round);
    try (Connection c = pg.connect("src");
        Statement st = c.createStatement()) {
      while (!stop.get()) {
        long k = 1L + random.nextInt(rows);
        if (committed.containsKey(k)) {
          continue;
        }
        st.executeUpdate("UPDATE bench SET qty = qty + 1 WHERE id = " + k);
        committed.put(k, System.nanoTime());
        TimeUnit.MILLISECONDS.sleep(UPDATE_EVERY_MILLIS);
      }
    } catch (SQLException e) {
      throw new IllegalStateException(e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  /** Samples the age of the pipeline's oldest snapshot-holding transaction every 50 ms. */
  private void watch(AtomicBoolean stop, String id, AtomicLong longestMillis) {
    try (Connection c = pg.connect("src");
        Statement st = c.createStatement()) {
      while (!stop.get()) {
        try (ResultSet rs =
            st.executeQuery(
                "SELECT coalesce(max(extract(epoch FROM clock_timestamp() - xact_start)), 0)"
                    + " FROM pg_stat_activity WHERE backend_xmin IS NOT NULL"
                    + " AND application_name LIKE 'pgetl:%:"
                    + id
                    + ":%'")) {
          rs.next();
          longestMillis.accumulateAndGet((long) (rs.getDouble(1) * 1000), Math::max);
        }
        TimeUnit.MILLISECONDS.sleep(50);
      }
    } catch (SQLException e) {
      throw new IllegalStateException(e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  /** Answers durable at once; counts copied rows and notes when each update's key arrives. */
  static final class Timing implements Destination {
    final AtomicLong copied = new AtomicLong();
    final Map<Long, Long> updates = new ConcurrentHashMap<>();

    @Override
    public String name() {
      return "timing";
    }

    @Override
    public boolean supportsChunkedCopy() {
      return true;
    }

    @Override
    public void dropTableForCopy(ReplicatedTableSchema table, UUID attemptId, AsyncResult result) {
      copied.set(0);
      result.durable();
    }

    @Override
    public void writeTableRows(
        ReplicatedTableSchema table, TableCopyWrite write, AsyncResult result) {
      if (write instanceof TableCopyWrite.Batch b) {
        copied.addAndGet(b.rows().size());
      }
      result.durable();
    }

    @Override
    public void writeEvents(
        StreamId stream, List<Event> events, WriteDurability durability, AsyncResult result) {
      long now = System.nanoTime();
      for (Event e : events) {
        if (e instanceof Event.Update u && u.row().get(0) instanceof Number k) {
          updates.putIfAbsent(k.longValue(), now);
        }
      }
      result.durable();
    }
  }
}
