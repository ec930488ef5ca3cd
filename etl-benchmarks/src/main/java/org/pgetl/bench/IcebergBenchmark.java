package org.pgetl.bench;

import static org.pgetl.bench.Bench.config;
import static org.pgetl.bench.Bench.exec;
import static org.pgetl.bench.Bench.fmt;
import static org.pgetl.bench.Bench.median;
import static org.pgetl.bench.Bench.waitReady;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.Deque;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Random;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.apache.hadoop.conf.Configuration;
import org.apache.iceberg.CatalogUtil;
import org.apache.iceberg.DataFile;
import org.apache.iceberg.FileFormat;
import org.apache.iceberg.PartitionSpec;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.Table;
import org.apache.iceberg.catalog.Catalog;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.data.IcebergGenerics;
import org.apache.iceberg.data.Record;
import org.apache.iceberg.data.parquet.GenericParquetWriter;
import org.apache.iceberg.io.CloseableIterable;
import org.apache.iceberg.io.DataWriter;
import org.apache.iceberg.io.OutputFileFactory;
import org.apache.iceberg.parquet.Parquet;
import org.pgetl.PgConnectionConfig;
import org.pgetl.Pipeline;
import org.pgetl.PipelineConfig;
import org.pgetl.destination.AsyncResult;
import org.pgetl.destination.Destination;
import org.pgetl.destination.StreamId;
import org.pgetl.destination.WriteDurability;
import org.pgetl.destination.iceberg.IcebergDestination;
import org.pgetl.model.Event;
import org.pgetl.store.MemoryStore;
import org.pgetl.testkit.EmbeddedPostgres;
import org.pgetl.testkit.destination.ForwardingDestination;

/**
 * The Iceberg destination against Iceberg's own writer, in one run, on one embedded PostgreSQL 17
 * (fsync on) and a local filesystem warehouse, with the destination's defaults:
 *
 * <ul>
 *   <li><b>copy</b>: a 1M-row, 6-column table, from {@code Pipeline.start()} until the table is
 *       ready (its copy committed in Iceberg); against Iceberg's generic Parquet appender writing
 *       the same rows (read back from pgetl's table beforehand, in memory) into a table of the same
 *       schema, one data file and one append commit, timed from the first row to the commit;
 *   <li><b>large transaction</b>: one 500k-row INSERT into a streamed table, from its commit
 *       returning to the Iceberg snapshot that holds every row;
 *   <li><b>pgbench-like stream</b>: 4 clients, each running transactions of an UPDATE of a random
 *       row of a 100k-row table and an INSERT into a history table, with a random 0 to 20 ms pause,
 *       for {@code -Dpgetl.bench.steadySeconds} (default 60): transactions/s, and the time from
 *       each commit returning to its insert's write answered durable (its Iceberg commit), at the
 *       default commit interval; the snapshots and files that run created, per hour.
 * </ul>
 *
 * <p>Run: {@code mvn -B -q -pl etl-benchmarks -am package -DskipTests} then {@code java -Xmx2g -cp
 * etl-benchmarks/target/pgetl-benchmarks.jar org.pgetl.bench.IcebergBenchmark [rounds]}; {@code
 * -Dpgetl.bench.only=copy} runs the copy section alone.
 */
public final class IcebergBenchmark {
  private static final int COPY_ROWS = Integer.getInteger("pgetl.bench.copyRows", 1_000_000);
  private static final int LARGE_ROWS = Integer.getInteger("pgetl.bench.largeRows", 500_000);
  private static final int STEADY_SECONDS = Integer.getInteger("pgetl.bench.steadySeconds", 60);
  private static final int CLIENTS = 4;
  private static final int ACCOUNTS = 100_000;
  private static final String COLUMNS =
      "(id int8 PRIMARY KEY, qty int4, name text, price numeric(12,2), created timestamptz,"
          + " attrs jsonb)";
  private static final String ROW_VALUES =
      "g, g % 500, 'customer ' || g || ' of the benchmark', g * 1.25,"
          + " '2024-01-01'::timestamptz + g * interval '1 second',"
          + " jsonb_build_object('tier', 'gold', 'score', g % 97)";

  private IcebergBenchmark() {}

