package org.pgetl.kafka.connect;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.apache.kafka.connect.source.SourceRecord;
import org.apache.kafka.connect.source.TransactionContext;
import org.junit.jupiter.api.Test;
import org.pgetl.destination.AsyncResult;
import org.pgetl.destination.AsyncResult.Outcome;
import org.pgetl.destination.StreamId;
import org.pgetl.destination.TableCopyBatchId;
import org.pgetl.destination.TableCopyWrite;
import org.pgetl.destination.WriteDurability;
import org.pgetl.model.Event;
import org.pgetl.model.EventSequenceKey;
import org.pgetl.model.Lsn;
import org.pgetl.model.ReplicatedTableSchema;
import org.pgetl.model.TableRow;
import org.pgetl.testkit.destination.SchemaBuilder;

class ConnectDestinationTest {
  private static final ReplicatedTableSchema T =
      SchemaBuilder.table(16401, "public.t").key("id", "int8").column("v", "text").build();
  private static final Duration NOW = Duration.ofMillis(50);

  private static ConnectDestination destination(long maxPollRecords) {
    return new ConnectDestination(mapper(), "p", maxPollRecords);
  }

  private static RecordMapper mapper() {
    return new RecordMapper(
        new RecordMapper.Settings(
            "test",
            "p",
            "db",
            new TopicNamer(PgetlConnectorConfig.DEFAULT_TOPIC_PATTERN, "p", "p", "pub"),
            true,
            false,
            ColumnMapping.DecimalMode.PRECISE,
            ColumnMapping.ArrayMode.ARRAY));
  }

  /** Connect's transaction context, counting the commits the destination requests. */
  private static final class Transactions implements TransactionContext {
    int commits;

    @Override
    public void commitTransaction() {
      commits++;
    }

    @Override
    public void commitTransaction(SourceRecord record) {
      throw new AssertionError("not used");
    }

    @Override
    public void abortTransaction() {
      throw new AssertionError("never aborts");
    }

    @Override
    public void abortTransaction(SourceRecord record) {
      throw new AssertionError("never aborts");
    }
  }

  private static List<Event> inserts(long commit, long... ids) {
    Lsn c = Lsn.of(commit);
    List<Event> events = new ArrayList<>();
    events.add(new Event.Begin(Lsn.of(commit - 10), c, 0, Instant.EPOCH, 1));
    for (int i = 0; i < ids.length; i++) {
      events.add(new Event.Insert(Lsn.of(commit - 9 + i), c, i + 1, T, TableRow.of(ids[i], "x")));
    }
    return events;
  }

  private static TableCopyWrite.Batch batch(UUID attempt, long seq, long... ids) {
    List<TableRow> rows = new ArrayList<>();
    for (long id : ids) {
      rows.add(TableRow.of(id, "r"));
    }
    return new TableCopyWrite.Batch(new TableCopyBatchId(attempt, seq), rows);
  }

  @Test
  void aWriteIsDurableOnlyOnceKafkaAcknowledgedEachOfItsRecords() throws Exception {
    ConnectDestination d = destination(100);
    AsyncResult result = AsyncResult.create();
    d.writeEvents(StreamId.APPLY, inserts(1000, 1, 2, 3), WriteDurability.MAY_DEFER, result);
    assertThat(result.isAnswered()).isFalse();

    List<SourceRecord> records = d.poll(NOW);
    assertThat(records).hasSize(3);
    assertThat(records.get(0).sourceOffset().get("lsn")).isEqualTo(Lsn.of(1000).toString());
    d.acknowledged(records.get(2), null);
    d.acknowledged(records.get(0), null);
    assertThat(result.isAnswered()).isFalse();
    assertThat(d.heldRecords()).isEqualTo(1);
    d.acknowledged(records.get(1), null);
    assertThat(result.outcome()).contains(Outcome.DURABLE);
    assertThat(d.heldBytes()).isZero();
    assertThat(d.maxHeldBytes()).isPositive();
  }

  @Test
  void writesWithoutRecordsAndBarriersAreDurableAtOnce() {
    ConnectDestination d = destination(100);
    AsyncResult markers = AsyncResult.create();
    d.writeEvents(StreamId.APPLY, inserts(1000), WriteDurability.MAY_DEFER, markers);
    assertThat(markers.outcome()).contains(Outcome.DURABLE);
    AsyncResult barrier = AsyncResult.create();
    d.writeEvents(StreamId.APPLY, List.of(), WriteDurability.REQUIRE_DURABLE, barrier);
    assertThat(barrier.outcome()).contains(Outcome.DURABLE);
  }

