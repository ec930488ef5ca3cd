package org.pgetl.lifecycle;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.pgetl.PgConnectionConfig;
import org.pgetl.Pipeline;
import org.pgetl.PipelineConfig;
import org.pgetl.PipelineStatus;
import org.pgetl.engine.LogCapture;
import org.pgetl.model.Event;
import org.pgetl.model.Lsn;
import org.pgetl.model.TableName;
import org.pgetl.store.PipelineStore.ProgressKey;
import org.pgetl.store.TableState;
import org.pgetl.store.postgres.PostgresStore;
import org.pgetl.testkit.TestDatabase;
import org.pgetl.testkit.WithPostgres;
import org.pgetl.testkit.destination.DestinationOperation;
import org.pgetl.testkit.destination.FaultyDestination;
import org.pgetl.testkit.destination.HoldHandle;
import org.pgetl.testkit.destination.RecordingDestination;
import org.pgetl.testkit.destination.SourceTables;

/**
 * The destination lifecycle on a live pipeline with a write workload: an operator changes the row
 * with SQL and the pipeline follows within its poll interval.
 */
@WithPostgres
@Timeout(value = 4, unit = TimeUnit.MINUTES)
class LifecycleIT {
  private static final Duration WAIT = Duration.ofSeconds(60);
  private static final String DEST = "recording";

  private Workload workload;

  @AfterEach
  void stopWorkload() throws InterruptedException {
    if (workload != null) {
      workload.stop();
    }
  }

  private static PgConnectionConfig source(TestDatabase db) {
    return PgConnectionConfig.builder()
        .host(db.host())
        .port(db.port())
        .database(db.name())
        .user(db.user())
        .password(db.password())
        .build();
  }

  private static PipelineConfig config(TestDatabase db, String id, String pub) {
    return PipelineConfig.builder()
        .pipelineId(id)
        .publication(pub)
        .source(source(db))
        .batchMaxFill(Duration.ofMillis(100))
        .statusInterval(Duration.ofSeconds(1))
        .shutdownTimeout(Duration.ofSeconds(10))
        .lifecyclePollInterval(Duration.ofMillis(200))
        .build();
  }

  private static PostgresStore store(TestDatabase db, String id) {
    return PostgresStore.builder().connection(source(db)).pipelineId(id).build();
  }

  private static void operator(TestDatabase db, String id, String state) {
    db.execute(
        "INSERT INTO etl.destination_lifecycle (pipeline_id, destination_name, state, reason,"
            + " updated_by) VALUES ('"
            + id
            + "', '"
            + DEST
            + "', '"
            + state
            + "', 'test', 'operator')"
            + " ON CONFLICT (pipeline_id, destination_name) DO UPDATE SET state = EXCLUDED.state,"
            + " updated_at = now()");
  }

  private static void table(TestDatabase db, String t) {
    db.execute(
        "CREATE TABLE " + t + " (id int PRIMARY KEY, v int)",
        "INSERT INTO " + t + " SELECT g, 0 FROM generate_series(1, 100) g",
        "CREATE PUBLICATION pub_" + t + " FOR TABLE " + t);
  }

  private static void awaitReady(PostgresStore store) {
    await()
        .atMost(WAIT)
        .until(
            () ->
                !store.tableStates().isEmpty()
                    && store.tableStates().values().stream()
                        .allMatch(s -> s.type() == TableState.Type.READY));
  }

  private static Lsn confirmed(TestDatabase db, String slot) {
    String s =
        db.queryString(
            "SELECT coalesce(confirmed_flush_lsn::text, '0/0') FROM pg_replication_slots"
                + " WHERE slot_name = ?",
            slot);
    return Lsn.parse(s);
  }

  private static long retained(TestDatabase db, String slot) {
    return db.queryLong(
        "SELECT pg_current_wal_lsn() - confirmed_flush_lsn FROM pg_replication_slots"
            + " WHERE slot_name = ?",
        slot);
  }

  private static boolean slotActive(TestDatabase db, String slot) {
    return db.queryLong(
            "SELECT count(*) FROM pg_replication_slots WHERE slot_name = ? AND active", slot)
        == 1;
  }

  /** Inserts rows into a table from a background thread until stopped. */
  private static final class Workload {
    final AtomicBoolean stop = new AtomicBoolean();
    final AtomicInteger next = new AtomicInteger(1000);
    final Thread thread;

