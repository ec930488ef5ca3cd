package org.pgetl.engine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;
import static org.pgetl.engine.PipelineHarness.WAIT;
import static org.pgetl.engine.PipelineHarness.awaitAllReady;
import static org.pgetl.engine.PipelineHarness.awaitState;
import static org.pgetl.engine.PipelineHarness.config;
import static org.pgetl.engine.PipelineHarness.confirmedFlush;
import static org.pgetl.engine.PipelineHarness.currentWal;
import static org.pgetl.engine.PipelineHarness.name;
import static org.pgetl.engine.PipelineHarness.oid;
import static org.pgetl.engine.PipelineHarness.sourceRows;
import static org.pgetl.engine.PipelineHarness.start;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.pgetl.Pipeline;
import org.pgetl.destination.WriteDurability;
import org.pgetl.error.ErrorKind;
import org.pgetl.error.RetryDirective;
import org.pgetl.model.Event;
import org.pgetl.model.Lsn;
import org.pgetl.model.OldRow;
import org.pgetl.model.TableId;
import org.pgetl.model.UpdatedRow;
import org.pgetl.store.PipelineStore;
import org.pgetl.store.TableState;
import org.pgetl.testkit.TestDatabase;
import org.pgetl.testkit.WithPostgres;
import org.pgetl.testkit.destination.DestinationOperation;
import org.pgetl.testkit.destination.FaultyDestination;
import org.pgetl.testkit.destination.HoldHandle;
import org.pgetl.testkit.destination.RecordingDestination;

/**
 * The engine's integration tests, run against a real PostgreSQL with a {@link RecordingDestination}
 * that materialises tables by key, so each test compares the destination's contents with the
 * source. Written once, run against every store ({@code MemoryStorePipelineIT}, {@code
 * PostgresStorePipelineIT}).
 */
@WithPostgres
@Timeout(value = 4, unit = TimeUnit.MINUTES)
public abstract class PipelineSuite {

  /**
   * Returns a fresh store for a pipeline.
   *
   * @param db the source database
   * @param pipelineId the pipeline id
   * @return the store
   */
  protected abstract PipelineStore newStore(TestDatabase db, String pipelineId);

  /**
   * Returns the store a restarted process would use: the same instance for a memory store, a new
   * instance over the same database for a persistent one.
   *
   * @param old the store of the previous run
   * @param db the source database
   * @return the store for the next run
   */
  protected PipelineStore reopen(PipelineStore old, TestDatabase db) {
    return old;
  }

  private static void exec(TestDatabase db, String... sql) {
    db.execute(sql);
  }

  // ---- copy

  @Test
  void changesDuringTheCopyAllArrive(TestDatabase db) throws Exception {
    exec(
        db,
        "CREATE TABLE busy (id int PRIMARY KEY, v int, note text)",
        "INSERT INTO busy SELECT g, 0, 'row ' || g FROM generate_series(1, 50000) g",
        "CREATE PUBLICATION pub_busy FOR TABLE busy");
    PipelineStore store = newStore(db, "busy");
    RecordingDestination dest = RecordingDestination.create();
    AtomicBoolean stop = new AtomicBoolean();
    AtomicInteger ops = new AtomicInteger();
    Thread writer =
        new Thread(
            () -> {
              int i = 0;
              while (!stop.get()) {
                i++;
                int id = 1 + (i * 7919) % 50000;
                db.execute(
                    "INSERT INTO busy VALUES (" + (100000 + i) + ", " + i + ", 'new')",
                    "UPDATE busy SET v = v + 1, note = 'upd " + i + "' WHERE id = " + id,
                    "DELETE FROM busy WHERE id = " + (1 + (i * 104729) % 50000));
                ops.incrementAndGet();
              }
            });
    try (Pipeline p = start(config(db, "busy", "pub_busy").build(), store, dest)) {
      writer.start();
      awaitAllReady(store, 1);
      await().atMost(WAIT).until(() -> ops.get() > 50);
      stop.set(true);
      writer.join();
      exec(db, "INSERT INTO busy VALUES (-1, -1, 'marker')");
      dest.awaitRowsEqual(name("busy"), sourceRows(db, "busy"), WAIT);
      assertThat(dest.violations()).isEmpty();
    } finally {
      stop.set(true);
      writer.join();
    }
  }