  @Test
  void pollHandsOutWholeWritesUpToTheRecordLimit() throws Exception {
    ConnectDestination d = destination(4);
    d.writeEvents(
        StreamId.APPLY, inserts(1000, 1, 2, 3), WriteDurability.MAY_DEFER, AsyncResult.create());
    d.writeEvents(
        StreamId.APPLY, inserts(2000, 4, 5), WriteDurability.MAY_DEFER, AsyncResult.create());
    assertThat(d.poll(NOW)).hasSize(3);
    assertThat(d.poll(NOW)).hasSize(2);
    assertThat(d.poll(NOW)).isNull();
  }

  @Test
  void copyBatchesOfAnAbandonedAttemptAreNotWritten() throws Exception {
    ConnectDestination d = destination(100);
    UUID old = UUID.randomUUID();
    UUID current = UUID.randomUUID();
    d.dropTableForCopy(T, current, AsyncResult.create());
    AsyncResult stale = AsyncResult.create();
    d.writeTableRows(T, batch(old, 0, 1, 2), stale);
    assertThat(stale.outcome()).contains(Outcome.DURABLE);
    assertThat(d.poll(NOW)).isNull();

    AsyncResult fresh = AsyncResult.create();
    d.writeTableRows(T, batch(current, 0, 1, 2), fresh);
    List<SourceRecord> records = d.poll(NOW);
    assertThat(records).hasSize(2);
    records.forEach(r -> d.acknowledged(r, null));
    assertThat(fresh.outcome()).contains(Outcome.DURABLE);
    AsyncResult finish = AsyncResult.create();
    d.writeTableRows(T, new TableCopyWrite.Finish(current, 1, 2), finish);
    assertThat(finish.outcome()).contains(Outcome.DURABLE);
  }

  @Test
  void closingAbandonsQueuedWritesAndKeepsCountingSentOnes() throws Exception {
    ConnectDestination d = destination(3);
    AsyncResult sent = AsyncResult.create();
    AsyncResult queued = AsyncResult.create();
    d.writeEvents(StreamId.APPLY, inserts(1000, 1, 2), WriteDurability.MAY_DEFER, sent);
    d.writeEvents(StreamId.APPLY, inserts(2000, 3, 4), WriteDurability.MAY_DEFER, queued);
    List<SourceRecord> records = d.poll(NOW);
    assertThat(records).hasSize(2);

    d.close();
    assertThat(queued.outcome()).contains(Outcome.SHUTDOWN);
    assertThat(sent.isAnswered()).isFalse();
    records.forEach(r -> d.acknowledged(r, null));
    assertThat(sent.outcome()).contains(Outcome.DURABLE);

    AsyncResult late = AsyncResult.create();
    d.writeEvents(StreamId.APPLY, inserts(3000, 5), WriteDurability.MAY_DEFER, late);
    assertThat(late.outcome()).contains(Outcome.SHUTDOWN);
    assertThat(d.poll(NOW)).isNull();
    assertThat(d.heldBytes()).isZero();
  }

  @Test
  void eachRecordCarriesItsOwnEventsPositionAndTheApplyPartition() throws Exception {
    ConnectDestination d = destination(100);
    d.writeEvents(
        StreamId.APPLY, inserts(1000, 1, 2), WriteDurability.MAY_DEFER, AsyncResult.create());
    List<SourceRecord> records = d.poll(NOW);
    assertThat(records)
        .extracting(r -> (Object) r.sourceOffset().get("tx_ordinal"))
        .containsExactly(1L, 2L);
    assertThat(records.get(0).sourcePartition()).isEqualTo(Map.of("pipeline", "p"));
    assertThat(ConnectDestination.position(Map.copyOf(records.get(1).sourceOffset())))
        .isEqualTo(new EventSequenceKey(Lsn.of(1000), 2));
  }

