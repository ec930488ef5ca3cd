package org.pgetl.bench;

import static org.pgetl.bench.Bench.exec;
import static org.pgetl.bench.Bench.fmt;
import static org.pgetl.bench.Bench.median;
import static org.pgetl.bench.Bench.waitReady;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.TimeUnit;
import org.pgetl.PgConnectionConfig;
import org.pgetl.Pipeline;
import org.pgetl.PipelineConfig;
import org.pgetl.store.postgres.PostgresStore;
import org.pgetl.testkit.EmbeddedPostgres;

/**
 * A chunked copy killed with SIGKILL once about half its chunks are done, then resumed by a new
 * process, against the same copy left alone: the total time a user waits for the table to be {@code
 * Ready}.
 *
 * <p>Each copy runs in a child JVM (this class with {@code child} as its first argument) with the
 * library's defaults, a {@code PostgresStore} in the source database (schema {@code etl}), {@code
 * chunkedCopyMinBytes} 0 and a destination that answers {@code durable()} at once; the child exits
 * once the table is {@code Ready}. Per round the parent times, from starting the first child to the
 * exit of the last one: the copy left alone, and the copy whose child it kills when the store shows
 * half the chunks done (it then starts a second child at once). Both include a JVM start per child,
 * which is what a restart costs. The children print how many rows they copied, so the rows read
 * again after the kill show.
 *
 * <pre>
 * java -Xmx1g -cp etl-benchmarks/target/pgetl-benchmarks.jar \
 *   org.pgetl.bench.ChunkedResumeBenchmark 10000000 3
 * </pre>
 */
public final class ChunkedResumeBenchmark {
  private static final String CHILD = "child";

  private final EmbeddedPostgres pg;
  private final int rows;

  private ChunkedResumeBenchmark(EmbeddedPostgres pg, int rows) {
    this.pg = pg;
    this.rows = rows;
  }

  /**
   * Runs the harness, or one child copy.
   *
   * @param args rows and rounds; or {@code child host port user password pipelineId}
   * @throws Exception on failure
   */
  public static void main(String[] args) throws Exception {
    if (args.length > 0 && args[0].equals(CHILD)) {
      child(args);
      return;
    }
    int rows = args.length > 0 ? Integer.parseInt(args[0]) : 2_000_000;
    int rounds = args.length > 1 ? Integer.parseInt(args[1]) : 3;
    Bench.printJvm("; children with the library's defaults");
    try (EmbeddedPostgres pg = Bench.postgres17()) {
      new ChunkedResumeBenchmark(pg, rows).run(rounds);
    }
  }

  private void run(int rounds) throws Exception {
    ChunkedCopyBenchmark.createTable(pg, rows);
    List<Double> whole = new ArrayList<>();
    List<Double> resumed = new ArrayList<>();
    for (int r = 0; r < rounds; r++) {
      // the order alternates: the first copy of a round warms the page cache for the second
      Run a = null;
      Run b = null;
      if (r % 2 == 0) {
        a = copy("whole" + r, false);
        b = copy("killed" + r, true);
      } else {
        b = copy("killed" + r, true);
        a = copy("whole" + r, false);
      }
      whole.add(a.seconds());
      resumed.add(b.seconds());
      System.out.printf(
          Locale.ROOT,
          "round %d: left alone %.1f s (%s rows/s, %,d rows sent); killed at %d of %d chunks done"
              + " (%,d rows sent by then), resumed: %.1f s in all (%,d rows sent after the kill)"
              + " = %.2fx (load %s)%n",
          r + 1,
          a.seconds(),
          fmt(rows / a.seconds()),
          a.rowsAfterKill(),
          b.doneAtKill(),
          b.chunks(),
          b.rowsBeforeKill(),
          b.seconds(),
          b.rowsAfterKill(),
          b.seconds() / a.seconds(),
          Bench.loadavg());
    }
    System.out.printf(
        Locale.ROOT,
        "SUMMARY load %s: chunked copy of %,d rows left alone %.1f s, killed at half and resumed"
            + " %.1f s (medians) = %.2fx%n",
        Bench.loadavg(),
        rows,
        median(whole),
        median(resumed),
        median(resumed) / median(whole));
  }

  /**
   * One copy: its time from the first child's start to the last child's exit, the chunks done when
   * the first child was killed (0 when it was not) and the rows each child sent.
   */
  private record Run(
      double seconds, int chunks, int doneAtKill, long rowsBeforeKill, long rowsAfterKill) {}

