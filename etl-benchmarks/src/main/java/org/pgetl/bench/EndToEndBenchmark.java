package org.pgetl.bench;

import static org.pgetl.bench.Bench.exec;
import static org.pgetl.bench.Bench.fmt;
import static org.pgetl.bench.Bench.median;
import static org.pgetl.bench.Bench.waitReady;

import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.pgetl.PgConnectionConfig;
import org.pgetl.Pipeline;
import org.pgetl.PipelineConfig;
import org.pgetl.core.internal.copy.CopyPlanner;
import org.pgetl.model.TableId;
import org.pgetl.store.MemoryStore;
import org.pgetl.testkit.EmbeddedPostgres;
import org.postgresql.PGConnection;
import org.postgresql.copy.CopyOut;
import org.postgresql.replication.LogSequenceNumber;
import org.postgresql.replication.PGReplicationStream;

/**
 * The end-to-end harness: pgetl against pgjdbc alone on the same embedded server, in one run, so
 * that the ratios hold however noisy the machine is.
 *
 * <ul>
 *   <li><b>copy</b>: a 1M-row, 6-column table; pgjdbc alone reads {@code COPY ... TO STDOUT (FORMAT
 *       binary)} on one connection; pgetl copies it into a destination that answers durable at
 *       once, with its default 4 copy connections, until every row arrived;
 *   <li><b>streaming</b>: one transaction of 500k inserts; pgjdbc alone reads the raw pgoutput
 *       stream of a slot, timed from its first message to the commit; pgetl (stopped during the
 *       insert, then started) delivers it to the destination, timed from the first insert event to
 *       the last; both with protocol 1;
 *   <li><b>latency</b>: single-row inserts on an idle running pipeline, each after a random idle
 *       gap of 0 to 500 ms, read at once by pgetl and by a raw pgjdbc reader of a second slot; from
 *       sending the INSERT to the raw reader seeing its commit, and to the event reaching pgetl's
 *       destination;
 *   <li><b>large transaction</b>: one transaction of 500k inserts written while the pipeline runs,
 *       with protocol 1 ({@code pgoutputStreaming(false)}) and with streaming, timed from the
 *       statement's commit returning on the client to the first and to the last insert event at the
 *       destination; the peak heap after a garbage collection is noted during each.
 * </ul>
 *
 * <p>Run: {@code mvn -B -q -pl etl-benchmarks -am package -DskipTests} then {@code java -cp
 * etl-benchmarks/target/pgetl-benchmarks.jar org.pgetl.bench.EndToEndBenchmark [rounds]}. {@code
 * -Dpgetl.bench.only=large} runs the large-transaction section alone, {@code
 * -Dpgetl.bench.only=latency} the latency section alone (once per round), {@code
 * -Dpgetl.bench.only=stream} the streaming section alone, {@code -Dpgetl.bench.largeRows=5000000}
 * changes its size, {@code -Dpgetl.bench.decodingWorkMem=8MB} the server's {@code
 * logical_decoding_work_mem} (default 64 MB), which decides when the server starts streaming a
 * transaction and when it spills one to disk.
 */
public final class EndToEndBenchmark {
  private static final int COPY_ROWS = 1_000_000;
  private static final int STREAM_ROWS = 500_000;
  private static final int LATENCY_SAMPLES = 300;

  /** The longest idle gap before each latency insert, in ms (0 sends them back to back). */
  private static final int LATENCY_MAX_GAP_MS = Integer.getInteger("pgetl.bench.maxGapMs", 500);

  /** The seed of the gaps, printed with the results so that a run can be replayed. */
  private static final long LATENCY_GAP_SEED = Long.getLong("pgetl.bench.gapSeed", 20260101L);

  private static final int LARGE_ROWS = Integer.getInteger("pgetl.bench.largeRows", 500_000);
  private static final boolean LARGE_ONLY = "large".equals(System.getProperty("pgetl.bench.only"));
  private static final boolean COPY_ONLY = "copy".equals(System.getProperty("pgetl.bench.only"));
  private static final boolean STREAM_ONLY =
      "stream".equals(System.getProperty("pgetl.bench.only"));
  private static final boolean LATENCY_ONLY =
      "latency".equals(System.getProperty("pgetl.bench.only"));
  private static final boolean STARTUP_ONLY =
      "startup".equals(System.getProperty("pgetl.bench.only"));
  private static final int STARTUP_ROWS = 100_000;
  private static final int TOAST_ROWS = Integer.getInteger("pgetl.bench.toastRows", 100_000);
  private static final String DECODING_WORK_MEM = System.getProperty("pgetl.bench.decodingWorkMem");
  private static final String ROW_VALUES =
      "g, g % 500, 'customer ' || g || ' of the benchmark', g * 1.25,"
          + " '2024-01-01'::timestamptz + g * interval '1 second',"
          + " jsonb_build_object('tier', 'gold', 'score', g % 97)";

  private EndToEndBenchmark() {}