    Workload(TestDatabase db, String t) {
      thread =
          new Thread(
              () -> {
                while (!stop.get()) {
                  int i = next.incrementAndGet();
                  db.execute("INSERT INTO " + t + " VALUES (" + i + ", " + i + ")");
                }
              });
      thread.start();
    }

    void stop() throws InterruptedException {
      stop.set(true);
      thread.join();
    }
  }

  @Test
  void pauseStopsDeliveryAndRetainsWalThenResumeConverges(TestDatabase db) throws Exception {
    table(db, "paused");
    PostgresStore store = store(db, "paused");
    RecordingDestination dest = RecordingDestination.builder().name(DEST).build();
    SimpleMeterRegistry meters = new SimpleMeterRegistry();
    try (Pipeline p = Pipeline.create(config(db, "paused", "pub_paused"), store, dest, meters)) {
      p.start();
      awaitReady(store);
      workload = new Workload(db, "paused");
      await().atMost(WAIT).until(() -> dest.rowCount(TableName.parse("paused")) > 200);
      operator(db, "paused", "paused");
      await().atMost(WAIT).until(() -> p.status().phase() == PipelineStatus.Phase.PAUSED);
      await().atMost(WAIT).until(() -> !slotActive(db, "pgetl_apply_paused"));
      // no deliveries while the source keeps writing; the slot retains the WAL
      int delivered = dest.calls(DestinationOperation.WRITE_EVENTS).size();
      long retainedBefore = retained(db, "pgetl_apply_paused");
      int written = workload.next.get();
      await().atMost(WAIT).until(() -> workload.next.get() > written + 200);
      assertThat(dest.calls(DestinationOperation.WRITE_EVENTS)).hasSize(delivered);
      assertThat(retained(db, "pgetl_apply_paused")).isGreaterThan(retainedBefore);
      assertThat(db.replicationSlots())
          .extracting(s -> s.slotName())
          .contains("pgetl_apply_paused");
      assertThat(
              meters
                  .get("pgetl.destination.lifecycle.state")
                  .tag("state", "paused")
                  .gauge()
                  .value())
          .isEqualTo(1.0);
      assertThat(
              meters
                  .get("pgetl.destination.lifecycle.state")
                  .tag("state", "active")
                  .gauge()
                  .value())
          .isEqualTo(0.0);
      operator(db, "paused", "active");
      workload.stop();
      dest.awaitRowsEqual(
          TableName.parse("paused"), SourceTables.read(db, TableName.parse("paused")), WAIT);
      assertThat(p.status().phase()).isEqualTo(PipelineStatus.Phase.RUNNING);
    }
  }

  @Test
  void drainFlushesGoesIdleAndSaysItWasClean(TestDatabase db) throws Exception {
    table(db, "drained");
    PostgresStore store = store(db, "drained");
    RecordingDestination dest = RecordingDestination.builder().name(DEST).build();
    try (LogCapture log = new LogCapture();
        Pipeline p = Pipeline.create(config(db, "drained", "pub_drained"), store, dest)) {
      p.start();
      awaitReady(store);
      workload = new Workload(db, "drained");
      await().atMost(WAIT).until(() -> dest.rowCount(TableName.parse("drained")) > 200);
      operator(db, "drained", "draining");
      await().atMost(WAIT).until(() -> p.status().phase() == PipelineStatus.Phase.DRAINED);
      assertThat(log.count("pipeline drained: drain complete:")).isEqualTo(1);
      await().atMost(WAIT).until(() -> !slotActive(db, "pgetl_apply_drained"));
      // everything the stream had delivered is durable: the stored durable point is past the
      // commit of every delivered change (the slot may be further still: the idle rule)
      Lsn progress = store.progress(ProgressKey.apply()).orElseThrow();
      Lsn delivered =
          dest.events(TableName.parse("drained")).stream()
              .filter(e -> e instanceof Event.Insert)
              .map(Event::commitLsn)
              .max(Lsn::compareTo)
              .orElseThrow();
      assertThat(progress).isGreaterThan(delivered);
      assertThat(confirmed(db, "pgetl_apply_drained")).isGreaterThanOrEqualTo(progress);
      workload.stop();
      operator(db, "drained", "active");
      dest.awaitRowsEqual(
          TableName.parse("drained"), SourceTables.read(db, TableName.parse("drained")), WAIT);
    }
  }

