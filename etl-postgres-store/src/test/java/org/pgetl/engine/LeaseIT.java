package org.pgetl.engine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.pgetl.Pipeline;
import org.pgetl.PipelineConfig;
import org.pgetl.PipelineStatus;
import org.pgetl.destination.AsyncResult;
import org.pgetl.destination.Destination;
import org.pgetl.destination.DestinationContext;
import org.pgetl.destination.StreamId;
import org.pgetl.destination.TableCopyWrite;
import org.pgetl.destination.WriteDurability;
import org.pgetl.error.ErrorKind;
import org.pgetl.error.EtlException;
import org.pgetl.model.Event;
import org.pgetl.model.ReplicatedTableSchema;
import org.pgetl.model.TableId;
import org.pgetl.model.TableName;
import org.pgetl.store.MemoryStore;
import org.pgetl.store.PipelineStore;
import org.pgetl.store.TableState;
import org.pgetl.store.postgres.PostgresStore;
import org.pgetl.testkit.TestDatabase;
import org.pgetl.testkit.WithPostgres;
import org.pgetl.testkit.destination.DestinationOperation;
import org.pgetl.testkit.destination.RecordingDestination;
import org.pgetl.testkit.destination.SourceTables;

/**
 * One active instance per pipeline: a second instance of the same pipeline id waits as a standby
 * (or fails fast), takes over when the lease frees, and an instance that cannot confirm its lease
 * stops every destination call before the next one makes its first.
 */
@WithPostgres
@Timeout(value = 4, unit = TimeUnit.MINUTES)
class LeaseIT {
  private static final Duration WAIT = Duration.ofSeconds(90);
  private final List<AutoCloseable> opened = new ArrayList<>();

  @AfterEach
  void closeAll() throws Exception {
    for (int i = opened.size() - 1; i >= 0; i--) {
      try {
        opened.get(i).close();
      } catch (RuntimeException e) {
        // a pipeline that failed on purpose
      }
    }
    opened.clear();
  }

  private PostgresStore store(TestDatabase db, String id) {
    PostgresStore s =
        PostgresStore.builder().connection(PipelineHarness.source(db)).pipelineId(id).build();
    opened.add(s);
    return s;
  }

  private Pipeline pipeline(PipelineConfig config, PipelineStore store, Destination dest) {
    Pipeline p = Pipeline.create(config, store, dest);
    opened.add(p);
    return p;
  }

  private static PipelineConfig.Builder config(TestDatabase db, String id, String pub) {
    return PipelineHarness.config(db, id, pub)
        .leaseCheckInterval(Duration.ofMillis(300))
        .takeoverDelay(Duration.ofMillis(1000));
  }

  private static void table(TestDatabase db, String t) {
    db.execute(
        "CREATE TABLE " + t + " (id int PRIMARY KEY, v int)",
        "INSERT INTO " + t + " SELECT g, 0 FROM generate_series(1, 200) g",
        "CREATE PUBLICATION pub_" + t + " FOR TABLE " + t);
  }

  private static long applyWalsenders(TestDatabase db, String id) {
    return db.queryLong(
        "SELECT count(*) FROM pg_replication_slots WHERE slot_name = ? AND active",
        "pgetl_apply_" + id);
  }

  /** A second instance of a running pipeline waits as a standby and takes over at its stop. */
  @Test
  void aSecondInstanceIsAStandbyThatTakesOverWhenTheFirstStops(TestDatabase db) {
    table(db, "ha");
    RecordingDestination dest = RecordingDestination.create();
    PostgresStore storeA = store(db, "ha");
    Pipeline a = pipeline(config(db, "ha", "pub_ha").build(), storeA, dest);
    a.start();
    PipelineHarness.awaitAllReady(storeA, 1);
    Pipeline b = pipeline(config(db, "ha", "pub_ha").build(), store(db, "ha"), dest);
    b.start();
    assertThat(b.status().phase()).isEqualTo(PipelineStatus.Phase.STANDBY);
    await().atMost(WAIT).until(() -> b.status().leaseHolder() != null);
    assertThat(b.status().leaseHolder().epoch()).isEqualTo(a.status().epoch());
    assertThat(b.status().leaseHolder().holder()).contains("pid " + ProcessHandle.current().pid());
    db.execute("UPDATE ha SET v = 1 WHERE id <= 10");
    dest.awaitRowsEqual(TableName.parse("ha"), SourceTables.read(db, TableName.parse("ha")), WAIT);
    assertThat(applyWalsenders(db, "ha")).isEqualTo(1);

    long epochOfA = a.status().epoch();
    a.close();
    assertThat(a.status().epoch()).isZero();
    await().atMost(WAIT).until(() -> b.status().phase() == PipelineStatus.Phase.RUNNING);
    assertThat(b.status().epoch()).isEqualTo(epochOfA + 1);
    db.execute("UPDATE ha SET v = 2 WHERE id > 190");
    dest.awaitRowsEqual(TableName.parse("ha"), SourceTables.read(db, TableName.parse("ha")), WAIT);
  }