  /**
   * Runs the harness.
   *
   * @param args the number of rounds (default 3)
   * @throws Exception on failure
   */
  public static void main(String[] args) throws Exception {
    int rounds = args.length > 0 ? Integer.parseInt(args[0]) : 3;
    Path root = Files.createTempDirectory("pgetl-iceberg-bench");
    System.out.printf(
        Locale.ROOT,
        "JVM %s, max heap %d MiB, %d CPUs, load %s; IcebergDestination defaults (commit interval"
            + " %s, data files of %d MiB)%n",
        System.getProperty("java.vm.version"),
        Runtime.getRuntime().maxMemory() >> 20,
        Runtime.getRuntime().availableProcessors(),
        Bench.loadavg(),
        IcebergDestination.DEFAULT_COMMIT_INTERVAL,
        IcebergDestination.DEFAULT_TARGET_FILE_BYTES >> 20);
    try (EmbeddedPostgres pg = Bench.postgres17()) {
      pg.createDatabase("bench");
      PgConnectionConfig source = config(pg, "bench");
      try (Connection c = connect(pg)) {
        exec(
            c,
            "CREATE TABLE ice_copy " + COLUMNS,
            "INSERT INTO ice_copy SELECT "
                + ROW_VALUES
                + " FROM generate_series(1, "
                + COPY_ROWS
                + ") g",
            "VACUUM ANALYZE ice_copy",
            "CREATE PUBLICATION ice_copy_pub FOR TABLE ice_copy",
            "CREATE TABLE ice_large " + COLUMNS,
            "CREATE TABLE ice_accounts (aid int4 PRIMARY KEY, abalance int4, filler char(84))",
            "INSERT INTO ice_accounts SELECT g, 0, '' FROM generate_series(1, " + ACCOUNTS + ") g",
            "CREATE TABLE ice_steady (id int8 PRIMARY KEY, aid int4, delta int4,"
                + " mtime timestamptz)",
            "CREATE PUBLICATION ice_stream_pub FOR TABLE ice_large, ice_accounts, ice_steady");
      }
      List<Double> copy = new ArrayList<>();
      List<Double> appender = new ArrayList<>();
      for (int r = 0; r < rounds; r++) {
        Path warehouse = root.resolve("copy" + r);
        double seconds = pgetlCopy(source, warehouse, "icecopy" + r);
        copy.add(COPY_ROWS / seconds);
        appender.add(COPY_ROWS / appenderCopy(warehouse, root.resolve("appender" + r)));
        System.out.printf(
            Locale.ROOT,
            "round %d: copy pgetl %s rows/s (start to ready); Iceberg's generic appender %s"
                + " rows/s; ratio %.2f%n",
            r + 1,
            fmt(copy.get(r)),
            fmt(appender.get(r)),
            copy.get(r) / appender.get(r));
      }
      System.out.printf(
          Locale.ROOT,
          "copy medians: pgetl %s rows/s, appender %s rows/s, ratio of medians %.2f%n",
          fmt(median(copy)),
          fmt(median(appender)),
          median(copy) / median(appender));
      if (!"copy".equals(System.getProperty("pgetl.bench.only"))) {
        streaming(pg, source, root.resolve("stream"), rounds);
      }
    }
  }

  private static Connection connect(EmbeddedPostgres pg) throws SQLException {
    return DriverManager.getConnection(
        "jdbc:postgresql://" + pg.host() + ":" + pg.port() + "/bench",
        pg.superuser(),
        pg.password());
  }

  private static Catalog catalog(Path warehouse) {
    return CatalogUtil.buildIcebergCatalog(
        IcebergDestination.DEFAULT_CATALOG_NAME,
        Map.of("type", "hadoop", "warehouse", warehouse.toUri().toString()),
        new Configuration());
  }

  /** Seconds from {@code start()} until the copied table is ready. */
  private static double pgetlCopy(PgConnectionConfig source, Path warehouse, String id)
      throws Exception {
    MemoryStore store = new MemoryStore(id);
    PipelineConfig config =
        PipelineConfig.builder().pipelineId(id).publication("ice_copy_pub").source(source).build();
    try (Pipeline p =
        Pipeline.create(config, store, IcebergDestination.hadoop(warehouse).build())) {
      long t0 = System.nanoTime();
      p.start();
      waitReady(store, 1);
      return (System.nanoTime() - t0) / 1e9;
    }
  }