  @Test
  void aDrainThatEndsThroughAFailureSaysSoAndTheResumeDeliversTheRest(TestDatabase db)
      throws Exception {
    table(db, "drainfail");
    PostgresStore store = store(db, "drainfail");
    RecordingDestination recording = RecordingDestination.builder().name(DEST).build();
    FaultyDestination faulty = FaultyDestination.wrap(recording);
    try (LogCapture log = new LogCapture();
        Pipeline p = Pipeline.create(config(db, "drainfail", "pub_drainfail"), store, faulty)) {
      p.start();
      awaitReady(store);
      HoldHandle held =
          faulty.holdNext(
              DestinationOperation.WRITE_EVENTS,
              c -> c.hasInsertInto(TableName.parse("drainfail")));
      db.execute("INSERT INTO drainfail VALUES (7000, 1)");
      assertThat(held.awaitReached(WAIT)).isTrue();
      operator(db, "drainfail", "draining");
      await().atMost(WAIT).until(() -> p.status().lifecycle() == LifecycleState.DRAINING);
      held.releaseFailed(org.pgetl.error.ErrorKind.DESTINATION_TIMEOUT);
      await().atMost(WAIT).until(() -> p.status().phase() == PipelineStatus.Phase.DRAINED);
      assertThat(log.count("pipeline drainfail: drain NOT complete")).isEqualTo(1);
      assertThat(log.count("pipeline drainfail: drain complete")).isZero();
      operator(db, "drainfail", "active");
      recording.awaitRowsEqual(
          TableName.parse("drainfail"), SourceTables.read(db, TableName.parse("drainfail")), WAIT);
    }
  }

  @Test
  void retireDropsSlotsAndStateAndAReAddedDestinationCopiesAfresh(TestDatabase db)
      throws Exception {
    table(db, "retired");
    PostgresStore store = store(db, "retired");
    RecordingDestination dest = RecordingDestination.builder().name(DEST).build();
    try (Pipeline p = Pipeline.create(config(db, "retired", "pub_retired"), store, dest)) {
      p.start();
      awaitReady(store);
      workload = new Workload(db, "retired");
      operator(db, "retired", "retired");
      await().atMost(WAIT).until(() -> p.status().phase() == PipelineStatus.Phase.RETIRED);
      assertThat(db.replicationSlots())
          .extracting(s -> s.slotName())
          .noneMatch(n -> n.contains("_retired"));
      assertThat(
              db.queryLong(
                  "SELECT (SELECT count(*) FROM etl.replication_state WHERE pipeline_id = 'retired')"
                      + " + (SELECT count(*) FROM etl.replication_progress"
                      + " WHERE pipeline_id = 'retired')"))
          .isZero();
      // retired -> active is refused while this process runs
      operator(db, "retired", "active");
      await()
          .during(Duration.ofSeconds(1))
          .atMost(WAIT)
          .until(() -> p.status().phase() == PipelineStatus.Phase.RETIRED);
      workload.stop();
    }
    // a re-added destination starts fresh: a new process copies every table again
    PostgresStore again = store(db, "retired");
    RecordingDestination fresh = RecordingDestination.builder().name(DEST).build();
    try (Pipeline p = Pipeline.create(config(db, "retired", "pub_retired"), again, fresh)) {
      p.start();
      awaitReady(again);
      assertThat(fresh.count(DestinationOperation.WRITE_TABLE_ROWS)).isPositive();
      fresh.awaitRowsEqual(
          TableName.parse("retired"), SourceTables.read(db, TableName.parse("retired")), WAIT);
    }
    again.close();
  }