  /**
   * Runs the harness.
   *
   * @param args the number of rounds (default 3)
   * @throws Exception on failure
   */
  public static void main(String[] args) throws Exception {
    int rounds = args.length > 0 ? Integer.parseInt(args[0]) : 3;
    System.out.printf(
        Locale.ROOT,
        "JVM %s, max heap %d MiB, %d CPUs, load average %.2f; library defaults"
            + " (copyConnectionsPerTable %d, batch.maxBytes %d MiB)%n",
        System.getProperty("java.vm.version"),
        Runtime.getRuntime().maxMemory() >> 20,
        Runtime.getRuntime().availableProcessors(),
        java.lang.management.ManagementFactory.getOperatingSystemMXBean().getSystemLoadAverage(),
        PipelineConfig.DEFAULT_COPY_CONNECTIONS_PER_TABLE,
        PipelineConfig.DEFAULT_BATCH_MAX_BYTES >> 20);
    EmbeddedPostgres.Builder server =
        EmbeddedPostgres.builder().setting("wal_sender_timeout", "60s");
    if (DECODING_WORK_MEM != null) {
      server.setting("logical_decoding_work_mem", DECODING_WORK_MEM);
    }
    try (EmbeddedPostgres pg = server.start()) {
      pg.createDatabase("bench");
      PgConnectionConfig source =
          PgConnectionConfig.builder()
              .host(pg.host())
              .port(pg.port())
              .database("bench")
              .user(pg.superuser())
              .password(pg.password())
              .build();
      try (Connection c = connect(pg, "bench")) {
        exec(
            c,
            "CREATE TABLE bench_large (id int8 PRIMARY KEY, qty int4, name text,"
                + " price numeric(12,2), created timestamptz, attrs jsonb)",
            "CREATE PUBLICATION pub_large FOR TABLE bench_large");
      }
      if (LARGE_ONLY) {
        largeTransactions(pg, source, rounds);
        return;
      }
      if (LATENCY_ONLY) {
        try (Connection c = connect(pg, "bench")) {
          exec(
              c,
              "CREATE TABLE bench_latency (id int8 PRIMARY KEY, v text)",
              "CREATE PUBLICATION pub_stream FOR TABLE bench_latency");
        }
        System.out.printf(
            Locale.ROOT,
            "latency: a random idle gap of 0 to %d ms before each insert (seed %d)%n",
            LATENCY_MAX_GAP_MS,
            LATENCY_GAP_SEED);
        for (int r = 0; r < rounds; r++) {
          try (Connection c = connect(pg, "bench")) {
            exec(c, "TRUNCATE bench_latency");
          }
          double[] l = latency(pg, source, "latency" + r);
          System.out.printf(
              Locale.ROOT,
              "round %d: latency pgjdbc alone median %.2f ms, p90 %.2f ms; pgetl median %.2f ms,"
                  + " p90 %.2f ms; median difference %+.2f ms; idle pipeline %.1f%% of a core%n",
              r + 1,
              l[0],
              l[1],
              l[2],
              l[3],
              l[4],
              l[5] * 100);
        }
        return;
      }
      if (STREAM_ONLY) {
        streamingOnly(pg, source, rounds);
        return;
      }
      if (STARTUP_ONLY) {
        startupOnly(pg, source, rounds);
        return;
      }
      try (Connection c = connect(pg, "bench")) {
        exec(
            c,
            "CREATE TABLE bench_copy (id int8 PRIMARY KEY, qty int4, name text, price numeric(12,2),"
                + " created timestamptz, attrs jsonb)",
            "INSERT INTO bench_copy SELECT g, g % 500, 'customer ' || g || ' of the benchmark',"
                + " g * 1.25, '2024-01-01'::timestamptz + g * interval '1 second',"
                + " jsonb_build_object('tier', 'gold', 'score', g % 97)"
                + " FROM generate_series(1, "
                + COPY_ROWS
                + ") g",
            "VACUUM ANALYZE bench_copy",
            // 2 kB of text a row, stored out of line: a row's heap is mostly its text
            "CREATE TABLE bench_toast (id int8 PRIMARY KEY, body text)",
            "ALTER TABLE bench_toast ALTER COLUMN body SET STORAGE EXTERNAL",
            "INSERT INTO bench_toast SELECT g, repeat(md5(g::text), 64) FROM generate_series(1, "
                + TOAST_ROWS
                + ") g",
            "VACUUM ANALYZE bench_toast",
            "CREATE PUBLICATION pub_toast FOR TABLE bench_toast",
            "CREATE TABLE bench_stream (id int8 PRIMARY KEY, qty int4, name text,"
                + " price numeric(12,2), created timestamptz, attrs jsonb)",
            "CREATE TABLE bench_latency (id int8 PRIMARY KEY, v text)",
            "CREATE PUBLICATION pub_copy FOR TABLE bench_copy",
            "CREATE PUBLICATION pub_stream FOR TABLE bench_stream, bench_latency");
      }
      List<Double> rawCopy = new ArrayList<>();
      List<Double> rawParallel = new ArrayList<>();
      List<Double> etlCopy = new ArrayList<>();
      List<Double> firstRow = new ArrayList<>();
      List<Double> rawToast = new ArrayList<>();
      List<Double> etlToast = new ArrayList<>();
      List<Double> rawStream = new ArrayList<>();
      List<Double> etlStream = new ArrayList<>();
      long copyHeap = 0;
      long toastHeap = 0;
      long copyLive = 0;
      long toastLive = 0;
      HeapWatch heap = HeapWatch.start();
      for (int r = 0; r < rounds; r++) {
        rawCopy.add(rawCopy(pg));
        double[] cpu0 = cpuNow(pg);
        rawParallel.add(rawParallelCopy(pg, "bench_copy"));
        double[] cpu1 = cpuNow(pg);
        double[] c = pgetlCopy(source, "copy" + r, "pub_copy", COPY_ROWS, heap);
        double[] cpu2 = cpuNow(pg);
        System.out.printf(
            Locale.ROOT,
            "round %d: CPU seconds for the 1M-row copy: raw %d connections: server %.2f, this JVM"
                + " %.2f; pgetl: server %.2f, this JVM %.2f (with start-up and the heap probes)%n",
            r + 1,
            PipelineConfig.DEFAULT_COPY_CONNECTIONS_PER_TABLE,
            cpu1[0] - cpu0[0],
            cpu1[1] - cpu0[1],
            cpu2[0] - cpu1[0],
            cpu2[1] - cpu1[1]);
        etlCopy.add(c[0]);
        firstRow.add(c[1]);
        copyHeap = Math.max(copyHeap, (long) c[2]);
        copyLive = Math.max(copyLive, (long) c[3]);
        rawToast.add(rawParallelCopy(pg, "bench_toast"));
        double[] t = pgetlCopy(source, "toast" + r, "pub_toast", TOAST_ROWS, heap);
        etlToast.add(t[0]);
        toastHeap = Math.max(toastHeap, (long) t[2]);
        toastLive = Math.max(toastLive, (long) t[3]);
        System.out.printf(
            Locale.ROOT,
            "round %d: copy raw 1 connection %.0f rows/s, raw %d connections %.0f rows/s, pgetl"
                + " %.0f rows/s (first row after %.0f ms, live heap %d MiB, after any GC %d MiB);"
                + " 2 kB-text copy raw %.0f rows/s, pgetl %.0f rows/s (live heap %d MiB, after"
                + " any GC %d MiB)%n",
            r + 1,
            rawCopy.get(r),
            PipelineConfig.DEFAULT_COPY_CONNECTIONS_PER_TABLE,
            rawParallel.get(r),
            etlCopy.get(r),
            firstRow.get(r),
            (long) c[3] >> 20,
            (long) c[2] >> 20,
            rawToast.get(r),
            etlToast.get(r),
            (long) t[3] >> 20,
            (long) t[2] >> 20);
        if (COPY_ONLY) {
          continue;
        }
        double[] s = streaming(pg, source, "stream" + r, r % 2 == 0);
        rawStream.add(s[0]);
        etlStream.add(s[1]);
        System.out.printf(
            Locale.ROOT,
            "round %d: streaming raw %.0f rows/s, pgetl %.0f rows/s%n",
            r + 1,
            rawStream.get(r),
            etlStream.get(r));
      }
      long maxHeap = Runtime.getRuntime().maxMemory() >> 20;
      System.out.println();
      System.out.printf(
          Locale.ROOT,
          "copy (1M rows, 6 columns):   pgjdbc alone, 1 connection %s rows/s; %d connections over"
              + " pgetl's ctid ranges %s rows/s; pgetl %s rows/s; ratios %.2f and %.2f%n",
          fmt(median(rawCopy)),
          PipelineConfig.DEFAULT_COPY_CONNECTIONS_PER_TABLE,
          fmt(median(rawParallel)),
          fmt(median(etlCopy)),
          median(etlCopy) / median(rawCopy),
          median(etlCopy) / median(rawParallel));
      System.out.printf(
          Locale.ROOT,
          "  from start() to the first copied row %.0f ms (median); live heap (after a full GC"
              + " mid-copy) at most %d MiB, heap after any GC at most %d MiB (of %d MiB max)%n",
          median(firstRow),
          copyLive >> 20,
          copyHeap >> 20,
          maxHeap);
      System.out.printf(
          Locale.ROOT,
          "copy (%d rows of 2 kB text): pgjdbc alone, %d connections %s rows/s; pgetl %s rows/s;"
              + " ratio %.2f; live heap at most %d MiB, heap after any GC at most %d MiB%n",
          TOAST_ROWS,
          PipelineConfig.DEFAULT_COPY_CONNECTIONS_PER_TABLE,
          fmt(median(rawToast)),
          fmt(median(etlToast)),
          median(etlToast) / median(rawToast),
          toastLive >> 20,
          toastHeap >> 20);
      String copySummary =
          String.format(
              Locale.ROOT,
              "copy %s rows/s = %.2fx raw 1-conn, %.2fx raw %d-conn, first row %.0f ms, live heap"
                  + " %d MiB; 2kB-text copy %.2fx raw %d-conn, live heap %d MiB",
              fmt(median(etlCopy)),
              median(etlCopy) / median(rawCopy),
              median(etlCopy) / median(rawParallel),
              PipelineConfig.DEFAULT_COPY_CONNECTIONS_PER_TABLE,
              median(firstRow),
              copyLive >> 20,
              median(etlToast) / median(rawToast),
              PipelineConfig.DEFAULT_COPY_CONNECTIONS_PER_TABLE,
              toastLive >> 20);
      if (COPY_ONLY) {
        System.out.printf(
            Locale.ROOT,
            "SUMMARY -Xmx%dm load %.2f: %s%n",
            maxHeap,
            java.lang.management.ManagementFactory.getOperatingSystemMXBean()
                .getSystemLoadAverage(),
            copySummary);
        return;
      }
      double[] latency = latency(pg, source, "latency");
      System.out.printf(
          Locale.ROOT,
          "streaming (500k-row tx):     pgjdbc alone %s rows/s, pgetl %s rows/s, ratio %.2f%n",
          fmt(median(rawStream)),
          fmt(median(etlStream)),
          median(etlStream) / median(rawStream));
      System.out.printf(
          Locale.ROOT,
          "latency (single-row insert, %d inserts read by both at once, idle gaps of 0 to %d ms,"
              + " seed %d): pgjdbc alone median %.2f ms, p90 %.2f ms; pgetl median %.2f ms, p90"
              + " %.2f ms; median difference %+.2f ms; idle pipeline %.1f%% of a core%n",
          LATENCY_SAMPLES,
          LATENCY_MAX_GAP_MS,
          LATENCY_GAP_SEED,
          latency[0],
          latency[1],
          latency[2],
          latency[3],
          latency[4],
          latency[5] * 100);
      String large = largeTransactions(pg, source, rounds);
      System.out.printf(
          Locale.ROOT,
          "SUMMARY -Xmx%dm load %.2f: %s; streaming %.2fx raw; latency median %.2f ms = raw"
              + " %.2f ms %+.2f ms; %s%n",
          maxHeap,
          java.lang.management.ManagementFactory.getOperatingSystemMXBean().getSystemLoadAverage(),
          copySummary,
          median(etlStream) / median(rawStream),
          latency[2],
          latency[0],
          latency[4],
          large);
    }
  }

