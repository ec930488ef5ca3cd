package org.pgetl.kafka.connect;

import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.connect.data.Schema;
import org.apache.kafka.connect.source.SourceRecord;
import org.jspecify.annotations.Nullable;
import org.pgetl.destination.AsyncResult;
import org.pgetl.destination.Destination;
import org.pgetl.destination.StreamId;
import org.pgetl.destination.TableCopyWrite;
import org.pgetl.destination.WriteDurability;
import org.pgetl.model.Event;
import org.pgetl.model.Lsn;
import org.pgetl.model.ReplicatedTableSchema;
import org.pgetl.model.TableId;
import org.pgetl.model.TableRow;
import org.pgetl.model.UpdatedRow;

/**
 * The destination a task's pipeline writes to: each call becomes a list of {@link SourceRecord}s
 * queued for {@link #poll}, and its {@link AsyncResult} is answered {@code durable()} once Kafka
 * acknowledged every one of those records ({@link #acknowledged}).
 *
 * <h2>Implementation notes</h2>
 *
 * <ul>
 *   <li>Never {@code accepted()}: Kafka acknowledges records one by one and out of order across
 *       partitions, so "this write and every earlier accepted write is durable" would not hold. A
 *       write stays unanswered until its last record is acknowledged; the engine's in-flight window
 *       (one batch per copy partition, {@code maxInFlightWrites} per stream) then bounds what the
 *       task holds, and a slow Kafka pauses the pipeline's intake instead of filling memory.
 *   <li>{@link #poll} (Connect's task thread) is the only consumer of the queue; the pipeline's
 *       threads convert rows into records themselves (the copy threads in parallel) and enqueue.
 *   <li>A write that produces no record (BEGIN, COMMIT, RELATION only; a stale copy attempt's
 *       batch) is answered {@code durable()} at once: it does not cover any earlier write, which
 *       the engine knows, since a durable answer never covers an unanswered write.
 *   <li>{@link #close()} (the task stops) answers every write still queued with {@code shutdown()}:
 *       the pipeline stops without a table error and resumes from its durable point. Writes already
 *       handed to Connect keep waiting for their acknowledgements, which go on arriving until
 *       Connect closes its producer.
 * </ul>
 */
final class ConnectDestination implements Destination {
  private final RecordMapper mapper;
  private final Map<String, ?> sourcePartition;
  private final long maxPollRecords;

  private final ReentrantLock lock = new ReentrantLock();
  private final Condition available = lock.newCondition();
  private final ArrayDeque<Write> queue = new ArrayDeque<>();
  private boolean closed;

  private final Map<TableId, UUID> currentAttempts = new ConcurrentHashMap<>();
  private final AtomicLong heldBytes = new AtomicLong();
  private final AtomicLong maxHeldBytes = new AtomicLong();
  private final AtomicLong heldRecords = new AtomicLong();
  private final AtomicLong acknowledgedRecords = new AtomicLong();

  ConnectDestination(RecordMapper mapper, String pipelineId, long maxPollRecords) {
    this.mapper = mapper;
    this.sourcePartition = Map.of("pipeline", pipelineId);
    this.maxPollRecords = maxPollRecords;
  }

  /**
   * Returns {@code kafka-connect}.
   *
   * @return the name
   */
  @Override
  public String name() {
    return "kafka-connect";
  }

  /**
   * Answers at once: Kafka keeps what an earlier attempt wrote; the new attempt's rows follow it
   * under the same keys.
   */
  @Override
  public void dropTableForCopy(ReplicatedTableSchema table, UUID attemptId, AsyncResult result) {
    currentAttempts.put(table.id(), attemptId);
    result.durable();
  }

  /** Queues a batch's {@code r} records; answers {@code Finish} at once (see the class notes). */
  @Override
  public void writeTableRows(
      ReplicatedTableSchema table, TableCopyWrite write, AsyncResult result) {
    if (!(write instanceof TableCopyWrite.Batch batch)) {
      // every batch of the attempt was answered, and only ever durable
      result.durable();
      return;
    }
    UUID current = currentAttempts.get(table.id());
    if (current != null && !current.equals(batch.id().attemptId())) {
      result.durable(); // a leftover of an abandoned attempt: not applied
      return;
    }
    long bytes = 0;
    for (TableRow row : batch.rows()) {
      bytes += row.sizeHintBytes();
    }
    Lsn snapshot = table.tableSchema().snapshotLsn();
    Map<String, Object> offset = Map.of("lsn", snapshot.toString(), "snapshot", true);
    Write w = new Write(result, bytes, offset);
    mapper.copyBatch(table, batch, w, () -> submit(w));
  }

  /** Queues the records of a batch of events; an empty barrier is answered at once. */
  @Override
  public void writeEvents(
      StreamId stream, List<Event> events, WriteDurability durability, AsyncResult result) {
    if (events.isEmpty()) {
      // nothing was ever answered accepted: every answered write is durable already
      result.durable();
      return;
    }
    if (stream.kind() == StreamId.Kind.TABLE_SYNC) {
      UUID current = currentAttempts.get(stream.table());
      if (current != null && !current.equals(stream.copyAttempt())) {
        result.durable(); // the catch-up of an abandoned attempt: not applied
        return;
      }
    }
    long bytes = 0;
    Event last = events.get(events.size() - 1);
    for (Event e : events) {
      bytes += eventBytes(e);
    }
    Map<String, Object> offset =
        Map.of("lsn", last.commitLsn().toString(), "tx_ordinal", last.txOrdinal());
    Write w = new Write(result, bytes, offset);
    mapper.events(stream, events, w);
    submit(w);
  }