  /** With FAIL_FAST the second instance fails at start, naming the holder, and touches nothing. */
  @Test
  void failFastNamesTheInstanceThatHoldsTheLease(TestDatabase db) {
    table(db, "ha_ff");
    Pipeline a =
        pipeline(
            config(db, "ha_ff", "pub_ha_ff").build(),
            store(db, "ha_ff"),
            RecordingDestination.create());
    a.start();
    RecordingDestination second = RecordingDestination.create();
    Pipeline b =
        pipeline(
            config(db, "ha_ff", "pub_ha_ff")
                .instanceMode(PipelineConfig.InstanceMode.FAIL_FAST)
                .build(),
            store(db, "ha_ff"),
            second);
    assertThatThrownBy(b::start)
        .isInstanceOf(EtlException.class)
        .satisfies(
            e -> {
              assertThat(((EtlException) e).kind()).isEqualTo(ErrorKind.PIPELINE_RUNNING_ELSEWHERE);
              assertThat(e.getMessage())
                  .contains("pid " + ProcessHandle.current().pid())
                  .contains("epoch " + a.status().epoch());
            });
    assertThat(second.startupCount()).isZero();
  }

  /** A destination that records the epoch and the moment of every call it gets. */
  private static final class EpochRecorder implements Destination {
    record Call(long epoch, long nanos) {}

    final RecordingDestination delegate;
    final List<Call> calls = new CopyOnWriteArrayList<>();
    volatile DestinationContext context;

    EpochRecorder(RecordingDestination delegate) {
      this.delegate = delegate;
    }

    /** The chunks of the ChunkEnd barriers this instance sent, in order. */
    final List<Integer> chunkEnds = new CopyOnWriteArrayList<>();

    private void record() {
      calls.add(new Call(context.epoch(), System.nanoTime()));
    }

    @Override
    public String name() {
      return delegate.name();
    }

    @Override
    public boolean supportsChunkedCopy() {
      return delegate.supportsChunkedCopy();
    }

    @Override
    public void startup(DestinationContext ctx) {
      context = ctx;
      delegate.startup(ctx);
    }

    @Override
    public void dropTableForCopy(ReplicatedTableSchema table, UUID attemptId, AsyncResult result) {
      record();
      delegate.dropTableForCopy(table, attemptId, result);
    }

    @Override
    public void writeTableRows(
        ReplicatedTableSchema table, TableCopyWrite write, AsyncResult result) {
      record();
      if (write instanceof TableCopyWrite.ChunkEnd end) {
        chunkEnds.add(end.chunk());
      }
      delegate.writeTableRows(table, write, result);
    }

    @Override
    public void writeEvents(
        StreamId stream, List<Event> events, WriteDurability durability, AsyncResult result) {
      record();
      delegate.writeEvents(stream, events, durability, result);
    }
  }

