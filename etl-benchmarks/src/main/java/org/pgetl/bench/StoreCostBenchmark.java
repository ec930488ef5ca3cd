package org.pgetl.bench;

import static org.pgetl.bench.Bench.config;
import static org.pgetl.bench.Bench.exec;
import static org.pgetl.bench.Bench.median;
import static org.pgetl.bench.Bench.waitReady;

import java.sql.Connection;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import org.pgetl.PgConnectionConfig;
import org.pgetl.Pipeline;
import org.pgetl.PipelineConfig;
import org.pgetl.store.MemoryStore;
import org.pgetl.store.PipelineStore;
import org.pgetl.store.postgres.PostgresStore;
import org.pgetl.testkit.EmbeddedPostgres;

/**
 * A harness, not a test: what the Postgres store costs against the memory store, for what a user
 * waits for, in one run on one embedded server (the store in a database of its own on the same
 * server, as a user would run it beside the source).
 *
 * <ul>
 *   <li><b>copy</b>: a table of {@code rows} rows of six columns, from opening the store (the
 *       Postgres store migrates its schema and opens its pool) and {@code start()} to the last row
 *       at a destination that answers {@code durable()} at once, with the library's defaults;
 *   <li><b>streaming</b>: one transaction of {@code streamed} inserts written while the pipeline is
 *       stopped, then from opening the store and {@code start()} to the last insert event, and from
 *       the first event to the last (the store's cost while streaming alone).
 * </ul>
 *
 * Rounds alternate which store goes first. Run, after {@code mvn -B -q -pl etl-benchmarks -am
 * package -DskipTests}: {@code java -cp etl-benchmarks/target/pgetl-benchmarks.jar
 * org.pgetl.bench.StoreCostBenchmark [rows streamed rounds]} (default {@code 1000000 500000 3}).
 */
public final class StoreCostBenchmark {
  private static final String ROW_VALUES =
      "g, g % 500, 'customer ' || g || ' of the benchmark', g * 1.25,"
          + " '2024-01-01'::timestamptz + g * interval '1 second',"
          + " jsonb_build_object('tier', 'gold', 'score', g % 97)";
  private static final String COLUMNS =
      "(id int8 PRIMARY KEY, qty int4, name text, price numeric(12,2), created timestamptz,"
          + " attrs jsonb)";

  private StoreCostBenchmark() {}

  /**
   * Runs the harness.
   *
   * @param args copied rows, streamed rows, rounds
   * @throws Exception on failure
   */
  public static void main(String[] args) throws Exception {
    int rows = args.length > 0 ? Integer.parseInt(args[0]) : 1_000_000;
    int streamed = args.length > 1 ? Integer.parseInt(args[1]) : 500_000;
    int rounds = args.length > 2 ? Integer.parseInt(args[2]) : 3;
    System.out.printf(
        Locale.ROOT,
        "JVM %s, max heap %d MiB, %d CPUs, load average %.2f; library defaults%n",
        System.getProperty("java.vm.version"),
        Runtime.getRuntime().maxMemory() >> 20,
        Runtime.getRuntime().availableProcessors(),
        java.lang.management.ManagementFactory.getOperatingSystemMXBean().getSystemLoadAverage());
    try (EmbeddedPostgres pg = EmbeddedPostgres.builder().start()) {
      pg.createDatabase("bench");
      pg.createDatabase("store");
      PgConnectionConfig source = config(pg, "bench");
      PgConnectionConfig storeDb = config(pg, "store");
      try (Connection c = pg.connect("bench")) {
        exec(
            c,
            "CREATE TABLE bench_copy " + COLUMNS,
            "INSERT INTO bench_copy SELECT "
                + ROW_VALUES
                + " FROM generate_series(1, "
                + rows
                + ") g",
            "VACUUM ANALYZE bench_copy",
            "CREATE PUBLICATION pub_copy FOR TABLE bench_copy",
            "CREATE TABLE bench_stream " + COLUMNS,
            "CREATE PUBLICATION pub_stream FOR TABLE bench_stream");
      }
      List<Double> memCopy = new ArrayList<>();
      List<Double> pgCopy = new ArrayList<>();
      List<Double> memStream = new ArrayList<>();
      List<Double> pgStream = new ArrayList<>();
      List<Double> memStreamOnly = new ArrayList<>();
      List<Double> pgStreamOnly = new ArrayList<>();
      List<Double> memOpen = new ArrayList<>();
      List<Double> pgOpen = new ArrayList<>();
      for (int r = 0; r < rounds; r++) {
        boolean memoryFirst = r % 2 == 0;
        for (int i = 0; i < 2; i++) {
          boolean memory = memoryFirst == (i == 0);
          String id = (memory ? "mem" : "pg") + r;
          double[] c = copy(pg, source, id + "c", store(memory, id + "c", storeDb), rows);
          double copy = c[0];
          (memory ? memCopy : pgCopy).add(copy);
          (memory ? memOpen : pgOpen).add(c[1]);
          double[] s = streaming(pg, source, id + "s", store(memory, id + "s", storeDb), streamed);
          (memory ? memStream : pgStream).add(s[0]);
          (memory ? memStreamOnly : pgStreamOnly).add(s[1]);
          System.out.printf(
              Locale.ROOT,
              "round %d, %s store: copy %.0f rows/s; streaming from start() %.0f rows/s, first to"
                  + " last event %.0f rows/s%n",
              r + 1,
              memory ? "memory" : "Postgres",
              copy,
              s[0],
              s[1]);
        }
      }
      System.out.printf(
          Locale.ROOT,
          "%ncopy (%d rows), from opening the store: memory %.0f rows/s, Postgres %.0f rows/s,"
              + " ratio %.2f%n",
          rows,
          median(memCopy),
          median(pgCopy),
          median(pgCopy) / median(memCopy));
      System.out.printf(
          Locale.ROOT,
          "streaming (%d-row tx), from opening the store: memory %.0f rows/s, Postgres %.0f"
              + " rows/s, ratio %.2f; first to last event: memory %.0f, Postgres %.0f, ratio %.2f%n",
          streamed,
          median(memStream),
          median(pgStream),
          median(pgStream) / median(memStream),
          median(memStreamOnly),
          median(pgStreamOnly),
          median(pgStreamOnly) / median(memStreamOnly));
      System.out.printf(
          Locale.ROOT,
          "opening the store (a new pipeline's schema migrated, pool opened): memory %.1f ms,"
              + " Postgres %.1f ms (medians)%n",
          median(memOpen),
          median(pgOpen));
      System.out.printf(
          Locale.ROOT,
          "SUMMARY load %.2f: Postgres store against memory store: copy %.2fx, streaming %.2fx"
              + " (first to last event %.2fx), opening it %.0f ms%n",
          java.lang.management.ManagementFactory.getOperatingSystemMXBean().getSystemLoadAverage(),
          median(pgCopy) / median(memCopy),
          median(pgStream) / median(memStream),
          median(pgStreamOnly) / median(memStreamOnly),
          median(pgOpen));
    }
  }

