package org.pgetl.engine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;
import static org.pgetl.engine.PipelineHarness.WAIT;
import static org.pgetl.engine.PipelineHarness.awaitAllReady;
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
import org.pgetl.PipelineConfig;
import org.pgetl.PipelineStatus;
import org.pgetl.error.ErrorKind;
import org.pgetl.model.TableId;
import org.pgetl.store.MemoryStore;
import org.pgetl.store.TableState;
import org.pgetl.testkit.TestDatabase;
import org.pgetl.testkit.WithPostgres;
import org.pgetl.testkit.destination.DestinationOperation;
import org.pgetl.testkit.destination.FaultyDestination;
import org.pgetl.testkit.destination.HoldHandle;
import org.pgetl.testkit.destination.RecordingDestination;

/**
 * An apply slot that disappears (dropped by hand, lost in a failover) while tables were replicated
 * through it: every change made since is gone from the server, so the pipeline fails clearly, or
 * with {@code RECREATE} copies every table again — never creates a new slot and carries on.
 */
@WithPostgres
@Timeout(value = 4, unit = TimeUnit.MINUTES)
class LostSlotIT {

  /** Terminates the slot's walsender and drops the slot, retrying until it is gone. */
  private static void dropSlotUnderThePipeline(TestDatabase db, String slot) {
    await()
        .atMost(WAIT)
        .pollInterval(Duration.ofMillis(20))
        .until(
            () -> {
              db.queryLong(
                  "SELECT count(pg_terminate_backend(active_pid)) FROM pg_replication_slots"
                      + " WHERE slot_name = ? AND active_pid IS NOT NULL",
                  slot);
              try {
                db.queryLong(
                    "SELECT count(pg_drop_replication_slot(slot_name)) FROM pg_replication_slots"
                        + " WHERE slot_name = ?",
                    slot);
              } catch (RuntimeException stillActive) {
                return false;
              }
              return db.queryLong(
                      "SELECT count(*) FROM pg_replication_slots WHERE slot_name = ?", slot)
                  == 0;
            });
  }

  /** Regression: a missing apply slot was recreated with a WARN, silently losing the changes. */
  @Test
  void aMissingApplySlotFailsClearlyInsteadOfLosingChanges(TestDatabase db) throws Exception {
    db.execute(
        "CREATE TABLE gone (id int PRIMARY KEY)",
        "INSERT INTO gone SELECT g FROM generate_series(1, 100) g",
        "CREATE PUBLICATION pub_gone FOR TABLE gone");
    MemoryStore store = new MemoryStore("gone");
    Pipeline p =
        start(config(db, "gone", "pub_gone").build(), store, RecordingDestination.create());
    awaitAllReady(store, 1);
    dropSlotUnderThePipeline(db, "pgetl_apply_gone");
    db.execute("INSERT INTO gone VALUES (1000)");
    assertThat(p.awaitTermination(WAIT)).isTrue();
    assertThat(p.status().phase()).isEqualTo(PipelineStatus.Phase.FAILED);
    assertThat(p.failure())
        .get()
        .satisfies(
            e -> {
              assertThat(e.kind()).isEqualTo(ErrorKind.REPLICATION_SLOT_NOT_FOUND);
              assertThat(e.getMessage()).contains("pgetl_apply_gone").contains("missing");
              assertThat(e.hint()).contains("RECREATE");
            });
    // nothing was created behind the user's back
    assertThat(
            db.queryLong(
                "SELECT count(*) FROM pg_replication_slots WHERE slot_name = 'pgetl_apply_gone'"))
        .isZero();
  }

