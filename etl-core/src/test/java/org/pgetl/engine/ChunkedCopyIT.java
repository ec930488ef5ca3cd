package org.pgetl.engine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;
import static org.pgetl.engine.PipelineHarness.WAIT;
import static org.pgetl.engine.PipelineHarness.awaitAllReady;
import static org.pgetl.engine.PipelineHarness.config;
import static org.pgetl.engine.PipelineHarness.name;
import static org.pgetl.engine.PipelineHarness.oid;
import static org.pgetl.engine.PipelineHarness.sourceRows;

import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Function;
import org.awaitility.core.ConditionTimeoutException;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.pgetl.Pipeline;
import org.pgetl.PipelineConfig;
import org.pgetl.destination.TableCopyWrite;
import org.pgetl.model.TableId;
import org.pgetl.store.MemoryStore;
import org.pgetl.store.PipelineStore.ChunkRecord;
import org.pgetl.store.TableState;
import org.pgetl.testkit.TestDatabase;
import org.pgetl.testkit.WithPostgres;
import org.pgetl.testkit.destination.DestinationCall;
import org.pgetl.testkit.destination.DestinationOperation;
import org.pgetl.testkit.destination.RecordingDestination;

/**
 * A table copied in chunks while its changes stream: every kind of change during the copy, a
 * restart in the middle that keeps the chunks done, and the destination equal to the source.
 */
@WithPostgres
@Timeout(value = 5, unit = TimeUnit.MINUTES)
class ChunkedCopyIT {

  /**
   * Answers every write a little late: a test table's chunked copy then lasts long enough for the
   * test to act while it runs, on a fast machine too (a copy that ended between two polls deletes
   * its chunk records).
   */
  private static final Executor LATE = CompletableFuture.delayedExecutor(15, TimeUnit.MILLISECONDS);

  private static RecordingDestination destination() {
    return RecordingDestination.builder().chunkedCopy(true).answerExecutor(LATE).build();
  }

  /**
   * Waits until the destination has {@code n} ChunkEnd barriers of the table (a count that only
   * grows), and says what the pipeline was doing when it does not.
   */
  private static void awaitChunkEnds(Pipeline p, RecordingDestination dest, String table, int n) {
    try {
      await()
          .atMost(WAIT)
          .until(
              () ->
                  dest.count(DestinationOperation.CHUNK_END, name(table)) >= n
                      || p.failure().isPresent());
    } catch (ConditionTimeoutException e) {
      throw new AssertionError(
          "fewer than "
              + n
              + " ChunkEnd barriers of "
              + table
              + " within "
              + WAIT
              + " ("
              + dest.count(DestinationOperation.CHUNK_END, name(table))
              + "); destination calls: "
              + dest.calls().size()
              + "; status: "
              + p.status(),
          e);
    }
    assertThat(p.failure()).isEmpty();
  }

  private static void createTable(TestDatabase db, String table, int rows) {
    db.execute(
        "CREATE TABLE " + table + " (id bigint PRIMARY KEY, v int NOT NULL, big text)",
        // big values stored out of line without compression: an update of v leaves them unchanged
        "ALTER TABLE " + table + " ALTER COLUMN big SET STORAGE EXTERNAL",
        "INSERT INTO "
            + table
            + " SELECT g, 0, CASE WHEN g % 50 = 0 THEN repeat(md5(g::text), 100) END"
            + " FROM generate_series(1, "
            + rows
            + ") g");
  }

  /** Changes of every kind, spread over the table's keys, until stopped. */
  private static Thread load(
      TestDatabase db, String table, int rows, AtomicBoolean stop, AtomicInteger n) {
    Thread t =
        new Thread(
            () -> {
              Random r = new Random(42);
              while (!stop.get()) {
                int i = n.incrementAndGet();
                long k = 1 + r.nextInt(rows);
                switch (i % 6) {
                  // an update that leaves the TOASTed value unchanged
                  case 0 ->
                      db.execute(
                          "UPDATE " + table + " SET v = v + 1 WHERE id = " + (k / 50 * 50 + 50));
                  case 1 -> db.execute("UPDATE " + table + " SET v = " + i + " WHERE id = " + k);
                  // a delete and a re-insert of one key in one transaction
                  case 2 ->
                      db.execute(
                          "BEGIN",
                          "DELETE FROM " + table + " WHERE id = " + k,
                          "INSERT INTO "
                              + table
                              + " VALUES ("
                              + k
                              + ", -1, 'again')"
                              + " ON CONFLICT (id) DO NOTHING",
                          "COMMIT");
                  // a key-changing update of a row with a TOASTed value, into the first
                  // chunk (copied first) from one copied later: its new key is read again
                  case 3 ->
                      db.execute(
                          "UPDATE "
                              + table
                              + " SET id = -id WHERE id = "
                              + (k / 50 * 50 + 50)
                              + " AND NOT EXISTS (SELECT 1 FROM "
                              + table
                              + " WHERE id = "
                              + -(k / 50 * 50 + 50)
                              + ")");
                  case 4 -> db.execute("DELETE FROM " + table + " WHERE id = " + k);
                  default ->
                      db.execute(
                          "INSERT INTO " + table + " VALUES (" + (rows + i) + ", " + i + ", NULL)");
                }
              }
            });
    t.start();
    return t;
  }