  @Test
  void aRestartDuringTheCopyCopiesAgainFromScratch(TestDatabase db) throws Exception {
    exec(
        db,
        "CREATE TABLE midcopy (id int PRIMARY KEY, v text)",
        "INSERT INTO midcopy SELECT g, 'v' || g FROM generate_series(1, 20000) g",
        "CREATE PUBLICATION pub_midcopy FOR TABLE midcopy");
    PipelineStore store = newStore(db, "midcopy");
    RecordingDestination recording = RecordingDestination.create();
    FaultyDestination faulty = FaultyDestination.wrap(recording);
    HoldHandle held = faulty.holdNext(DestinationOperation.WRITE_TABLE_ROWS);
    TableId table = oid(db, "midcopy");
    Pipeline p =
        start(config(db, "midcopy", "pub_midcopy").batchMaxBytes(64 * 1024).build(), store, faulty);
    assertThat(held.awaitReached(WAIT)).isTrue();
    p.close();
    assertThat(store.tableState(table))
        .get()
        .extracting(TableState::type)
        .isEqualTo(TableState.Type.DATA_SYNC);
    held.releaseDurable();
    PipelineStore reopened = reopen(store, db);
    RecordingDestination second = RecordingDestination.create();
    try (Pipeline p2 = start(config(db, "midcopy", "pub_midcopy").build(), reopened, second)) {
      awaitAllReady(reopened, 1);
      assertThat(second.count(DestinationOperation.DROP_TABLE_FOR_COPY)).isEqualTo(1);
      assertThat(second.rows(name("midcopy"))).isEqualTo(sourceRows(db, "midcopy"));
    }
    assertThat(slotsOf(db, "midcopy")).containsExactly("pgetl_apply_midcopy");
  }

  @Test
  void aRestartAfterReadyNeitherCopiesAgainNorLosesOrReordersAChange(TestDatabase db) {
    exec(
        db,
        "CREATE TABLE steady (id int PRIMARY KEY, v int)",
        "INSERT INTO steady SELECT g, 0 FROM generate_series(1, 1000) g",
        "CREATE PUBLICATION pub_steady FOR TABLE steady");
    PipelineStore store = newStore(db, "steady");
    RecordingDestination dest = RecordingDestination.create();
    try (Pipeline p = start(config(db, "steady", "pub_steady").build(), store, dest)) {
      awaitAllReady(store, 1);
      exec(db, "UPDATE steady SET v = 1 WHERE id <= 10");
      dest.awaitRowsEqual(name("steady"), sourceRows(db, "steady"), WAIT);
    }
    // changes while the pipeline is down
    for (int i = 2; i <= 20; i++) {
      exec(
          db,
          "UPDATE steady SET v = " + i + " WHERE id = 5",
          "INSERT INTO steady VALUES (" + (1000 + i) + ", " + i + ")");
    }
    PipelineStore reopened = reopen(store, db);
    try (Pipeline p = start(config(db, "steady", "pub_steady").build(), reopened, dest)) {
      exec(db, "INSERT INTO steady VALUES (-1, -1)");
      dest.awaitRowsEqual(name("steady"), sourceRows(db, "steady"), WAIT);
      assertThat(dest.count(DestinationOperation.DROP_TABLE_FOR_COPY)).isEqualTo(1);
      assertThat(reopened.tableState(oid(db, "steady")))
          .get()
          .extracting(TableState::type)
          .isEqualTo(TableState.Type.READY);
    }
    // per table, events come in sequence-key order (replays after the durable point aside)
    List<Event> events = dest.events(name("steady"));
    List<Event> data = new ArrayList<>();
    for (Event e : events) {
      if (e.kind() == Event.Kind.UPDATE || e.kind() == Event.Kind.INSERT) {
        data.add(e);
      }
    }
    for (int i = 1; i < data.size(); i++) {
      assertThat(data.get(i).sequenceKey()).isGreaterThanOrEqualTo(data.get(i - 1).sequenceKey());
    }
    assertThat(dest.violations()).isEmpty();
  }

  // ---- acknowledgements