  /**
   * Seconds Iceberg's generic Parquet appender takes to write the rows of pgetl's copy (read into
   * memory first, not timed) into a new table of the same schema, and to commit them.
   */
  private static double appenderCopy(Path pgetlWarehouse, Path warehouse) throws IOException {
    Table copied = catalog(pgetlWarehouse).loadTable(TableIdentifier.of("public", "ice_copy"));
    List<Record> rows = new ArrayList<>(COPY_ROWS);
    try (CloseableIterable<Record> rs = IcebergGenerics.read(copied).build()) {
      for (Record r : rs) {
        rows.add(r.copy());
      }
    }
    Table t =
        catalog(warehouse)
            .createTable(
                TableIdentifier.of("public", "raw"),
                copied.schema(),
                PartitionSpec.unpartitioned(),
                Map.of("format-version", "2"));
    long t0 = System.nanoTime();
    OutputFileFactory files =
        OutputFileFactory.builderFor(t, 1, 1)
            .format(FileFormat.PARQUET)
            .operationId(UUID.randomUUID().toString())
            .build();
    DataWriter<Record> w =
        Parquet.writeData(files.newOutputFile())
            .schema(t.schema())
            .createWriterFunc(GenericParquetWriter::create)
            .withSpec(t.spec())
            .overwrite()
            .build();
    try (w) {
      for (Record r : rows) {
        w.write(r);
      }
    }
    DataFile file = w.toDataFile();
    t.newAppend().appendFile(file).commit();
    double seconds = (System.nanoTime() - t0) / 1e9;
    if (file.recordCount() != rows.size()) {
      throw new IllegalStateException("the appender wrote " + file.recordCount() + " rows");
    }
    return seconds;
  }

  private static void streaming(
      EmbeddedPostgres pg, PgConnectionConfig source, Path warehouse, int rounds) throws Exception {
    MemoryStore store = new MemoryStore("icestream");
    PipelineConfig config =
        PipelineConfig.builder()
            .pipelineId("icestream")
            .publication("ice_stream_pub")
            .source(source)
            .build();
    DurableWatch watch = new DurableWatch(IcebergDestination.hadoop(warehouse).build());
    Catalog catalog = catalog(warehouse);
    try (Pipeline p = Pipeline.create(config, store, watch)) {
      p.start();
      waitReady(store, 3);
      List<Double> large = new ArrayList<>();
      for (int r = 0; r < rounds; r++) {
        long first = (long) r * LARGE_ROWS + 1;
        long t0;
        try (Connection c = connect(pg)) {
          exec(
              c,
              "INSERT INTO ice_large SELECT "
                  + ROW_VALUES
                  + " FROM generate_series("
                  + first
                  + ", "
                  + (first + LARGE_ROWS - 1)
                  + ") g");
          t0 = System.nanoTime();
        }
        Table t = catalog.loadTable(TableIdentifier.of("public", "ice_large"));
        long want = (long) (r + 1) * LARGE_ROWS;
        while (true) {
          t.refresh();
          Snapshot s = t.currentSnapshot();
          if (s != null && Long.parseLong(s.summary().getOrDefault("total-records", "0")) >= want) {
            break;
          }
          TimeUnit.MILLISECONDS.sleep(20);
        }
        double seconds = (System.nanoTime() - t0) / 1e9;
        large.add(LARGE_ROWS / seconds);
        System.out.printf(
            Locale.ROOT,
            "round %d: a %,d-row transaction, commit returned to its Iceberg snapshot: %.2f s"
                + " (%s rows/s)%n",
            r + 1,
            LARGE_ROWS,
            seconds,
            fmt(large.get(r)));
      }
      System.out.printf(Locale.ROOT, "large transaction median: %s rows/s%n", fmt(median(large)));
      steady(pg, catalog, watch);
    }
  }

