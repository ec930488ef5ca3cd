package org.pgetl.engine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;
import static org.pgetl.engine.PipelineHarness.WAIT;
import static org.pgetl.engine.PipelineHarness.config;
import static org.pgetl.engine.PipelineHarness.name;
import static org.pgetl.engine.PipelineHarness.oid;
import static org.pgetl.engine.PipelineHarness.sourceRows;
import static org.pgetl.engine.PipelineHarness.start;

import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.pgetl.Pipeline;
import org.pgetl.model.TableId;
import org.pgetl.store.MemoryStore;
import org.pgetl.store.TableState;
import org.pgetl.testkit.TestDatabase;
import org.pgetl.testkit.WithPostgres;
import org.pgetl.testkit.destination.DestinationOperation;
import org.pgetl.testkit.destination.FaultyDestination;
import org.pgetl.testkit.destination.HoldHandle;
import org.pgetl.testkit.destination.RecordingDestination;

/** Tables that join or leave the publication while the pipeline runs. */
@WithPostgres
@Timeout(value = 3, unit = TimeUnit.MINUTES)
class PublicationChangesIT {

  /**
   * Regression: a table removed from the publication before its copy was left in {@code Init} by
   * its worker, and every 200 ms tick spawned another worker for it (two connections and an INFO
   * line each time).
   */
  @Test
  void aTableRemovedBeforeItsCopyIsCleanedUpOnceAndNotRespawned(TestDatabase db) throws Exception {
    db.execute(
        "CREATE TABLE stays (id int PRIMARY KEY)",
        "CREATE TABLE leaves (id int PRIMARY KEY)",
        "INSERT INTO stays SELECT g FROM generate_series(1, 100) g",
        "INSERT INTO leaves SELECT g FROM generate_series(1, 100) g",
        "CREATE PUBLICATION pub_leaves FOR TABLE stays, leaves");
    TableId stays = oid(db, "stays");
    TableId leaves = oid(db, "leaves");
    MemoryStore store = new MemoryStore("leaves");
    RecordingDestination recording = RecordingDestination.create();
    FaultyDestination faulty = FaultyDestination.wrap(recording);
    // one table-sync worker: "leaves" waits in Init while "stays" is held in its copy
    HoldHandle held =
        faulty.holdNext(DestinationOperation.WRITE_TABLE_ROWS, c -> c.table().id().equals(stays));
    try (LogCapture log = new LogCapture();
        Pipeline p =
            start(
                config(db, "leaves", "pub_leaves").maxTableSyncWorkers(1).build(), store, faulty)) {
      assertThat(held.awaitReached(WAIT)).isTrue();
      assertThat(store.tableState(leaves))
          .get()
          .extracting(TableState::type)
          .isEqualTo(TableState.Type.INIT);
      db.execute("ALTER PUBLICATION pub_leaves DROP TABLE leaves");
      held.releaseDurable();
      PipelineHarness.awaitState(store, stays, TableState.Type.READY);
      await().atMost(WAIT).until(() -> store.tableState(leaves).isEmpty());
      await().atMost(WAIT).until(() -> !p.status().tables().containsKey(leaves));
      // a few seconds later no worker was started for it again: it was cleaned up once
      await().pollDelay(Duration.ofSeconds(3)).atMost(WAIT).until(() -> true);
      assertThat(log.count("pipeline leaves: table " + leaves + " left the publication"))
          .isEqualTo(1);
      assertThat(store.tableState(leaves)).isEmpty();
      assertThat(recording.count(DestinationOperation.DROP_TABLE_FOR_COPY, name("leaves")))
          .isZero();
      assertThat(
              db.queryLong(
                  "SELECT count(*) FROM pg_replication_slots WHERE slot_name = ?",
                  "pgetl_sync_leaves_" + leaves.oid()))
          .isZero();
      db.execute("INSERT INTO stays VALUES (1000)");
      recording.awaitRowsEqual(name("stays"), sourceRows(db, "stays"), WAIT);
    }
  }

