package org.pgetl.bench;

import static org.pgetl.bench.Bench.exec;
import static org.pgetl.bench.Bench.fmt;
import static org.pgetl.bench.Bench.median;
import static org.pgetl.bench.Bench.waitReady;

import io.debezium.embedded.Connect;
import io.debezium.engine.ChangeEvent;
import io.debezium.engine.DebeziumEngine;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Properties;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.kafka.connect.data.Struct;
import org.apache.kafka.connect.source.SourceRecord;
import org.pgetl.PgConnectionConfig;
import org.pgetl.Pipeline;
import org.pgetl.PipelineConfig;
import org.pgetl.store.MemoryStore;
import org.pgetl.testkit.EmbeddedPostgres;

/**
 * pgetl's chunked copy against Debezium's incremental snapshot of the same table, both running:
 * Debezium's PostgreSQL connector (3.6.1) in its embedded engine with the {@code pgoutput} plugin,
 * the initial snapshot off ({@code snapshot.mode=no_data}) and a signalling table, its defaults
 * otherwise ({@code incremental.snapshot.chunk.size} 1024 keys), timed from the {@code
 * execute-snapshot} signal's insert to the last {@code r} record its handler counts (the engine's
 * start and its slot are not counted); pgetl with the library's defaults and {@code
 * chunkedCopyMinBytes} 0, timed from {@code start()} to the table {@code Ready}, into a destination
 * that answers {@code durable()} at once. Both read the same table on one server, one after the
 * other in alternating order.
 *
 * <pre>
 * java -Xmx2g -cp etl-benchmarks/target/pgetl-benchmarks.jar \
 *   org.pgetl.bench.IncrementalSnapshotBenchmark 10000000 1
 * </pre>
 */
public final class IncrementalSnapshotBenchmark {
  private static final String SIGNALS = "dbz_signal";

  private final EmbeddedPostgres pg;
  private final int rows;
  private final PgConnectionConfig source;

  private IncrementalSnapshotBenchmark(EmbeddedPostgres pg, int rows) {
    this.pg = pg;
    this.rows = rows;
    this.source = Bench.config(pg, "src");
  }

  /**
   * Runs the harness.
   *
   * @param args rows, rounds
   * @throws Exception on failure
   */
  public static void main(String[] args) throws Exception {
    int rows = args.length > 0 ? Integer.parseInt(args[0]) : 2_000_000;
    int rounds = args.length > 1 ? Integer.parseInt(args[1]) : 1;
    Bench.printJvm("");
    try (EmbeddedPostgres pg = Bench.postgres17()) {
      new IncrementalSnapshotBenchmark(pg, rows).run(rounds);
    }
  }

  private void run(int rounds) throws Exception {
    ChunkedCopyBenchmark.createTable(pg, rows);
    try (Connection c = pg.connect("src")) {
      exec(
          c,
          "CREATE TABLE "
              + SIGNALS
              + " (id varchar(42) PRIMARY KEY, type varchar(32) NOT NULL, data varchar(2048))",
          "CREATE PUBLICATION dbz_pub FOR TABLE bench, " + SIGNALS);
    }
    List<Double> pgetl = new ArrayList<>();
    List<Double> debezium = new ArrayList<>();
    for (int r = 0; r < rounds; r++) {
      double p;
      double d;
      if (r % 2 == 0) {
        p = pgetl(r);
        d = debezium(r);
      } else {
        d = debezium(r);
        p = pgetl(r);
      }
      pgetl.add(p);
      debezium.add(d);
      System.out.printf(
          Locale.ROOT,
          "round %d: pgetl chunked copy %.1f s (%s rows/s); Debezium incremental snapshot %.1f s"
              + " (%s rows/s); %.2fx (load %s)%n",
          r + 1,
          p,
          fmt(rows / p),
          d,
          fmt(rows / d),
          d / p,
          Bench.loadavg());
    }
    System.out.printf(
        Locale.ROOT,
        "SUMMARY load %s: %,d rows: pgetl chunked copy %s rows/s, Debezium incremental snapshot %s"
            + " rows/s (medians): %.2fx%n",
        Bench.loadavg(),
        rows,
        fmt(rows / median(pgetl)),
        fmt(rows / median(debezium)),
        median(debezium) / median(pgetl));
  }