  private static PipelineConfig.Builder chunked(TestDatabase db, String id, String publication) {
    return config(db, id, publication)
        .chunkedCopyMinBytes(0)
        .copyChunkBytes(64 * 1024)
        .copyConnectionsPerTable(2);
  }

  /**
   * A table copied in chunks while updates, key changes, unchanged-TOAST updates, deletes and
   * re-inserts run: every chunk ends with a ChunkEnd, the table goes straight from DataSync to
   * Ready, and the destination ends equal to the source, with nothing the contract does not allow.
   */
  @Test
  void aTableCopiedInChunksUnderLoadEndsEqual(TestDatabase db) throws Exception {
    createTable(db, "ck", 20_000);
    db.execute("CREATE PUBLICATION pub_ck FOR TABLE ck");
    TableId ck = oid(db, "ck");
    MemoryStore store = new MemoryStore("ck");
    RecordingDestination dest = destination();
    AtomicBoolean stop = new AtomicBoolean();
    AtomicInteger n = new AtomicInteger();
    Thread load = load(db, "ck", 20_000, stop, n);
    try (SnapshotSampler snapshots = new SnapshotSampler(db)) {
      double copySeconds =
          copyUnderLoad(db, "ck", "(-1, -1, 'marker')", store, dest, stop, n, load);
      snapshots.close();
      System.out.printf(
          java.util.Locale.ROOT,
          "ChunkedCopyIT: oldest snapshot %.2f s (%d samples) during a chunked copy of %.1f s%n",
          snapshots.oldestSeconds(),
          snapshots.samples(),
          copySeconds);
      // each chunk is read in a transaction of its own: no snapshot lives for more than a chunk
      // read, a small part of the copy, where the one-snapshot copy holds one for all of it
      assertThat(snapshots.samples())
          .as("samples that saw a snapshot of the pipeline's")
          .isGreaterThanOrEqualTo(3);
      assertThat(snapshots.oldestSeconds())
          .as("the oldest snapshot held during a copy of %.1f s", copySeconds)
          .isLessThan(copySeconds / 4);
      assertThat(dest.count(DestinationOperation.DROP_TABLE_FOR_COPY, name("ck"))).isEqualTo(1);
      assertThat(dest.count(DestinationOperation.FINISH, name("ck"))).isEqualTo(1);
      assertThat(store.chunks(ck)).isEmpty();
    } finally {
      stop.set(true);
      load.join();
    }
  }

  /**
   * Starts a chunked pipeline once the load runs, waits for the table to be ready, stops the load
   * and writes a marker row; then the destination must equal the source, the table must have gone
   * from DataSync to Ready in many chunks, and nothing the contract does not allow may have
   * happened.
   */
  private static double copyUnderLoad(
      TestDatabase db,
      String table,
      String markerValues,
      MemoryStore store,
      RecordingDestination dest,
      AtomicBoolean stop,
      AtomicInteger n,
      Thread load)
      throws Exception {
    try (Pipeline p = Pipeline.create(chunked(db, table, "pub_" + table).build(), store, dest)) {
      await().atMost(WAIT).until(() -> n.get() > 50);
      long started = System.nanoTime();
      p.start();
      awaitChunkEnds(p, dest, table, 1);
      awaitAllReady(store, 1);
      double seconds = (System.nanoTime() - started) / 1e9;
      stop.set(true);
      load.join();
      db.execute("INSERT INTO " + table + " VALUES " + markerValues);
      dest.awaitRowsEqual(name(table), sourceRows(db, table), WAIT);
      // 20,000 rows of about 150 bytes in 64 kB chunks: about 40 of them, and re-reads
      assertThat(dest.count(DestinationOperation.CHUNK_END, name(table))).isGreaterThan(20);
      assertThat(store.tableStateHistory(oid(db, table)).stream().map(TableState::type))
          .doesNotContain(TableState.Type.FINISHED_COPY, TableState.Type.SYNC_DONE);
      assertThat(dest.violations()).isEmpty();
      assertThat(dest.anomalies()).isEmpty();
      return seconds;
    }
  }