  // ---- large transactions

  /**
   * Times one large transaction per round and protocol, written while the pipeline runs, and prints
   * the medians; rounds alternate which protocol goes first.
   */
  private static String largeTransactions(
      EmbeddedPostgres pg, PgConnectionConfig source, int rounds) throws Exception {
    List<Double> plainRate = new ArrayList<>();
    List<Double> streamRate = new ArrayList<>();
    List<Double> plainFirst = new ArrayList<>();
    List<Double> streamFirst = new ArrayList<>();
    long plainHeap = 0;
    long streamHeap = 0;
    HeapWatch heap = HeapWatch.start();
    for (int r = 0; r < rounds; r++) {
      for (boolean streaming :
          r % 2 == 0 ? new boolean[] {false, true} : new boolean[] {true, false}) {
        double[] m =
            largeTransaction(pg, source, "large" + r + (streaming ? "s" : "p"), streaming, heap);
        (streaming ? streamRate : plainRate).add(m[0]);
        (streaming ? streamFirst : plainFirst).add(m[1]);
        if (streaming) {
          streamHeap = Math.max(streamHeap, (long) m[2]);
        } else {
          plainHeap = Math.max(plainHeap, (long) m[2]);
        }
        System.out.printf(
            Locale.ROOT,
            "round %d: %d-row transaction, %s: %.0f rows/s from its commit, first event after %.0f"
                + " ms, peak heap after GC %d MiB%n",
            r + 1,
            LARGE_ROWS,
            streaming ? "streaming" : "protocol 1",
            m[0],
            m[1],
            (long) m[2] >> 20);
      }
    }
    System.out.println();
    System.out.printf(
        Locale.ROOT,
        "large transaction (%d rows, logical_decoding_work_mem %s, from its commit to its last"
            + " event): protocol 1 %s rows/s, streaming %s rows/s, ratio %.2f%n",
        LARGE_ROWS,
        DECODING_WORK_MEM == null ? "64MB" : DECODING_WORK_MEM,
        fmt(median(plainRate)),
        fmt(median(streamRate)),
        median(streamRate) / median(plainRate));
    System.out.printf(
        Locale.ROOT,
        "  from its commit to its first event: protocol 1 %.0f ms, streaming %.0f ms (medians)%n",
        median(plainFirst),
        median(streamFirst));
    System.out.printf(
        Locale.ROOT,
        "  peak heap after GC: protocol 1 %d MiB, streaming %d MiB (of %d MiB max)%n",
        plainHeap >> 20,
        streamHeap >> 20,
        Runtime.getRuntime().maxMemory() >> 20);
    return String.format(
        Locale.ROOT,
        "large tx streaming %.2fx protocol 1, heap %d/%d MiB",
        median(streamRate) / median(plainRate),
        streamHeap >> 20,
        plainHeap >> 20);
  }

