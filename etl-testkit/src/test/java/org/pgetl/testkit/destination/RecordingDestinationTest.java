package org.pgetl.testkit.destination;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.pgetl.testkit.destination.Rows.row;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.pgetl.destination.AsyncResult;
import org.pgetl.destination.AsyncResult.Outcome;
import org.pgetl.destination.StreamId;
import org.pgetl.destination.TableCopyBatchId;
import org.pgetl.destination.TableCopyWrite;
import org.pgetl.destination.WriteDurability;
import org.pgetl.model.ColumnSchema;
import org.pgetl.model.Event;
import org.pgetl.model.IdentityKind;
import org.pgetl.model.ReplicatedTableSchema;
import org.pgetl.model.TableName;
import org.pgetl.model.TableRow;
import org.pgetl.model.TableSchema;
import org.pgetl.testkit.destination.RecordingDestination.Answering;

@Timeout(value = 1, unit = TimeUnit.MINUTES)
class RecordingDestinationTest {
  static final ReplicatedTableSchema ITEMS =
      SchemaBuilder.table(20001, "app.items").key("id", "int8").column("v", "text").build();
  static final ReplicatedTableSchema LOG =
      SchemaBuilder.table(20002, "app.log")
          .column("a", "int8")
          .column("b", "text")
          .identity(IdentityKind.FULL)
          .build();
  static final ReplicatedTableSchema OTHER =
      SchemaBuilder.table(20003, "app.other").key("id", "int8").column("v", "text").build();

  final RecordingDestination rec = RecordingDestination.create();
  final Transactions log = new Transactions();

  RecordingDestinationTest() {
    rec.startup(new InMemoryDestinationContext("test"));
  }

  static Outcome batch(
      RecordingDestination d, ReplicatedTableSchema t, TableCopyBatchId id, TableRow... rows) {
    AsyncResult r = AsyncResult.create();
    d.writeTableRows(t, new TableCopyWrite.Batch(id, List.of(rows)), r);
    return r.outcome().orElseThrow();
  }

  static Outcome drop(RecordingDestination d, ReplicatedTableSchema t, UUID attempt) {
    AsyncResult r = AsyncResult.create();
    d.dropTableForCopy(t, attempt, r);
    return r.outcome().orElseThrow();
  }

  static Outcome finish(
      RecordingDestination d, ReplicatedTableSchema t, UUID attempt, long batches, long rows) {
    AsyncResult r = AsyncResult.create();
    d.writeTableRows(t, new TableCopyWrite.Finish(attempt, batches, rows), r);
    return r.outcome().orElseThrow();
  }

  static Outcome write(RecordingDestination d, List<Event> events) {
    return write(d, events, WriteDurability.MAY_DEFER);
  }

  static Outcome write(RecordingDestination d, List<Event> events, WriteDurability durability) {
    AsyncResult r = AsyncResult.create();
    d.writeEvents(StreamId.APPLY, events, durability, r);
    return r.outcome().orElseThrow();
  }

  static TableCopyBatchId id(UUID attempt, long seq) {
    return new TableCopyBatchId(attempt, seq);
  }