  @Test
  void discardedEventsAreNeverConfirmedAndTheResumeDeliversThem(TestDatabase db) throws Exception {
    table(db, "discard");
    PostgresStore store = store(db, "discard");
    RecordingDestination recording = RecordingDestination.builder().name(DEST).build();
    FaultyDestination faulty = FaultyDestination.wrap(recording);
    PipelineConfig cfg =
        config(db, "discard", "pub_discard").toBuilder().maxInFlightWrites(1).build();
    SimpleMeterRegistry meters = new SimpleMeterRegistry();
    try (Pipeline p = Pipeline.create(cfg, store, faulty, meters)) {
      p.start();
      awaitReady(store);
      HoldHandle held = faulty.holdNext(DestinationOperation.WRITE_EVENTS);
      workload = new Workload(db, "discard");
      assertThat(held.awaitReached(WAIT)).isTrue();
      // the window is full: what the stream reads now is buffered behind the held write
      int at = workload.next.get();
      await().atMost(WAIT).until(() -> workload.next.get() > at + 50);
      operator(db, "discard", "paused");
      await()
          .atMost(WAIT)
          .until(() -> meters.get("pgetl.lifecycle.discarded.events").counter().count() > 0);
      held.releaseDurable();
      await().atMost(WAIT).until(() -> p.status().phase() == PipelineStatus.Phase.PAUSED);
      await().atMost(WAIT).until(() -> !slotActive(db, "pgetl_apply_discard"));
      Lsn progress = store.progress(ProgressKey.apply()).orElseThrow();
      assertThat(confirmed(db, "pgetl_apply_discard")).isLessThanOrEqualTo(progress);
      workload.stop();
      operator(db, "discard", "active");
      recording.awaitRowsEqual(
          TableName.parse("discard"), SourceTables.read(db, TableName.parse("discard")), WAIT);
    }
  }

  @Test
  void aWriteAnsweredDurableAfterAPauseIsNotDeliveredAgainOnResume(TestDatabase db)
      throws Exception {
    table(db, "race");
    PostgresStore store = store(db, "race");
    RecordingDestination recording =
        RecordingDestination.builder().name(DEST).deduplicate(false).build();
    FaultyDestination faulty = FaultyDestination.wrap(recording);
    try (Pipeline p = Pipeline.create(config(db, "race", "pub_race"), store, faulty)) {
      p.start();
      awaitReady(store);
      HoldHandle held =
          faulty.holdNext(
              DestinationOperation.WRITE_EVENTS, c -> c.hasInsertInto(TableName.parse("race")));
      db.execute("INSERT INTO race VALUES (5000, 1)");
      assertThat(held.awaitReached(WAIT)).isTrue();
      Lsn heldCommit =
          held.call().events().stream()
              .filter(e -> e instanceof Event.Commit)
              .map(e -> ((Event.Commit) e).commitLsn())
              .reduce(Lsn::max)
              .orElseThrow();
      operator(db, "race", "paused");
      await().atMost(WAIT).until(() -> p.status().lifecycle() == LifecycleState.PAUSED);
      held.releaseDurable();
      await().atMost(WAIT).until(() -> p.status().phase() == PipelineStatus.Phase.PAUSED);
      db.execute("INSERT INTO race VALUES (5001, 2)");
      operator(db, "race", "active");
      recording.awaitRowsEqual(
          TableName.parse("race"), SourceTables.read(db, TableName.parse("race")), WAIT);
      assertThat(recording.duplicateEvents())
          .noneMatch(e -> e.commitLsn().compareTo(heldCommit) <= 0);
    }
  }

  @Test
  void anUnknownStateReadsAsPausedWithOneErrorPerTransition(TestDatabase db) throws Exception {
    table(db, "unknown");
    PostgresStore store = store(db, "unknown");
    RecordingDestination dest = RecordingDestination.builder().name(DEST).build();
    try (LogCapture log = new LogCapture();
        Pipeline p = Pipeline.create(config(db, "unknown", "pub_unknown"), store, dest)) {
      p.start();
      awaitReady(store);
      String check =
          db.queryString(
              "SELECT conname FROM pg_constraint WHERE conrelid = 'etl.destination_lifecycle'::regclass"
                  + " AND contype = 'c'");
      db.execute("ALTER TABLE etl.destination_lifecycle DROP CONSTRAINT " + check);
      try {
        operator(db, "unknown", "frobnicated");
        await().atMost(WAIT).until(() -> p.status().phase() == PipelineStatus.Phase.PAUSED);
        // several polls later, still exactly one ERROR
        await().pollDelay(Duration.ofSeconds(1)).atMost(WAIT).until(() -> true);
        assertThat(log.count("ERROR", "pipeline unknown", "unknown lifecycle state 'frobnicated'"))
            .isEqualTo(1);
        operator(db, "unknown", "active");
        await().atMost(WAIT).until(() -> p.status().phase() == PipelineStatus.Phase.RUNNING);
        operator(db, "unknown", "frobnicated");
        await().atMost(WAIT).until(() -> p.status().phase() == PipelineStatus.Phase.PAUSED);
        await().pollDelay(Duration.ofSeconds(1)).atMost(WAIT).until(() -> true);
        assertThat(log.count("ERROR", "pipeline unknown", "unknown lifecycle state 'frobnicated'"))
            .isEqualTo(2);
      } finally {
        db.execute("DELETE FROM etl.destination_lifecycle WHERE pipeline_id = 'unknown'");
        db.execute(
            "ALTER TABLE etl.destination_lifecycle ADD CONSTRAINT "
                + check
                + " CHECK (state IN ('active', 'paused', 'draining', 'retired'))");
      }
    }
  }