  /**
   * The active instance's lease session terminated (as a network cut would end it): it stops its
   * destination calls before the instance that takes over makes its first, as the epochs the
   * destinations saw show, and then waits as a standby.
   */
  @Test
  void anInstanceThatLosesItsLeaseStopsBeforeTheNextOneStarts(TestDatabase db) throws Exception {
    table(db, "ha_cut");
    RecordingDestination shared = RecordingDestination.create();
    EpochRecorder first = new EpochRecorder(shared);
    EpochRecorder second = new EpochRecorder(shared);
    PostgresStore storeA = store(db, "ha_cut");
    Pipeline a = pipeline(config(db, "ha_cut", "pub_ha_cut").build(), storeA, first);
    a.start();
    PipelineHarness.awaitAllReady(storeA, 1);
    Pipeline b = pipeline(config(db, "ha_cut", "pub_ha_cut").build(), store(db, "ha_cut"), second);
    b.start();
    assertThat(b.status().phase()).isEqualTo(PipelineStatus.Phase.STANDBY);
    Thread load =
        new Thread(
            () -> {
              for (int i = 0; i < 400; i++) {
                db.execute("UPDATE ha_cut SET v = v + 1 WHERE id = " + (1 + i % 200));
              }
            });
    load.start();
    await().atMost(WAIT).until(() -> first.calls.size() > 5);
    db.queryLong(
        "SELECT count(pg_terminate_backend(pid)) FROM pg_locks WHERE locktype = 'advisory'"
            + " AND objsubid = 2 AND objid = (SELECT id FROM etl.pipeline_leases"
            + " WHERE pipeline_id = 'ha_cut')");
    await().atMost(WAIT).until(() -> b.status().phase() == PipelineStatus.Phase.RUNNING);
    await().atMost(WAIT).until(() -> a.status().phase() == PipelineStatus.Phase.STANDBY);
    // the instance that lost its lease says so in its status (and its time in lastError)
    assertThat(a.status().lastError()).isNotNull();
    assertThat(a.status().errors())
        .anyMatch(m -> m.contains("the lease (epoch") && m.contains("could not be confirmed"));
    load.join();
    db.execute("INSERT INTO ha_cut VALUES (-1, -1)");
    shared.awaitRowsEqual(
        TableName.parse("ha_cut"), SourceTables.read(db, TableName.parse("ha_cut")), WAIT);

    long oldEpoch = a.status().leaseHolder() == null ? 0 : a.status().leaseHolder().epoch() - 1;
    long lastOfFirst =
        first.calls.stream().mapToLong(EpochRecorder.Call::nanos).max().orElseThrow();
    long firstOfSecond =
        second.calls.stream().mapToLong(EpochRecorder.Call::nanos).min().orElseThrow();
    assertThat(lastOfFirst).isLessThan(firstOfSecond);
    assertThat(second.calls).allMatch(c -> c.epoch() == b.status().epoch());
    assertThat(first.calls).allMatch(c -> c.epoch() < b.status().epoch());
    assertThat(oldEpoch).isLessThan(b.status().epoch());
    assertThat(applyWalsenders(db, "ha_cut")).isEqualTo(1);
    assertThat(store(db, "ha_cut").loadTableStates().values())
        .allMatch(s -> s.type() == TableState.Type.READY);
  }

