package org.pgetl.bench;

import static org.pgetl.bench.Bench.exec;
import static org.pgetl.bench.Bench.fmt;
import static org.pgetl.bench.Bench.median;
import static org.pgetl.bench.Bench.waitReady;

import java.lang.management.ManagementFactory;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.OffsetDateTime;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Properties;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.LongAdder;
import org.jspecify.annotations.Nullable;
import org.pgetl.PgConnectionConfig;
import org.pgetl.Pipeline;
import org.pgetl.PipelineConfig;
import org.pgetl.destination.AsyncResult;
import org.pgetl.destination.Destination;
import org.pgetl.destination.DestinationContext;
import org.pgetl.destination.StreamId;
import org.pgetl.destination.TableCopyWrite;
import org.pgetl.destination.WriteDurability;
import org.pgetl.model.Event;
import org.pgetl.model.ReplicatedTableSchema;
import org.pgetl.model.TableRow;
import org.pgetl.store.MemoryStore;
import org.pgetl.testkit.EmbeddedPostgres;
import org.postgresql.PGConnection;
import org.postgresql.PGResultSetMetaData;
import org.postgresql.copy.CopyOut;

/**
 * The copy's CPU cost: the CPU seconds of this whole JVM (every thread: pgetl's copy threads, its
 * store and stream, the JIT and the garbage collector) per million copied rows, for pgetl against
 * pgjdbc alone on the same embedded server (PostgreSQL 17, {@code fsync} on) and the same table of
 * the end-to-end harness's shape ({@code int8} key, {@code int4}, {@code text}, {@code
 * numeric(12,2)}, {@code timestamptz}, {@code jsonb}).
 *
 * <ul>
 *   <li><b>raw copy</b>: pgjdbc's {@code CopyManager} reads {@code COPY bench_copy TO STDOUT
 *       (FORMAT binary)} on one connection with {@code readFromCopy()} to the end and counts the
 *       messages, measured from its connect to the last row;
 *   <li><b>pgetl, counting</b>: a pipeline with the library's defaults and a {@link MemoryStore}
 *       copies the table into a destination that counts the rows and answers durable at once
 *       ({@link CountingDestination}), measured from just before {@code start()} to the last row
 *       counted;
 *   <li><b>pgjdbc ResultSet, typed</b>: {@code SELECT} of the six columns with binary transfer
 *       forced ({@code prepareThreshold=-1}), autocommit off and a fetch size of 10,000, every
 *       value read with its typed getter ({@code getLong}, {@code getInt}, {@code getString},
 *       {@code getBigDecimal}, {@code getObject(i, OffsetDateTime.class)}, {@code getString});
 *   <li><b>pgetl, typed</b>: the same pipeline into a destination that reads every value through
 *       {@link TableRow}'s typed getters ({@code getLong}, {@code getInt}, {@code getString},
 *       {@code getBigDecimal}, {@code getInstant}, {@code getString}) before counting the row.
 * </ul>
 *
 * <p>Each contender runs once per round in this JVM, in alternating order (forward in even rounds,
 * backward in odd ones), after a warm-up round that is not counted, and after a {@code System.gc()}
 * outside its interval. The harness prints, per round and contender, the load average before it,
 * the JVM's CPU seconds, the server's (the postmaster, its children and the backends it reaped,
 * from {@code /proc}), and wall-clock rows per second; then the medians and the ratios pgetl
 * counting / raw copy (target 1.3) and pgetl typed / ResultSet typed (target 1.0). Both typed
 * readers fold the values into a checksum, which must agree.
 *
 * <p>Run: {@code mvn -B -q -pl etl-benchmarks -am package -DskipTests} then {@code java -Xmx2g -cp
 * etl-benchmarks/target/pgetl-benchmarks.jar org.pgetl.bench.CopyCpuBenchmark [rows] [rounds]}
 * (default 1,000,000 rows, 3 rounds).
 */
public final class CopyCpuBenchmark {
  private static final String TABLE = "bench_copy";
  private static final String PUBLICATION = "pub_copy";

  /** The rows a ResultSet fetches at a time: large enough that round trips do not count. */
  private static final int FETCH_SIZE = 10_000;

  private enum Contender {
    RAW_COPY("pgjdbc CopyManager, binary COPY, counting"),
    PGETL_COUNT("pgetl, counting destination"),
    JDBC_TYPED("pgjdbc ResultSet, binary, typed getters"),
    PGETL_TYPED("pgetl, destination reading TableRow's typed getters");

    final String label;

    Contender(String label) {
      this.label = label;
    }
  }