  @Test
  void recordsEveryCallInOrder() {
    UUID attempt = UUID.randomUUID();
    drop(rec, ITEMS, attempt);
    batch(rec, ITEMS, id(attempt, 0), TableRow.of(1L, "a"));
    finish(rec, ITEMS, attempt, 1, 1);
    write(rec, log.begin().relation(ITEMS).insert(ITEMS, 2L, "b").commit());
    rec.shutdown();

    assertThat(rec.calls())
        .extracting(DestinationCall::operation)
        .containsExactly(
            DestinationOperation.STARTUP,
            DestinationOperation.DROP_TABLE_FOR_COPY,
            DestinationOperation.WRITE_TABLE_ROWS,
            DestinationOperation.FINISH,
            DestinationOperation.WRITE_EVENTS,
            DestinationOperation.SHUTDOWN);
    assertThat(rec.calls())
        .extracting(DestinationCall::sequence)
        .containsExactly(0L, 1L, 2L, 3L, 4L, 5L);
    assertThat(rec.calls().get(2).batchId()).isEqualTo(id(attempt, 0));
    assertThat(rec.calls().get(4).durability()).isEqualTo(WriteDurability.MAY_DEFER);
    assertThat(rec.calls().get(4).threadName()).isEqualTo(Thread.currentThread().getName());
    assertThat(rec.startupCount()).isEqualTo(1);
    assertThat(rec.shutdownCount()).isEqualTo(1);
    assertThat(rec.count(DestinationOperation.FINISH, ITEMS.name())).isEqualTo(1);
    assertThat(rec.count(DestinationOperation.WRITE_EVENTS, ITEMS.name())).isEqualTo(1);
    assertThat(rec.count(DestinationOperation.WRITE_EVENTS, OTHER.name())).isZero();
    assertThat(rec.batchIds()).containsExactly(id(attempt, 0));
    assertThat(rec.events()).hasSize(4);
    assertThat(rec.events(ITEMS.name()))
        .extracting(Event::kind)
        .containsExactly(Event.Kind.RELATION, Event.Kind.INSERT);
    assertThat(rec.rows(ITEMS.name())).containsExactly(row(1L, "a"), row(2L, "b"));
    assertThat(rec.rows(ITEMS.id())).isEqualTo(rec.rows(ITEMS.name()));
    assertThat(rec.schema(ITEMS.name())).contains(ITEMS);
    assertThat(rec.tableNames()).containsExactly(ITEMS.name());
    assertThat(rec.violations()).isEmpty();
    assertThat(rec.anomalies()).isEmpty();
  }

  @Test
  void copyUpsertsByKeyAndCountsEqualRowsOfATableWithoutKey() {
    UUID attempt = UUID.randomUUID();
    UUID logAttempt = UUID.randomUUID();
    drop(rec, ITEMS, attempt);
    drop(rec, LOG, logAttempt);
    batch(rec, ITEMS, id(attempt, 0), TableRow.of(1L, "a"), TableRow.of(2L, "b"));
    batch(rec, ITEMS, id(attempt, 1), TableRow.of(1L, "a2"));
    batch(rec, LOG, id(logAttempt, 0), TableRow.of(1L, "x"), TableRow.of(1L, "x"));

    assertThat(rec.rows(ITEMS.name())).containsExactly(row(1L, "a2"), row(2L, "b"));
    assertThat(rec.rows(LOG.name())).containsExactly(row(1L, "x"), row(1L, "x"));
    assertThat(rec.rowCount(LOG.name())).isEqualTo(2);
  }

  @Test
  void redeliveredBatchIsSkippedAndCounted() {
    UUID attempt = UUID.randomUUID();
    drop(rec, LOG, attempt);
    batch(rec, LOG, id(attempt, 0), TableRow.of(1L, "x"));
    Outcome again = batch(rec, LOG, id(attempt, 0), TableRow.of(1L, "x"));

    assertThat(again).isEqualTo(Outcome.DURABLE);
    assertThat(rec.rows(LOG.name())).containsExactly(row(1L, "x"));
    assertThat(rec.duplicateBatchIds()).containsExactly(id(attempt, 0));
  }

  @Test
  void withoutDeduplicationARedeliveredBatchIsAppliedAgain() {
    RecordingDestination naive = RecordingDestination.builder().deduplicate(false).build();
    naive.startup(new InMemoryDestinationContext("test"));
    UUID attempt = UUID.randomUUID();
    drop(naive, LOG, attempt);
    batch(naive, LOG, id(attempt, 0), TableRow.of(1L, "x"));
    batch(naive, LOG, id(attempt, 0), TableRow.of(1L, "x"));

    assertThat(naive.deduplicates()).isFalse();
    assertThat(naive.rows(LOG.name())).containsExactly(row(1L, "x"), row(1L, "x"));
    assertThat(naive.duplicateBatchIds()).containsExactly(id(attempt, 0));
  }