  private Run copy(String id, boolean kill) throws Exception {
    try (Connection c = pg.connect("src")) {
      exec(c, "CHECKPOINT");
    }
    long start = System.nanoTime();
    Path firstOut = Files.createTempFile("pgetl-resume-", ".log");
    Process first = spawn(id, firstOut);
    int chunks = 0;
    int doneAtKill = 0;
    long before = 0;
    Path out = firstOut;
    if (kill) {
      int[] progress = {0, 0};
      while (progress[0] == 0 || progress[1] * 2 < progress[0]) {
        if (!first.isAlive()) {
          throw new IllegalStateException("the copy ended before half its chunks: see " + firstOut);
        }
        TimeUnit.MILLISECONDS.sleep(20);
        progress = chunks(id);
      }
      first.destroyForcibly(); // SIGKILL
      first.waitFor();
      int[] atKill = chunks(id);
      chunks = atKill[0];
      doneAtKill = atKill[1];
      before = copiedRows(firstOut);
      out = Files.createTempFile("pgetl-resume-", ".log");
      first = spawn(id, out);
    }
    if (!first.waitFor(30, TimeUnit.MINUTES) || first.exitValue() != 0) {
      throw new IllegalStateException("the copy failed: see " + out);
    }
    double seconds = (System.nanoTime() - start) / 1e9;
    long after = copiedRows(out);
    ChunkedCopyBenchmark.dropIdleSlots(pg);
    return new Run(seconds, chunks, doneAtKill, before, after);
  }

  private Process spawn(String id, Path out) throws IOException {
    String java = ProcessHandle.current().info().command().orElse("java");
    List<String> cmd =
        List.of(
            java,
            "-Xmx1g",
            "-cp",
            System.getProperty("java.class.path"),
            ChunkedResumeBenchmark.class.getName(),
            CHILD,
            pg.host(),
            Integer.toString(pg.port()),
            pg.superuser(),
            pg.password(),
            id);
    return new ProcessBuilder(cmd).redirectErrorStream(true).redirectOutput(out.toFile()).start();
  }

  /** {total chunks, chunks done} of a pipeline's chunked copy, as its store holds them. */
  private int[] chunks(String id) throws SQLException {
    try (Connection c = pg.connect("src");
        PreparedStatement ps =
            c.prepareStatement(
                "SELECT count(*), count(done_at) FROM etl.table_chunks WHERE pipeline_id = ?")) {
      ps.setString(1, id);
      try (ResultSet rs = ps.executeQuery()) {
        rs.next();
        return new int[] {rs.getInt(1), rs.getInt(2)};
      }
    } catch (SQLException e) {
      if ("42P01".equals(e.getSQLState()) || "3F000".equals(e.getSQLState())) {
        return new int[] {0, 0}; // the store's schema is not there yet
      }
      throw e;
    }
  }

  /** The rows a child said it copied; 0 for a child killed before it said so. */
  private static long copiedRows(Path out) throws IOException {
    long n = 0;
    for (String line : Files.readAllLines(out)) {
      if (line.startsWith("COPIED ")) {
        n = Long.parseLong(line.substring("COPIED ".length()).trim());
      }
    }
    return n;
  }

  /** One copy in this process until the table is {@code Ready}; prints the rows it copied. */
  private static void child(String[] args) throws Exception {
    PgConnectionConfig source =
        PgConnectionConfig.builder()
            .host(args[1])
            .port(Integer.parseInt(args[2]))
            .database("src")
            .user(args[3])
            .password(args[4])
            .build();
    String id = args[5];
    PipelineConfig config =
        PipelineConfig.builder()
            .pipelineId(id)
            .publication("pub")
            .source(source)
            .chunkedCopyMinBytes(0)
            .build();
    ChunkedCopyBenchmark.Timing dest = new ChunkedCopyBenchmark.Timing();
    // the counter runs in a thread of its own: a SIGKILL leaves the last count printed
    Thread counter =
        new Thread(
            () -> {
              try {
                while (true) {
                  System.out.println("COPIED " + dest.copied.get());
                  TimeUnit.MILLISECONDS.sleep(20);
                }
              } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
              }
            },
            "bench-counter");
    counter.setDaemon(true);
    counter.start();
    try (PostgresStore store = PostgresStore.builder().connection(source).pipelineId(id).build();
        Pipeline p = Pipeline.create(config, store, dest)) {
      p.start();
      waitReady(store, 1);
    }
    counter.interrupt();
    counter.join();
    System.out.println("COPIED " + dest.copied.get());
    System.exit(0);
  }
}
