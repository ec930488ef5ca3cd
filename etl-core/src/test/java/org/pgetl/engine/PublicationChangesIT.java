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
}