  /** One contender's run: CPU seconds of this JVM and of the server, wall-clock seconds. */
  private record Run(double jvmCpu, double serverCpu, double wall, long checksum) {}

  private CopyCpuBenchmark() {}

  /**
   * Runs the harness.
   *
   * @param args the number of rows (default 1,000,000) and of counted rounds (default 3)
   * @throws Exception on failure
   */
  public static void main(String[] args) throws Exception {
    int rows = args.length > 0 ? Integer.parseInt(args[0]) : 1_000_000;
    int rounds = args.length > 1 ? Integer.parseInt(args[1]) : 3;
    System.out.printf(
        Locale.ROOT,
        "JVM %s, max heap %d MiB, %d CPUs; flags %s; load average %s;%n  library defaults"
            + " (copyConnectionsPerTable %d, batch.maxBytes %d MiB), MemoryStore;"
            + " %,d rows, %d rounds after a warm-up round%n",
        System.getProperty("java.vm.version"),
        Runtime.getRuntime().maxMemory() >> 20,
        Runtime.getRuntime().availableProcessors(),
        ManagementFactory.getRuntimeMXBean().getInputArguments(),
        Bench.loadavg(),
        PipelineConfig.DEFAULT_COPY_CONNECTIONS_PER_TABLE,
        PipelineConfig.DEFAULT_BATCH_MAX_BYTES >> 20,
        rows,
        rounds);
    try (EmbeddedPostgres pg = Bench.postgres17()) {
      pg.createDatabase("bench");
      PgConnectionConfig source = Bench.config(pg, "bench");
      try (Connection c = pg.connect("bench")) {
        exec(
            c,
            "CREATE TABLE "
                + TABLE
                + " (id int8 PRIMARY KEY, qty int4, name text, price numeric(12,2),"
                + " created timestamptz, attrs jsonb)",
            "INSERT INTO "
                + TABLE
                + " SELECT g, g % 500, 'customer ' || g || ' of the benchmark',"
                + " g * 1.25, '2024-01-01'::timestamptz + g * interval '1 second',"
                + " jsonb_build_object('tier', 'gold', 'score', g % 97)"
                + " FROM generate_series(1, "
                + rows
                + ") g",
            "VACUUM ANALYZE " + TABLE,
            "CHECKPOINT",
            "CREATE PUBLICATION " + PUBLICATION + " FOR TABLE " + TABLE);
      }
      System.out.printf(Locale.ROOT, "PostgreSQL %s, fsync on; table loaded%n", pg.serverVersion());
      Map<Contender, List<Run>> runs = new EnumMap<>(Contender.class);
      for (Contender k : Contender.values()) {
        runs.put(k, new ArrayList<>());
      }
      for (int r = 0; r <= rounds; r++) {
        List<Contender> order = new ArrayList<>(List.of(Contender.values()));
        if (r % 2 == 1) {
          java.util.Collections.reverse(order);
        }
        for (Contender k : order) {
          String load = Bench.loadavg();
          Run run = measure(k, pg, source, rows, "cpu" + r + k.name().toLowerCase(Locale.ROOT));
          if (r > 0) {
            runs.get(k).add(run);
          }
          System.out.printf(
              Locale.ROOT,
              "%s %-52s load [%s]: JVM CPU %.2f s (%.2f s per M rows), server CPU %.2f s, wall"
                  + " %.2f s, %s rows/s%n",
              r == 0 ? "warm-up" : "round " + r,
              k.label,
              load,
              run.jvmCpu,
              run.jvmCpu * 1e6 / rows,
              run.serverCpu,
              run.wall,
              fmt(rows / run.wall));
        }
      }
      summarize(runs, rows, rounds);
    }
  }