  /** pgetl's chunked copy: seconds from {@code start()} to the table {@code Ready}. */
  private double pgetl(int round) throws Exception {
    try (Connection c = pg.connect("src")) {
      exec(c, "CHECKPOINT");
    }
    String id = "chunked" + round;
    MemoryStore store = new MemoryStore(id);
    PipelineConfig config =
        PipelineConfig.builder()
            .pipelineId(id)
            .publication("pub")
            .source(source)
            .chunkedCopyMinBytes(0)
            .build();
    ChunkedCopyBenchmark.Timing dest = new ChunkedCopyBenchmark.Timing();
    double seconds;
    try (Pipeline p = Pipeline.create(config, store, dest)) {
      long start = System.nanoTime();
      p.start();
      waitReady(store, 1);
      seconds = (System.nanoTime() - start) / 1e9;
    }
    ChunkedCopyBenchmark.dropIdleSlots(pg);
    if (dest.copied.get() < rows) {
      throw new IllegalStateException(dest.copied.get() + " rows copied, not " + rows);
    }
    return seconds;
  }

  /** Debezium's incremental snapshot: seconds from the signal to the last {@code r} record. */
  private double debezium(int round) throws Exception {
    try (Connection c = pg.connect("src")) {
      exec(c, "CHECKPOINT");
    }
    String slot = "dbz_bench" + round;
    Properties props = new Properties();
    props.setProperty("name", "dbz-bench");
    props.setProperty("connector.class", "io.debezium.connector.postgresql.PostgresConnector");
    props.setProperty(
        "offset.storage", "org.apache.kafka.connect.storage.MemoryOffsetBackingStore");
    props.setProperty("offset.flush.interval.ms", "60000");
    props.setProperty("database.hostname", pg.host());
    props.setProperty("database.port", Integer.toString(pg.port()));
    props.setProperty("database.user", pg.superuser());
    props.setProperty("database.password", pg.password());
    props.setProperty("database.dbname", "src");
    props.setProperty("topic.prefix", "dbz");
    props.setProperty("plugin.name", "pgoutput");
    props.setProperty("slot.name", slot);
    props.setProperty("publication.name", "dbz_pub");
    props.setProperty("publication.autocreate.mode", "disabled");
    props.setProperty("snapshot.mode", "no_data");
    props.setProperty("signal.data.collection", "public." + SIGNALS);
    props.setProperty("table.include.list", "public.bench,public." + SIGNALS);
    AtomicLong snapshotted = new AtomicLong();
    AtomicLong lastAt = new AtomicLong();
    ExecutorService executor = Executors.newSingleThreadExecutor();
    double seconds;
    try (DebeziumEngine<ChangeEvent<SourceRecord, SourceRecord>> engine =
        DebeziumEngine.create(Connect.class)
            .using(props)
            .notifying(
                event -> {
                  SourceRecord r = event.value();
                  if (r != null
                      && "dbz.public.bench".equals(r.topic())
                      && r.value() instanceof Struct v
                      && "r".equals(v.getString("op"))) {
                    snapshotted.incrementAndGet();
                    lastAt.set(System.nanoTime());
                  }
                })
            .build()) {
      executor.execute(engine);
      awaitActiveSlot(slot);
      long start;
      try (Connection c = pg.connect("src")) {
        start = System.nanoTime();
        exec(
            c,
            "INSERT INTO "
                + SIGNALS
                + " VALUES ('bench-"
                + round
                + "', 'execute-snapshot',"
                + " '{\"data-collections\": [\"public.bench\"], \"type\": \"incremental\"}')");
      }
      long deadline = System.nanoTime() + TimeUnit.MINUTES.toNanos(60);
      while (snapshotted.get() < rows) {
        if (System.nanoTime() > deadline) {
          throw new IllegalStateException(
              "the incremental snapshot sent " + snapshotted.get() + " of " + rows + " rows");
        }
        TimeUnit.MILLISECONDS.sleep(50);
      }
      seconds = (lastAt.get() - start) / 1e9;
    } finally {
      executor.shutdown();
      executor.awaitTermination(1, TimeUnit.MINUTES);
    }
    try (Connection c = pg.connect("src")) {
      exec(c, "SELECT pg_drop_replication_slot('" + slot + "')");
    }
    return seconds;
  }

  /** Waits until Debezium's slot exists and streams. */
  private void awaitActiveSlot(String slot) throws Exception {
    long deadline = System.nanoTime() + TimeUnit.MINUTES.toNanos(2);
    try (Connection c = pg.connect("src");
        PreparedStatement ps =
            c.prepareStatement("SELECT active FROM pg_replication_slots WHERE slot_name = ?")) {
      ps.setString(1, slot);
      while (true) {
        try (ResultSet rs = ps.executeQuery()) {
          if (rs.next() && rs.getBoolean(1)) {
            return;
          }
        }
        if (System.nanoTime() > deadline) {
          throw new IllegalStateException("Debezium's slot " + slot + " did not start streaming");
        }
        TimeUnit.MILLISECONDS.sleep(100);
      }
    }
  }
}