  /**
   * Samples every 20 ms, from {@code pg_stat_activity}, the age of the oldest transaction that
   * holds a snapshot ({@code backend_xmin}) among the pipeline's sessions in the test's database:
   * how long vacuum is held back.
   */
  private static final class SnapshotSampler implements AutoCloseable {
    private final Thread thread;
    private final AtomicBoolean stop = new AtomicBoolean();
    private final AtomicInteger samples = new AtomicInteger();
    private volatile double oldest;
    private volatile @Nullable Exception failure;

    SnapshotSampler(TestDatabase db) {
      thread =
          new Thread(
              () -> {
                try (Connection c = db.connect();
                    Statement st = c.createStatement()) {
                  while (!stop.get()) {
                    try (ResultSet rs =
                        st.executeQuery(
                            "SELECT extract(epoch FROM clock_timestamp() - min(xact_start))"
                                + " FROM pg_stat_activity WHERE backend_xmin IS NOT NULL"
                                + " AND datname = current_database()"
                                + " AND application_name LIKE 'pgetl:%'")) {
                      rs.next();
                      double age = rs.getDouble(1);
                      if (!rs.wasNull()) {
                        samples.incrementAndGet();
                        oldest = Math.max(oldest, age);
                      }
                    }
                    Thread.sleep(20);
                  }
                } catch (Exception e) {
                  failure = e;
                }
              },
              "snapshot-sampler");
      thread.setDaemon(true);
      thread.start();
    }

    int samples() {
      return samples.get();
    }

    double oldestSeconds() {
      return oldest;
    }

    @Override
    public void close() throws InterruptedException {
      stop.set(true);
      thread.join();
      if (failure != null) {
        throw new AssertionError("the snapshot sampler failed", failure);
      }
    }
  }

  /**
   * A role with only the grants the operations guide lists (REPLICATION and SELECT on the table)
   * copies a table in chunks: the lock, the snapshot and the watermark need nothing more.
   */
  @Test
  void aRoleWithTheDocumentedGrantsCopiesInChunks(TestDatabase db) throws Exception {
    createTable(db, "cg", 5_000);
    // roles belong to the cluster: a name of its own, so that a rerun does not find it
    String role = "chunk_" + Long.toUnsignedString(ThreadLocalRandom.current().nextLong(), 36);
    db.execute(
        "CREATE PUBLICATION pub_cg FOR TABLE cg",
        "CREATE ROLE " + role + " LOGIN REPLICATION PASSWORD 'pw'",
        "GRANT SELECT ON TABLE cg TO " + role);
    MemoryStore store = new MemoryStore("cg");
    RecordingDestination dest = destination();
    PipelineConfig cfg =
        chunked(db, "cg", "pub_cg")
            .source(PipelineHarness.source(db).toBuilder().user(role).password("pw").build())
            .build();
    try (Pipeline p = Pipeline.create(cfg, store, dest)) {
      p.start();
      awaitChunkEnds(p, dest, "cg", 1);
      db.execute("UPDATE cg SET v = 9 WHERE id % 3 = 0", "DELETE FROM cg WHERE id % 5 = 0");
      awaitAllReady(store, 1);
      dest.awaitRowsEqual(name("cg"), sourceRows(db, "cg"), WAIT);
      assertThat(dest.violations()).isEmpty();
    } finally {
      db.execute("DROP OWNED BY " + role, "DROP ROLE " + role);
    }
  }