  private static void summarize(Map<Contender, List<Run>> runs, int rows, int rounds) {
    Map<Contender, Double> cpu = new EnumMap<>(Contender.class);
    System.out.println();
    System.out.printf(
        Locale.ROOT,
        "medians of %d rounds, %,d rows (CPU seconds per million rows):%n",
        rounds,
        rows);
    for (Contender k : Contender.values()) {
      List<Run> rs = runs.get(k);
      double jvm = median(rs.stream().map(x -> x.jvmCpu * 1e6 / rows).toList());
      double server = median(rs.stream().map(x -> x.serverCpu * 1e6 / rows).toList());
      double rate = median(rs.stream().map(x -> rows / x.wall).toList());
      cpu.put(k, jvm);
      System.out.printf(
          Locale.ROOT,
          "  %-52s JVM %.2f s/M rows, server %.2f s/M rows, %s rows/s%n",
          k.label,
          jvm,
          server,
          fmt(rate));
    }
    long typedJdbc = runs.get(Contender.JDBC_TYPED).get(0).checksum;
    long typedPgetl = runs.get(Contender.PGETL_TYPED).get(0).checksum;
    if (typedJdbc != typedPgetl) {
      throw new IllegalStateException(
          "the typed readers disagree: checksum " + typedJdbc + " against " + typedPgetl);
    }
    double a = cpu.get(Contender.PGETL_COUNT) / cpu.get(Contender.RAW_COPY);
    double b = cpu.get(Contender.PGETL_TYPED) / cpu.get(Contender.JDBC_TYPED);
    System.out.printf(
        Locale.ROOT,
        "SUMMARY load [%s]: JVM CPU per M rows: pgetl counting %.2f s / raw COPY %.2f s = %.2fx"
            + " (target <= 1.3, %s); pgetl typed %.2f s / ResultSet typed %.2f s = %.2fx (target"
            + " <= 1.0, %s); typed checksums equal (%d)%n",
        Bench.loadavg(),
        cpu.get(Contender.PGETL_COUNT),
        cpu.get(Contender.RAW_COPY),
        a,
        a <= 1.3 ? "met" : "missed",
        cpu.get(Contender.PGETL_TYPED),
        cpu.get(Contender.JDBC_TYPED),
        b,
        b <= 1.0 ? "met" : "missed",
        typedPgetl);
  }

  private static Run measure(
      Contender k, EmbeddedPostgres pg, PgConnectionConfig source, int rows, String id)
      throws Exception {
    // the previous contender's garbage is not this one's cost
    System.gc();
    Interval t = new Interval(pg);
    long[] result =
        switch (k) {
          case RAW_COPY -> rawCopy(pg, t);
          case JDBC_TYPED -> jdbcTyped(pg, t);
          case PGETL_COUNT -> pgetlCopy(source, id, rows, false, t);
          case PGETL_TYPED -> pgetlCopy(source, id, rows, true, t);
        };
    if (result[0] != rows) {
      throw new IllegalStateException(k.label + " read " + result[0] + " rows, not " + rows);
    }
    if (k == Contender.PGETL_COUNT || k == Contender.PGETL_TYPED) {
      // the pipeline is closed: its slot (and any a table's copy left) go before the next run
      try (Connection c = pg.connect("bench")) {
        exec(
            c,
            "SELECT pg_drop_replication_slot(slot_name) FROM pg_replication_slots"
                + " WHERE NOT active");
      }
    }
    return new Run(
        t.jvm1 - t.jvm0,
        t.server0 < 0 ? -1 : t.server1 - t.server0,
        (t.end - t.start) / 1e9,
        result[1]);
  }

  /**
   * The measured interval: starts when made (just before a contender connects or calls {@code
   * start()}), stops at the last row; the JVM's CPU is read first at both ends, so the server's
   * {@code /proc} scan is outside it.
   */
  private static final class Interval {
    private final EmbeddedPostgres pg;
    final double server0;
    final double jvm0;
    final long start;
    double jvm1;
    double server1;
    long end;

    Interval(EmbeddedPostgres pg) {
      this.pg = pg;
      this.server0 = Bench.serverCpuSeconds(pg);
      this.jvm0 = Bench.jvmCpuSeconds();
      this.start = System.nanoTime();
    }

    /** Stops the interval at the last row, which came at {@code lastRowNanos}. */
    void stop(long lastRowNanos) {
      jvm1 = Bench.jvmCpuSeconds();
      end = lastRowNanos;
      server1 = Bench.serverCpuSeconds(pg);
    }
  }

  // ---- pgjdbc alone

  private static long[] rawCopy(EmbeddedPostgres pg, Interval t) throws SQLException {
    try (Connection c = pg.connect("bench")) {
      CopyOut out =
          c.unwrap(PGConnection.class)
              .getCopyAPI()
              .copyOut("COPY " + TABLE + " TO STDOUT (FORMAT binary)");
      long n = -1; // the last message is the trailer
      while (out.readFromCopy() != null) {
        n++;
      }
      t.stop(System.nanoTime());
      return new long[] {n, 0};
    }
  }

