package org.pgetl.kafka.connect;

import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.connect.data.Schema;
import org.apache.kafka.connect.source.SourceRecord;
import org.apache.kafka.connect.source.TransactionContext;
import org.jspecify.annotations.Nullable;
import org.pgetl.destination.AsyncResult;
import org.pgetl.destination.Destination;
import org.pgetl.destination.StreamId;
import org.pgetl.destination.TableCopyBatchId;
import org.pgetl.destination.TableCopyWrite;
import org.pgetl.destination.WriteDurability;
import org.pgetl.model.Event;
import org.pgetl.model.EventSequenceKey;
import org.pgetl.model.Lsn;
import org.pgetl.model.ReplicatedTableSchema;
import org.pgetl.model.TableId;
import org.pgetl.model.TableRow;
import org.pgetl.model.UpdatedRow;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The destination a task's pipeline writes to: each call becomes a list of {@link SourceRecord}s
 * queued for {@link #poll}, and its {@link AsyncResult} is answered {@code durable()} once Kafka
 * acknowledged every one of those records ({@link #acknowledged}).
 *
 * <h2>Implementation notes</h2>
 *
 * <ul>
 *   <li>Without exactly-once, never {@code accepted()}: Kafka acknowledges records one by one and
 *       out of order across partitions, so "this write and every earlier accepted write is durable"
 *       would not hold (with exactly-once, see below). A write stays unanswered until its last
 *       record is acknowledged; the engine's in-flight window (one batch per copy partition, {@code
 *       maxInFlightWrites} per stream) then bounds what the task holds, and a slow Kafka pauses the
 *       pipeline's intake instead of filling memory.
 *   <li>{@link #poll} (Connect's task thread) is the only consumer of the queue; the pipeline's
 *       threads convert rows into records themselves (the copy threads in parallel) and enqueue.
 *   <li>A write that produces no record (BEGIN, COMMIT, RELATION only; a stale copy attempt's
 *       batch) is answered {@code durable()} at once: it does not cover any earlier write, which
 *       the engine knows, since a durable answer never covers an unanswered write.
 *   <li>{@link #close()} (the task stops) answers every write still queued with {@code shutdown()}:
 *       the pipeline stops without a table error and resumes from its durable point. Writes already
 *       handed to Connect keep waiting for their acknowledgements, which go on arriving until
 *       Connect closes its producer.
 *   <li>Offsets: a stream record carries its own event's position ({@code lsn}, {@code
 *       tx_ordinal}), so the offset Connect commits never covers a record Kafka did not take. The
 *       apply stream's records use the partition {@code {pipeline}}, a table's copy and catch-up
 *       records the partition {@code {pipeline, table}} with the copy attempt and its snapshot. An
 *       apply event at or before the {@code committed} position given at creation (Connect's last
 *       committed offset) is dropped: Kafka holds it already.
 * </ul>
 *
 * <h2>Exactly-once (Connect's {@code transaction.boundary=connector})</h2>
 *
 * With a {@link TransactionContext}, Connect calls {@code commitRecord} only after the producer
 * transaction holding the record committed, so a write answered durable is committed in Kafka. The
 * destination decides the transaction boundaries: a commit is requested at the end of a {@link
 * #poll} once {@code commitInterval} passed since the first record of the open transaction was
 * handed out (after every poll with an interval of 0), and only while no table's copy is partly
 * sent, so a table's copy lands in one transaction and a worker killed mid-copy leaves nothing of
 * it visible to a {@code read_committed} consumer. Copy batches are therefore answered {@code
 * accepted()} when handed to Connect (the copy could not otherwise reach its end), and the {@code
 * Finish} barrier is answered durable once every record of the attempt was committed. Writes of the
 * streams wait for that commit: a long copy pauses the streams' intake after their in-flight
 * windows, never the copy.
 *
 * <p>A table copied in chunks commits between its chunk reads instead: a read counts as partly sent
 * from its first handed-out batch (its read is in the batch's sequence, {@link TableCopyBatchId})
 * until its {@code ChunkEnd}, which is answered durable once the read's batches were committed. A
 * copy thread waits for that answer before it reads its next chunk, so the reads in progress end
 * and let a commit through: each commit holds whole chunk reads, and a worker killed mid-chunk
 * leaves none of that chunk visible; the store records the chunk done after the commit, and a
 * worker killed between the two sends the chunk again (the reads of one commit at most). A read
 * that ended without its end (a lost connection) is superseded by the chunk's next read.
 *
 * <p>A stream's write handed to Connect is answered {@code accepted()} as soon as a later write of
 * the same stream is handed out too, so that only the newest handed-out write of each stream waits
 * for the commit and the pipeline's in-flight window does not fill while Connect converts and
 * commits. The newest write's durable answer covers the accepted ones: they went into the same
 * transaction or an earlier one, and Connect acknowledges records only after their transaction
 * committed, in order. An empty write (a durability barrier) submitted while an earlier write of
 * its stream is not yet durable is answered durable right after the last such write, never at once.
 * A {@code REQUIRE_DURABLE} write is never answered {@code accepted()}.
 */
final class ConnectDestination implements Destination {
  private static final Logger LOG = LoggerFactory.getLogger(ConnectDestination.class);

  private final RecordMapper mapper;
  private final String pipelineId;
  private final Map<String, ?> sourcePartition;
  private final long maxPollRecords;
  private final @Nullable TransactionContext transactions;
  private final long commitIntervalNanos;
  private final @Nullable EventSequenceKey committed;
  private final Map<TableId, Map<String, ?>> copiedInKafka;

  private final ReentrantLock lock = new ReentrantLock();
  private final Condition available = lock.newCondition();
  private final ArrayDeque<Write> queue = new ArrayDeque<>();
  private boolean closed;

  // exactly-once: the copy attempts with records in the open transaction and no Finish yet, and
  // whether records were handed out since the last requested commit (guarded by the lock)
  private final Map<UUID, Copy> copies = new HashMap<>();
  private int partlySent;
  private boolean uncommitted;
  // when the first record of the open transaction was handed out (System.nanoTime)
  private long uncommittedSince;
  private long commits;
  // exactly-once, per stream: its newest handed-out write and its last submitted write, while not
  // yet durable (guarded by the lock)
  private final Map<StreamId, Write> newestHandedOut = new HashMap<>();
  private final Map<StreamId, Write> lastSubmitted = new HashMap<>();

  private final Map<TableId, UUID> currentAttempts = new ConcurrentHashMap<>();
  private final AtomicLong droppedEvents = new AtomicLong();
  private final AtomicLong heldBytes = new AtomicLong();
  private final AtomicLong maxHeldBytes = new AtomicLong();
  private final AtomicLong heldRecords = new AtomicLong();
  private final AtomicLong acknowledgedRecords = new AtomicLong();

  ConnectDestination(RecordMapper mapper, String pipelineId, long maxPollRecords) {
    this(mapper, pipelineId, maxPollRecords, null, null, Map.of());
  }

  ConnectDestination(
      RecordMapper mapper,
      String pipelineId,
      long maxPollRecords,
      @Nullable TransactionContext transactions,
      @Nullable EventSequenceKey committed,
      Map<TableId, Map<String, ?>> copiedInKafka) {
    this(mapper, pipelineId, maxPollRecords, transactions, Duration.ZERO, committed, copiedInKafka);
  }

  /**
   * Creates the destination of a task.
   *
   * @param transactions Connect's transaction context (exactly-once with connector-defined
   *     boundaries), or null
   * @param commitInterval with transactions: the least time from the first record handed out after
   *     a commit to the next requested commit
   * @param committed the apply stream's position in Connect's last committed offset, or null
   * @param copiedInKafka the committed offsets of copies of tables the store will copy again
   */
  ConnectDestination(
      RecordMapper mapper,
      String pipelineId,
      long maxPollRecords,
      @Nullable TransactionContext transactions,
      Duration commitInterval,
      @Nullable EventSequenceKey committed,
      Map<TableId, Map<String, ?>> copiedInKafka) {
    this.mapper = mapper;
    this.commitIntervalNanos = commitInterval.toNanos();
    this.pipelineId = pipelineId;
    this.sourcePartition = applyPartition(pipelineId);
    this.maxPollRecords = maxPollRecords;
    this.transactions = transactions;
    this.committed = committed;
    this.copiedInKafka = new ConcurrentHashMap<>(copiedInKafka);
  }

  /** The source partition of the apply stream's records. */
  static Map<String, String> applyPartition(String pipelineId) {
    return Map.of("pipeline", pipelineId);
  }

  /** The source partition of a table's copy and catch-up records. */
  static Map<String, String> tablePartition(String pipelineId, TableId table) {
    return Map.of("pipeline", pipelineId, "table", Long.toString(table.oid()));
  }

  /**
   * The position of an apply-stream offset, or null when the offset holds none.
   *
   * @param offset an offset Connect stored
   */
  static @Nullable EventSequenceKey position(@Nullable Map<String, Object> offset) {
    if (offset == null
        || !(offset.get("lsn") instanceof String lsn)
        || !(offset.get("tx_ordinal") instanceof Number ordinal)) {
      return null;
    }
    return new EventSequenceKey(Lsn.parse(lsn), ordinal.longValue());
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
    UUID previous = currentAttempts.put(table.id(), attemptId);
    if (previous != null) {
      copyAbandoned(previous);
    }
    Map<String, ?> earlier = copiedInKafka.remove(table.id());
    if (earlier != null) {
      LOG.warn(
          "pipeline {}: table {} is copied again although Kafka holds a committed copy of it ({});"
              + " the store had not recorded that copy's end: its rows appear twice",
          pipelineId,
          table.name(),
          earlier);
    }
    result.durable();
  }

  /**
   * Stops waiting for the end of a table's copy attempt (its table failed or was reset): its
   * records sent so far stay in the open transaction and are committed with the next commit.
   */
  void copyAbandoned(TableId table) {
    UUID attempt = currentAttempts.get(table);
    if (attempt != null) {
      copyAbandoned(attempt);
    }
  }

  private void copyAbandoned(UUID attempt) {
    lock.lock();
    try {
      Copy c = copies.get(attempt);
      if (c != null) {
        c.abandoned = true;
        updatePartly(c);
      }
    } finally {
      lock.unlock();
    }
  }

  /**
   * Large tables may be copied in chunks: Kafka is a log, so every row and change is written as it
   * comes, and a consumer that keeps the last record per key sees the source's table (see
   * docs/kafka-connect.md). With exactly-once, transactions commit between chunk reads.
   */
  @Override
  public boolean supportsChunkedCopy() {
    return true;
  }

  /**
   * Queues a batch's {@code r} records; answers {@code Finish} and {@code ChunkEnd} at once, or
   * with exactly-once once their batches are committed (see the class notes).
   */
  @Override
  public void writeTableRows(
      ReplicatedTableSchema table, TableCopyWrite write, AsyncResult result) {
    UUID current = currentAttempts.get(table.id());
    if (write instanceof TableCopyWrite.ChunkEnd end) {
      if (transactions == null || (current != null && !current.equals(end.attemptId()))) {
        // every batch of the read was answered, and only ever durable
        result.durable();
        return;
      }
      chunkEnded(end, result);
      return;
    }
    if (!(write instanceof TableCopyWrite.Batch batch)) {
      TableCopyWrite.Finish finish = (TableCopyWrite.Finish) write;
      if (transactions == null || (current != null && !current.equals(finish.attemptId()))) {
        // every batch of the attempt was answered, and only ever durable
        result.durable();
        return;
      }
      finished(finish.attemptId(), result);
      return;
    }
    if (current != null && !current.equals(batch.id().attemptId())) {
      result.durable(); // a leftover of an abandoned attempt: not applied
      return;
    }
    long bytes = 0;
    for (TableRow row : batch.rows()) {
      bytes += row.sizeHintBytes();
    }
    Lsn snapshot = table.tableSchema().snapshotLsn();
    Map<String, Object> offset =
        Map.of("snapshot_lsn", snapshot.toString(), "attempt", batch.id().attemptId().toString());
    Write w =
        new Write(mapper.encoder(), result, bytes, tablePartition(pipelineId, table.id()), offset);
    if (transactions != null) {
      w.copy = batch.id().attemptId();
      w.batch = batch.id().sequence();
    }
    mapper.copyBatch(table, batch, w, () -> submit(w));
  }

  /**
   * The end of a chunk read under exactly-once: the read no longer holds commits back, and its
   * answer waits until every batch of the read is committed (acknowledged).
   */
  private void chunkEnded(TableCopyWrite.ChunkEnd end, AsyncResult result) {
    boolean now;
    lock.lock();
    try {
      Copy c = copies.get(end.attemptId());
      if (c == null) {
        now = true; // nothing of the attempt waits for an acknowledgement
      } else {
        c.open.remove(readOf(end.firstBatch()));
        updatePartly(c);
        now = c.unacked.subSet(end.firstBatch(), end.firstBatch() + end.batches()).isEmpty();
        if (!now) {
          c.chunkEnds.add(new ChunkWait(end.firstBatch(), end.batches(), result));
        }
      }
    } finally {
      lock.unlock();
    }
    if (now) {
      result.durable();
    }
  }

  /** The read a batch belongs to: its chunk and the chunk's read (see {@link TableCopyBatchId}). */
  private static long readOf(long sequence) {
    return sequence >>> 24;
  }

  /**
   * Counts a copy attempt as partly sent while some read of it has batches handed out and no end:
   * no commit may fall inside it. A table copied whole has one read, which its {@code Finish} ends.
   */
  private void updatePartly(Copy c) {
    boolean partly = c.finish == null && !c.abandoned && !c.open.isEmpty();
    if (partly != c.partly) {
      c.partly = partly;
      partlySent += partly ? 1 : -1;
      if (!partly) {
        available.signalAll();
      }
    }
  }

  /** The Finish of a copy attempt under exactly-once: durable once its records are committed. */
  private void finished(UUID attempt, AsyncResult result) {
    boolean now;
    lock.lock();
    try {
      Copy c = copies.get(attempt);
      if (c == null) {
        now = true;
      } else {
        c.finish = result;
        updatePartly(c);
        now = c.pendingWrites == 0;
        if (now) {
          copies.remove(attempt);
        }
        // the copy is whole in the open transaction: a commit may follow
        available.signalAll();
      }
    } finally {
      lock.unlock();
    }
    if (now) {
      result.durable();
    }
  }

  /** Queues the records of a batch of events; an empty barrier is answered at once. */
  @Override
  public void writeEvents(
      StreamId stream, List<Event> events, WriteDurability durability, AsyncResult result) {
    if (events.isEmpty()) {
      emptyWrite(stream, result);
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
    for (Event e : events) {
      bytes += eventBytes(e);
    }
    boolean apply = stream.kind() == StreamId.Kind.APPLY;
    Write w;
    Map<String, Object> base;
    if (apply) {
      w = new Write(mapper.encoder(), result, bytes, sourcePartition, Map.of());
      base = Map.of();
    } else {
      TableId table = Objects.requireNonNull(stream.table(), "table");
      w = new Write(mapper.encoder(), result, bytes, tablePartition(pipelineId, table), Map.of());
      base = Map.of("attempt", String.valueOf(stream.copyAttempt()));
    }
    w.stream = stream;
    w.durability = durability;
    for (Event e : events) {
      if (apply
          && committed != null
          && isRowChange(e)
          && e.sequenceKey().compareTo(committed) <= 0) {
        // Kafka holds it: the store's durable point lags Connect's committed offset
        droppedEvents.incrementAndGet();
        continue;
      }
      Map<String, Object> offset = new HashMap<>(base);
      offset.put("lsn", e.commitLsn().toString());
      offset.put("tx_ordinal", e.txOrdinal());
      w.offset = offset;
      // one event at a time, so that each record carries its own event's position
      mapper.events(stream, List.of(e), w);
    }
    submit(w);
  }

  private static boolean isRowChange(Event e) {
    return switch (e.kind()) {
      case INSERT, UPDATE, DELETE, TRUNCATE -> true;
      default -> false;
    };
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

  /**
   * Answers a write without records: durable at once, unless an earlier write of its stream waits
   * for a commit (see the class notes); then right after the last of them.
   */
  private void emptyWrite(StreamId stream, AsyncResult result) {
    lock.lock();
    try {
      Write last = lastSubmitted.get(stream);
      if (last != null) {
        last.followers.add(result);
        return;
      }
    } finally {
      lock.unlock();
    }
    result.durable();
  }

  private void submit(Write w) {
    if (w.records.isEmpty()) {
      if (w.stream != null) {
        emptyWrite(w.stream, w.result);
      } else {
        w.result.durable();
      }
      return;
    }
    lock.lock();
    try {
      if (closed) {
        w.result.shutdown();
        return;
      }
      w.remaining.set(w.records.size());
      if (w.copy != null) {
        Copy c = copies.computeIfAbsent(w.copy, a -> new Copy());
        c.pendingWrites++;
        c.unacked.add(w.batch);
      } else if (transactions != null && w.stream != null) {
        lastSubmitted.put(w.stream, w);
      }
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
    List<Write> accepted = new ArrayList<>();
    List<SourceRecord> out = new ArrayList<>();
    lock.lock();
    try {
      while (true) {
        if (closed) {
          return null;
        }
        long now = System.nanoTime();
        if (!queue.isEmpty() || commitDue(now)) {
          break;
        }
        long left = deadline - now;
        if (left <= 0) {
          return null;
        }
        if (commitWaits()) {
          // wake up when the commit falls due
          left = Math.min(left, Math.max(1, uncommittedSince + commitIntervalNanos - now));
        }
        available.awaitNanos(left);
      }
      while (!queue.isEmpty()
          && (out.isEmpty() || out.size() + queue.peekFirst().records.size() <= maxPollRecords)) {
        Write w = queue.pollFirst();
        out.addAll(w.records);
        if (w.copy != null) {
          Copy c = copies.get(w.copy);
          if (c != null) {
            long read = readOf(w.batch);
            // a read of the same chunk before this one ended without its end: it sends no more
            c.open.removeIf(r -> r >>> 16 == read >>> 16 && r < read);
            c.open.add(read);
            updatePartly(c);
          }
          accepted.add(w);
        } else if (transactions != null && w.stream != null) {
          // the newest write of its stream waits for the commit; the one before it need not
          Write previous = newestHandedOut.put(w.stream, w);
          if (previous != null && previous.durability != WriteDurability.REQUIRE_DURABLE) {
            accepted.add(previous);
          }
        }
      }
      if (transactions != null) {
        if (!uncommitted && !out.isEmpty()) {
          uncommitted = true;
          uncommittedSince = System.nanoTime();
        }
        if (commitDue(System.nanoTime())) {
          // after this batch: no copy is partly in the transaction
          transactions.commitTransaction();
          uncommitted = false;
          commits++;
        }
      }
    } finally {
      lock.unlock();
    }
    // the copy goes on while its records wait for the transaction's commit (see the class notes)
    accepted.forEach(w -> w.result.accepted());
    return out.isEmpty() ? null : out;
  }

  /** Whether records wait for a commit that no partly sent copy holds back. */
  private boolean commitWaits() {
    return transactions != null && uncommitted && partlySent == 0;
  }

  /**
   * Whether a commit is to be requested now: records wait for one, no copy is partly sent and the
   * commit interval passed.
   */
  private boolean commitDue(long now) {
    return commitWaits() && now - uncommittedSince >= commitIntervalNanos;
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
        if (w.copy != null) {
          copyWriteDone(w.copy, w.batch);
        } else if (transactions != null && w.stream != null) {
          streamWriteDone(w);
        }
      }
    }
  }

  /** A stream's write is durable: so are the empty writes that waited for it. */
  private void streamWriteDone(Write w) {
    List<AsyncResult> followers;
    lock.lock();
    try {
      StreamId stream = Objects.requireNonNull(w.stream);
      newestHandedOut.remove(stream, w);
      lastSubmitted.remove(stream, w);
      followers = new ArrayList<>(w.followers);
      w.followers.clear();
    } finally {
      lock.unlock();
    }
    followers.forEach(AsyncResult::durable);
  }

  private void copyWriteDone(UUID attempt, long batch) {
    AsyncResult finish = null;
    List<AsyncResult> ended = new ArrayList<>();
    lock.lock();
    try {
      Copy c = copies.get(attempt);
      if (c != null) {
        c.unacked.remove(batch);
        for (java.util.Iterator<ChunkWait> it = c.chunkEnds.iterator(); it.hasNext(); ) {
          ChunkWait cw = it.next();
          if (cw.covers(batch)
              && c.unacked.subSet(cw.firstBatch, cw.firstBatch + cw.batches).isEmpty()) {
            ended.add(cw.result);
            it.remove();
          }
        }
        if (--c.pendingWrites == 0 && c.finish != null) {
          finish = c.finish;
          copies.remove(attempt);
        }
      }
    } finally {
      lock.unlock();
    }
    ended.forEach(AsyncResult::durable);
    if (finish != null) {
      finish.durable();
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
      // the queued writes are abandoned: a barrier now waits for the newest handed-out write only
      lastSubmitted.clear();
      lastSubmitted.putAll(newestHandedOut);
      available.signalAll();
    } finally {
      lock.unlock();
    }
    for (Write w : abandoned) {
      heldBytes.addAndGet(-w.bytes);
      heldRecords.addAndGet(-w.records.size());
      w.result.shutdown();
      List<AsyncResult> followers;
      lock.lock();
      try {
        followers = new ArrayList<>(w.followers);
        w.followers.clear();
      } finally {
        lock.unlock();
      }
      followers.forEach(AsyncResult::shutdown);
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

  long droppedEvents() {
    return droppedEvents.get();
  }

  /** The producer transaction commits requested so far. */
  long commits() {
    lock.lock();
    try {
      return commits;
    } finally {
      lock.unlock();
    }
  }

  int queuedWrites() {
    lock.lock();
    try {
      return queue.size();
    } finally {
      lock.unlock();
    }
  }

  /**
   * A copy attempt under exactly-once: its batch writes not yet committed, the reads with batches
   * handed out and no end yet, the chunk ends waiting for their batches, its Finish.
   */
  private static final class Copy {
    int pendingWrites;
    final java.util.NavigableSet<Long> unacked = new java.util.TreeSet<>();
    final java.util.Set<Long> open = new java.util.HashSet<>();
    final List<ChunkWait> chunkEnds = new ArrayList<>();
    boolean abandoned;
    // counted in partlySent
    boolean partly;
    @Nullable AsyncResult finish;
  }

  /** A chunk read's end waiting for its batches' acknowledgements. */
  private record ChunkWait(long firstBatch, long batches, AsyncResult result) {
    boolean covers(long batch) {
      return batch >= firstBatch && batch < firstBatch + batches;
    }
  }

  /** The records of one destination call and its answer. */
  private static final class Write implements RecordMapper.Sink {
    final @Nullable JsonRecordEncoder encoder;
    final AsyncResult result;
    // the rows' size, plus the bytes of serialized records (record.encoding)
    long bytes;
    final Map<String, ?> partition;
    Map<String, ?> offset;
    final List<SourceRecord> records = new ArrayList<>();
    final AtomicInteger remaining = new AtomicInteger();
    // the copy attempt of a batch under exactly-once, else null, and the batch's sequence
    @Nullable UUID copy;
    long batch;
    // a stream's write: its stream and durability; the empty writes submitted after it, answered
    // once it is durable (guarded by the destination's lock)
    @Nullable StreamId stream;
    WriteDurability durability = WriteDurability.MAY_DEFER;
    final List<AsyncResult> followers = new ArrayList<>();

    Write(
        @Nullable JsonRecordEncoder encoder,
        AsyncResult result,
        long bytes,
        Map<String, ?> partition,
        Map<String, ?> offset) {
      this.encoder = encoder;
      this.result = result;
      this.bytes = bytes;
      this.partition = partition;
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
      if (encoder != null) {
        byte[] keyBytes = encoder.encode(topic, keySchema, key);
        byte[] valueBytes = encoder.encode(topic, valueSchema, value);
        bytes +=
            (keyBytes == null ? 0 : keyBytes.length) + (valueBytes == null ? 0 : valueBytes.length);
        records.add(
            new TrackedRecord(
                this,
                partition,
                offset,
                topic,
                keyBytes == null ? null : Schema.OPTIONAL_BYTES_SCHEMA,
                keyBytes,
                valueBytes == null ? null : Schema.OPTIONAL_BYTES_SCHEMA,
                valueBytes,
                ts));
        return;
      }
      records.add(
          new TrackedRecord(
              this, partition, offset, topic, keySchema, key, valueSchema, value, ts));
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