  /**
   * Returns rows per second from the commit to the last event, milliseconds from the commit to the
   * first event, and the peak heap after GC in bytes.
   */
  private static double[] largeTransaction(
      EmbeddedPostgres pg, PgConnectionConfig source, String id, boolean streaming, HeapWatch heap)
      throws Exception {
    try (Connection c = connect(pg, "bench")) {
      exec(c, "TRUNCATE bench_large", "CHECKPOINT");
    }
    CountingDestination dest = new CountingDestination(0, LARGE_ROWS);
    MemoryStore store = new MemoryStore(id);
    PipelineConfig config =
        PipelineConfig.builder()
            .pipelineId(id)
            .publication("pub_large")
            .source(source)
            .pgoutputStreaming(streaming)
            .build();
    long committed;
    long started;
    long behind;
    long walsender;
    double[] cpuBefore;
    try (Pipeline p = Pipeline.create(config, store, dest)) {
      p.start();
      waitReady(store, 1);
      System.gc();
      heap.reset();
      try (Connection c = connect(pg, "bench")) {
        walsender = walsenderPid(c, "pgetl_apply_" + id);
        cpuBefore = cpuSeconds(walsender);
        started = System.nanoTime();
        exec(
            c,
            "INSERT INTO bench_large SELECT "
                + ROW_VALUES
                + " FROM generate_series(1, "
                + LARGE_ROWS
                + ") g");
        committed = System.nanoTime();
        behind = walsenderBehind(c, "pgetl_apply_" + id);
      }
      if (!dest.streamed.await(30, TimeUnit.MINUTES)) {
        throw new IllegalStateException("the large transaction did not arrive");
      }
    }
    double[] cpuAfter = cpuSeconds(walsender);
    long peak = heap.peak();
    try (Connection c = connect(pg, "bench")) {
      exec(c, "SELECT pg_drop_replication_slot('pgetl_apply_" + id + "')");
    }
    System.out.printf(
        Locale.ROOT,
        "  (%s: the INSERT took %.1f s; at its commit the walsender had %d MiB of WAL left to"
            + " decode; the last event came %.1f s after the first; from the INSERT to the last"
            + " event, %.1f s, the walsender used %.1f s of CPU and this JVM %.1f s)%n",
        streaming ? "streaming" : "protocol 1",
        (committed - started) / 1e9,
        behind >> 20,
        (dest.streamDoneNanos.get() - dest.firstInsertNanos.get()) / 1e9,
        (dest.streamDoneNanos.get() - started) / 1e9,
        cpuAfter[0] - cpuBefore[0],
        cpuAfter[1] - cpuBefore[1]);
    return new double[] {
      LARGE_ROWS * 1e9 / (dest.streamDoneNanos.get() - committed),
      (dest.firstInsertNanos.get() - committed) / 1e6,
      peak
    };
  }

  private static long walsenderPid(Connection c, String slot) throws SQLException {
    try (java.sql.PreparedStatement ps =
        c.prepareStatement("SELECT active_pid FROM pg_replication_slots WHERE slot_name = ?")) {
      ps.setString(1, slot);
      try (java.sql.ResultSet rs = ps.executeQuery()) {
        return rs.next() ? rs.getLong(1) : -1;
      }
    }
  }