  /**
   * A table added to the publication while the pipeline streams under load is copied live, without
   * a restart, and every change made to it before and after its copy arrives.
   */
  @Test
  void aTableAddedWhileStreamingUnderLoadIsCopiedLiveWithEveryChange(TestDatabase db)
      throws Exception {
    db.execute(
        "CREATE TABLE first (id int PRIMARY KEY, v int)",
        "CREATE TABLE joins (id int PRIMARY KEY, v int)",
        "INSERT INTO first SELECT g, 0 FROM generate_series(1, 100) g",
        "INSERT INTO joins SELECT g, 0 FROM generate_series(1, 2000) g",
        "CREATE PUBLICATION pub_joins FOR TABLE first");
    MemoryStore store = new MemoryStore("joins");
    RecordingDestination dest = RecordingDestination.create();
    AtomicBoolean stop = new AtomicBoolean();
    AtomicInteger n = new AtomicInteger();
    Thread load =
        new Thread(
            () -> {
              while (!stop.get()) {
                int i = n.incrementAndGet();
                db.execute(
                    "UPDATE first SET v = " + i + " WHERE id = " + (1 + i % 100),
                    "UPDATE joins SET v = " + i + " WHERE id = " + (1 + i % 2000),
                    "INSERT INTO joins VALUES (" + (10000 + i) + ", " + i + ")");
              }
            });
    try (Pipeline p =
        start(
            config(db, "joins", "pub_joins")
                .publicationRefreshInterval(Duration.ofMillis(500))
                .build(),
            store,
            dest)) {
      PipelineHarness.awaitAllReady(store, 1);
      load.start();
      await().atMost(WAIT).until(() -> n.get() > 20);
      db.execute("ALTER PUBLICATION pub_joins ADD TABLE joins");
      TableId joins = oid(db, "joins");
      PipelineHarness.awaitState(store, joins, TableState.Type.READY);
      await().atMost(WAIT).until(() -> n.get() > 100);
      stop.set(true);
      load.join();
      db.execute("INSERT INTO joins VALUES (-1, -1)", "INSERT INTO first VALUES (-1, -1)");
      dest.awaitRowsEqual(name("joins"), sourceRows(db, "joins"), WAIT);
      dest.awaitRowsEqual(name("first"), sourceRows(db, "first"), WAIT);
      assertThat(dest.count(DestinationOperation.DROP_TABLE_FOR_COPY, name("joins"))).isEqualTo(1);
      assertThat(dest.violations()).isEmpty();
      assertThat(p.failure()).isEmpty();
    } finally {
      stop.set(true);
      load.join();
    }
  }

  /** A table removed from the publication while it streams loses its state within seconds. */
  @Test
  void aTableRemovedWhileStreamingIsCleanedUpWithinSeconds(TestDatabase db) throws Exception {
    db.execute(
        "CREATE TABLE keep (id int PRIMARY KEY)",
        "CREATE TABLE drop_me (id int PRIMARY KEY)",
        "CREATE PUBLICATION pub_drop_me FOR TABLE keep, drop_me");
    TableId dropMe = oid(db, "drop_me");
    MemoryStore store = new MemoryStore("drop_me");
    RecordingDestination dest = RecordingDestination.create();
    try (Pipeline p =
        start(
            config(db, "drop_me", "pub_drop_me")
                .publicationRefreshInterval(Duration.ofMillis(500))
                .build(),
            store,
            dest)) {
      PipelineHarness.awaitAllReady(store, 2);
      db.execute("ALTER PUBLICATION pub_drop_me DROP TABLE drop_me");
      await().atMost(Duration.ofSeconds(10)).until(() -> store.tableState(dropMe).isEmpty());
      assertThat(p.status().tables()).doesNotContainKey(dropMe);
      db.execute("INSERT INTO drop_me VALUES (1)", "INSERT INTO keep VALUES (1)");
      dest.awaitRowsEqual(name("keep"), sourceRows(db, "keep"), WAIT);
      assertThat(dest.rowCount(name("drop_me"))).isZero();
      assertThat(
              db.queryLong(
                  "SELECT count(*) FROM pg_replication_slots WHERE slot_name LIKE ?",
                  "pgetl_sync_drop_me_%"))
          .isZero();
    }
  }
}