  private static long eventBytes(Event e) {
    if (e instanceof Event.Insert i) {
      return i.row().sizeHintBytes();
    }
    if (e instanceof Event.Update u) {
      long old = u.oldRow() == null ? 0 : u.oldRow().row().sizeHintBytes();
      long row =
          u.row() instanceof UpdatedRow.Full f
              ? f.row().sizeHintBytes()
              : ((UpdatedRow.Partial) u.row()).presentValues().sizeHintBytes();
      return old + row;
    }
    if (e instanceof Event.Delete d) {
      return d.oldRow().row().sizeHintBytes();
    }
    return 64;
  }

  private void submit(Write w) {
    if (w.records.isEmpty()) {
      w.result.durable();
      return;
    }
    lock.lock();
    try {
      if (closed) {
        w.result.shutdown();
        return;
      }
      w.remaining.set(w.records.size());
      long held = heldBytes.addAndGet(w.bytes);
      heldRecords.addAndGet(w.records.size());
      maxHeldBytes.accumulateAndGet(held, Math::max);
      queue.addLast(w);
      available.signal();
    } finally {
      lock.unlock();
    }
  }

  /**
   * Hands queued records to Connect: whole writes, at least one, until {@code maxPollRecords} is
   * reached. Waits at most {@code timeout} for a first write.
   *
   * @return the records, or null when none came in time or the destination is closed
   */
  @Nullable List<SourceRecord> poll(Duration timeout) throws InterruptedException {
    long deadline = System.nanoTime() + timeout.toNanos();
    lock.lock();
    try {
      while (queue.isEmpty() && !closed) {
        long left = deadline - System.nanoTime();
        if (left <= 0) {
          return null;
        }
        available.awaitNanos(left);
      }
      if (closed) {
        return null;
      }
      List<SourceRecord> out = new ArrayList<>();
      while (!queue.isEmpty()
          && (out.isEmpty() || out.size() + queue.peekFirst().records.size() <= maxPollRecords)) {
        out.addAll(queue.pollFirst().records);
      }
      return out;
    } finally {
      lock.unlock();
    }
  }

  /**
   * Counts a record as acknowledged by Kafka (or dropped by a transformation, or its send error
   * ignored by {@code errors.tolerance=all}); answers its write {@code durable()} with the last
   * one.
   */
  void acknowledged(SourceRecord record, RecordMetadata metadata) {
    if (record instanceof TrackedRecord r) {
      acknowledgedRecords.incrementAndGet();
      heldRecords.decrementAndGet();
      Write w = r.write;
      if (w.remaining.decrementAndGet() == 0) {
        heldBytes.addAndGet(-w.bytes);
        w.result.durable();
      }
    }
  }

  /** Stops handing records out; every write still queued is answered {@code shutdown()}. */
  void close() {
    List<Write> abandoned;
    lock.lock();
    try {
      closed = true;
      abandoned = new ArrayList<>(queue);
      queue.clear();
      available.signalAll();
    } finally {
      lock.unlock();
    }
    for (Write w : abandoned) {
      heldBytes.addAndGet(-w.bytes);
      heldRecords.addAndGet(-w.records.size());
      w.result.shutdown();
    }
  }

  long heldBytes() {
    return heldBytes.get();
  }

  long maxHeldBytes() {
    return maxHeldBytes.get();
  }

  long heldRecords() {
    return heldRecords.get();
  }

  long acknowledgedRecords() {
    return acknowledgedRecords.get();
  }

  int queuedWrites() {
    lock.lock();
    try {
      return queue.size();
    } finally {
      lock.unlock();
    }
  }

  /** The records of one destination call and its answer. */
  private final class Write implements RecordMapper.Sink {
    final AsyncResult result;
    final long bytes;
    final Map<String, ?> offset;
    final List<SourceRecord> records = new ArrayList<>();
    final AtomicInteger remaining = new AtomicInteger();

    Write(AsyncResult result, long bytes, Map<String, ?> offset) {
      this.result = result;
      this.bytes = bytes;
      this.offset = offset;
    }

    @Override
    public void add(
        String topic,
        @Nullable Schema keySchema,
        @Nullable Object key,
        @Nullable Schema valueSchema,
        @Nullable Object value,
        long ts) {
      records.add(
          new TrackedRecord(
              this, sourcePartition, offset, topic, keySchema, key, valueSchema, value, ts));
    }
  }

  /** A source record that knows its write, so that its acknowledgement can count it. */
  static final class TrackedRecord extends SourceRecord {
    private final Write write;

    private TrackedRecord(
        Write write,
        Map<String, ?> partition,
        Map<String, ?> offset,
        String topic,
        @Nullable Schema keySchema,
        @Nullable Object key,
        @Nullable Schema valueSchema,
        @Nullable Object value,
        long timestamp) {
      super(partition, offset, topic, null, keySchema, key, valueSchema, value, timestamp);
      this.write = write;
    }

    @Override
    public boolean equals(Object o) {
      return this == o;
    }

    @Override
    public int hashCode() {
      return System.identityHashCode(this);
    }
  }
}