  /** The CPU seconds a server process (Linux {@code /proc}, else -1) and this JVM used so far. */
  /** The CPU time of every live thread of this JVM, by name (threads of one name summed). */
  private static Map<String, Long> threadCpuNanos() {
    java.lang.management.ThreadMXBean mx = java.lang.management.ManagementFactory.getThreadMXBean();
    Map<String, Long> out = new java.util.HashMap<>();
    for (java.lang.management.ThreadInfo info : mx.getThreadInfo(mx.getAllThreadIds())) {
      if (info == null) {
        continue;
      }
      long cpu = mx.getThreadCpuTime(info.getThreadId());
      if (cpu > 0) {
        out.merge(info.getThreadName(), cpu, Long::sum);
      }
    }
    return out;
  }

  /** Prints the threads that used the most CPU between two samples, as shares of one core. */
  private static void printTopThreads(
      String what, Map<String, Long> before, Map<String, Long> after, long windowNanos) {
    StringBuilder b = new StringBuilder(what).append(", CPU by thread (share of one core):");
    after.entrySet().stream()
        .map(e -> Map.entry(e.getKey(), e.getValue() - before.getOrDefault(e.getKey(), 0L)))
        .filter(e -> e.getValue() > 0)
        .sorted(Map.Entry.<String, Long>comparingByValue().reversed())
        .limit(6)
        .forEach(
            e ->
                b.append(
                    String.format(" %s %.2f%%", e.getKey(), 100.0 * e.getValue() / windowNanos)));
    System.out.println(b);
  }

  private static double[] cpuSeconds(long pid) {
    return new double[] {Bench.processCpuSeconds(pid), Bench.jvmCpuSeconds()};
  }

  /**
   * The CPU seconds the whole server (the postmaster, its live children, and the children it
   * reaped: the backends of closed connections) and this JVM used so far; the server's is -1 when
   * not on Linux.
   */
  private static double[] cpuNow(EmbeddedPostgres pg) {
    return new double[] {Bench.serverCpuSeconds(pg), Bench.jvmCpuSeconds()};
  }

  /** How far the walsender of a slot is behind the end of the WAL, in bytes. */
  private static long walsenderBehind(Connection c, String slot) throws SQLException {
    try (java.sql.PreparedStatement ps =
        c.prepareStatement(
            "SELECT pg_current_wal_lsn() - r.sent_lsn FROM pg_stat_replication r"
                + " JOIN pg_replication_slots s ON s.active_pid = r.pid WHERE s.slot_name = ?")) {
      ps.setString(1, slot);
      try (java.sql.ResultSet rs = ps.executeQuery()) {
        return rs.next() ? rs.getLong(1) : -1;
      }
    }
  }

  /** The streaming section alone: rounds of raw against pgetl, then the medians and their ratio. */
  private static void streamingOnly(EmbeddedPostgres pg, PgConnectionConfig source, int rounds)
      throws Exception {
    try (Connection c = connect(pg, "bench")) {
      exec(
          c,
          "CREATE TABLE bench_stream (id int8 PRIMARY KEY, qty int4, name text,"
              + " price numeric(12,2), created timestamptz, attrs jsonb)",
          "CREATE TABLE bench_latency (id int8 PRIMARY KEY, v text)",
          "CREATE PUBLICATION pub_stream FOR TABLE bench_stream, bench_latency");
    }
    List<Double> raw = new ArrayList<>();
    List<Double> etl = new ArrayList<>();
    for (int r = 0; r < rounds; r++) {
      double[] s = streaming(pg, source, "stream" + r, r % 2 == 0);
      raw.add(s[0]);
      etl.add(s[1]);
      System.out.printf(
          Locale.ROOT,
          "round %d: streaming raw %.0f rows/s, pgetl %.0f rows/s, ratio %.2f%n",
          r + 1,
          s[0],
          s[1],
          s[1] / s[0]);
    }
    System.out.printf(
        Locale.ROOT,
        "SUMMARY streaming (500k-row tx): pgjdbc alone %s rows/s, pgetl %s rows/s, ratio %.2f;"
            + " load %.2f%n",
        fmt(median(raw)),
        fmt(median(etl)),
        median(etl) / median(raw),
        java.lang.management.ManagementFactory.getOperatingSystemMXBean().getSystemLoadAverage());
  }

  /**
   * The greatest heap (heap pools only, not metaspace or code) in use right after a garbage
   * collection since the last reset: the live data plus what a young collection left in the old
   * generation.
   */
  private static final class HeapWatch {
    private final AtomicLong peak = new AtomicLong();

    static HeapWatch start() {
      HeapWatch w = new HeapWatch();
      java.util.Set<String> heapPools = new java.util.HashSet<>();
      for (var pool : java.lang.management.ManagementFactory.getMemoryPoolMXBeans()) {
        if (pool.getType() == java.lang.management.MemoryType.HEAP) {
          heapPools.add(pool.getName());
        }
      }
      for (java.lang.management.GarbageCollectorMXBean gc :
          java.lang.management.ManagementFactory.getGarbageCollectorMXBeans()) {
        ((javax.management.NotificationEmitter) gc)
            .addNotificationListener(
                (n, handback) -> {
                  if (!n.getType()
                      .equals(
                          com.sun.management.GarbageCollectionNotificationInfo
                              .GARBAGE_COLLECTION_NOTIFICATION)) {
                    return;
                  }
                  long used = 0;
                  for (var pool :
                      com.sun.management.GarbageCollectionNotificationInfo.from(
                              (javax.management.openmbean.CompositeData) n.getUserData())
                          .getGcInfo()
                          .getMemoryUsageAfterGc()
                          .entrySet()) {
                    if (heapPools.contains(pool.getKey())) {
                      used += pool.getValue().getUsed();
                    }
                  }
                  w.peak.accumulateAndGet(used, Math::max);
                },
                null,
                null);
      }
      return w;
    }

    void reset() {
      peak.set(0);
    }

    long peak() {
      return peak.get();
    }
  }

  // ---- copy