  @Test
  void aFailedLifecycleReadKeepsTheLastKnownState(TestDatabase db) throws Exception {
    table(db, "blip");
    PostgresStore store = store(db, "blip");
    RecordingDestination dest = RecordingDestination.builder().name(DEST).build();
    try (Pipeline p = Pipeline.create(config(db, "blip", "pub_blip"), store, dest)) {
      p.start();
      awaitReady(store);
      operator(db, "blip", "paused");
      await().atMost(WAIT).until(() -> p.status().phase() == PipelineStatus.Phase.PAUSED);
      // the store cannot read the lifecycle table any more
      db.execute("ALTER TABLE etl.destination_lifecycle RENAME TO destination_lifecycle_away");
      try {
        db.execute("INSERT INTO blip VALUES (9000, 1)");
        int delivered = dest.calls(DestinationOperation.WRITE_EVENTS).size();
        await()
            .during(Duration.ofSeconds(2))
            .atMost(WAIT)
            .until(() -> p.status().lifecycle() == LifecycleState.PAUSED);
        assertThat(dest.calls(DestinationOperation.WRITE_EVENTS)).hasSize(delivered);
      } finally {
        db.execute("ALTER TABLE etl.destination_lifecycle_away RENAME TO destination_lifecycle");
      }
      operator(db, "blip", "active");
      dest.awaitRowsEqual(
          TableName.parse("blip"), SourceTables.read(db, TableName.parse("blip")), WAIT);
    }
  }

  /**
   * Regression: a drain reported "complete" while what it delivered was only accepted — no durable
   * barrier followed, and the stored progress stayed below the delivered changes. Retiring the
   * destination next would have dropped the slot with that data's only way back.
   */
  @Test
  void aDrainMakesAcceptedWritesDurableBeforeItSaysComplete(TestDatabase db) throws Exception {
    table(db, "drainacc");
    PostgresStore store = store(db, "drainacc");
    RecordingDestination dest =
        RecordingDestination.builder()
            .name(DEST)
            .answering(RecordingDestination.Answering.ACCEPTED)
            .build();
    try (LogCapture log = new LogCapture();
        Pipeline p = Pipeline.create(config(db, "drainacc", "pub_drainacc"), store, dest)) {
      p.start();
      awaitReady(store);
      workload = new Workload(db, "drainacc");
      await().atMost(WAIT).until(() -> dest.rowCount(TableName.parse("drainacc")) > 200);
      operator(db, "drainacc", "draining");
      await().atMost(WAIT).until(() -> p.status().phase() == PipelineStatus.Phase.DRAINED);
      workload.stop();
      assertThat(log.count("pipeline drainacc: drain complete:")).isEqualTo(1);
      // every change delivered is durable: stored progress and the slot are at its commit
      Lsn delivered =
          dest.events(TableName.parse("drainacc")).stream()
              .filter(e -> e instanceof Event.Insert)
              .map(Event::commitLsn)
              .max(Lsn::compareTo)
              .orElseThrow();
      Lsn progress = store.progress(ProgressKey.apply()).orElseThrow();
      assertThat(progress).isGreaterThan(delivered);
      await().atMost(WAIT).until(() -> !slotActive(db, "pgetl_apply_drainacc"));
      assertThat(confirmed(db, "pgetl_apply_drainacc")).isGreaterThan(delivered);
      assertThat(p.status().applyLsn()).isEqualTo(progress);
      // the drain's last write was the durability barrier, answered durable
      var last = dest.calls(DestinationOperation.WRITE_EVENTS);
      var barrier = last.get(last.size() - 1);
      assertThat(barrier.events()).isEmpty();
      assertThat(barrier.durability())
          .isEqualTo(org.pgetl.destination.WriteDurability.REQUIRE_DURABLE);
      assertThat(barrier.outcome()).contains(org.pgetl.destination.AsyncResult.Outcome.DURABLE);
    }
  }