  /**
   * The active instance loses its lease in the middle of a chunked copy: the standby that takes
   * over resumes the copy with the chunks the first instance completed, without a new {@code
   * dropTableForCopy}; it reads again at most the chunk that was in flight per copy connection.
   */
  @Test
  void aStandbyTakingOverInTheMiddleOfAChunkedCopyResumesItWithTheChunksDone(TestDatabase db)
      throws Exception {
    db.execute(
        "CREATE TABLE ha_chunk (id int PRIMARY KEY, v int, pad text)",
        "INSERT INTO ha_chunk SELECT g, 0, repeat('x', 100) FROM generate_series(1, 30000) g",
        "CREATE PUBLICATION pub_ha_chunk FOR TABLE ha_chunk");
    TableName name = TableName.parse("ha_chunk");
    // answers 15 ms late, so that the copy lasts long enough to cut it in the middle
    RecordingDestination shared =
        RecordingDestination.builder()
            .chunkedCopy(true)
            .answerExecutor(CompletableFuture.delayedExecutor(15, TimeUnit.MILLISECONDS))
            .build();
    EpochRecorder first = new EpochRecorder(shared);
    EpochRecorder second = new EpochRecorder(shared);
    // the first instance notices the loss of its lease at its next check, 2 s at most, and then
    // waits as a standby too; the standby checks every 100 ms, so that it is the one to take over
    PipelineConfig.Builder cfg =
        config(db, "ha_chunk", "pub_ha_chunk")
            .chunkedCopyMinBytes(0)
            .copyChunkBytes(64 * 1024)
            .copyConnectionsPerTable(1)
            .takeoverDelay(Duration.ofSeconds(5));
    PostgresStore storeA = store(db, "ha_chunk");
    Pipeline a = pipeline(cfg.leaseCheckInterval(Duration.ofSeconds(2)).build(), storeA, first);
    a.start();
    PostgresStore storeB = store(db, "ha_chunk");
    Pipeline b = pipeline(cfg.leaseCheckInterval(Duration.ofMillis(100)).build(), storeB, second);
    b.start();
    assertThat(b.status().phase()).isEqualTo(PipelineStatus.Phase.STANDBY);
    TableId table = PipelineHarness.oid(db, "ha_chunk");
    await()
        .atMost(WAIT)
        .pollInterval(Duration.ofMillis(20))
        .until(
            () ->
                storeA.chunks(table).stream().filter(PipelineStore.ChunkRecord::done).count() >= 3);
    db.queryLong(
        "SELECT count(pg_terminate_backend(pid)) FROM pg_locks WHERE locktype = 'advisory'"
            + " AND objsubid = 2 AND objid = (SELECT id FROM etl.pipeline_leases"
            + " WHERE pipeline_id = 'ha_chunk')");
    await().atMost(WAIT).until(() -> b.status().phase() == PipelineStatus.Phase.RUNNING);
    PipelineHarness.awaitAllReady(storeB, 1);
    db.execute("INSERT INTO ha_chunk VALUES (-1, -1, 'marker')");
    shared.awaitRowsEqual(name, SourceTables.read(db, name), WAIT);

    List<Integer> byFirst = first.chunkEnds;
    List<Integer> bySecond = second.chunkEnds;
    assertThat(byFirst).as("chunks the first instance completed").hasSizeGreaterThanOrEqualTo(3);
    assertThat(bySecond).as("the second instance resumed the copy").isNotEmpty();
    assertThat(bySecond.stream().filter(byFirst::contains).count())
        .as("chunks read again after the takeover (one copy connection)")
        .isLessThanOrEqualTo(1);
    assertThat(shared.count(DestinationOperation.DROP_TABLE_FOR_COPY, name))
        .as("the copy was not started over")
        .isEqualTo(1);
    assertThat(second.calls).allMatch(c -> c.epoch() == b.status().epoch());
    assertThat(storeB.chunks(table)).as("a finished chunked copy keeps no chunk rows").isEmpty();
    // the two instances share one recording destination, which sees each one's startup
    assertThat(shared.violations())
        .allMatch(v -> v.equals("startup called again without shutdown in between"));
  }

  /** Two pipelines with different ids in one store never block each other. */
  @Test
  void twoPipelinesOfDifferentIdsInOneStoreBothRun(TestDatabase db) {
    table(db, "ha_x");
    table(db, "ha_y");
    Pipeline x =
        pipeline(
            config(db, "ha_x", "pub_ha_x").build(),
            store(db, "ha_x"),
            RecordingDestination.create());
    Pipeline y =
        pipeline(
            config(db, "ha_y", "pub_ha_y").build(),
            store(db, "ha_y"),
            RecordingDestination.create());
    x.start();
    y.start();
    await().atMost(WAIT).until(() -> x.status().phase() == PipelineStatus.Phase.RUNNING);
    assertThat(y.status().phase()).isEqualTo(PipelineStatus.Phase.RUNNING);
    assertThat(x.status().epoch()).isPositive();
    assertThat(y.status().epoch()).isPositive();
  }

  /** The memory store's lease behaves the same for two pipelines sharing it in one JVM. */
  @Test
  void twoPipelinesSharingAMemoryStoreTakeTurns(TestDatabase db) {
    table(db, "ha_mem");
    MemoryStore shared = new MemoryStore("ha_mem");
    RecordingDestination dest = RecordingDestination.create();
    Pipeline a = pipeline(config(db, "ha_mem", "pub_ha_mem").build(), shared, dest);
    a.start();
    Pipeline b = pipeline(config(db, "ha_mem", "pub_ha_mem").build(), shared, dest);
    b.start();
    assertThat(b.status().phase()).isEqualTo(PipelineStatus.Phase.STANDBY);
    PipelineHarness.awaitAllReady(shared, 1);
    a.close();
    await().atMost(WAIT).until(() -> b.status().phase() == PipelineStatus.Phase.RUNNING);
    db.execute("INSERT INTO ha_mem VALUES (-1, -1)");
    dest.awaitRowsEqual(
        TableName.parse("ha_mem"), SourceTables.read(db, TableName.parse("ha_mem")), WAIT);
  }
}