  @Test
  void dropTableForCopyClearsTheTableAndForgetsAttemptsAndEventKeys() {
    UUID attempt = UUID.randomUUID();
    drop(rec, LOG, attempt);
    batch(rec, LOG, id(attempt, 0), TableRow.of(1L, "x"));
    List<Event> tx = log.begin().relation(LOG).insert(LOG, 2L, "y").commit();
    write(rec, tx);

    UUID second = UUID.randomUUID();
    drop(rec, LOG, second);
    assertThat(rec.rows(LOG.name())).isEmpty();
    batch(rec, LOG, id(second, 0), TableRow.of(1L, "x"));
    batch(rec, LOG, id(attempt, 1), TableRow.of(9L, "stale")); // late batch of the first attempt
    write(rec, tx); // the same keys are new again after the drop

    assertThat(rec.rows(LOG.name())).containsExactly(row(1L, "x"), row(2L, "y"));
    assertThat(rec.duplicateEvents()).isEmpty();
    assertThat(rec.count(DestinationOperation.DROP_TABLE_FOR_COPY, LOG.name())).isEqualTo(2);
    assertThat(rec.staleBatchIds()).containsExactly(id(attempt, 1));
    assertThat(rec.violations()).isEmpty();
  }

  @Test
  void replayedEventsAreSkippedPerTableButRelationsNever() {
    List<Event> tx1 = log.begin().relation(LOG).insert(LOG, 1L, "a").commit();
    List<Event> tx2 = log.begin().insert(LOG, 2L, "b").commit();
    write(rec, tx1);
    write(rec, tx2);
    List<Event> replay = new ArrayList<>(tx1);
    replay.addAll(tx2);
    replay.addAll(log.begin().insert(LOG, 3L, "c").commit());
    write(rec, replay);

    assertThat(rec.rows(LOG.name())).containsExactly(row(1L, "a"), row(2L, "b"), row(3L, "c"));
    assertThat(rec.duplicateEvents())
        .extracting(Event::kind)
        .containsExactly(Event.Kind.INSERT, Event.Kind.INSERT);
    assertThat(rec.events()).hasSize(tx1.size() + tx2.size() + replay.size());
  }

  @Test
  void aLaggingStreamOfAnotherTableIsNotAReplay() {
    Transactions.Tx tx1 = log.begin().relation(ITEMS).insert(ITEMS, 1L, "a").relation(OTHER);
    tx1.insert(OTHER, 1L, "o").commit();
    Transactions.Tx tx2 = log.begin().insert(ITEMS, 2L, "b").insert(OTHER, 2L, "p");
    tx2.commit();
    write(rec, tx1.commitFor(ITEMS.name()));
    write(rec, tx2.commitFor(ITEMS.name()));
    write(rec, tx1.commitFor(OTHER.name()));
    write(rec, tx2.commitFor(OTHER.name()));

    assertThat(rec.rows(OTHER.name())).containsExactly(row(1L, "o"), row(2L, "p"));
    assertThat(rec.duplicateEvents()).isEmpty();
  }

  @Test
  void withoutDeduplicationReplayedEventsAreAppliedAndListed() {
    rec.setDeduplicate(false);
    List<Event> tx1 = log.begin().relation(LOG).insert(LOG, 1L, "a").commit();
    write(rec, tx1);
    write(rec, tx1);

    assertThat(rec.rows(LOG.name())).containsExactly(row(1L, "a"), row(1L, "a"));
    assertThat(rec.duplicateEvents()).hasSize(1);
  }