  private static void steady(EmbeddedPostgres pg, Catalog catalog, DurableWatch watch)
      throws Exception {
    Table t = catalog.loadTable(TableIdentifier.of("public", "ice_steady"));
    Table accounts = catalog.loadTable(TableIdentifier.of("public", "ice_accounts"));
    java.util.Set<Long> before = new java.util.HashSet<>();
    for (Table table : List.of(t, accounts)) {
      table.refresh();
      table.snapshots().forEach(sn -> before.add(sn.snapshotId()));
    }
    ExecutorService clients = Executors.newFixedThreadPool(CLIENTS);
    long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(STEADY_SECONDS);
    List<Future<Long>> done = new ArrayList<>();
    for (int client = 0; client < CLIENTS; client++) {
      int me = client;
      done.add(
          clients.submit(
              () -> {
                Random random = new Random(me);
                long n = 0;
                try (Connection c = connect(pg);
                    PreparedStatement update =
                        c.prepareStatement(
                            "UPDATE ice_accounts SET abalance = abalance + ? WHERE aid = ?");
                    PreparedStatement insert =
                        c.prepareStatement("INSERT INTO ice_steady VALUES (?, ?, ?, now())")) {
                  c.setAutoCommit(false);
                  while (System.nanoTime() < end) {
                    long id = n++ * CLIENTS + me;
                    int aid = 1 + random.nextInt(ACCOUNTS);
                    int delta = random.nextInt(10_001) - 5000;
                    update.setInt(1, delta);
                    update.setInt(2, aid);
                    update.executeUpdate();
                    insert.setLong(1, id);
                    insert.setInt(2, aid);
                    insert.setInt(3, delta);
                    insert.executeUpdate();
                    c.commit();
                    watch.committed.put(id, System.nanoTime());
                    TimeUnit.MILLISECONDS.sleep(random.nextInt(21));
                  }
                }
                return n;
              }));
    }
    long rows = 0;
    for (Future<Long> f : done) {
      rows += f.get();
    }
    clients.shutdown();
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(120);
    while (watch.latencies.size() < rows && System.nanoTime() < deadline) {
      TimeUnit.MILLISECONDS.sleep(50);
    }
    List<Double> ms = new ArrayList<>(watch.latencies.values());
    ms.sort(Comparator.naturalOrder());
    t.refresh();
    accounts.refresh();
    long snapshots = 0;
    long dataFiles = 0;
    long deleteFiles = 0;
    for (Table table : List.of(t, accounts)) {
      for (Snapshot sn : table.snapshots()) {
        if (before.contains(sn.snapshotId())) {
          continue;
        }
        snapshots++;
        dataFiles += Long.parseLong(sn.summary().getOrDefault("added-data-files", "0"));
        deleteFiles += Long.parseLong(sn.summary().getOrDefault("added-delete-files", "0"));
      }
    }
    double perHour = 3600.0 / STEADY_SECONDS;
    System.out.printf(
        Locale.ROOT,
        "pgbench-like stream: %d clients, %d s, %,d transactions of an UPDATE and an INSERT (%s"
            + " tx/s); commit to durable in Iceberg: p50 %.0f ms, p90 %.0f ms (%d of %d observed);"
            + " per hour, both tables: %.0f snapshots, %.0f data files, %.0f delete files%n",
        CLIENTS,
        STEADY_SECONDS,
        rows,
        fmt(rows / (double) STEADY_SECONDS),
        ms.isEmpty() ? Double.NaN : ms.get(ms.size() / 2),
        ms.isEmpty() ? Double.NaN : ms.get((int) (ms.size() * 0.9)),
        ms.size(),
        rows,
        snapshots * perHour,
        dataFiles * perHour,
        deleteFiles * perHour);
  }

  /**
   * Passes every call to the Iceberg destination and notes when each insert into {@code ice_steady}
   * became durable: when its write, or a later write of the apply stream, is answered {@code
   * durable()}.
   */
  private static final class DurableWatch extends ForwardingDestination {
    final Map<Long, Long> committed = new ConcurrentHashMap<>();
    final Map<Long, Double> latencies = new ConcurrentHashMap<>();
    private final Deque<List<Long>> accepted = new ArrayDeque<>();

    DurableWatch(Destination inner) {
      super(inner);
    }

    @Override
    public void writeEvents(
        StreamId stream, List<Event> events, WriteDurability durability, AsyncResult result) {
      if (stream.kind() != StreamId.Kind.APPLY) {
        delegate.writeEvents(stream, events, durability, result);
        return;
      }
      List<Long> ids = new ArrayList<>();
      for (Event e : events) {
        if (e instanceof Event.Insert i && i.table().name().name().equals("ice_steady")) {
          Object id = i.row().get(0);
          if (id instanceof Long l) {
            ids.add(l);
          }
        }
      }
      AsyncResult mine = AsyncResult.create();
      mine.completion()
          .thenAccept(
              outcome -> {
                long now = System.nanoTime();
                synchronized (accepted) {
                  accepted.add(ids);
                  if (outcome.kind() == AsyncResult.Outcome.Kind.DURABLE) {
                    for (List<Long> done : accepted) {
                      for (long id : done) {
                        Long at = committed.get(id);
                        if (at != null) {
                          latencies.put(id, (now - at) / 1e6);
                        }
                      }
                    }
                    accepted.clear();
                  } else if (outcome.kind() != AsyncResult.Outcome.Kind.ACCEPTED) {
                    accepted.clear();
                  }
                }
                result.send(outcome);
              });
      delegate.writeEvents(stream, events, durability, mine);
    }
  }
}
