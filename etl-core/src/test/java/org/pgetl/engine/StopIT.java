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

import java.sql.Connection;
import java.sql.Statement;
import java.time.Duration;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.pgetl.Pipeline;
import org.pgetl.PipelineStatus;
import org.pgetl.destination.AsyncResult;
import org.pgetl.destination.AsyncResult.Outcome;
import org.pgetl.destination.Destination;
import org.pgetl.destination.DestinationContext;
import org.pgetl.destination.StreamId;
import org.pgetl.destination.TableCopyWrite;
import org.pgetl.destination.WriteDurability;
import org.pgetl.model.Event;
import org.pgetl.model.Lsn;
import org.pgetl.model.ReplicatedTableSchema;
import org.pgetl.model.TableId;
import org.pgetl.store.MemoryStore;
import org.pgetl.store.PipelineStore.ProgressKey;
import org.pgetl.store.TableState;
import org.pgetl.testkit.TestDatabase;
import org.pgetl.testkit.WithPostgres;
import org.pgetl.testkit.destination.DestinationCall;
import org.pgetl.testkit.destination.DestinationOperation;
import org.pgetl.testkit.destination.FaultyDestination;
import org.pgetl.testkit.destination.HoldHandle;
import org.pgetl.testkit.destination.RecordingDestination;

/**
 * Stopping: every wait of a stop is bounded, writes in flight are waited for and made durable, and
 * what an abandoned copy attempt still sends never lands over the next attempt.
 */
@WithPostgres
@Timeout(value = 3, unit = TimeUnit.MINUTES)
class StopIT {

  /**
   * Regression: the slot creation waits for every open transaction with an xid; nothing cancelled
   * it, so {@code close()} timed out and the JVM could not exit while another session sat idle in a
   * transaction.
   */
  @Test
  void aStopReturnsWhileTheSlotCreationWaitsForAnIdleTransaction(TestDatabase db) throws Exception {
    db.execute(
        "CREATE TABLE waits (id int PRIMARY KEY)",
        "CREATE TABLE other (id int)",
        "CREATE PUBLICATION pub_waits FOR TABLE waits");
    try (Connection idle = db.connect();
        Statement st = idle.createStatement()) {
      idle.setAutoCommit(false);
      st.execute("INSERT INTO other VALUES (1)"); // holds an xid until the test ends
      Pipeline p =
          start(
              config(db, "waits", "pub_waits").shutdownTimeout(Duration.ofSeconds(2)).build(),
              new MemoryStore("waits"),
              RecordingDestination.create());
      await()
          .atMost(WAIT)
          .until(
              () ->
                  db.queryLong(
                          "SELECT count(*) FROM pg_stat_activity WHERE application_name LIKE"
                              + " 'pgetl%waits%' AND wait_event_type = 'Lock'")
                      > 0);
      long t0 = System.nanoTime();
      p.close();
      long tookMillis = (System.nanoTime() - t0) / 1_000_000;
      assertThat(tookMillis).isLessThan(10_000);
      assertThat(p.status().phase()).isEqualTo(PipelineStatus.Phase.STOPPED);
      assertThat(p.failure()).isEmpty();
      // the cancelled slot creation left no slot and no waiting session
      await()
          .atMost(WAIT)
          .until(
              () ->
                  db.queryLong(
                          "SELECT count(*) FROM pg_stat_activity WHERE application_name LIKE"
                              + " 'pgetl%waits%'")
                      == 0);
      assertThat(
              db.queryLong(
                  "SELECT count(*) FROM pg_replication_slots WHERE slot_name LIKE '%waits%'"))
          .isZero();
      idle.rollback();
    }
    // the supervisor is a daemon: a host whose own threads ended can exit
    assertThat(Thread.getAllStackTraces().keySet())
        .filteredOn(t -> t.getName().startsWith("pgetl-") && t.getName().endsWith("-waits"))
        .allMatch(Thread::isDaemon);
  }