  @Test
  void updatesFindTheRowByOldKeyAndMoveIt() {
    write(
        rec,
        log.begin()
            .relation(ITEMS)
            .insert(ITEMS, 1L, "a")
            .insert(ITEMS, 2L, "b")
            .update(ITEMS, 1L, "a2")
            .updateKey(ITEMS, List.of(2L), 20L, "b2")
            .commit());

    assertThat(rec.rows(ITEMS.name())).containsExactly(row(1L, "a2"), row(20L, "b2"));
    assertThat(rec.anomalies()).isEmpty();
  }

  @Test
  void partialUpdateKeepsTheStoredValuesOfMissingColumns() {
    ReplicatedTableSchema docs =
        SchemaBuilder.table(20010, "app.docs")
            .key("id", "int8")
            .column("title", "text")
            .column("body", "text")
            .column("tags", "text")
            .build();
    write(
        rec,
        log.begin()
            .relation(docs)
            .insert(docs, 1L, "t", "a long body", "x")
            .updatePartial(docs, new int[] {2}, 1L, "t2", "y")
            .updatePartial(docs, new int[] {1, 2}, 1L, "z")
            .commit());

    assertThat(rec.rows(docs.name())).containsExactly(row(1L, "t2", "a long body", "z"));
  }

  @Test
  void fullIdentityUpdatesAndDeletesOneOccurrenceByWholeRow() {
    write(
        rec,
        log.begin()
            .relation(LOG)
            .insert(LOG, 1L, "x")
            .insert(LOG, 1L, "x")
            .insert(LOG, 2L, "y")
            .updateFull(LOG, List.of(1L, "x"), 1L, "z")
            .deleteFull(LOG, 2L, "y")
            .commit());

    assertThat(rec.rows(LOG.name())).containsExactly(row(1L, "x"), row(1L, "z"));
  }

  @Test
  void deleteByKeyRemovesTheRow() {
    write(
        rec,
        log.begin()
            .relation(ITEMS)
            .insert(ITEMS, 1L, "a")
            .insert(ITEMS, 2L, "b")
            .delete(ITEMS, 1L)
            .commit());

    assertThat(rec.rows(ITEMS.name())).containsExactly(row(2L, "b"));
  }

  @Test
  void replicaIdentityIndexKeysRowsByTheIndexColumns() {
    ReplicatedTableSchema users =
        SchemaBuilder.table(20011, "app.users")
            .column("id", "int8")
            .column("email", "text")
            .column("name", "text")
            .identityIndex("email")
            .build();
    write(
        rec,
        log.begin()
            .relation(users)
            .insert(users, 1L, "a@x", "A")
            .insert(users, 2L, "b@x", "B")
            .updateKey(users, List.of("a@x"), 1L, "a@y", "A")
            .delete(users, "b@x")
            .commit());

    assertThat(rec.rows(users.name())).containsExactly(row(1L, "a@y", "A"));
  }

  @Test
  void truncateClearsTheNamedTablesOnly() {
    write(
        rec,
        log.begin()
            .relation(ITEMS)
            .insert(ITEMS, 1L, "a")
            .relation(OTHER)
            .insert(OTHER, 1L, "o")
            .relation(LOG)
            .insert(LOG, 1L, "l")
            .truncate(ITEMS, LOG)
            .commit());

    assertThat(rec.rows(ITEMS.name())).isEmpty();
    assertThat(rec.rows(LOG.name())).isEmpty();
    assertThat(rec.rows(OTHER.name())).containsExactly(row(1L, "o"));
    assertThat(rec.events(LOG.name())).extracting(Event::kind).contains(Event.Kind.TRUNCATE);
  }