  /**
   * A TRUNCATE and a column added while a table is copied in chunks: the TRUNCATE waits for the
   * chunks being written, the new column makes the copy start over with it, and the destination
   * ends equal.
   */
  @Test
  void aTruncateAndANewColumnDuringAChunkedCopy(TestDatabase db) throws Exception {
    createTable(db, "ct", 20_000);
    db.execute("CREATE PUBLICATION pub_ct FOR TABLE ct");
    MemoryStore store = new MemoryStore("ct");
    RecordingDestination dest = destination();
    PipelineConfig cfg = chunked(db, "ct", "pub_ct").copyConnectionsPerTable(1).build();
    try (Pipeline p = Pipeline.create(cfg, store, dest)) {
      p.start();
      awaitChunkEnds(p, dest, "ct", 2);
      db.execute(
          "TRUNCATE ct",
          "INSERT INTO ct SELECT g, 1, NULL FROM generate_series(1, 15000) g",
          "UPDATE ct SET v = 2 WHERE id % 7 = 0");
      awaitChunkEnds(p, dest, "ct", 4);
      db.execute(
          "ALTER TABLE ct ADD COLUMN extra int DEFAULT 5",
          "UPDATE ct SET extra = 6 WHERE id % 11 = 0",
          "DELETE FROM ct WHERE id % 13 = 0");
      awaitAllReady(store, 1);
      db.execute("INSERT INTO ct VALUES (-1, -1, 'marker', 7)");
      dest.awaitRowsEqual(name("ct"), sourceRows(db, "ct"), WAIT);
      assertThat(dest.violations()).isEmpty();
      assertThat(dest.anomalies()).isEmpty();
    }
  }

  /**
   * A pipeline stopped in the middle of a chunked copy resumes it: no new dropTableForCopy, the
   * chunks done before the stop are not copied again, and the destination ends equal.
   */
  @Test
  void aStoppedChunkedCopyResumesWithTheChunksDone(TestDatabase db) throws Exception {
    createTable(db, "cr", 30_000);
    db.execute("CREATE PUBLICATION pub_cr FOR TABLE cr");
    TableId cr = oid(db, "cr");
    MemoryStore store = new MemoryStore("cr");
    RecordingDestination dest = destination();
    AtomicBoolean stop = new AtomicBoolean();
    AtomicInteger n = new AtomicInteger();
    Thread load = load(db, "cr", 30_000, stop, n);
    PipelineConfig cfg = chunked(db, "cr", "pub_cr").copyConnectionsPerTable(1).build();
    try {
      int doneAtStop;
      try (Pipeline p = Pipeline.create(cfg, store, dest)) {
        p.start();
        awaitChunkEnds(p, dest, "cr", 3);
      }
      List<ChunkRecord> atStop = store.chunks(cr);
      doneAtStop = (int) atStop.stream().filter(ChunkRecord::done).count();
      assertThat(doneAtStop).isLessThan(atStop.size());
      // progress counts the bytes the COPY sent, about the rows' size on disk (not their size in
      // memory, several times that)
      long rowsDone = atStop.stream().mapToLong(ChunkRecord::rows).sum();
      long bytesDone = atStop.stream().mapToLong(ChunkRecord::bytes).sum();
      long onDisk = db.queryLong("SELECT avg(pg_column_size(t.*))::int8 FROM cr t");
      assertThat(bytesDone / (double) rowsDone)
          .as("bytes per row copied, against %d on disk", onDisk)
          .isBetween(onDisk / 2.0, onDisk * 2.0);
      int callsBefore = dest.calls(DestinationOperation.CHUNK_END).size();
      Set<Integer> doneBefore = new HashSet<>();
      for (ChunkRecord c : atStop) {
        if (c.done()) {
          doneBefore.add(c.index());
        }
      }
      try (Pipeline p = Pipeline.create(cfg, store, dest)) {
        p.start();
        awaitAllReady(store, 1);
        stop.set(true);
        load.join();
        db.execute("INSERT INTO cr VALUES (-1, -1, 'marker')");
        dest.awaitRowsEqual(name("cr"), sourceRows(db, "cr"), WAIT);
      }
      // the chunks done before the stop were not read again
      List<Integer> readAfter = new ArrayList<>();
      List<DestinationCall> ends = dest.calls(DestinationOperation.CHUNK_END);
      for (DestinationCall call : ends.subList(callsBefore, ends.size())) {
        readAfter.add(((TableCopyWrite.ChunkEnd) call.write()).chunk());
      }
      assertThat(readAfter).isNotEmpty().doesNotContainAnyElementsOf(doneBefore);
      assertThat(dest.count(DestinationOperation.DROP_TABLE_FOR_COPY, name("cr"))).isEqualTo(1);
      assertThat(dest.violations()).isEmpty();
      assertThat(dest.anomalies()).isEmpty();
    } finally {
      stop.set(true);
      load.join();
    }
  }

