package org.pgetl.destination.postgres;

import static org.assertj.core.api.Assertions.assertThat;
import static org.pgetl.testing.destination.Scenario.await;
import static org.pgetl.testing.destination.Scenario.col;
import static org.pgetl.testing.destination.Scenario.full;
import static org.pgetl.testing.destination.Scenario.key;
import static org.pgetl.testing.destination.Scenario.keyedAt;
import static org.pgetl.testing.destination.Scenario.partial;

import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.pgetl.destination.AsyncResult;
import org.pgetl.destination.AsyncResult.Outcome;
import org.pgetl.destination.StreamId;
import org.pgetl.destination.TableCopyBatchId;
import org.pgetl.destination.TableCopyWrite;
import org.pgetl.destination.WriteDurability;
import org.pgetl.model.Event;
import org.pgetl.model.Lsn;
import org.pgetl.model.ReplicatedTableSchema;
import org.pgetl.model.TableRow;
import org.pgetl.testing.destination.Scenario;
import org.pgetl.testkit.TestDatabase;
import org.pgetl.testkit.WithPostgres;

/**
 * {@link PostgresMirrorDestination} writing one table's copy batches and changes at the same time,
 * as the engine does for a table copied in chunks: the batches of the chunks being read (a first
 * read, and a second read of the chunk before it whose rows are there already, so that its batches
 * fall back to the upsert) run on two copy connections, the chunks' {@code ChunkEnd}s after them,
 * and the events writer applies changes to the keys of the chunks already done meanwhile. The rows
 * the two kinds of transactions touch are disjoint, as the engine guarantees, but both kinds read
 * and write the table's bookkeeping: no write may fail with a deadlock, and the mirror ends as the
 * source.
 */
@WithPostgres
@Timeout(value = 5, unit = TimeUnit.MINUTES)
class PostgresMirrorChunkedConcurrencyIT {
  private static final int ROUNDS = 40;
  private static final int CHUNK = 120; // keys per chunk
  private static final int BATCH = 30; // rows per copy batch
  private static final int FRESH = 1_000_000; // keys inserted by changes: beyond every chunk

  private static ReplicatedTableSchema table(Lsn snapshot, long oid, String schema) {
    return keyedAt(
        snapshot,
        oid,
        schema,
        "t",
        col("id", 23, "integer", 1, 1),
        col("v", 25, "text", 2, 0),
        col("w", 25, "text", 3, 0));
  }

  /** The changes carry the schema version the copy reads with. */
  @Test
  void copyBatchesAndChangesOfTheSameSchemaVersionNeverDeadlock(TestDatabase db) {
    ReplicatedTableSchema t = table(Lsn.of(0x100), 19310, "chunked_busy");
    run(db, t, t);
  }

  /**
   * The changes carry a newer version of the same columns than the copy: what every restarted
   * pipeline sends, since the first change of a table after a restart comes with a Relation
   * message, which the engine resolves into a version of its own while the chunked copy keeps the
   * version it started with.
   */
  @Test
  void copyBatchesAndChangesOfAnotherSchemaVersionNeverDeadlock(TestDatabase db) {
    ReplicatedTableSchema copy = table(Lsn.of(0x100), 19311, "chunked_versions");
    ReplicatedTableSchema changes = table(Lsn.of(0x4000), 19311, "chunked_versions");
    run(db, copy, changes);
  }

  /**
   * A write that the server rolls back to end a deadlock is written again by the mirror: here a
   * write of changes that brings the table to a new schema version waits for the table's lock,
   * which another session holds, and that session then waits for the epoch row the write holds.
   */
  @Test
  void aWriteRolledBackToEndADeadlockIsWrittenAgain(TestDatabase db) throws SQLException {
    ReplicatedTableSchema copy = table(Lsn.of(0x100), 19312, "chunked_deadlock");
    ReplicatedTableSchema changes = table(Lsn.of(0x4000), 19312, "chunked_deadlock");
    UUID attempt = UUID.randomUUID();
    PostgresMirrorDestination d = new PostgresMirrorDestination(Jdbc.config(db), 2);
    d.startup(new Scenario.Context());
    try {
      Scenario.drop(d, copy, attempt);
      AsyncResult batch = AsyncResult.create();
      d.writeTableRows(
          copy,
          new TableCopyWrite.Batch(
              new TableCopyBatchId(attempt, 0),
              List.of(TableRow.of(1, "copied", "w1"), TableRow.of(2, "copied", "w2"))),
          batch);
      Scenario.assertDurable(batch);
      AsyncResult written = AsyncResult.create();
      try (Connection other = db.connect()) {
        other.setAutoCommit(false);
        try (Statement st = other.createStatement()) {
          st.execute("SELECT pg_advisory_xact_lock_shared(hashtext('pgetl mirror test'), 19312)");
          d.writeEvents(
              StreamId.APPLY,
              new Scenario.Tx(0x5000, 1).update(changes, full(1, "changed", "w1"), null).end(),
              WriteDurability.MAY_DEFER,
              written);
          long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
          while (db.queryLong(
                  "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND objid = 19312"
                      + " AND NOT granted")
              == 0) {
            assertThat(System.nanoTime()).as("the write waits for the lock").isLessThan(deadline);
            Thread.onSpinWait();
          }
          // waits for the write, which waits for this session: the server ends the write
          st.execute(
              "SELECT epoch FROM _pgetl.mirror_epochs WHERE pipeline_id = 'test' FOR UPDATE");
        }
        other.commit();
      }
      Scenario.assertDurable(written);
    } finally {
      d.shutdown();
    }
    assertThat(db.queryRows("SELECT id, v FROM chunked_deadlock.t ORDER BY id"))
        .containsExactly(List.of("1", "changed"), List.of("2", "copied"));
  }