  @Test
  void aHeldBarrierKeepsTheTableInDataSyncAndDurableLetsItReachReady(TestDatabase db) {
    exec(
        db,
        "CREATE TABLE barrier (id int PRIMARY KEY, v text)",
        "INSERT INTO barrier SELECT g, 'v' || g FROM generate_series(1, 3000) g",
        "CREATE PUBLICATION pub_barrier FOR TABLE barrier");
    PipelineStore store = newStore(db, "barrier");
    RecordingDestination recording =
        RecordingDestination.builder().answering(RecordingDestination.Answering.ACCEPTED).build();
    FaultyDestination faulty = FaultyDestination.wrap(recording);
    HoldHandle finish = faulty.holdNext(DestinationOperation.FINISH);
    TableId table = oid(db, "barrier");
    try (Pipeline p =
        start(
            config(db, "barrier", "pub_barrier").batchMaxBytes(32 * 1024).build(), store, faulty)) {
      assertThat(finish.awaitReached(WAIT)).isTrue();
      // every batch was accepted, and later ones too: still copying until the barrier is durable
      assertThat(store.tableState(table))
          .get()
          .extracting(TableState::type)
          .isEqualTo(TableState.Type.DATA_SYNC);
      assertThat(recording.count(DestinationOperation.WRITE_TABLE_ROWS)).isGreaterThan(1);
      finish.releaseDurable();
      awaitState(store, table, TableState.Type.READY);
      recording.flushAccepted();
      assertThat(recording.rows(name("barrier"))).isEqualTo(sourceRows(db, "barrier"));
    }
  }

  @Test
  void requireDurableAnsweredAcceptedIsAnError(TestDatabase db) {
    exec(
        db,
        "CREATE TABLE strict (id int PRIMARY KEY, v text)",
        "INSERT INTO strict VALUES (1, 'a')",
        "CREATE PUBLICATION pub_strict FOR TABLE strict");
    PipelineStore store = newStore(db, "strict");
    RecordingDestination recording = RecordingDestination.create();
    FaultyDestination faulty = FaultyDestination.wrap(recording);
    faulty
        .on(DestinationOperation.WRITE_EVENTS)
        .matching(c -> c.durability() == WriteDurability.REQUIRE_DURABLE)
        .answerAccepted();
    // the copy's answer comes late while changes keep coming, so the apply stream is past the
    // copy's snapshot when the table hands off: the table has a catch-up to stream, and its last
    // catch-up write requires durability (without the delay, an apply stream that lags behind the
    // snapshot makes the catch-up empty and the table ready at once)
    faulty.on(DestinationOperation.WRITE_TABLE_ROWS).times(1).delay(Duration.ofSeconds(2));
    TableId table = oid(db, "strict");
    AtomicBoolean stop = new AtomicBoolean();
    Thread writer =
        new Thread(
            () -> {
              int i = 1;
              while (!stop.get()) {
                db.execute("INSERT INTO strict VALUES (" + (++i) + ", 'x')");
              }
            });
    writer.start();
    try (Pipeline p =
        start(config(db, "strict", "pub_strict").retryMaxAttempts(0).build(), store, faulty)) {
      awaitState(store, table, TableState.Type.ERRORED);
      TableState.Errored err = (TableState.Errored) store.tableState(table).orElseThrow();
      assertThat(err.kind()).isEqualTo(ErrorKind.DESTINATION_CONTRACT_VIOLATION);
    } finally {
      stop.set(true);
      joinQuietly(writer);
    }
  }

  @Test
  void aTimedFailureIsRetriedAndRecovers(TestDatabase db) {
    exec(
        db,
        "CREATE TABLE flaky (id int PRIMARY KEY, v text)",
        "INSERT INTO flaky SELECT g, 'v' || g FROM generate_series(1, 2000) g",
        "CREATE PUBLICATION pub_flaky FOR TABLE flaky");
    PipelineStore store = newStore(db, "flaky");
    RecordingDestination recording = RecordingDestination.create();
    FaultyDestination faulty = FaultyDestination.wrap(recording);
    faulty.on(DestinationOperation.WRITE_TABLE_ROWS).times(1).fail(ErrorKind.DESTINATION_TIMEOUT);
    TableId table = oid(db, "flaky");
    try (Pipeline p = start(config(db, "flaky", "pub_flaky").build(), store, faulty)) {
      awaitState(store, table, TableState.Type.READY);
      // the failed attempt was rolled back for its retry: two copies, the error in the status
      assertThat(store.tableStateHistory(table))
          .filteredOn(s -> s.type() == TableState.Type.DATA_SYNC)
          .hasSize(2);
      assertThat(p.status().errors()).anyMatch(e -> e.startsWith("DESTINATION_TIMEOUT"));
      assertThat(recording.count(DestinationOperation.DROP_TABLE_FOR_COPY)).isEqualTo(2);
      assertThat(recording.rows(name("flaky"))).isEqualTo(sourceRows(db, "flaky"));
    }
  }