  /**
   * Opens the Postgres store on each call, as a user's process does at start; the memory store is
   * one instance (its state lives only in it), closed for nothing.
   */
  private static Supplier<PipelineStore> store(boolean memory, String id, PgConnectionConfig db) {
    if (memory) {
      MemoryStore one = new MemoryStore(id);
      return () -> one;
    }
    return () -> PostgresStore.builder().connection(db).pipelineId(id).build();
  }

  /** Returns rows per second from opening the store to the last row, and the store's opening. */
  private static double[] copy(
      EmbeddedPostgres pg,
      PgConnectionConfig source,
      String id,
      Supplier<PipelineStore> opener,
      long rows)
      throws Exception {
    CountingDestination dest = new CountingDestination(rows, 0);
    PipelineConfig config =
        PipelineConfig.builder().pipelineId(id).publication("pub_copy").source(source).build();
    System.gc();
    long start = System.nanoTime();
    PipelineStore store = opener.get();
    double openMillis = (System.nanoTime() - start) / 1e6;
    try (Pipeline p = Pipeline.create(config, store, dest)) {
      p.start();
      if (!dest.copied.await(10, TimeUnit.MINUTES)) {
        throw new IllegalStateException("copy did not finish");
      }
      double rate = rows * 1e9 / (dest.copyDoneNanos.get() - start);
      waitReady(store, 1);
      return new double[] {rate, openMillis};
    } finally {
      close(store);
      try (Connection c = pg.connect("bench")) {
        exec(c, "SELECT pg_drop_replication_slot('pgetl_apply_" + id + "')");
      }
    }
  }

  /**
   * Returns rows per second from opening the store to the last event, and from the first event to
   * the last.
   */
  private static double[] streaming(
      EmbeddedPostgres pg,
      PgConnectionConfig source,
      String id,
      Supplier<PipelineStore> opener,
      int streamed)
      throws Exception {
    PipelineConfig config =
        PipelineConfig.builder().pipelineId(id).publication("pub_stream").source(source).build();
    try (Connection c = pg.connect("bench")) {
      exec(c, "TRUNCATE bench_stream");
    }
    // the pipeline creates its slot and is ready, then stops while the transaction is written
    PipelineStore first = opener.get();
    try (Pipeline p = Pipeline.create(config, first, new CountingDestination(0, 0))) {
      p.start();
      waitReady(first, 1);
    } finally {
      close(first);
    }
    try (Connection c = pg.connect("bench")) {
      exec(
          c,
          "INSERT INTO bench_stream SELECT "
              + ROW_VALUES
              + " FROM generate_series(1, "
              + streamed
              + ") g",
          "CHECKPOINT");
    }
    CountingDestination dest = new CountingDestination(0, streamed);
    System.gc();
    long start = System.nanoTime();
    PipelineStore store = opener.get();
    try (Pipeline p = Pipeline.create(config, store, dest)) {
      p.start();
      if (!dest.streamed.await(10, TimeUnit.MINUTES)) {
        throw new IllegalStateException("streaming did not finish");
      }
    } finally {
      close(store);
    }
    try (Connection c = pg.connect("bench")) {
      exec(c, "SELECT pg_drop_replication_slot('pgetl_apply_" + id + "')");
    }
    return new double[] {
      streamed * 1e9 / (dest.streamDoneNanos.get() - start),
      streamed * 1e9 / (dest.streamDoneNanos.get() - dest.firstInsertNanos.get())
    };
  }

  private static void close(PipelineStore store) {
    try {
      store.close();
    } catch (Exception e) {
      throw new IllegalStateException("could not close the store", e);
    }
  }
}