  /**
   * Regression: a COPY waiting for a table lock ({@code lock_timeout} 0) kept a stop waiting for
   * the other session.
   */
  @Test
  void aStopReturnsWhileTheCopyWaitsForATableLock(TestDatabase db) throws Exception {
    db.execute(
        "CREATE TABLE locked (id int PRIMARY KEY)",
        "INSERT INTO locked SELECT g FROM generate_series(1, 100) g",
        "CREATE PUBLICATION pub_locked FOR TABLE locked");
    TableId table = oid(db, "locked");
    MemoryStore store = new MemoryStore("locked");
    FaultyDestination faulty = FaultyDestination.wrap(RecordingDestination.create());
    HoldHandle drop = faulty.holdNext(DestinationOperation.DROP_TABLE_FOR_COPY);
    try (Connection locker = db.connect();
        Statement st = locker.createStatement()) {
      Pipeline p =
          start(
              config(db, "locked", "pub_locked").shutdownTimeout(Duration.ofSeconds(2)).build(),
              store,
              faulty);
      assertThat(drop.awaitReached(WAIT)).isTrue();
      // another session takes the table, then the copy starts: it waits for the lock, which has
      // no timeout on copy connections
      locker.setAutoCommit(false);
      st.execute("LOCK TABLE locked IN ACCESS EXCLUSIVE MODE");
      drop.releaseDurable();
      await()
          .atMost(WAIT)
          .until(
              () ->
                  db.queryLong(
                          "SELECT count(*) FROM pg_stat_activity WHERE application_name LIKE"
                              + " 'pgetl%locked%' AND wait_event_type = 'Lock'")
                      > 0);
      long t0 = System.nanoTime();
      p.close();
      assertThat((System.nanoTime() - t0) / 1_000_000).isLessThan(10_000);
      assertThat(p.failure()).isEmpty();
      locker.rollback();
    }
    // nothing errored: the table copies again at the next start
    assertThat(store.tableState(table))
        .get()
        .extracting(TableState::type)
        .isEqualTo(TableState.Type.DATA_SYNC);
    RecordingDestination second = RecordingDestination.create();
    try (Pipeline p = start(config(db, "locked", "pub_locked").build(), store, second)) {
      awaitAllReady(store, 1);
      second.awaitRowsEqual(name("locked"), sourceRows(db, "locked"), WAIT);
    }
  }

  /**
   * Regression: on a pause the wait for a copy batch returned at once; the resume's next attempt
   * dropped the table and copied again while the old batch could still land, putting back a row
   * deleted in between (3,000 rows at the destination, 2,999 at the source). The old batch is now
   * awaited for the grace period, and when it lands even later its attempt id marks it stale.
   */
  @Test
  void aCopyBatchOfAnAbandonedAttemptNeverLandsOverTheNextAttempt(TestDatabase db)
      throws Exception {
    db.execute(
        "CREATE TABLE late (id int PRIMARY KEY, v text)",
        "INSERT INTO late SELECT g, 'v' || g FROM generate_series(1, 3000) g",
        "CREATE PUBLICATION pub_late FOR TABLE late");
    MemoryStore store = new MemoryStore("late");
    RecordingDestination recording = RecordingDestination.create();
    LateFirstBatch dest = new LateFirstBatch(recording);
    try (Pipeline p =
        start(
            config(db, "late", "pub_late")
                .batchMaxBytes(8 * 1024)
                .shutdownTimeout(Duration.ofSeconds(1))
                .build(),
            store,
            dest)) {
      assertThat(dest.stashed.await(WAIT.toSeconds(), TimeUnit.SECONDS)).isTrue();
      store.setLifecycleAsOperator(recording.name(), "paused", "test", "operator");
      await().atMost(WAIT).until(() -> p.status().phase() == PipelineStatus.Phase.PAUSED);
      // a row of the stashed batch goes away at the source
      Object firstId = dest.batch.get().rows().get(0).get(0);
      db.execute("DELETE FROM late WHERE id = " + firstId);
      store.setLifecycleAsOperator(recording.name(), "active", "test", "operator");
      await()
          .atMost(WAIT)
          .until(() -> recording.count(DestinationOperation.DROP_TABLE_FOR_COPY) == 2);
      dest.deliverStashed(); // lands after the next attempt's drop
      awaitAllReady(store, 1);
      recording.awaitRowsEqual(name("late"), sourceRows(db, "late"), WAIT);
      assertThat(recording.rowCount(name("late"))).isEqualTo(2999);
      assertThat(recording.staleBatchIds()).containsExactly(dest.batch.get().id());
      assertThat(recording.violations()).isEmpty();
    }
  }