  @Test
  void aRenamedColumnKeepsItsValuesAndOneDroppedAndAddedAgainStartsEmpty() {
    write(rec, log.begin().relation(ITEMS).insert(ITEMS, 1L, "a").commit());
    List<ColumnSchema> cols = new ArrayList<>(ITEMS.columns());
    ColumnSchema v = cols.get(1);
    cols.set(
        1,
        new ColumnSchema(
            "w",
            v.typeOid(),
            v.typeModifier(),
            v.typeName(),
            v.ordinalPosition(),
            0,
            v.nullable(),
            null));
    ReplicatedTableSchema renamed =
        ReplicatedTableSchema.of(
            new TableSchema(ITEMS.id(), ITEMS.name(), cols, ITEMS.tableSchema().snapshotLsn()),
            new boolean[] {true, true},
            ITEMS.identity(),
            ITEMS.identityColumnIndexes());
    write(rec, log.begin().relation(renamed).insert(renamed, 2L, "b").commit());

    assertThat(rec.rows(ITEMS.name())).containsExactly(row(1L, "a"), row(2L, "b"));

    ReplicatedTableSchema readded =
        SchemaBuilder.from(renamed).dropColumn("w").column("w", "text").build();
    write(rec, log.begin().relation(readded).insert(readded, 3L, "c").commit());

    assertThat(rec.rows(ITEMS.name())).containsExactly(row(1L, null), row(2L, null), row(3L, "c"));
  }

  @Test
  void relationsReshapeStoredRowsByColumnAttnum() {
    write(rec, log.begin().relation(ITEMS).insert(ITEMS, 1L, "a").commit());
    ReplicatedTableSchema wider = SchemaBuilder.from(ITEMS).column("n", "int4").build();
    write(rec, log.begin().relation(wider).insert(wider, 2L, "b", 7).commit());

    assertThat(rec.rows(ITEMS.name())).containsExactly(row(1L, "a", null), row(2L, "b", 7));
    assertThat(rec.schema(ITEMS.id())).contains(wider);

    ReplicatedTableSchema narrower = SchemaBuilder.from(wider).dropColumn("v").build();
    write(rec, log.begin().relation(narrower).update(narrower, 2L, 8).commit());

    assertThat(rec.rows(ITEMS.name())).containsExactly(row(1L, null), row(2L, 8));
  }

  @Test
  void aReplayedOlderRelationDoesNotUndoANewerSchema() {
    ReplicatedTableSchema wider = SchemaBuilder.from(ITEMS).column("n", "int4").build();
    List<Event> tx1 = log.begin().relation(ITEMS).insert(ITEMS, 1L, "a").commit();
    List<Event> tx2 = log.begin().relation(wider).insert(wider, 2L, "b", 7).commit();
    write(rec, tx1);
    write(rec, tx2);

    // a restart replays from transaction 1: its relation is older than the rows' schema
    List<Event> replay = new ArrayList<>(tx1);
    replay.addAll(tx2);
    write(rec, replay);

    assertThat(rec.rows(ITEMS.name())).containsExactly(row(1L, "a", null), row(2L, "b", 7));
  }

  @Test
  void answersDurableOnTheCallingThreadByDefault() {
    AsyncResult r = AsyncResult.create();
    rec.writeEvents(StreamId.APPLY, log.begin().commit(), WriteDurability.MAY_DEFER, r);

    assertThat(r.outcome()).contains(Outcome.DURABLE);
    assertThat(rec.answering()).isEqualTo(Answering.DURABLE);
  }

  @Test
  void acceptedModeConfirmsDurabilityOnBarriersAndOnDemand() {
    RecordingDestination acc = RecordingDestination.builder().answering(Answering.ACCEPTED).build();
    acc.startup(new InMemoryDestinationContext("test"));
    UUID attempt = UUID.randomUUID();

    assertThat(drop(acc, ITEMS, attempt)).isEqualTo(Outcome.ACCEPTED);
    assertThat(batch(acc, ITEMS, id(attempt, 0), TableRow.of(1L, "a"))).isEqualTo(Outcome.ACCEPTED);
    assertThat(finish(acc, ITEMS, attempt, 1, 1)).isEqualTo(Outcome.DURABLE);
    assertThat(write(acc, log.begin().relation(ITEMS).insert(ITEMS, 2L, "b").commit()))
        .isEqualTo(Outcome.ACCEPTED);
    assertThat(write(acc, List.of(), WriteDurability.REQUIRE_DURABLE)).isEqualTo(Outcome.DURABLE);
    assertThat(write(acc, log.begin().insert(ITEMS, 3L, "c").commit())).isEqualTo(Outcome.ACCEPTED);
    acc.flushAccepted();
    assertThat(write(acc, log.begin().insert(ITEMS, 4L, "d").commit())).isEqualTo(Outcome.DURABLE);
    assertThat(write(acc, log.begin().insert(ITEMS, 5L, "e").commit())).isEqualTo(Outcome.ACCEPTED);

    acc.setAnswering(Answering.DURABLE);
    assertThat(write(acc, log.begin().insert(ITEMS, 6L, "f").commit())).isEqualTo(Outcome.DURABLE);
    assertThat(acc.rows(ITEMS.name())).hasSize(6);
  }