  @Test
  void aManualFailureLeavesOnlyThatTableErrored(TestDatabase db) {
    exec(
        db,
        "CREATE TABLE broken (id int PRIMARY KEY, v text)",
        "INSERT INTO broken VALUES (1, 'a')",
        "CREATE TABLE healthy (id int PRIMARY KEY, v text)",
        "INSERT INTO healthy VALUES (1, 'a')",
        "CREATE PUBLICATION pub_manual FOR TABLE broken, healthy");
    PipelineStore store = newStore(db, "manual");
    RecordingDestination recording = RecordingDestination.create();
    FaultyDestination faulty = FaultyDestination.wrap(recording);
    faulty
        .on(DestinationOperation.WRITE_TABLE_ROWS)
        .always()
        .matching(c -> c.touches(name("broken")))
        .fail(ErrorKind.DESTINATION_QUERY_FAILED);
    TableId broken = oid(db, "broken");
    TableId healthy = oid(db, "healthy");
    try (Pipeline p = start(config(db, "manual", "pub_manual").build(), store, faulty)) {
      awaitState(store, broken, TableState.Type.ERRORED);
      awaitState(store, healthy, TableState.Type.READY);
      TableState.Errored err = (TableState.Errored) store.tableState(broken).orElseThrow();
      assertThat(err.retry()).isEqualTo(RetryDirective.MANUAL);
      assertThat(err.kind()).isEqualTo(ErrorKind.DESTINATION_QUERY_FAILED);
      exec(db, "INSERT INTO healthy VALUES (2, 'b')", "INSERT INTO broken VALUES (2, 'b')");
      recording.awaitRowsEqual(name("healthy"), sourceRows(db, "healthy"), WAIT);
      assertThat(p.failure()).isEmpty();
    }
  }

  // ---- shutdown

  @Test
  void aShutdownAnswerOnACopyBatchStopsCleanlyWithoutTableErrors(TestDatabase db) {
    shutdownAnswerConverges(db, "sd_batch", DestinationOperation.WRITE_TABLE_ROWS);
  }

  @Test
  void aShutdownAnswerOnTheBarrierStopsCleanlyWithoutTableErrors(TestDatabase db) {
    shutdownAnswerConverges(db, "sd_finish", DestinationOperation.FINISH);
  }

  @Test
  void aShutdownAnswerOnTheDropStopsCleanlyWithoutTableErrors(TestDatabase db) {
    shutdownAnswerConverges(db, "sd_drop", DestinationOperation.DROP_TABLE_FOR_COPY);
  }

  private void shutdownAnswerConverges(TestDatabase db, String t, DestinationOperation op) {
    exec(
        db,
        "CREATE TABLE " + t + " (id int PRIMARY KEY, v text)",
        "INSERT INTO " + t + " SELECT g, 'v' || g FROM generate_series(1, 2000) g",
        "CREATE PUBLICATION pub_" + t + " FOR TABLE " + t);
    PipelineStore store = newStore(db, t);
    RecordingDestination recording =
        RecordingDestination.builder().answering(RecordingDestination.Answering.ACCEPTED).build();
    FaultyDestination faulty = FaultyDestination.wrap(recording);
    faulty.on(op).times(1).answerShutdown();
    Pipeline p = start(config(db, t, "pub_" + t).build(), store, faulty);
    awaitTermination(p);
    assertThat(p.failure()).isEmpty();
    assertThat(store.tableStates().values()).noneMatch(s -> s.type() == TableState.Type.ERRORED);
    PipelineStore reopened = reopen(store, db);
    RecordingDestination second = RecordingDestination.create();
    try (Pipeline p2 = start(config(db, t, "pub_" + t).build(), reopened, second)) {
      awaitAllReady(reopened, 1);
      second.awaitRowsEqual(name(t), sourceRows(db, t), WAIT);
    }
  }