  @Test
  void applyChangesAtOrBeforeTheCommittedOffsetAreDroppedAndAnsweredDurable() throws Exception {
    ConnectDestination d =
        new ConnectDestination(
            mapper(), "p", 100, null, new EventSequenceKey(Lsn.of(2000), 1), Map.of());
    AsyncResult old = AsyncResult.create();
    d.writeEvents(StreamId.APPLY, inserts(1000, 1, 2), WriteDurability.MAY_DEFER, old);
    assertThat(old.outcome()).contains(Outcome.DURABLE);
    AsyncResult straddling = AsyncResult.create();
    d.writeEvents(StreamId.APPLY, inserts(2000, 3, 4, 5), WriteDurability.MAY_DEFER, straddling);
    List<SourceRecord> records = d.poll(NOW);
    // ordinal 1 (id 3) is in Kafka already; 4 and 5 are not
    assertThat(records)
        .extracting(r -> (Object) r.sourceOffset().get("tx_ordinal"))
        .containsExactly(2L, 3L);
    assertThat(d.droppedEvents()).isEqualTo(3);
    records.forEach(r -> d.acknowledged(r, null));
    assertThat(straddling.outcome()).contains(Outcome.DURABLE);
  }

  @Test
  void underExactlyOnceATablesCopyIsOneTransaction() throws Exception {
    Transactions tx = new Transactions();
    ConnectDestination d = new ConnectDestination(mapper(), "p", 2, tx, null, Map.of());
    UUID attempt = UUID.randomUUID();
    d.dropTableForCopy(T, attempt, AsyncResult.create());
    AsyncResult first = AsyncResult.create();
    AsyncResult second = AsyncResult.create();
    AsyncResult change = AsyncResult.create();
    d.writeTableRows(T, batch(attempt, 0, 1, 2), first);
    assertThat(first.isAnswered()).isFalse();
    List<SourceRecord> sent = new ArrayList<>(d.poll(NOW));
    // handed to Connect: the copy may go on, nothing is committed while it is partly sent
    assertThat(first.outcome()).contains(Outcome.ACCEPTED);
    assertThat(Map.<String, Object>copyOf(sent.get(0).sourceOffset()))
        .containsEntry("attempt", attempt.toString())
        .containsKey("snapshot_lsn");
    assertThat(Map.<String, Object>copyOf(sent.get(0).sourcePartition()))
        .containsEntry("table", "16401");
    d.writeEvents(StreamId.APPLY, inserts(5000, 9), WriteDurability.MAY_DEFER, change);
    d.writeTableRows(T, batch(attempt, 1, 3, 4), second);
    sent.addAll(d.poll(NOW));
    sent.addAll(d.poll(NOW));
    assertThat(sent).hasSize(5);
    assertThat(second.outcome()).contains(Outcome.ACCEPTED);
    assertThat(tx.commits).isZero();
    assertThat(d.poll(NOW)).isNull();
    assertThat(tx.commits).isZero();

    AsyncResult finish = AsyncResult.create();
    d.writeTableRows(T, new TableCopyWrite.Finish(attempt, 2, 4), finish);
    assertThat(finish.isAnswered()).isFalse();
    // the copy is whole in the transaction: the next poll requests the commit
    assertThat(d.poll(Duration.ofSeconds(5))).isNull();
    assertThat(tx.commits).isEqualTo(1);
    // Connect calls commitRecord after the commit
    sent.forEach(r -> d.acknowledged(r, null));
    assertThat(finish.outcome()).contains(Outcome.DURABLE);
    assertThat(change.outcome()).contains(Outcome.DURABLE);
  }

  @Test
  void underExactlyOnceStreamRecordsAreCommittedAfterEachPollWhileNoCopyIsPartlySent()
      throws Exception {
    Transactions tx = new Transactions();
    ConnectDestination d = new ConnectDestination(mapper(), "p", 100, tx, null, Map.of());
    AsyncResult change = AsyncResult.create();
    d.writeEvents(StreamId.APPLY, inserts(1000, 1, 2), WriteDurability.MAY_DEFER, change);
    List<SourceRecord> records = d.poll(NOW);
    assertThat(tx.commits).isEqualTo(1);
    assertThat(change.isAnswered()).isFalse();
    records.forEach(r -> d.acknowledged(r, null));
    assertThat(change.outcome()).contains(Outcome.DURABLE);
  }

  @Test
  void underExactlyOnceAnAbandonedCopyNoLongerHoldsCommitsBack() throws Exception {
    Transactions tx = new Transactions();
    ConnectDestination d = new ConnectDestination(mapper(), "p", 100, tx, null, Map.of());
    UUID attempt = UUID.randomUUID();
    d.dropTableForCopy(T, attempt, AsyncResult.create());
    d.writeTableRows(T, batch(attempt, 0, 1), AsyncResult.create());
    d.poll(NOW);
    assertThat(tx.commits).isZero();
    d.copyAbandoned(T.id());
    assertThat(d.poll(Duration.ofSeconds(5))).isNull();
    assertThat(tx.commits).isEqualTo(1);
  }