  private static void run(TestDatabase db, ReplicatedTableSchema copy, ReplicatedTableSchema ev) {
    UUID attempt = UUID.randomUUID();
    long deadlocksBefore = deadlocks(db);
    PostgresMirrorDestination d = new PostgresMirrorDestination(Jdbc.config(db), 2);
    d.startup(new Scenario.Context());
    Map<Integer, List<String>> expected = new ConcurrentHashMap<>();
    List<String> failures = new ArrayList<>();
    AtomicInteger safe = new AtomicInteger(); // chunks [0, safe) get changes: none read any more
    AtomicBoolean stop = new AtomicBoolean();
    Thread changes =
        new Thread(() -> changes(d, ev, expected, safe, stop, failures), "test-changes");
    try {
      Scenario.drop(d, copy, attempt);
      changes.start();
      long batches = 0;
      long rows = 0;
      for (int r = 0; r <= ROUNDS; r++) {
        // chunk r read once, chunk r-1 read a second time (its rows are there: upserted)
        List<Supplier<TableCopyWrite>> writes = new ArrayList<>();
        List<TableCopyWrite.ChunkEnd> ends = new ArrayList<>();
        if (r < ROUNDS) {
          ends.add(read(copy, attempt, r, 1, writes, expected));
        }
        if (r > 0) {
          TableCopyWrite.ChunkEnd again = read(copy, attempt, r - 1, 2, writes, expected);
          ends.add(again);
          batches += again.batches();
          rows += again.rows();
        }
        writeAll(d, copy, writes, failures);
        List<Supplier<TableCopyWrite>> endWrites = new ArrayList<>();
        ends.forEach(e -> endWrites.add(() -> e));
        writeAll(d, copy, endWrites, failures);
        safe.set(Math.max(0, r)); // chunk r-1 is done for good
      }
      safe.set(ROUNDS);
      stop.set(true);
      changes.join(TimeUnit.MINUTES.toMillis(1));
      assertThat(changes.isAlive()).as("the changes thread ended").isFalse();
      Scenario.finish(d, copy, attempt, batches, rows);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new AssertionError(e);
    } finally {
      stop.set(true);
      d.shutdown();
    }
    synchronized (failures) {
      assertThat(failures).as("writes that failed (then were sent again)").isEmpty();
    }
    // the mirror writes a transaction the server ended again itself: none may have been ended
    assertThat(deadlocks(db) - deadlocksBefore).as("deadlocks in the target").isZero();
    Map<Integer, List<String>> mirror = new TreeMap<>();
    for (List<String> row :
        db.queryRows("SELECT id, v, w FROM " + copy.name().quoted() + " ORDER BY id")) {
      mirror.put(Integer.valueOf(row.get(0)), List.of(row.get(1), row.get(2)));
    }
    assertThat(mirror).isEqualTo(new TreeMap<>(expected));
  }

  /**
   * The deadlocks the server detected in the database so far, once the mirror's sessions, which
   * report their counts when they end, are gone.
   */
  private static long deadlocks(TestDatabase db) {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
    while (db.queryLong(
            "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database()"
                + " AND application_name LIKE 'pgetl-mirror-%'")
        > 0) {
      assertThat(System.nanoTime()).as("the mirror's sessions end").isLessThan(deadline);
      Thread.onSpinWait();
    }
    return db.queryLong(
        "SELECT deadlocks FROM pg_stat_database WHERE datname = current_database()");
  }

