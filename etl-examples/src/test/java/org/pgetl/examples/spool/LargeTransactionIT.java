package org.pgetl.examples.spool;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.Writer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.CompletableFuture;
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
 * Transactions far larger than the pipeline's heap: a 2,000,000-row INSERT and a 1,000,000-row
 * UPDATE reach a destination in a pipeline whose JVM has 128 MB of heap ({@code -Xmx128m}, a child
 * process). The server streams them while they run (the pipeline's role has a 64 kB {@code
 * logical_decoding_work_mem}), the pipeline spools them on disk and replays each in batches of
 * {@code batchMaxBytes} after its commit. The destination keeps no row: it counts, sums ids, checks
 * every value and the order, and measures each {@code writeEvents} call.
 */
@WithPostgres
@Timeout(value = 10, unit = TimeUnit.MINUTES)
class LargeTransactionIT {
  private static final int INSERTS = 2_000_000;
  private static final int UPDATES = 1_000_000;
  private static final long BATCH_MAX_BYTES = 4L * 1024 * 1024;
  private static final String PIPELINE = "large_tx";

  private ChildJvm child;

  @Test
  void twoMillionInsertsAndAMillionUpdatesArriveWholeAndInOrderInBatchesWithA128MbHeap(
      TestDatabase db, @TempDir Path dir) throws Exception {
    db.execute(
        "CREATE ROLE large_tx LOGIN SUPERUSER REPLICATION PASSWORD 'large_tx'",
        "ALTER ROLE large_tx SET logical_decoding_work_mem = '64kB'",
        "CREATE TABLE big (id int8 PRIMARY KEY, n int4, v text)",
        "CREATE PUBLICATION pub_big FOR TABLE big");
    Path spool = dir.resolve("spool");
    Path settings = writeSettings(dir, db, spool);
    child =
        ChildJvm.start(dir, SpoolChild.class, List.of("-Xmx128m"), List.of(settings.toString()));
    assertThat(child.awaitLine(l -> l.contains(SpoolChild.READY), 2))
        .as("the pipeline started:\n%s", child.text())
        .isTrue();

    long started = System.nanoTime();
    boolean[] spooling = {false};
    write(
        db,
        "INSERT INTO big SELECT g, g * 7 % 1000, 'row ' || g FROM generate_series(1, "
            + INSERTS
            + ") g",
        spool,
        spooling);
    Map<String, Long> insert = awaitCommit("inserts=" + INSERTS);
    System.out.printf(
        "LargeTransactionIT: %d inserts delivered %.1f s after the statement started%n",
        INSERTS, (System.nanoTime() - started) / 1e9);
    assertThat(spooling[0]).as("a spool file while the INSERT ran").isTrue();
    assertDelivered(insert, (long) INSERTS * (INSERTS + 1) / 2);

    started = System.nanoTime();
    spooling[0] = false;
    write(db, "UPDATE big SET n = n + 1, v = 'upd ' || id WHERE id <= " + UPDATES, spool, spooling);
    Map<String, Long> update = awaitCommit("updates=" + UPDATES);
    System.out.printf(
        "LargeTransactionIT: %d updates delivered %.1f s after the statement started%n",
        UPDATES, (System.nanoTime() - started) / 1e9);
    assertThat(spooling[0]).as("a spool file while the UPDATE ran").isTrue();
    assertDelivered(update, (long) UPDATES * (UPDATES + 1) / 2);

    assertThat(
            db.queryLong(
                "SELECT coalesce(sum(stream_txns), 0) FROM pg_stat_replication_slots"
                    + " WHERE slot_name = ?",
                "pgetl_apply_" + PIPELINE))
        .as("transactions the server streamed")
        .isGreaterThanOrEqualTo(2);
    assertThat(files(spool.resolve(PIPELINE))).as("spool files after both commits").isEmpty();
    assertThat(child.process.isAlive()).as("the pipeline still runs:\n%s", child.text()).isTrue();
    System.out.println(
        "LargeTransactionIT: largest writeEvents call "
            + update.get("largestCall")
            + " events ("
            + Math.max(insert.get("largestCallBytes"), update.get("largestCallBytes"))
            + " bytes before its last event, batchMaxBytes "
            + BATCH_MAX_BYTES
            + "), "
            + update.get("calls")
            + " calls; peak heap after GC "
            + update.get("peakHeapAfterGc") / (1024 * 1024)
            + " MiB of "
            + update.get("maxHeap") / (1024 * 1024)
            + " MiB");
  }

  /**
   * Runs one statement (its own transaction) while watching the spool folder for the file of the
   * transaction in progress.
   */
  private static void write(TestDatabase db, String sql, Path spool, boolean[] spooling)
      throws Exception {
    CompletableFuture<Void> statement = CompletableFuture.runAsync(() -> db.execute(sql));
    Path folder = spool.resolve(PIPELINE);
    while (true) {
      try {
        statement.get(50, TimeUnit.MILLISECONDS);
        return;
      } catch (java.util.concurrent.TimeoutException running) {
        spooling[0] |= !files(folder).isEmpty();
      }
    }
  }

  private Map<String, Long> awaitCommit(String count) throws Exception {
    assertThat(
            child.awaitLine(
                l -> l.startsWith(SpoolChild.COMMIT) && l.contains(" " + count + " "), 6))
        .as("the transaction reached the destination; the child printed:\n%s", tail())
        .isTrue();
    String line =
        child.lines().stream()
            .filter(l -> l.startsWith(SpoolChild.COMMIT) && l.contains(" " + count + " "))
            .findFirst()
            .orElseThrow();
    Map<String, Long> fields = new HashMap<>();
    for (String part : line.split(" ")) {
      int eq = part.indexOf('=');
      if (eq > 0) {
        fields.put(part.substring(0, eq), Long.parseLong(part.substring(eq + 1)));
      }
    }
    return fields;
  }

  private static void assertDelivered(Map<String, Long> tx, long idSum) {
    assertThat(tx.get("idSum")).as("the sum of the ids delivered").isEqualTo(idSum);
    assertThat(tx.get("mismatches")).as("values that differ from the source").isZero();
    assertThat(tx.get("outOfOrder")).as("changes out of transaction order").isZero();
    assertThat(tx.get("overLimit"))
        .as("writeEvents calls above batchMaxBytes plus one event")
        .isZero();
    assertThat(tx.get("largestCallBytes")).isLessThan(BATCH_MAX_BYTES);
  }

  private String tail() {
    List<String> lines = child.lines();
    return String.join("\n", lines.subList(Math.max(0, lines.size() - 40), lines.size()));
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

  private static Path writeSettings(Path dir, TestDatabase db, Path spool) throws IOException {
    Properties p = new Properties();
    p.setProperty("host", db.host());
    p.setProperty("port", Integer.toString(db.port()));
    p.setProperty("user", "large_tx");
    p.setProperty("password", "large_tx");
    p.setProperty("source", db.name());
    p.setProperty("pipeline", PIPELINE);
    p.setProperty("publication", "pub_big");
    p.setProperty("spool", spool.toString());
    p.setProperty("batchMaxBytes", Long.toString(BATCH_MAX_BYTES));
    Path file = dir.resolve("child.properties");
    try (Writer w = Files.newBufferedWriter(file)) {
      p.store(w, null);
    }
    return file;
  }

  @AfterEach
  void stopChild() throws Exception {
    if (child != null && child.process.isAlive()) {
      child.process.destroyForcibly();
      child.process.waitFor(30, TimeUnit.SECONDS);
    }
  }
}