  private static double rawCopy(EmbeddedPostgres pg) throws SQLException {
    try (Connection c = connect(pg, "bench")) {
      long start = System.nanoTime();
      CopyOut out =
          c.unwrap(PGConnection.class)
              .getCopyAPI()
              .copyOut("COPY bench_copy TO STDOUT (FORMAT binary)");
      long rows = -1; // the last message is the trailer
      while (out.readFromCopy() != null) {
        rows++;
      }
      long nanos = System.nanoTime() - start;
      return rows * 1e9 / nanos;
    }
  }

  /**
   * Reads a table with {@link PipelineConfig#DEFAULT_COPY_CONNECTIONS_PER_TABLE} connections, each
   * importing one exported snapshot, over the ctid ranges pgetl's planner makes of it, counting
   * rows; returns rows per second from the first COPY to the last row.
   */
  private static double rawParallelCopy(EmbeddedPostgres pg, String table) throws Exception {
    int connections = PipelineConfig.DEFAULT_COPY_CONNECTIONS_PER_TABLE;
    try (Connection coordinator = connect(pg, "bench")) {
      coordinator.setAutoCommit(false);
      coordinator.setTransactionIsolation(Connection.TRANSACTION_REPEATABLE_READ);
      String snapshot;
      long oid;
      long blocks;
      long rows;
      try (Statement st = coordinator.createStatement();
          java.sql.ResultSet rs =
              st.executeQuery(
                  "SELECT pg_export_snapshot(), c.oid::bigint, c.reltuples::float8,"
                      + " pg_relation_size(c.oid) / current_setting('block_size')::bigint"
                      + " FROM pg_class c WHERE c.oid = '"
                      + table
                      + "'::regclass")) {
        rs.next();
        snapshot = rs.getString(1);
        oid = rs.getLong(2);
        rows = (long) rs.getDouble(3);
        blocks = rs.getLong(4);
      }
      java.util.concurrent.ConcurrentLinkedQueue<CopyPlanner.Partition> ranges =
          new java.util.concurrent.ConcurrentLinkedQueue<>(
              CopyPlanner.plan(
                  List.of(new CopyPlanner.TableSize(new TableId(oid), blocks, rows)), connections));
      List<Connection> conns = new ArrayList<>();
      try {
        for (int i = 0; i < connections; i++) {
          Connection c = connect(pg, "bench");
          conns.add(c);
          c.setAutoCommit(false);
          exec(
              c,
              "SET TRANSACTION ISOLATION LEVEL REPEATABLE READ",
              "SET TRANSACTION SNAPSHOT '" + snapshot + "'");
        }
        AtomicLong counted = new AtomicLong();
        java.util.concurrent.atomic.AtomicReference<Exception> failed =
            new java.util.concurrent.atomic.AtomicReference<>();
        List<Thread> threads = new ArrayList<>();
        long start = System.nanoTime();
        for (Connection c : conns) {
          Thread t =
              new Thread(
                  () -> {
                    try {
                      CopyPlanner.Partition p;
                      while ((p = ranges.poll()) != null) {
                        String where = p.ctidPredicate();
                        CopyOut out =
                            c.unwrap(PGConnection.class)
                                .getCopyAPI()
                                .copyOut(
                                    "COPY (SELECT * FROM ONLY "
                                        + table
                                        + (where.isEmpty() ? "" : " WHERE " + where)
                                        + ") TO STDOUT (FORMAT binary)");
                        long n = -1; // the last message is the trailer
                        while (out.readFromCopy() != null) {
                          n++;
                        }
                        counted.addAndGet(n);
                      }
                    } catch (SQLException e) {
                      failed.compareAndSet(null, e);
                    }
                  });
          threads.add(t);
          t.start();
        }
        for (Thread t : threads) {
          t.join();
        }
        long nanos = System.nanoTime() - start;
        if (failed.get() != null) {
          throw failed.get();
        }
        return counted.get() * 1e9 / nanos;
      } finally {
        for (Connection c : conns) {
          c.close();
        }
        coordinator.commit();
      }
    }
  }

  /**
   * Copies a published table with the library's defaults; returns rows per second from {@code
   * start()} to the last row (less the pauses of the probes below), milliseconds from {@code
   * start()} to the first row, the peak heap after any GC while it ran, and the live heap: the
   * greatest heap in use right after a full collection that this thread asks for when a quarter,
   * half and three quarters of the rows arrived.
   */
  private static double[] pgetlCopy(
      PgConnectionConfig source, String id, String publication, long rows, HeapWatch heap)
      throws Exception {
    CountingDestination dest = new CountingDestination(rows, 0);
    MemoryStore store = new MemoryStore(id);
    PipelineConfig config =
        PipelineConfig.builder().pipelineId(id).publication(publication).source(source).build();
    System.gc();
    heap.reset();
    java.lang.management.MemoryMXBean memory =
        java.lang.management.ManagementFactory.getMemoryMXBean();
    try (Pipeline p = Pipeline.create(config, store, dest)) {
      long start = System.nanoTime();
      p.start();
      long probes = 0;
      long live = 0;
      int nextProbe = 1;
      long deadline = start + TimeUnit.MINUTES.toNanos(10);
      while (!dest.copied.await(5, TimeUnit.MILLISECONDS)) {
        if (nextProbe <= 3 && dest.rows.get() >= rows * nextProbe / 4) {
          long before = System.nanoTime();
          System.gc();
          live = Math.max(live, memory.getHeapMemoryUsage().getUsed());
          probes += System.nanoTime() - before;
          nextProbe++;
        }
        if (System.nanoTime() > deadline) {
          throw new IllegalStateException("copy did not finish");
        }
      }
      long nanos = dest.copyDoneNanos.get() - start - probes;
      long peak = heap.peak();
      waitReady(store, 1);
      return new double[] {
        rows * 1e9 / nanos, (dest.firstRowNanos.get() - start) / 1e6, peak, live
      };
    }
  }