  @Test
  void anUnansweredResultAtShutdownIsNotATableError(TestDatabase db) {
    exec(
        db,
        "CREATE TABLE silent (id int PRIMARY KEY, v text)",
        "INSERT INTO silent SELECT g, 'v' || g FROM generate_series(1, 2000) g",
        "CREATE PUBLICATION pub_silent FOR TABLE silent");
    PipelineStore store = newStore(db, "silent");
    RecordingDestination recording = RecordingDestination.create();
    FaultyDestination faulty = FaultyDestination.wrap(recording);
    var fault = faulty.on(DestinationOperation.WRITE_TABLE_ROWS).times(1).neverAnswer();
    Pipeline p = start(config(db, "silent", "pub_silent").build(), store, faulty);
    fault.awaitHits(1, WAIT);
    long started = System.nanoTime();
    p.close();
    assertThat(Duration.ofNanos(System.nanoTime() - started)).isLessThan(Duration.ofSeconds(30));
    assertThat(store.tableStates().values()).noneMatch(s -> s.type() == TableState.Type.ERRORED);
    PipelineStore reopened = reopen(store, db);
    RecordingDestination second = RecordingDestination.create();
    try (Pipeline p2 = start(config(db, "silent", "pub_silent").build(), reopened, second)) {
      awaitAllReady(reopened, 1);
      second.awaitRowsEqual(name("silent"), sourceRows(db, "silent"), WAIT);
    }
  }

  @Test
  void anAbandonedStreamingWriteDropsTheBatchBehindItAndTheNextStartDeliversIt(TestDatabase db) {
    exec(
        db,
        "CREATE TABLE abandon (id int PRIMARY KEY, v text)",
        "INSERT INTO abandon VALUES (1, 'a')",
        "CREATE PUBLICATION pub_abandon FOR TABLE abandon");
    PipelineStore store = newStore(db, "abandon");
    RecordingDestination recording = RecordingDestination.create();
    FaultyDestination faulty = FaultyDestination.wrap(recording);
    Pipeline p =
        start(config(db, "abandon", "pub_abandon").maxInFlightWrites(1).build(), store, faulty);
    awaitAllReady(store, 1);
    HoldHandle held =
        faulty.holdNext(DestinationOperation.WRITE_EVENTS, c -> c.hasInsertInto(name("abandon")));
    exec(db, "INSERT INTO abandon VALUES (2, 'b')");
    assertThat(held.awaitReached(WAIT)).isTrue();
    // a second transaction queues behind the held write
    exec(db, "INSERT INTO abandon VALUES (3, 'c')");
    Lsn afterSecond = currentWal(db);
    held.releaseShutdown();
    awaitTermination(p);
    assertThat(p.failure()).isEmpty();
    // the held write reached the destination before it abandoned it; the one behind it never did
    assertThat(recording.rows(name("abandon"))).extracting(r -> r.get(0)).containsExactly(1, 2);
    // the final status update confirmed only the durable point, not the dropped batch
    assertThat(confirmedFlush(db, "pgetl_apply_abandon")).isLessThan(afterSecond);
    PipelineStore reopened = reopen(store, db);
    try (Pipeline p2 = start(config(db, "abandon", "pub_abandon").build(), reopened, recording)) {
      recording.awaitRowsEqual(name("abandon"), sourceRows(db, "abandon"), WAIT);
    }
  }

  // ---- feedback and connection loss

  @Test
  void anIdlePipelinesConfirmedFlushFollowsTheServersWalEnd(TestDatabase db) {
    exec(
        db,
        "CREATE TABLE quiet (id int PRIMARY KEY)",
        "CREATE TABLE unpublished (id int)",
        "CREATE PUBLICATION pub_quiet FOR TABLE quiet");
    PipelineStore store = newStore(db, "quiet");
    RecordingDestination dest = RecordingDestination.create();
    try (Pipeline p = start(config(db, "quiet", "pub_quiet").build(), store, dest)) {
      awaitAllReady(store, 1);
      for (int i = 0; i < 5; i++) {
        exec(db, "INSERT INTO unpublished SELECT generate_series(1, 1000)");
      }
      Lsn end = currentWal(db);
      await()
          .atMost(WAIT)
          .untilAsserted(
              () ->
                  assertThat(confirmedFlush(db, "pgetl_apply_quiet")).isGreaterThanOrEqualTo(end));
    }
  }