  /** Regression: a drain that interrupted a copy said it was complete. */
  @Test
  void aDrainThatInterruptsACopySaysItIsNotComplete(TestDatabase db) throws Exception {
    db.execute(
        "CREATE TABLE draincopy (id int PRIMARY KEY, v text)",
        "INSERT INTO draincopy SELECT g, repeat('v', 100) FROM generate_series(1, 5000) g",
        "CREATE PUBLICATION pub_draincopy FOR TABLE draincopy");
    PostgresStore store = store(db, "draincopy");
    RecordingDestination recording = RecordingDestination.builder().name(DEST).build();
    FaultyDestination faulty = FaultyDestination.wrap(recording);
    HoldHandle held = faulty.holdNext(DestinationOperation.WRITE_TABLE_ROWS);
    PipelineConfig config =
        config(db, "draincopy", "pub_draincopy").toBuilder().batchMaxBytes(16 * 1024).build();
    try (LogCapture log = new LogCapture();
        Pipeline p = Pipeline.create(config, store, faulty)) {
      p.start();
      assertThat(held.awaitReached(WAIT)).isTrue();
      operator(db, "draincopy", "draining");
      await().atMost(WAIT).until(() -> p.status().lifecycle() == LifecycleState.DRAINING);
      held.releaseDurable();
      await().atMost(WAIT).until(() -> p.status().phase() == PipelineStatus.Phase.DRAINED);
      assertThat(log.count("pipeline draincopy: drain NOT complete", "copy interrupted"))
          .isEqualTo(1);
      assertThat(log.count("pipeline draincopy: drain complete")).isZero();
      operator(db, "draincopy", "active");
      awaitReady(store);
      recording.awaitRowsEqual(
          TableName.parse("draincopy"), SourceTables.read(db, TableName.parse("draincopy")), WAIT);
    }
  }

  /**
   * Regression: a lifecycle read that failed at start read as {@code active}, so a paused (or
   * retired) destination got a full copy and streaming until a read succeeded.
   */
  @Test
  void aLifecycleReadThatFailsAtStartDeliversNothingUntilItSucceeds(TestDatabase db)
      throws Exception {
    table(db, "unread");
    // the store's schema exists, with the operator's row: paused
    store(db, "unread").close();
    operator(db, "unread", "paused");
    db.execute("ALTER TABLE etl.destination_lifecycle RENAME TO destination_lifecycle_away");
    PostgresStore store = store(db, "unread");
    RecordingDestination dest = RecordingDestination.builder().name(DEST).build();
    try (Pipeline p = Pipeline.create(config(db, "unread", "pub_unread"), store, dest)) {
      try {
        p.start();
        await()
            .during(Duration.ofSeconds(2))
            .atMost(WAIT)
            .until(
                () ->
                    p.status().phase() == PipelineStatus.Phase.STARTING
                        && p.status().lifecycle() == null);
        assertThat(dest.count(DestinationOperation.DROP_TABLE_FOR_COPY)).isZero();
        assertThat(
                db.queryLong(
                    "SELECT count(*) FROM pg_replication_slots WHERE slot_name LIKE '%unread%'"))
            .isZero();
      } finally {
        db.execute("ALTER TABLE etl.destination_lifecycle_away RENAME TO destination_lifecycle");
      }
      await().atMost(WAIT).until(() -> p.status().phase() == PipelineStatus.Phase.PAUSED);
      assertThat(dest.count(DestinationOperation.DROP_TABLE_FOR_COPY)).isZero();
      operator(db, "unread", "active");
      awaitReady(store);
      dest.awaitRowsEqual(
          TableName.parse("unread"), SourceTables.read(db, TableName.parse("unread")), WAIT);
    }
  }
}