  /**
   * Starts a pipeline on a fresh 100,000-row table {@code rounds} times in one JVM, each with a new
   * pipeline id (a first start: the apply slot, a failover slot on 17, is created), and prints the
   * time from {@code start()} to the first copied row; the first round is the cold JVM's.
   */
  private static void startupOnly(EmbeddedPostgres pg, PgConnectionConfig source, int rounds)
      throws Exception {
    try (Connection c = connect(pg, "bench")) {
      exec(
          c,
          "CREATE TABLE bench_startup (id int8 PRIMARY KEY, qty int4, name text,"
              + " price numeric(12,2), created timestamptz, attrs jsonb)",
          "INSERT INTO bench_startup SELECT "
              + ROW_VALUES
              + " FROM generate_series(1, "
              + STARTUP_ROWS
              + ") g",
          "VACUUM ANALYZE bench_startup",
          "CREATE PUBLICATION pub_startup FOR TABLE bench_startup");
    }
    HeapWatch heap = HeapWatch.start();
    List<Double> warm = new ArrayList<>();
    for (int r = 0; r < rounds; r++) {
      double[] c = pgetlCopy(source, "startup" + r, "pub_startup", STARTUP_ROWS, heap);
      System.out.printf(
          Locale.ROOT, "round %d: start() to first copied row %.0f ms%n", r + 1, c[1]);
      if (r > 0) {
        warm.add(c[1]);
      }
      try (Connection c2 = connect(pg, "bench")) {
        exec(c2, "SELECT pg_drop_replication_slot('pgetl_apply_startup" + r + "')");
      }
    }
    Collections.sort(warm);
    System.out.printf(
        Locale.ROOT,
        "SUMMARY startup load %.2f: start() to first copied row, warm rounds: median %.0f ms,"
            + " p90 %.0f ms, min %.0f ms (%d rounds)%n",
        java.lang.management.ManagementFactory.getOperatingSystemMXBean().getSystemLoadAverage(),
        median(warm),
        warm.isEmpty()
            ? 0
            : warm.get((int) Math.min(warm.size() - 1, Math.ceil(warm.size() * 0.9) - 1)),
        warm.isEmpty() ? 0 : warm.get(0),
        warm.size());
  }

  // ---- streaming

  /**
   * Streams one large transaction twice, through a raw slot and through pgetl; the first reader
   * warms the WAL in the page cache, so rounds alternate which one goes first.
   */
  private static double[] streaming(
      EmbeddedPostgres pg, PgConnectionConfig source, String id, boolean rawFirst)
      throws Exception {
    CountingDestination dest = new CountingDestination(0, STREAM_ROWS);
    MemoryStore store = new MemoryStore(id);
    PipelineConfig config =
        PipelineConfig.builder()
            .pipelineId(id)
            .publication("pub_stream")
            .source(source)
            // the protocol of the raw reader it is compared with
            .pgoutputStreaming(false)
            .build();
    String rawSlot = "raw_" + id;
    try (Connection c = connect(pg, "bench")) {
      exec(c, "TRUNCATE bench_stream");
      exec(c, "SELECT pg_create_logical_replication_slot('" + rawSlot + "', 'pgoutput')");
    }
    // the pipeline creates its slot and is ready, then stops while the transaction is written
    try (Pipeline p = Pipeline.create(config, store, dest)) {
      p.start();
      waitReady(store, 1);
    }
    try (Connection c = connect(pg, "bench")) {
      exec(
          c,
          "INSERT INTO bench_stream SELECT g, g % 500, 'customer ' || g || ' of the benchmark',"
              + " g * 1.25, '2024-01-01'::timestamptz + g * interval '1 second',"
              + " jsonb_build_object('tier', 'gold', 'score', g % 97)"
              + " FROM generate_series(1, "
              + STREAM_ROWS
              + ") g");
    }
    double raw = rawFirst ? rawStream(pg, rawSlot) : 0;
    double etl;
    try (Pipeline p = Pipeline.create(config, store, dest)) {
      p.start();
      if (!dest.streamed.await(10, TimeUnit.MINUTES)) {
        throw new IllegalStateException("streaming did not finish");
      }
      etl = STREAM_ROWS * 1e9 / (dest.streamDoneNanos.get() - dest.firstInsertNanos.get());
    }
    if (!rawFirst) {
      raw = rawStream(pg, rawSlot);
    }
    try (Connection c = connect(pg, "bench")) {
      exec(c, "SELECT pg_drop_replication_slot('" + rawSlot + "')");
    }
    return new double[] {raw, etl};
  }

  private static double rawStream(EmbeddedPostgres pg, String slot) throws Exception {
    try (Connection c = rawReplicationConnection(pg)) {
      long start = 0;
      PGReplicationStream stream =
          c.unwrap(PGConnection.class)
              .getReplicationAPI()
              .replicationStream()
              .logical()
              .withSlotName(slot)
              .withStartPosition(LogSequenceNumber.INVALID_LSN)
              .withSlotOption("proto_version", "1")
              .withSlotOption("publication_names", "pub_stream")
              .start();
      long inserts = 0;
      while (true) {
        java.nio.ByteBuffer b = stream.read();
        byte kind = b.get(b.position());
        if (start == 0) {
          start = System.nanoTime();
        }
        if (kind == 'I') {
          inserts++;
        } else if (kind == 'C' && inserts >= STREAM_ROWS) {
          break;
        }
      }
      long nanos = System.nanoTime() - start;
      stream.close();
      return inserts * 1e9 / nanos;
    }
  }

  // ---- latency