  @Test
  void aTerminatedWalsenderReconnectsAndLosesNothing(TestDatabase db) throws Exception {
    exec(
        db,
        "CREATE TABLE resilient (id int PRIMARY KEY, v int)",
        "CREATE PUBLICATION pub_resilient FOR TABLE resilient");
    PipelineStore store = newStore(db, "resilient");
    RecordingDestination dest = RecordingDestination.create();
    AtomicBoolean stop = new AtomicBoolean();
    AtomicInteger next = new AtomicInteger();
    Thread writer =
        new Thread(
            () -> {
              while (!stop.get()) {
                int i = next.incrementAndGet();
                db.execute("INSERT INTO resilient VALUES (" + i + ", " + i + ")");
              }
            });
    try (Pipeline p = start(config(db, "resilient", "pub_resilient").build(), store, dest)) {
      awaitAllReady(store, 1);
      writer.start();
      await().atMost(WAIT).until(() -> dest.rowCount(name("resilient")) > 100);
      long killed =
          db.queryLong(
              "SELECT count(pg_terminate_backend(active_pid)) FROM pg_replication_slots"
                  + " WHERE slot_name = 'pgetl_apply_resilient' AND active_pid IS NOT NULL");
      assertThat(killed).isEqualTo(1);
      int at = next.get();
      await().atMost(WAIT).until(() -> next.get() > at + 100);
      stop.set(true);
      writer.join();
      dest.awaitRowsEqual(name("resilient"), sourceRows(db, "resilient"), WAIT);
      assertThat(p.failure()).isEmpty();
    } finally {
      stop.set(true);
      joinQuietly(writer);
    }
  }

  // ---- rows and schema changes

  @Test
  void unchangedToastValuesGivePartialUpdatesAndIdentitiesGiveTheRightOldRows(TestDatabase db) {
    exec(
        db,
        "CREATE TABLE toasty (id int PRIMARY KEY, counter int, doc text)",
        "ALTER TABLE toasty ALTER COLUMN doc SET STORAGE EXTERNAL",
        "INSERT INTO toasty SELECT g, 0, repeat(md5(g::text), 200) FROM generate_series(1, 3) g",
        "CREATE TABLE full_ident (id int, v text)",
        "ALTER TABLE full_ident REPLICA IDENTITY FULL",
        "INSERT INTO full_ident VALUES (1, 'a'), (2, 'b')",
        "CREATE TABLE idx_ident (id int NOT NULL, code text NOT NULL, v text)",
        "CREATE UNIQUE INDEX idx_ident_code ON idx_ident (code)",
        "ALTER TABLE idx_ident REPLICA IDENTITY USING INDEX idx_ident_code",
        "INSERT INTO idx_ident VALUES (1, 'x', 'a')",
        "CREATE PUBLICATION pub_toast FOR TABLE toasty, full_ident, idx_ident");
    PipelineStore store = newStore(db, "toast");
    RecordingDestination dest = RecordingDestination.create();
    try (Pipeline p = start(config(db, "toast", "pub_toast").build(), store, dest)) {
      awaitAllReady(store, 3);
      exec(
          db,
          "UPDATE toasty SET counter = 1 WHERE id = 1",
          "UPDATE full_ident SET v = 'a2' WHERE id = 1",
          "DELETE FROM full_ident WHERE id = 2",
          "UPDATE idx_ident SET code = 'y' WHERE id = 1",
          "DELETE FROM idx_ident WHERE id = 1");
      dest.awaitRowsEqual(name("idx_ident"), sourceRows(db, "idx_ident"), WAIT);
      dest.awaitRowsEqual(name("toasty"), sourceRows(db, "toasty"), WAIT);
      dest.awaitRowsEqual(name("full_ident"), sourceRows(db, "full_ident"), WAIT);
      Event.Update toastUpdate =
          (Event.Update) firstOf(dest.events(name("toasty")), Event.Kind.UPDATE);
      assertThat(toastUpdate.row()).isInstanceOf(UpdatedRow.Partial.class);
      assertThat(((UpdatedRow.Partial) toastUpdate.row()).missingColumnIndexes())
          .containsExactly(2);
      Event.Update fullUpdate =
          (Event.Update) firstOf(dest.events(name("full_ident")), Event.Kind.UPDATE);
      assertThat(fullUpdate.oldRow()).isInstanceOf(OldRow.Full.class);
      Event.Delete fullDelete =
          (Event.Delete) firstOf(dest.events(name("full_ident")), Event.Kind.DELETE);
      assertThat(fullDelete.oldRow()).isInstanceOf(OldRow.Full.class);
      Event.Update keyUpdate =
          (Event.Update) firstOf(dest.events(name("idx_ident")), Event.Kind.UPDATE);
      assertThat(keyUpdate.oldRow()).isInstanceOf(OldRow.Key.class);
      assertThat(keyUpdate.oldRow().row().values()).containsExactly("x");
      Event.Delete keyDelete =
          (Event.Delete) firstOf(dest.events(name("idx_ident")), Event.Kind.DELETE);
      assertThat(keyDelete.oldRow().row().values()).containsExactly("y");
    }
  }