  /** With RECREATE, a missing slot means copying every table again: nothing is lost. */
  @Test
  void aMissingApplySlotWithRecreateCopiesEveryTableAgain(TestDatabase db) throws Exception {
    db.execute(
        "CREATE TABLE regone (id int PRIMARY KEY, v int)",
        "INSERT INTO regone SELECT g, 0 FROM generate_series(1, 100) g",
        "CREATE PUBLICATION pub_regone FOR TABLE regone");
    MemoryStore store = new MemoryStore("regone");
    RecordingDestination dest = RecordingDestination.create();
    PipelineConfig config =
        config(db, "regone", "pub_regone")
            .invalidatedSlotBehavior(PipelineConfig.InvalidatedSlotBehavior.RECREATE)
            .build();
    try (Pipeline p = start(config, store, dest)) {
      awaitAllReady(store, 1);
      dropSlotUnderThePipeline(db, "pgetl_apply_regone");
      db.execute("INSERT INTO regone VALUES (1000, 1)", "UPDATE regone SET v = 2 WHERE id <= 10");
      await().atMost(WAIT).until(() -> dest.count(DestinationOperation.DROP_TABLE_FOR_COPY) == 2);
      awaitAllReady(store, 1);
      dest.awaitRowsEqual(name("regone"), sourceRows(db, "regone"), WAIT);
      assertThat(p.failure()).isEmpty();
    }
  }

  /**
   * Regression: the RECREATE path reset the table states while table-sync workers of the same
   * generation ran; a worker in catch-up then stored {@code SyncDone} below the new slot's start,
   * and the changes in between never arrived. The generation's workers now stop first.
   */
  @Test
  void recreatingTheSlotStopsTheTableSyncWorkersBeforeItResetsTheirStates(TestDatabase db)
      throws Exception {
    db.execute(
        "CREATE TABLE ra (id int PRIMARY KEY, v int)",
        "CREATE TABLE rb (id int PRIMARY KEY, v int)",
        "INSERT INTO ra SELECT g, 0 FROM generate_series(1, 100) g",
        "INSERT INTO rb SELECT g, 0 FROM generate_series(1, 100) g",
        "CREATE PUBLICATION pub_rr FOR TABLE ra, rb");
    TableId ra = oid(db, "ra");
    TableId rb = oid(db, "rb");
    MemoryStore store = new MemoryStore("rr");
    RecordingDestination recording = RecordingDestination.create();
    FaultyDestination faulty = FaultyDestination.wrap(recording);
    HoldHandle copyOfB =
        faulty.holdNext(DestinationOperation.WRITE_TABLE_ROWS, c -> c.table().id().equals(rb));
    PipelineConfig config =
        config(db, "rr", "pub_rr")
            .invalidatedSlotBehavior(PipelineConfig.InvalidatedSlotBehavior.RECREATE)
            .shutdownTimeout(Duration.ofSeconds(10))
            .build();
    try (Pipeline p = start(config, store, faulty)) {
      assertThat(copyOfB.awaitReached(WAIT)).isTrue();
      PipelineHarness.awaitState(store, ra, TableState.Type.READY);
      // a change after rb's snapshot: its catch-up stream has it to deliver, and is held there
      HoldHandle catchupOfB =
          faulty.holdNext(
              DestinationOperation.WRITE_EVENTS,
              c -> rb.equals(c.stream().table()) && !c.events().isEmpty());
      db.execute("UPDATE rb SET v = 1 WHERE id = 1");
      copyOfB.releaseDurable();
      assertThat(catchupOfB.awaitReached(WAIT)).isTrue();
      assertThat(p.status().tables().get(rb).state().type()).isEqualTo(TableState.Type.CATCHUP);

      dropSlotUnderThePipeline(db, "pgetl_apply_rr");
      // changes no slot holds: only a new copy brings them
      db.execute("UPDATE ra SET v = 3 WHERE id <= 5", "UPDATE rb SET v = 3 WHERE id <= 5");
      catchupOfB.releaseDurable();

      await()
          .atMost(WAIT)
          .until(() -> recording.count(DestinationOperation.DROP_TABLE_FOR_COPY) == 4);
      awaitAllReady(store, 2);
      recording.awaitRowsEqual(name("ra"), sourceRows(db, "ra"), WAIT);
      recording.awaitRowsEqual(name("rb"), sourceRows(db, "rb"), WAIT);
      assertThat(p.failure()).isEmpty();
    }
  }
}