  /**
   * A table whose key is a uuid, copied in chunks under updates, unchanged-TOAST updates, key
   * moves, deletes and inserts: the keys spread over the whole uuid range (half of them with the
   * first bit set, which Java's own UUID order puts first and PostgreSQL's last), and the
   * destination ends equal.
   */
  @Test
  void aUuidKeyedTableCopiedInChunksUnderLoadEndsEqual(TestDatabase db) throws Exception {
    copyKeyedTableUnderLoad(
        db,
        "cu",
        "uuid",
        g -> "md5((" + g + ")::text)::uuid",
        id -> "md5('moved' || " + id + "::text)::uuid",
        "'00000000-0000-0000-0000-000000000000'",
        "'ffffffff-ffff-ffff-ffff-ffffffffffff'");
  }

  /**
   * A partitioned table published through its root ({@code publish_via_partition_root}) is copied
   * in chunks of its key across its partitions, under load that also moves rows from one partition
   * to another (the key changes to {@code -id}, into the default partition): the destination ends
   * equal to the root's rows.
   */
  @Test
  void aPartitionedTablePublishedThroughItsRootIsCopiedInChunksUnderLoad(TestDatabase db)
      throws Exception {
    db.execute(
        "CREATE TABLE cp (id bigint PRIMARY KEY, v int NOT NULL, big text) PARTITION BY RANGE (id)",
        "CREATE TABLE cp_low PARTITION OF cp FOR VALUES FROM (1) TO (7000)",
        "CREATE TABLE cp_high PARTITION OF cp FOR VALUES FROM (7000) TO (14000)",
        "CREATE TABLE cp_other PARTITION OF cp DEFAULT",
        "ALTER TABLE cp ALTER COLUMN big SET STORAGE EXTERNAL",
        "INSERT INTO cp SELECT g, 0, CASE WHEN g % 50 = 0 THEN repeat(md5(g::text), 100) END"
            + " FROM generate_series(1, 20000) g",
        "ANALYZE cp",
        "CREATE PUBLICATION pub_cp FOR TABLE cp WITH (publish_via_partition_root = true)");
    MemoryStore store = new MemoryStore("cp");
    RecordingDestination dest = destination();
    AtomicBoolean stop = new AtomicBoolean();
    AtomicInteger n = new AtomicInteger();
    Thread load = load(db, "cp", 20_000, stop, n);
    try {
      copyUnderLoad(db, "cp", "(-1, -1, 'marker')", store, dest, stop, n, load);
      assertThat(store.chunks(oid(db, "cp"))).isEmpty();
    } finally {
      stop.set(true);
      load.join();
    }
  }

  /**
   * A table keyed by a {@code numeric} with fractions (and trailing zeros: {@code g / 8.0} has 20
   * decimals), {@code -Infinity} and, as the marker, {@code NaN}, copied in chunks under load: the
   * destination ends equal.
   */
  @Test
  void aNumericKeyedTableCopiedInChunksUnderLoadEndsEqual(TestDatabase db) throws Exception {
    copyKeyedTableUnderLoad(
        db, "cn", "numeric", g -> "(" + g + " / 8.0)", id -> "-" + id, "'-Infinity'", "'NaN'");
  }

  /**
   * A table keyed by a {@code timestamptz}, with {@code -infinity} and, as the marker, {@code
   * infinity}, copied in chunks under load: the destination ends equal.
   */
  @Test
  void aTimestamptzKeyedTableCopiedInChunksUnderLoadEndsEqual(TestDatabase db) throws Exception {
    copyKeyedTableUnderLoad(
        db,
        "cz",
        "timestamptz",
        g -> "('2000-01-01 00:00:00+00'::timestamptz + " + g + " * interval '1 second')",
        id -> "(" + id + " - interval '300 years')",
        "'-infinity'",
        "'infinity'");
  }