  /** Adds the batches of one read of a chunk to {@code writes} and returns its ChunkEnd. */
  private static TableCopyWrite.ChunkEnd read(
      ReplicatedTableSchema t,
      UUID attempt,
      int chunk,
      int read,
      List<Supplier<TableCopyWrite>> writes,
      Map<Integer, List<String>> expected) {
    long first = chunk * 100L + read * 10L;
    int batches = 0;
    for (int from = chunk * CHUNK; from < (chunk + 1) * CHUNK; from += BATCH) {
      List<TableRow> rows = new ArrayList<>();
      for (int id = from; id < from + BATCH; id++) {
        String v = "read" + read + "-" + id;
        String w = "w" + id;
        rows.add(TableRow.of(id, v, w));
        expected.put(id, List.of(v, w));
      }
      TableCopyBatchId id = new TableCopyBatchId(attempt, first + batches++);
      writes.add(() -> new TableCopyWrite.Batch(id, rows));
    }
    return new TableCopyWrite.ChunkEnd(attempt, chunk, first, batches, CHUNK);
  }

  /**
   * Sends the writes at once (the destination runs them on its copy connections), then sends a
   * failed one again, as the engine does, until it is durable.
   */
  private static void writeAll(
      PostgresMirrorDestination d,
      ReplicatedTableSchema t,
      List<Supplier<TableCopyWrite>> writes,
      List<String> failures) {
    List<AsyncResult> results = new ArrayList<>();
    for (Supplier<TableCopyWrite> w : writes) {
      AsyncResult r = AsyncResult.create();
      d.writeTableRows(t, w.get(), r);
      results.add(r);
    }
    for (int i = 0; i < writes.size(); i++) {
      Outcome o = await(results.get(i));
      for (int again = 0; o.kind() == Outcome.Kind.FAILED && again < 5; again++) {
        synchronized (failures) {
          failures.add(writes.get(i).get() + ": " + o.error());
        }
        AsyncResult r = AsyncResult.create();
        d.writeTableRows(t, writes.get(i).get(), r);
        o = await(r);
      }
      assertThat(o.kind()).as("answer %s", o).isEqualTo(Outcome.Kind.DURABLE);
    }
  }

  /**
   * Writes transactions of changes to the keys of the chunks done (and inserts of new keys) until
   * stopped: full and partial (unchanged TOAST) updates, deletes, key changes, inserts, and now and
   * then a transaction of inserts only, large enough to be copied into the table.
   */
  private static void changes(
      PostgresMirrorDestination d,
      ReplicatedTableSchema t,
      Map<Integer, List<String>> expected,
      AtomicInteger safe,
      AtomicBoolean stop,
      List<String> failures) {
    Random random = new Random(42);
    int fresh = FRESH;
    for (long n = 1; !stop.get(); n++) {
      int chunks = safe.get();
      if (chunks == 0) {
        n--;
        Thread.onSpinWait();
        continue;
      }
      Scenario.Tx tx = new Scenario.Tx(0x10_0000 + n * 0x1000, n);
      if (n % 10 == 0) {
        for (int i = 0; i < 300; i++) {
          int id = fresh++;
          tx.insert(t, TableRow.of(id, "bulk-" + n, "wb" + id));
          expected.put(id, List.of("bulk-" + n, "wb" + id));
        }
      } else {
        for (int i = 0; i < 30; i++) {
          int id = random.nextInt(chunks * CHUNK);
          List<String> now = expected.get(id);
          String v = "tx" + n + "-" + i;
          if (now == null) {
            tx.insert(t, TableRow.of(id, v, "wi" + id));
            expected.put(id, List.of(v, "wi" + id));
            continue;
          }
          switch (random.nextInt(4)) {
            case 0 -> {
              tx.update(t, full(id, v, "wu" + id), null);
              expected.put(id, List.of(v, "wu" + id));
            }
            case 1 -> { // w unchanged (TOAST): not sent
              tx.update(t, partial(3, new int[] {2}, id, v), null);
              expected.put(id, List.of(v, now.get(1)));
            }
            case 2 -> {
              tx.delete(t, key(id));
              expected.remove(id);
            }
            default -> {
              int to = fresh++;
              tx.update(t, full(to, v, now.get(1)), key(id));
              expected.remove(id);
              expected.put(to, List.of(v, now.get(1)));
            }
          }
        }
      }
      List<Event> events = tx.end();
      Outcome o = send(d, events);
      for (int again = 0; o.kind() == Outcome.Kind.FAILED && again < 5; again++) {
        synchronized (failures) {
          failures.add("changes of transaction " + n + ": " + o.error());
        }
        o = send(d, events);
      }
      if (o.kind() != Outcome.Kind.DURABLE) {
        synchronized (failures) {
          failures.add("changes of transaction " + n + " never durable: " + o);
        }
        return;
      }
    }
  }

  private static Outcome send(PostgresMirrorDestination d, List<Event> events) {
    AsyncResult r = AsyncResult.create();
    d.writeEvents(StreamId.APPLY, events, WriteDurability.MAY_DEFER, r);
    return await(r);
  }
}