  private static long[] jdbcTyped(EmbeddedPostgres pg, Interval t) throws SQLException {
    Properties props = new Properties();
    props.setProperty("user", pg.superuser());
    props.setProperty("password", pg.password());
    // binary transfer for every type pgjdbc reads in binary, from the first execution
    props.setProperty("prepareThreshold", "-1");
    props.setProperty("binaryTransfer", "true");
    try (Connection c = java.sql.DriverManager.getConnection(pg.jdbcUrl("bench"), props)) {
      c.setAutoCommit(false);
      try (PreparedStatement ps =
          c.prepareStatement("SELECT id, qty, name, price, created, attrs FROM " + TABLE)) {
        ps.setFetchSize(FETCH_SIZE);
        long n = 0;
        long sum = 0;
        try (ResultSet rs = ps.executeQuery()) {
          while (rs.next()) {
            sum +=
                rs.getLong(1)
                    + rs.getInt(2)
                    + length(rs.getString(3))
                    + scale(rs.getBigDecimal(4))
                    + nanos(rs.getObject(5, OffsetDateTime.class))
                    + length(rs.getString(6));
            n++;
          }
          t.stop(System.nanoTime());
          if (!formatsPrinted) {
            formatsPrinted = true;
            PGResultSetMetaData md = rs.getMetaData().unwrap(PGResultSetMetaData.class);
            StringBuilder formats = new StringBuilder();
            for (int i = 1; i <= 6; i++) {
              formats
                  .append(i > 1 ? ", " : "")
                  .append(rs.getMetaData().getColumnTypeName(i))
                  .append(md.getFormat(i) == 1 ? " binary" : " text");
            }
            System.out.println("  (pgjdbc ResultSet wire formats: " + formats + ")");
          }
        }
        c.commit();
        return new long[] {n, sum};
      }
    }
  }

  private static boolean formatsPrinted;

  // ---- pgetl

  /**
   * Copies the table with the library's defaults into a counting destination (reading every value
   * first when {@code typed}); stops the interval at the last row; returns the rows and the
   * checksum.
   */
  private static long[] pgetlCopy(
      PgConnectionConfig source, String id, int rows, boolean typed, Interval t) throws Exception {
    CountingDestination counting = new CountingDestination(rows, 0);
    ReadingDestination reading = typed ? new ReadingDestination(counting) : null;
    MemoryStore store = new MemoryStore(id);
    PipelineConfig config =
        PipelineConfig.builder().pipelineId(id).publication(PUBLICATION).source(source).build();
    try (Pipeline p = Pipeline.create(config, store, reading != null ? reading : counting)) {
      p.start();
      if (!counting.copied.await(10, TimeUnit.MINUTES)) {
        throw new IllegalStateException("the copy did not finish");
      }
      t.stop(counting.copyDoneNanos.get());
      long[] result = {counting.rows.get(), reading != null ? reading.sum.sum() : 0};
      waitReady(store, 1);
      return result;
    }
  }

  /**
   * A destination that reads every value of each copied row through {@link TableRow}'s typed
   * getters, folds them into a checksum, then hands the batch to a {@link CountingDestination}.
   */
  private static final class ReadingDestination implements Destination {
    final LongAdder sum = new LongAdder();
    private final CountingDestination counting;

    ReadingDestination(CountingDestination counting) {
      this.counting = counting;
    }

    @Override
    public String name() {
      return "reading";
    }

    @Override
    public void startup(DestinationContext context) {
      counting.startup(context);
    }

    @Override
    public void dropTableForCopy(ReplicatedTableSchema table, UUID attemptId, AsyncResult result) {
      counting.dropTableForCopy(table, attemptId, result);
    }

    @Override
    public void writeTableRows(
        ReplicatedTableSchema table, TableCopyWrite write, AsyncResult result) {
      if (write instanceof TableCopyWrite.Batch b) {
        long s = 0;
        for (TableRow row : b.rows()) {
          s +=
              value(row.getLong(0))
                  + value(row.getInt(1))
                  + length(row.getString(2))
                  + scale(row.getBigDecimal(3))
                  + nanos(row.getInstant(4))
                  + length(row.getString(5));
        }
        sum.add(s);
      }
      counting.writeTableRows(table, write, result);
    }

    @Override
    public void writeEvents(
        StreamId stream, List<Event> events, WriteDurability durability, AsyncResult result) {
      counting.writeEvents(stream, events, durability, result);
    }
  }

  // ---- the same cheap fold of a value for both typed readers

  private static long value(@Nullable Number n) {
    return n == null ? 0 : n.longValue();
  }

  private static long length(@Nullable String s) {
    return s == null ? 0 : s.length();
  }

  private static long scale(java.math.@Nullable BigDecimal d) {
    return d == null ? 0 : d.scale();
  }

  private static long nanos(java.time.@Nullable Instant t) {
    return t == null ? 0 : t.getEpochSecond() + t.getNano();
  }

  private static long nanos(@Nullable OffsetDateTime t) {
    return t == null ? 0 : t.toEpochSecond() + t.getNano();
  }
}