  @Test
  void underExactlyOnceAStreamWriteIsAcceptedOnceALaterWriteOfItsStreamIsHandedOut()
      throws Exception {
    Transactions tx = new Transactions();
    ConnectDestination d = new ConnectDestination(mapper(), "p", 100, tx, null, Map.of());
    AsyncResult first = AsyncResult.create();
    AsyncResult second = AsyncResult.create();
    d.writeEvents(StreamId.APPLY, inserts(1000, 1, 2), WriteDurability.MAY_DEFER, first);
    d.writeEvents(StreamId.APPLY, inserts(2000, 3), WriteDurability.MAY_DEFER, second);
    List<SourceRecord> records = d.poll(NOW);
    assertThat(tx.commits).isEqualTo(1);
    // the newest write waits for the commit and will cover the first one
    assertThat(first.outcome()).contains(Outcome.ACCEPTED);
    assertThat(second.isAnswered()).isFalse();
    records.forEach(r -> d.acknowledged(r, null));
    assertThat(second.outcome()).contains(Outcome.DURABLE);
  }

  @Test
  void underExactlyOnceABarrierIsAnsweredDurableOnlyAfterTheNewestHandedOutWrite()
      throws Exception {
    Transactions tx = new Transactions();
    ConnectDestination d = new ConnectDestination(mapper(), "p", 100, tx, null, Map.of());
    AsyncResult first = AsyncResult.create();
    AsyncResult second = AsyncResult.create();
    d.writeEvents(StreamId.APPLY, inserts(1000, 1), WriteDurability.MAY_DEFER, first);
    d.writeEvents(StreamId.APPLY, inserts(2000, 2), WriteDurability.MAY_DEFER, second);
    List<SourceRecord> records = d.poll(NOW);
    assertThat(first.outcome()).contains(Outcome.ACCEPTED);
    AsyncResult barrier = AsyncResult.create();
    d.writeEvents(StreamId.APPLY, List.of(), WriteDurability.REQUIRE_DURABLE, barrier);
    // the accepted write is not committed yet: the barrier may not cover it
    assertThat(barrier.isAnswered()).isFalse();
    records.forEach(r -> d.acknowledged(r, null));
    assertThat(second.outcome()).contains(Outcome.DURABLE);
    assertThat(barrier.outcome()).contains(Outcome.DURABLE);
    assertThat(barrier.answerOrder()).isGreaterThan(second.answerOrder());
    // nothing waits any more: the next barrier is answered at once
    AsyncResult next = AsyncResult.create();
    d.writeEvents(StreamId.APPLY, List.of(), WriteDurability.REQUIRE_DURABLE, next);
    assertThat(next.outcome()).contains(Outcome.DURABLE);
  }

  @Test
  void underExactlyOnceACommitIsRequestedOnceTheCommitIntervalPassed() throws Exception {
    Transactions tx = new Transactions();
    ConnectDestination d =
        new ConnectDestination(mapper(), "p", 100, tx, Duration.ofMillis(300), null, Map.of());
    AsyncResult change = AsyncResult.create();
    d.writeEvents(StreamId.APPLY, inserts(1000, 1, 2), WriteDurability.MAY_DEFER, change);
    long start = System.nanoTime();
    List<SourceRecord> records = d.poll(NOW);
    assertThat(records).hasSize(2);
    assertThat(tx.commits).isZero();
    // an idle poll waits for the interval's end and requests the commit then
    assertThat(d.poll(Duration.ofSeconds(5))).isNull();
    assertThat(tx.commits).isEqualTo(1);
    assertThat(System.nanoTime() - start).isGreaterThanOrEqualTo(Duration.ofMillis(300).toNanos());
    assertThat(change.isAnswered()).isFalse();
    records.forEach(r -> d.acknowledged(r, null));
    assertThat(change.outcome()).contains(Outcome.DURABLE);
  }

  @Test
  void withoutExactlyOnceAChunkEndIsDurableAtOnceSinceItsBatchesWereAnsweredDurable()
      throws Exception {
    ConnectDestination d = destination(100);
    assertThat(d.supportsChunkedCopy()).isTrue();
    UUID attempt = UUID.randomUUID();
    long first = TableCopyBatchId.firstOfChunkRead(3, 1);
    AsyncResult batch = AsyncResult.create();
    d.writeTableRows(T, batch(attempt, first, 1, 2), batch);
    d.poll(NOW).forEach(r -> d.acknowledged(r, null));
    assertThat(batch.outcome()).contains(Outcome.DURABLE);
    AsyncResult end = AsyncResult.create();
    d.writeTableRows(T, new TableCopyWrite.ChunkEnd(attempt, 3, first, 1, 2), end);
    assertThat(end.outcome()).contains(Outcome.DURABLE);
  }