  @Test
  void answersFromTheExecutorWhenGivenOne() throws Exception {
    ExecutorService answers =
        Executors.newSingleThreadExecutor(r -> new Thread(r, "test-answer-thread"));
    try {
      RecordingDestination async = RecordingDestination.builder().answerExecutor(answers).build();
      async.startup(new InMemoryDestinationContext("test"));
      AsyncResult r = AsyncResult.create();
      CompletableFuture<String> answeredOn = new CompletableFuture<>();
      r.completion().thenRun(() -> answeredOn.complete(Thread.currentThread().getName()));

      async.writeEvents(StreamId.APPLY, log.begin().commit(), WriteDurability.MAY_DEFER, r);

      assertThat(answeredOn.get(10, TimeUnit.SECONDS)).isEqualTo("test-answer-thread");
      assertThat(r.outcome()).contains(Outcome.DURABLE);
    } finally {
      answers.shutdownNow();
    }
  }

  @Test
  void durablePointFollowsDurableAnswersOnly() {
    RecordingDestination acc = RecordingDestination.builder().answering(Answering.ACCEPTED).build();
    acc.startup(new InMemoryDestinationContext("test"));
    List<Event> tx1 = log.begin().relation(ITEMS).insert(ITEMS, 1L, "a").commit();
    List<Event> tx2 = log.begin().insert(ITEMS, 2L, "b").commit();
    write(acc, tx1);

    assertThat(acc.durableEventKey()).isEmpty();
    assertThat(acc.lastDurable()).isEmpty();

    write(acc, tx2, WriteDurability.REQUIRE_DURABLE);
    Event.Commit commit2 = (Event.Commit) tx2.get(tx2.size() - 1);

    assertThat(acc.durableEventKey()).contains(commit2.sequenceKey());
    assertThat(acc.durableCommitEndLsn()).contains(commit2.endLsn());
    assertThat(acc.lastDurable().orElseThrow().events()).isEqualTo(tx2);
  }

  @Test
  void contractViolationsAreListed() {
    RecordingDestination fresh = RecordingDestination.create();
    UUID a1 = UUID.randomUUID();
    batch(fresh, ITEMS, id(a1, 0), TableRow.of(1L, "a")); // before startup, without drop
    fresh.startup(new InMemoryDestinationContext("test"));
    write(fresh, List.of(), WriteDurability.MAY_DEFER);
    batch(fresh, ITEMS, id(UUID.randomUUID(), 0), TableRow.of(2L, "b")); // no drop
    UUID other = UUID.randomUUID();
    drop(fresh, OTHER, other);
    batch(fresh, OTHER, id(other, 0), TableRow.of(1L, "too", "wide"));
    finish(fresh, OTHER, UUID.randomUUID(), 1, 1); // another attempt than the drop named
    finish(fresh, OTHER, other, 2, 1); // one batch arrived
    fresh.shutdown();
    fresh.shutdown();

    assertThat(fresh.violations())
        .satisfiesExactly(
            v -> assertThat(v).contains("before startup"),
            v -> assertThat(v).contains("without dropTableForCopy first"),
            v -> assertThat(v).contains("empty writeEvents with MAY_DEFER"),
            v -> assertThat(v).contains("without dropTableForCopy first"),
            v -> assertThat(v).contains("has a row of 3 values for 2 columns"),
            v -> assertThat(v).contains("but dropTableForCopy named " + other),
            v -> assertThat(v).contains("counts 2 batches, 1 arrived"),
            v -> assertThat(v).contains("shutdown called without a startup"));
  }

