package org.pgetl.examples.spool;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.io.IOException;
import java.io.Writer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.Statement;
import java.time.Duration;
import java.util.List;
import java.util.Properties;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.pgetl.examples.ChildJvm;
import org.pgetl.testkit.TestDatabase;
import org.pgetl.testkit.WithPostgres;

/**
 * A pipeline killed (SIGKILL) in the middle of a streamed transaction, while its changes are in the
 * spool, and again while the committed transaction is being delivered: each restart deletes what
 * the killed process left in the spool folder, the server streams the transaction again from its
 * start, and the mirror ends equal to the source, with no spool file left and no table error.
 *
 * <p>The pipeline runs in a child JVM ({@link SpoolChild}) into a {@code PostgresMirrorDestination}
 * in a second database, with its state in a {@code PostgresStore} in the source database, as a role
 * whose {@code logical_decoding_work_mem} is 64 kB, so that the transaction streams early.
 */
@WithPostgres
@Timeout(value = 6, unit = TimeUnit.MINUTES)
class StreamedTransactionCrashIT {
  private static final String PIPELINE = "spool_crash";
  private static final Duration WAIT = Duration.ofMinutes(2);
  private static final String ROW_TEXT =
      "concat_ws('|', quote_nullable(id), quote_nullable(n), quote_nullable(v))";

  private TestDatabase db;
  private TestDatabase mirror;
  private ChildJvm child;
  private Path dir;
  private Path settings;
  private int runs;

  @Test
  void killedWhileSpoolingAndWhileDeliveringTheMirrorConvergesAndNoSpoolFileIsLeft(
      TestDatabase db, @TempDir Path dir) throws Exception {
    this.db = db;
    this.dir = dir;
    String mirrorName = db.name() + "_mirror";
    db.server().createDatabase(mirrorName);
    mirror = new TestDatabase(db.server(), mirrorName);
    db.execute(
        "CREATE ROLE spool_crash LOGIN SUPERUSER REPLICATION PASSWORD 'spool_crash'",
        "ALTER ROLE spool_crash SET logical_decoding_work_mem = '64kB'",
        "CREATE TABLE wide (id int8 PRIMARY KEY, n int4, v text)",
        "INSERT INTO wide SELECT g, g, 'seed ' || g FROM generate_series(1, 1000) g",
        "CREATE PUBLICATION pub_wide FOR TABLE wide");
    Path spool = dir.resolve("spool");
    Path folder = spool.resolve(PIPELINE);
    settings = writeSettings(dir, db, spool, mirrorName);

    spawnAndAwaitReady();
    try (Connection c = db.connect();
        Statement st = c.createStatement()) {
      c.setAutoCommit(false);
      st.execute(
          "INSERT INTO wide SELECT g, g % 97, repeat('x', 60) || g"
              + " FROM generate_series(1001, 61000) g");
      st.execute("SAVEPOINT s");
      st.execute("UPDATE wide SET v = 'rolled back' WHERE id <= 30000");
      st.execute("ROLLBACK TO SAVEPOINT s");
      // the transaction is in progress and streamed: its changes are in a spool file
      await().atMost(WAIT).until(() -> !files(folder).isEmpty());
      kill();
      assertThat(files(folder)).as("what the killed process left in the spool").isNotEmpty();
      st.execute("UPDATE wide SET n = n + 1000 WHERE id % 3 = 0");
      st.execute("DELETE FROM wide WHERE id % 10 = 0");
      c.commit();
    }

    spawnAndAwaitReady();
    assertThat(child.awaitLine(l -> l.contains("spool files left in"), 1))
        .as("the restart deleted the spool files of the killed process")
        .isTrue();
    // the second kill lands while the committed transaction reaches the mirror
    assertThat(pollUntil(() -> mirrorCount() > 1000, WAIT))
        .as("the transaction started to reach the mirror")
        .isTrue();
    kill();
    boolean complete = mirror.queryString(checksum()).equals(db.queryString(checksum()));
    System.out.println(
        "StreamedTransactionCrashIT: second kill "
            + (complete ? "after the transaction reached the mirror" : "during its delivery")
            + " (the mirror held "
            + mirrorCount()
            + " rows)");

    spawnAndAwaitReady();
    db.execute("INSERT INTO wide VALUES (0, 0, 'marker')");
    await()
        .atMost(WAIT)
        .pollInterval(Duration.ofMillis(200))
        .until(() -> mirror.queryString(checksum()).equals(db.queryString(checksum())));
    await().atMost(WAIT).until(() -> files(folder).isEmpty());
    assertThat(
            db.queryLong(
                "SELECT count(*) FROM etl.replication_state WHERE pipeline_id = ?"
                    + " AND state = 'errored'",
                PIPELINE))
        .as("table errors on the way")
        .isZero();
    assertThat(child.process.isAlive()).as("the pipeline runs:\n%s", child.text()).isTrue();
  }