  /**
   * Regression: a clean stop sent no durability barrier, though {@code close()} promises buffered
   * batches "flushed and acknowledged": with a destination that defers durability the stored
   * progress stayed below what it had delivered.
   */
  @Test
  void aCleanStopMakesEveryAcceptedWriteDurable(TestDatabase db) throws Exception {
    db.execute(
        "CREATE TABLE deferred (id int PRIMARY KEY)",
        "CREATE PUBLICATION pub_deferred FOR TABLE deferred");
    MemoryStore store = new MemoryStore("deferred");
    RecordingDestination dest =
        RecordingDestination.builder().answering(RecordingDestination.Answering.ACCEPTED).build();
    Pipeline p =
        start(
            config(db, "deferred", "pub_deferred").batchMaxFill(Duration.ofMinutes(1)).build(),
            store,
            dest);
    awaitAllReady(store, 1);
    db.execute("INSERT INTO deferred SELECT g FROM generate_series(1, 10) g");
    await().atMost(WAIT).until(() -> dest.rowCount(name("deferred")) == 10);
    p.close();
    Lsn commit =
        dest.events().stream()
            .filter(e -> e instanceof Event.Commit)
            .map(e -> ((Event.Commit) e).endLsn())
            .max(Lsn::compareTo)
            .orElseThrow();

    List<DestinationCall> writes = dest.calls(DestinationOperation.WRITE_EVENTS);
    DestinationCall last = writes.get(writes.size() - 1);
    assertThat(last.events()).isEmpty();
    assertThat(last.durability()).isEqualTo(WriteDurability.REQUIRE_DURABLE);
    assertThat(last.stream()).isEqualTo(StreamId.APPLY);
    assertThat(last.outcome()).contains(Outcome.DURABLE);
    assertThat(store.progress(ProgressKey.apply())).get().matches(l -> !l.isBefore(commit));
    assertThat(PipelineHarness.confirmedFlush(db, "pgetl_apply_deferred"))
        .isGreaterThanOrEqualTo(commit);
  }

  /** A destination that keeps the first copy batch back, undelivered, until the test says. */
  private static final class LateFirstBatch implements Destination {
    final RecordingDestination delegate;
    final CountDownLatch stashed = new CountDownLatch(1);
    final AtomicReference<TableCopyWrite.Batch> batch = new AtomicReference<>();
    private volatile ReplicatedTableSchema table;
    private volatile AsyncResult result;

    LateFirstBatch(RecordingDestination delegate) {
      this.delegate = delegate;
    }

    void deliverStashed() {
      delegate.writeTableRows(table, batch.get(), result);
    }

    @Override
    public String name() {
      return delegate.name();
    }

    @Override
    public void startup(DestinationContext context) {
      delegate.startup(context);
    }

    @Override
    public void dropTableForCopy(ReplicatedTableSchema t, UUID attemptId, AsyncResult r) {
      delegate.dropTableForCopy(t, attemptId, r);
    }

    @Override
    public void writeTableRows(ReplicatedTableSchema t, TableCopyWrite write, AsyncResult r) {
      if (write instanceof TableCopyWrite.Batch b && batch.compareAndSet(null, b)) {
        table = t;
        result = r;
        stashed.countDown();
        return;
      }
      delegate.writeTableRows(t, write, r);
    }

    @Override
    public void writeEvents(
        StreamId stream, List<Event> events, WriteDurability durability, AsyncResult r) {
      delegate.writeEvents(stream, events, durability, r);
    }

    @Override
    public void shutdown() {
      delegate.shutdown();
    }
  }
}