  @Test
  void underExactlyOnceCommitsFallBetweenChunkReadsAndAChunkEndWaitsForItsCommit()
      throws Exception {
    Transactions tx = new Transactions();
    ConnectDestination d = new ConnectDestination(mapper(), "p", 100, tx, null, Map.of());
    UUID attempt = UUID.randomUUID();
    d.dropTableForCopy(T, attempt, AsyncResult.create());
    long chunk0 = TableCopyBatchId.firstOfChunkRead(0, 0);
    long chunk1 = TableCopyBatchId.firstOfChunkRead(1, 0);
    // two reads in progress, one batch each handed out
    d.writeTableRows(T, batch(attempt, chunk0, 1), AsyncResult.create());
    d.writeTableRows(T, batch(attempt, chunk1, 10), AsyncResult.create());
    List<SourceRecord> sent = new ArrayList<>(d.poll(NOW));
    AsyncResult second = AsyncResult.create();
    d.writeTableRows(T, batch(attempt, chunk0 + 1, 2), second);
    sent.addAll(d.poll(NOW));
    assertThat(second.outcome()).contains(Outcome.ACCEPTED);
    assertThat(tx.commits).isZero();

    // chunk 0's read ends: chunk 1's read is still partly sent, so no commit yet
    AsyncResult end0 = AsyncResult.create();
    d.writeTableRows(T, new TableCopyWrite.ChunkEnd(attempt, 0, chunk0, 2, 2), end0);
    assertThat(d.poll(NOW)).isNull();
    assertThat(tx.commits).isZero();
    assertThat(end0.isAnswered()).isFalse();

    // chunk 1's read ends too: the transaction holds two whole reads and commits
    AsyncResult end1 = AsyncResult.create();
    d.writeTableRows(T, new TableCopyWrite.ChunkEnd(attempt, 1, chunk1, 1, 1), end1);
    assertThat(d.poll(Duration.ofSeconds(5))).isNull();
    assertThat(tx.commits).isEqualTo(1);
    assertThat(end0.isAnswered()).isFalse();
    // Connect acknowledges after the commit
    d.acknowledged(sent.get(0), null);
    d.acknowledged(sent.get(2), null);
    assertThat(end0.outcome()).contains(Outcome.DURABLE);
    assertThat(end1.isAnswered()).isFalse();
    d.acknowledged(sent.get(1), null);
    assertThat(end1.outcome()).contains(Outcome.DURABLE);

    // the Finish needs nothing more
    AsyncResult finish = AsyncResult.create();
    d.writeTableRows(T, new TableCopyWrite.Finish(attempt, 3, 3), finish);
    assertThat(finish.outcome()).contains(Outcome.DURABLE);
  }

  @Test
  void underExactlyOnceAReadCutShortIsSupersededByTheNextReadOfItsChunk() throws Exception {
    Transactions tx = new Transactions();
    ConnectDestination d = new ConnectDestination(mapper(), "p", 100, tx, null, Map.of());
    UUID attempt = UUID.randomUUID();
    d.dropTableForCopy(T, attempt, AsyncResult.create());
    long lost = TableCopyBatchId.firstOfChunkRead(4, 0);
    long again = TableCopyBatchId.firstOfChunkRead(4, 1);
    d.writeTableRows(T, batch(attempt, lost, 1), AsyncResult.create());
    List<SourceRecord> sent = new ArrayList<>(d.poll(NOW));
    // the connection was lost mid-read: the chunk is read again, and only that read ends
    d.writeTableRows(T, batch(attempt, again, 1), AsyncResult.create());
    sent.addAll(d.poll(NOW));
    assertThat(tx.commits).isZero();
    AsyncResult end = AsyncResult.create();
    d.writeTableRows(T, new TableCopyWrite.ChunkEnd(attempt, 4, again, 1, 1), end);
    assertThat(d.poll(Duration.ofSeconds(5))).isNull();
    assertThat(tx.commits).isEqualTo(1);
    sent.forEach(r -> d.acknowledged(r, null));
    assertThat(end.outcome()).contains(Outcome.DURABLE);
  }
}