  /**
   * Single-row inserts on an idle running pipeline, each after a random idle gap of 0 to {@code
   * pgetl.bench.maxGapMs} (seeded by {@code pgetl.bench.gapSeed}), each read at the same time by
   * pgetl and by a raw pgjdbc reader of a second slot (a thread blocked in {@code
   * PGReplicationStream.read()}, so it wakes as the bytes arrive). For each insert, from sending
   * the {@code INSERT} (autocommit) to the raw reader seeing its {@code COMMIT} message, and to the
   * insert event reaching pgetl's destination. Returns the raw median, the raw p90, pgetl's median,
   * pgetl's p90 and the median of the per-insert difference, in milliseconds, and the share of one
   * core this JVM used in 10 s of the idle running pipeline, 3 s after the last insert.
   */
  private static double[] latency(EmbeddedPostgres pg, PgConnectionConfig source, String id)
      throws Exception {
    CountingDestination dest = new CountingDestination(0, 0);
    MemoryStore store = new MemoryStore(id);
    PipelineConfig config =
        PipelineConfig.builder().pipelineId(id).publication("pub_stream").source(source).build();
    String rawSlot = "raw_" + id;
    try (Connection c = connect(pg, "bench")) {
      exec(c, "SELECT pg_create_logical_replication_slot('" + rawSlot + "', 'pgoutput')");
    }
    AtomicLong rawCommits = new AtomicLong();
    AtomicLong rawCommitNanos = new AtomicLong();
    java.util.concurrent.atomic.AtomicReference<Throwable> rawFailed =
        new java.util.concurrent.atomic.AtomicReference<>();
    List<Double> raw = new ArrayList<>();
    List<Double> etl = new ArrayList<>();
    List<Double> diff = new ArrayList<>();
    double idleCpu;
    try (Connection rc = rawReplicationConnection(pg)) {
      PGReplicationStream stream =
          rc.unwrap(PGConnection.class)
              .getReplicationAPI()
              .replicationStream()
              .logical()
              .withSlotName(rawSlot)
              .withStartPosition(LogSequenceNumber.INVALID_LSN)
              .withSlotOption("proto_version", "1")
              .withSlotOption("publication_names", "pub_stream")
              .start();
      Thread reader =
          new Thread(
              () -> {
                try {
                  while (!Thread.currentThread().isInterrupted()) {
                    java.nio.ByteBuffer b = stream.read();
                    if (b.get(b.position()) == 'C') {
                      rawCommitNanos.set(System.nanoTime());
                      rawCommits.incrementAndGet();
                      stream.setFlushedLSN(stream.getLastReceiveLSN());
                    }
                  }
                } catch (SQLException | RuntimeException e) {
                  rawFailed.compareAndSet(null, e);
                }
              },
              "raw-latency-reader");
      reader.setDaemon(true);
      reader.start();
      try (Pipeline p = Pipeline.create(config, store, dest);
          Connection c = connect(pg, "bench")) {
        p.start();
        waitReady(store, 1);
        java.util.SplittableRandom gaps = new java.util.SplittableRandom(LATENCY_GAP_SEED);
        for (int i = 0; i < LATENCY_SAMPLES + 20; i++) {
          if (LATENCY_MAX_GAP_MS > 0) {
            // an idle gap before each insert: the first message after a quiet stream is the case
            // a poll with a back-off serves worst
            TimeUnit.MICROSECONDS.sleep(gaps.nextLong(LATENCY_MAX_GAP_MS * 1000L + 1));
          }
          long before = dest.inserts.get();
          long rawBefore = rawCommits.get();
          long sent = System.nanoTime();
          exec(c, "INSERT INTO bench_latency VALUES (" + i + ", 'x')");
          long deadline = sent + TimeUnit.SECONDS.toNanos(30);
          while (dest.inserts.get() == before || rawCommits.get() == rawBefore) {
            if (rawFailed.get() != null) {
              throw new IllegalStateException("the raw reader failed", rawFailed.get());
            }
            if (System.nanoTime() > deadline) {
              throw new IllegalStateException("insert " + i + " did not arrive");
            }
            // the readers stamp the time themselves: this thread parks instead of spinning, so it
            // leaves both cores of a small machine to the server and the two readers
            java.util.concurrent.locks.LockSupport.parkNanos(50_000);
          }
          if (i >= 20) {
            double r = (rawCommitNanos.get() - sent) / 1e6;
            double e = (dest.lastInsertNanos.get() - sent) / 1e6;
            raw.add(r);
            etl.add(e);
            diff.add(e - r);
          }
        }
        // what the idle running pipeline costs: this JVM's CPU over 10 s without changes, after
        // 3 s for the work the inserts left (JIT compilations, the last acknowledgements) to end;
        // the raw reader is blocked in the kernel meanwhile
        TimeUnit.SECONDS.sleep(3);
        Map<String, Long> threadsBefore = threadCpuNanos();
        double cpuBefore = cpuSeconds(-1)[1];
        long idleStart = System.nanoTime();
        TimeUnit.SECONDS.sleep(10);
        long idleNanos = System.nanoTime() - idleStart;
        idleCpu = (cpuSeconds(-1)[1] - cpuBefore) * 1e9 / idleNanos;
        printTopThreads("idle pipeline", threadsBefore, threadCpuNanos(), idleNanos);
      }
      reader.interrupt();
      stream.close();
    }
    try (Connection c = connect(pg, "bench")) {
      exec(c, "SELECT pg_drop_replication_slot('" + rawSlot + "')");
    }
    return new double[] {
      median(raw), percentile(raw, 0.9), median(etl), percentile(etl, 0.9), median(diff), idleCpu
    };
  }

  private static Connection rawReplicationConnection(EmbeddedPostgres pg) throws SQLException {
    Properties props = new Properties();
    props.setProperty("user", pg.superuser());
    props.setProperty("password", pg.password());
    props.setProperty("replication", "database");
    props.setProperty("preferQueryMode", "simple");
    props.setProperty("assumeMinServerVersion", "14");
    return java.sql.DriverManager.getConnection(pg.jdbcUrl("bench"), props);
  }

  private static double percentile(List<Double> values, double p) {
    List<Double> sorted = new ArrayList<>(values);
    Collections.sort(sorted);
    return sorted.get((int) Math.min(sorted.size() - 1, Math.floor(sorted.size() * p)));
  }

  // ---- helpers

  private static Connection connect(EmbeddedPostgres pg, String db) throws SQLException {
    return pg.connect(db);
  }
}