  @Test
  void changesThatFindNoRowAreListedAsAnomalies() {
    write(
        rec,
        log.begin()
            .relation(ITEMS)
            .delete(ITEMS, 9L)
            .update(ITEMS, 8L, "x")
            .updatePartial(ITEMS, new int[] {1}, 7L)
            .commit());

    assertThat(rec.anomalies())
        .satisfiesExactly(
            a -> assertThat(a).startsWith("delete from app.items at ").contains("does not hold"),
            a -> assertThat(a).contains("stored as an insert"),
            a -> assertThat(a).startsWith("partial update"));
    assertThat(rec.rows(ITEMS.name())).containsExactly(row(8L, "x"));
  }

  @Test
  void awaitRowsWakesOnAWriteFromAnotherThread() throws Exception {
    ExecutorService writer = Executors.newSingleThreadExecutor();
    try {
      Future<?> later =
          writer.submit(
              () -> {
                rec.await(() -> rec.calls().size() >= 1, Duration.ofSeconds(5));
                write(rec, log.begin().relation(ITEMS).insert(ITEMS, 1L, "a").commit());
              });

      List<List<Object>> rows =
          rec.awaitRows(ITEMS.name(), r -> r.size() == 1, Duration.ofSeconds(10));

      assertThat(rows).containsExactly(row(1L, "a"));
      assertThat(rec.awaitEvent(e -> e.kind() == Event.Kind.INSERT, Duration.ofSeconds(1)))
          .isInstanceOf(Event.Insert.class);
      assertThat(rec.awaitRowsEqual(ITEMS.name(), List.of(List.of(1L, "a")), Duration.ofSeconds(1)))
          .hasSize(1);
      later.get(10, TimeUnit.SECONDS);
    } finally {
      writer.shutdownNow();
    }
  }

  @Test
  void awaitFailsWithAnAssertionErrorAfterTheTimeout() {
    assertThatThrownBy(
            () ->
                rec.awaitRows(
                    new TableName("app", "none"), r -> !r.isEmpty(), Duration.ofMillis(50)))
        .isInstanceOf(AssertionError.class)
        .hasMessageContaining("rows of app.none did not match");
    assertThatThrownBy(
            () -> rec.awaitEvent(e -> e.kind() == Event.Kind.DELETE, Duration.ofMillis(20)))
        .isInstanceOf(AssertionError.class);
  }

  @Test
  void concurrentCopyPartitionsAndStreamsKeepEveryRow() throws Exception {
    UUID attempt = UUID.randomUUID();
    drop(rec, ITEMS, attempt);
    ExecutorService pool = Executors.newFixedThreadPool(6);
    try {
      List<Future<?>> done = new ArrayList<>();
      for (int p = 0; p < 6; p++) {
        int partition = p;
        done.add(
            pool.submit(
                () -> {
                  for (int b = 0; b < 50; b++) {
                    long base = (partition * 50L + b) * 10;
                    TableRow[] rows = new TableRow[10];
                    for (int i = 0; i < 10; i++) {
                      rows[i] = TableRow.of(base + i, "v");
                    }
                    batch(rec, ITEMS, id(attempt, partition * 50L + b), rows);
                  }
                }));
      }
      for (Future<?> f : done) {
        f.get(30, TimeUnit.SECONDS);
      }
    } finally {
      pool.shutdownNow();
    }

    assertThat(rec.rowCount(ITEMS.name())).isEqualTo(3000);
    assertThat(rec.batchIds()).hasSize(300);
    assertThat(rec.duplicateBatchIds()).isEmpty();
  }
}
