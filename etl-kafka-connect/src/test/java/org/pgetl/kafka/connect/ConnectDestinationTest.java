package org.pgetl.kafka.connect;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import org.apache.kafka.connect.source.SourceRecord;
import org.junit.jupiter.api.Test;
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
import org.pgetl.testkit.destination.SchemaBuilder;

class ConnectDestinationTest {
  private static final ReplicatedTableSchema T =
      SchemaBuilder.table(16401, "public.t").key("id", "int8").column("v", "text").build();
  private static final Duration NOW = Duration.ofMillis(50);

  private static ConnectDestination destination(long maxPollRecords) {
    RecordMapper mapper =
        new RecordMapper(
            new RecordMapper.Settings(
                "test",
                "p",
                "db",
                new TopicNamer(PgetlConnectorConfig.DEFAULT_TOPIC_PATTERN, "p", "p", "pub"),
                true,
                false,
                ColumnMapping.DecimalMode.PRECISE,
                ColumnMapping.ArrayMode.ARRAY));
    return new ConnectDestination(mapper, "p", maxPollRecords);
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
}