  private void spawnAndAwaitReady() throws Exception {
    runs++;
    child = ChildJvm.start(dir, SpoolChild.class, List.of(settings.toString()));
    assertThat(child.awaitLine(l -> l.contains(SpoolChild.READY), 2))
        .as("run %d of the pipeline reached Ready:\n%s", runs, child.text())
        .isTrue();
  }

  private void kill() throws Exception {
    child.process.destroyForcibly();
    assertThat(child.process.waitFor(30, TimeUnit.SECONDS)).as("the child died").isTrue();
  }

  private long mirrorCount() {
    return mirror.queryLong(
        "SELECT CASE WHEN to_regclass('public.wide') IS NULL THEN 0"
            + " ELSE (SELECT count(*) FROM public.wide) END");
  }

  private static String checksum() {
    return "SELECT count(*) || ' rows, md5 ' || md5(coalesce(string_agg(r, E'\\n' ORDER BY r"
        + " COLLATE \"C\"), '')) FROM (SELECT "
        + ROW_TEXT
        + " AS r FROM public.wide) s";
  }

  /** Waits for a condition while the child runs; false when it did not hold in time. */
  private boolean pollUntil(java.util.function.BooleanSupplier condition, Duration max)
      throws Exception {
    long deadline = System.nanoTime() + max.toNanos();
    while (System.nanoTime() < deadline) {
      if (condition.getAsBoolean()) {
        return true;
      }
      if (child.process.waitFor(20, TimeUnit.MILLISECONDS)) {
        throw new AssertionError("the pipeline ended by itself:\n" + child.text());
      }
    }
    return false;
  }

  private static List<String> files(Path folder) {
    if (!Files.isDirectory(folder)) {
      return List.of();
    }
    try (Stream<Path> s = Files.list(folder)) {
      return s.map(p -> p.getFileName().toString()).toList();
    } catch (IOException e) {
      return List.of(); // a file went while the folder was listed
    }
  }

  private static Path writeSettings(Path dir, TestDatabase db, Path spool, String mirrorName)
      throws IOException {
    Properties p = new Properties();
    p.setProperty("host", db.host());
    p.setProperty("port", Integer.toString(db.port()));
    p.setProperty("user", "spool_crash");
    p.setProperty("password", "spool_crash");
    p.setProperty("source", db.name());
    p.setProperty("target", mirrorName);
    p.setProperty("pipeline", PIPELINE);
    p.setProperty("publication", "pub_wide");
    p.setProperty("spool", spool.toString());
    p.setProperty("batchMaxBytes", Long.toString(64 * 1024));
    Path file = dir.resolve("child.properties");
    try (Writer w = Files.newBufferedWriter(file)) {
      p.store(w, null);
    }
    return file;
  }

  @AfterEach
  void cleanUp() throws Exception {
    if (child != null && child.process.isAlive()) {
      child.process.destroyForcibly();
      child.process.waitFor(30, TimeUnit.SECONDS);
    }
    if (mirror != null) {
      db.server().dropDatabase(mirror.name());
    }
  }
}