  @Test
  void addedAndDroppedColumnsArriveAsARelationBeforeTheNextRow(TestDatabase db) {
    exec(
        db,
        "CREATE TABLE evolving (id int PRIMARY KEY, a text, b text)",
        "INSERT INTO evolving VALUES (1, 'a', 'b')",
        "CREATE PUBLICATION pub_evolving FOR TABLE evolving");
    PipelineStore store = newStore(db, "evolving");
    RecordingDestination dest = RecordingDestination.create();
    try (Pipeline p = start(config(db, "evolving", "pub_evolving").build(), store, dest)) {
      awaitAllReady(store, 1);
      exec(
          db,
          "INSERT INTO evolving VALUES (2, 'a2', 'b2')",
          "ALTER TABLE evolving ADD COLUMN c int",
          "ALTER TABLE evolving DROP COLUMN b",
          "INSERT INTO evolving VALUES (3, 'a3', 3)");
      dest.awaitRowsEqual(name("evolving"), sourceRows(db, "evolving"), WAIT);
      List<Event> events = dest.events(name("evolving"));
      int insert3 = -1;
      for (int i = 0; i < events.size(); i++) {
        if (events.get(i) instanceof Event.Insert ins
            && Integer.valueOf(3).equals(ins.row().get(0))) {
          insert3 = i;
        }
      }
      assertThat(insert3).isGreaterThan(0);
      Event before = events.get(insert3 - 1);
      assertThat(before).isInstanceOf(Event.Relation.class);
      assertThat(((Event.Relation) before).table().columns())
          .extracting(c -> c.name())
          .containsExactly("id", "a", "c");
      assertThat(store.tableSchemas(oid(db, "evolving")).size()).isGreaterThanOrEqualTo(2);
    }
  }

  @Test
  void aTableAddedBetweenRunsIsCopiedAndARemovedOneLeavesNothingBehind(TestDatabase db) {
    exec(
        db,
        "CREATE TABLE stays (id int PRIMARY KEY)",
        "CREATE TABLE leaves (id int PRIMARY KEY)",
        "CREATE TABLE joins (id int PRIMARY KEY)",
        "INSERT INTO stays VALUES (1)",
        "INSERT INTO leaves VALUES (1)",
        "INSERT INTO joins VALUES (1), (2)",
        "CREATE PUBLICATION pub_change FOR TABLE stays, leaves");
    PipelineStore store = newStore(db, "change");
    RecordingDestination dest = RecordingDestination.create();
    TableId leaves = oid(db, "leaves");
    try (Pipeline p = start(config(db, "change", "pub_change").build(), store, dest)) {
      awaitAllReady(store, 2);
    }
    exec(
        db,
        "ALTER PUBLICATION pub_change DROP TABLE leaves",
        "ALTER PUBLICATION pub_change ADD TABLE joins");
    PipelineStore reopened = reopen(store, db);
    try (Pipeline p = start(config(db, "change", "pub_change").build(), reopened, dest)) {
      awaitAllReady(reopened, 2);
      dest.awaitRowsEqual(name("joins"), sourceRows(db, "joins"), WAIT);
      assertThat(reopened.tableState(leaves)).isEmpty();
      assertThat(reopened.tableStateHistory(leaves)).isEmpty();
      // the slot of the copy of "joins" is dropped just after the table is ready
      await()
          .atMost(WAIT)
          .untilAsserted(
              () -> assertThat(slotsOf(db, "change")).containsExactly("pgetl_apply_change"));
    }
  }

  // ---- helpers

  private static List<String> slotsOf(TestDatabase db, String pipelineId) {
    return db.replicationSlots().stream()
        .map(s -> s.slotName())
        .filter(n -> n.endsWith("_" + pipelineId) || n.contains("_" + pipelineId + "_"))
        .toList();
  }

  private static Event firstOf(List<Event> events, Event.Kind kind) {
    return events.stream().filter(e -> e.kind() == kind).findFirst().orElseThrow();
  }

  private static void awaitTermination(Pipeline p) {
    try {
      assertThat(p.awaitTermination(WAIT)).isTrue();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new AssertionError(e);
    }
  }

  private static void joinQuietly(Thread t) {
    try {
      t.join(WAIT.toMillis());
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