  /**
   * Copies in chunks a table of 20,000 rows keyed by {@code keyOf(g)}, plus one row keyed {@code
   * extraKey}, while updates, unchanged-TOAST updates, key moves ({@code moved(id)}), deletes,
   * re-inserts and inserts run; then writes the marker row keyed {@code markerKey}.
   */
  private static void copyKeyedTableUnderLoad(
      TestDatabase db,
      String table,
      String type,
      Function<String, String> keyOf,
      Function<String, String> moved,
      String extraKey,
      String markerKey)
      throws Exception {
    int rows = 20_000;
    db.execute(
        "CREATE TABLE " + table + " (id " + type + " PRIMARY KEY, v int NOT NULL, big text)",
        "ALTER TABLE " + table + " ALTER COLUMN big SET STORAGE EXTERNAL",
        "INSERT INTO "
            + table
            + " SELECT "
            + keyOf.apply("g")
            + ", 0, CASE WHEN g % 50 = 0 THEN repeat(md5(g::text), 100) END"
            + " FROM generate_series(1, "
            + rows
            + ") g",
        "INSERT INTO " + table + " VALUES (" + extraKey + ", 0, NULL)",
        "CREATE PUBLICATION pub_" + table + " FOR TABLE " + table);
    MemoryStore store = new MemoryStore(table);
    RecordingDestination dest = destination();
    AtomicBoolean stop = new AtomicBoolean();
    AtomicInteger n = new AtomicInteger();
    Thread load =
        new Thread(
            () -> {
              Random r = new Random(11);
              while (!stop.get()) {
                int i = n.incrementAndGet();
                int k = 1 + r.nextInt(rows);
                String key = keyOf.apply(Integer.toString(k));
                String toasted = keyOf.apply(Integer.toString(k / 50 * 50 + 50));
                String where = " WHERE id = ";
                switch (i % 6) {
                  case 0 -> db.execute("UPDATE " + table + " SET v = v + 1" + where + toasted);
                  case 1 -> db.execute("UPDATE " + table + " SET v = " + i + where + key);
                  case 2 ->
                      db.execute(
                          "BEGIN",
                          "DELETE FROM " + table + where + key,
                          "INSERT INTO "
                              + table
                              + " VALUES ("
                              + key
                              + ", -1, 'again') ON CONFLICT DO NOTHING",
                          "COMMIT");
                  // a key move of a row with a TOASTed value, out of the copied range
                  case 3 ->
                      db.execute(
                          "UPDATE "
                              + table
                              + " SET id = "
                              + moved.apply("id")
                              + where
                              + toasted
                              + " AND NOT EXISTS (SELECT 1 FROM "
                              + table
                              + where
                              + moved.apply(toasted)
                              + ")");
                  case 4 -> db.execute("DELETE FROM " + table + where + key);
                  default ->
                      db.execute(
                          "INSERT INTO "
                              + table
                              + " VALUES ("
                              + keyOf.apply(Integer.toString(rows + i))
                              + ", "
                              + i
                              + ", NULL) ON CONFLICT DO NOTHING");
                }
              }
            });
    load.start();
    try {
      copyUnderLoad(db, table, "(" + markerKey + ", -1, 'marker')", store, dest, stop, n, load);
    } finally {
      stop.set(true);
      load.join();
    }
  }

  /**
   * A table large enough to be copied in chunks whose key cannot split it (a text key) is copied
   * under one snapshot, and the log says why.
   */
  @Test
  void aTableWhoseKeyCannotBeSplitIsCopiedUnderOneSnapshotAndTheLogSaysWhy(TestDatabase db)
      throws Exception {
    db.execute(
        "CREATE TABLE cx (code text PRIMARY KEY, v int NOT NULL)",
        "INSERT INTO cx SELECT 'k' || g, g FROM generate_series(1, 2000) g",
        "CREATE PUBLICATION pub_cx FOR TABLE cx");
    MemoryStore store = new MemoryStore("cx");
    RecordingDestination dest = destination();
    try (LogCapture log = new LogCapture();
        Pipeline p = Pipeline.create(chunked(db, "cx", "pub_cx").build(), store, dest)) {
      p.start();
      awaitAllReady(store, 1);
      db.execute("UPDATE cx SET v = -v WHERE v % 10 = 0");
      dest.awaitRowsEqual(name("cx"), sourceRows(db, "cx"), WAIT);
      assertThat(dest.count(DestinationOperation.CHUNK_END, name("cx"))).isZero();
      assertThat(dest.count(DestinationOperation.FINISH, name("cx"))).isEqualTo(1);
      assertThat(
              log.count(
                  "public.cx",
                  "is copied under one snapshot, not in chunks",
                  "the first column of its key is not smallint, integer, bigint, uuid, numeric, date,"
                      + " timestamp or timestamptz"))
          .isEqualTo(1);
    }
  }
}
