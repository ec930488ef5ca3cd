package org.pgetl.testkit.destination;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.BooleanSupplier;
import java.util.function.Predicate;
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;
import org.pgetl.destination.AsyncResult;
import org.pgetl.destination.AsyncResult.Outcome;
import org.pgetl.destination.Destination;
import org.pgetl.destination.DestinationContext;
import org.pgetl.destination.StreamId;
import org.pgetl.destination.TableCopyBatchId;
import org.pgetl.destination.TableCopyWrite;
import org.pgetl.destination.WriteDurability;
import org.pgetl.model.Event;
import org.pgetl.model.EventSequenceKey;
import org.pgetl.model.Lsn;
import org.pgetl.model.OldRow;
import org.pgetl.model.ReplicatedTableSchema;
import org.pgetl.model.TableId;
import org.pgetl.model.TableName;
import org.pgetl.model.TableRow;
import org.pgetl.model.UpdatedRow;

/**
 * A destination for tests: records every call and keeps each table's rows by key, so that a test
 * can compare the destination's contents with the source and look at what the pipeline sent.
 *
 * <h2>Contents</h2>
 *
 * Each table (by {@link TableId}, with the latest {@link ReplicatedTableSchema} it got) holds rows
 * by key: the identity columns' values for a table with a primary key or replica identity index,
 * every value for a table without one (REPLICA IDENTITY FULL or NOTHING), where equal rows then
 * count as many times as they were inserted. Copy batches and inserts upsert; an update finds the
 * row by its old key (a {@link OldRow.Key} or {@link OldRow.Full}, or the new row's key when the
 * key did not change) and moves it when the key changed; an {@link UpdatedRow.Partial} keeps the
 * stored values of its missing columns; a delete removes the row by key or by whole old row; a
 * truncate clears the tables it names; {@code dropTableForCopy} clears the table. A schema change
 * (a {@code Relation} event, or a write with another schema) reshapes the stored rows by column
 * attnum ({@code ColumnSchema.ordinalPosition()}), as the destination contract asks: a renamed or
 * retyped column keeps its values, an added column reads null, a dropped column's values go away. A
 * table without columns holds rows without values, one per source row.
 *
 * <h2>Deduplication</h2>
 *
 * Like a real idempotent destination, it skips a copy batch whose {@link TableCopyBatchId} the
 * current copy attempt already stored, a copy batch of another attempt than the one the last {@code
 * dropTableForCopy} named (a late batch of an abandoned attempt: {@link #staleBatchIds()}), a write
 * of the catch-up stream of such an attempt ({@link #staleWrites()}), and an insert, update, delete
 * or truncate whose {@link Event#sequenceKey()} is at or below the greatest key applied to its
 * table since the table's last drop. {@code Relation} events are never skipped (they share the key
 * of the change they precede), but one older than the event that set the table's current columns
 * does not reshape the rows (a replay from before a schema change). Duplicates are counted either
 * way ({@link #duplicateEvents()}, {@link #duplicateBatchIds()}); with {@link
 * Builder#deduplicate(boolean) deduplicate(false)} they are applied as well, like a naive
 * destination.
 *
 * <h2>Answers</h2>
 *
 * Every write is applied on the calling thread before the method returns; then the result is
 * answered. {@link Answering#DURABLE} (the default) answers {@code durable()} at once. {@link
 * Answering#ACCEPTED} answers {@code accepted()} and confirms durability later: {@code durable()}
 * to the copy {@code Finish} barrier, to every {@code REQUIRE_DURABLE} write, and to the next write
 * after {@link #flushAccepted()}. With an {@linkplain Builder#answerExecutor(Executor) answer
 * executor} the answer is sent from that executor instead of the calling thread.
 *
 * <h2>Checks</h2>
 *
 * Calls that break the destination contract (a write before {@code startup} or after {@code
 * shutdown}, an empty {@code MAY_DEFER} write, a copy without {@code dropTableForCopy} first, rows
 * of the wrong width) are listed in {@link #violations()}; changes that do not fit the stored data
 * (an update or delete of a row it does not hold) in {@link #anomalies()}. Both are still recorded.
 *
 * <p>Thread-safe: one lock guards the state and is never held while answering a result. Every write
 * wakes the {@code await...} methods, which wait on that signal (no polling).
 */
public final class RecordingDestination implements Destination {

  /** How a {@link RecordingDestination} answers writes. */
  public enum Answering {
    /** Every call is answered {@code durable()}. */
    DURABLE,
    /**
     * Drops and writes are answered {@code accepted()}; the {@code Finish} barrier, every {@code
     * REQUIRE_DURABLE} write and the next write after {@link #flushAccepted()} are answered {@code
     * durable()}.
     */
    ACCEPTED
  }

  /** Builds a {@link RecordingDestination}. */
  public static final class Builder {
    private String name = "recording";
    private Answering answering = Answering.DURABLE;
    private @Nullable Executor answerExecutor;
    private boolean deduplicate = true;
    private boolean chunkedCopy;

    private Builder() {}

    /**
     * Sets whether the destination takes tables copied in chunks ({@link
     * Destination#supportsChunkedCopy()}): while a table's copy attempt is open, an update or
     * delete of a row it does not hold is ignored, as the contract asks, instead of being recorded
     * as an anomaly.
     *
     * @param chunkedCopy true to take chunked copies; default false
     * @return this builder
     */
    public Builder chunkedCopy(boolean chunkedCopy) {
      this.chunkedCopy = chunkedCopy;
      return this;
    }

    /**
     * Sets the destination name.
     *
     * @param name the name; default {@code recording}
     * @return this builder
     */
    public Builder name(String name) {
      this.name = Objects.requireNonNull(name, "name");
      return this;
    }

    /**
     * Sets how writes are answered.
     *
     * @param answering the answering mode; default {@link Answering#DURABLE}
     * @return this builder
     */
    public Builder answering(Answering answering) {
      this.answering = Objects.requireNonNull(answering, "answering");
      return this;
    }

    /**
     * Answers from this executor instead of the calling thread.
     *
     * @param executor the executor, or null to answer on the calling thread (the default)
     * @return this builder
     */
    public Builder answerExecutor(@Nullable Executor executor) {
      this.answerExecutor = executor;
      return this;
    }

    /**
     * Sets whether redelivered copy batches and replayed events are skipped.
     *
     * @param deduplicate true (the default) to skip duplicates, false to apply them too
     * @return this builder
     */
    public Builder deduplicate(boolean deduplicate) {
      this.deduplicate = deduplicate;
      return this;
    }

    /**
     * Builds the destination.
     *
     * @return a new, empty destination
     */
    public RecordingDestination build() {
      return new RecordingDestination(this);
    }
  }

  private final String name;
  private final ReentrantLock lock = new ReentrantLock();
  private final Condition changed = lock.newCondition();

  private volatile Answering answering;
  private volatile @Nullable Executor answerExecutor;
  private volatile boolean deduplicate;
  private final boolean chunkedCopy;

  // guarded by lock
  private boolean flushRequested;
  private long sequence;
  private int startups;
  private int shutdowns;
  private boolean running;
  private final Map<TableId, TableContents> tables = new LinkedHashMap<>();
  private final Map<TableName, TableId> ids = new HashMap<>();
  private final List<DestinationCall> calls = new ArrayList<>();
  private final List<Event> events = new ArrayList<>();
  private final List<Event> duplicateEvents = new ArrayList<>();
  private final List<TableCopyBatchId> duplicateBatches = new ArrayList<>();
  private final List<TableCopyBatchId> staleBatches = new ArrayList<>();
  private final List<DestinationCall> staleWrites = new ArrayList<>();
  private final Set<TableCopyBatchId> batchIds = new LinkedHashSet<>();
  private final List<String> violations = new ArrayList<>();
  private final List<String> anomalies = new ArrayList<>();
  // null until the first event, commit or durable answer
  private @Nullable EventSequenceKey receivedKey;
  private @Nullable Lsn receivedCommitEnd;
  private @Nullable EventSequenceKey durableKey;
  private @Nullable Lsn durableCommitEnd;
  private @Nullable DestinationCall lastDurable;

  private RecordingDestination(Builder b) {
    this.name = b.name;
    this.answering = b.answering;
    this.answerExecutor = b.answerExecutor;
    this.deduplicate = b.deduplicate;
    this.chunkedCopy = b.chunkedCopy;
  }

  /**
   * Returns a builder.
   *
   * @return a new builder with the defaults
   */
  public static Builder builder() {
    return new Builder();
  }

  /**
   * Returns a destination with the defaults: answers {@code durable()} on the calling thread,
   * deduplicates.
   *
   * @return a new, empty destination
   */
  public static RecordingDestination create() {
    return builder().build();
  }

  // ---------------------------------------------------------------- the Destination methods

  @Override
  public boolean supportsChunkedCopy() {
    return chunkedCopy;
  }

  @Override
  public String name() {
    return name;
  }

  /** Records the startup. */
  @Override
  public void startup(DestinationContext context) {
    lock.lock();
    try {
      record(DestinationOperation.STARTUP, null, null, null, null);
      startups++;
      if (running) {
        violation("startup called again without shutdown in between");
      }
      running = true;
      changed.signalAll();
    } finally {
      lock.unlock();
    }
  }

  /**
   * Clears the table, forgets its earlier copy attempts and applied event keys, and makes {@code
   * attemptId} the table's current attempt.
   */
  @Override
  public void dropTableForCopy(ReplicatedTableSchema table, UUID attemptId, AsyncResult result) {
    Objects.requireNonNull(table, "table");
    Objects.requireNonNull(attemptId, "attemptId");
    Objects.requireNonNull(result, "result");
    Outcome outcome;
    lock.lock();
    try {
      DestinationCall call =
          record(DestinationOperation.DROP_TABLE_FOR_COPY, table, null, attemptId, result);
      checkRunning(call);
      TableContents t = table(table);
      t.drops++;
      t.dropped = true;
      t.clearRows();
      t.schema = table;
      t.schemaKey = null;
      t.appliedKey = null;
      t.currentAttempt = attemptId;
      t.attemptBatches.clear();
      t.attemptOpen = true;
      t.chunked = false;
      outcome = decide(DestinationOperation.DROP_TABLE_FOR_COPY, null, call);
      changed.signalAll();
    } finally {
      lock.unlock();
    }
    answer(result, outcome);
  }

  /** Stores a copy batch (unless its id was already stored) or records the barrier. */
  @Override
  public void writeTableRows(
      ReplicatedTableSchema table, TableCopyWrite write, AsyncResult result) {
    Objects.requireNonNull(table, "table");
    Objects.requireNonNull(write, "write");
    Objects.requireNonNull(result, "result");
    Outcome outcome;
    lock.lock();
    try {
      TableContents t = table(table);
      if (write instanceof TableCopyWrite.Batch batch) {
        DestinationCall call =
            record(DestinationOperation.WRITE_TABLE_ROWS, table, write, null, result);
        checkRunning(call);
        copyBatch(t, table, batch);
        outcome = decide(DestinationOperation.WRITE_TABLE_ROWS, null, call);
      } else if (write instanceof TableCopyWrite.ChunkEnd end) {
        DestinationCall call = record(DestinationOperation.CHUNK_END, table, write, null, result);
        checkRunning(call);
        if (!chunkedCopy) {
          violation("ChunkEnd for " + table.name() + ", which does not support chunked copies");
        } else if (!end.attemptId().equals(t.currentAttempt)) {
          staleBatches.add(new TableCopyBatchId(end.attemptId(), end.firstBatch()));
        } else {
          t.chunked = true;
          for (long i = 0; i < end.batches(); i++) {
            TableCopyBatchId id = new TableCopyBatchId(end.attemptId(), end.firstBatch() + i);
            if (!t.attemptBatches.contains(id)) {
              violation("ChunkEnd of " + table.name() + " counts batch " + id + ", never stored");
            }
          }
        }
        outcome = decide(DestinationOperation.CHUNK_END, null, call);
      } else {
        DestinationCall call = record(DestinationOperation.FINISH, table, write, null, result);
        checkRunning(call);
        t.finishes++;
        TableCopyWrite.Finish finish = (TableCopyWrite.Finish) write;
        if (!t.dropped) {
          violation("copy Finish of " + table.name() + " without dropTableForCopy first");
        } else if (!finish.attemptId().equals(t.currentAttempt)) {
          violation(
              "copy Finish of "
                  + table.name()
                  + " for attempt "
                  + finish.attemptId()
                  + ", but dropTableForCopy named "
                  + t.currentAttempt);
        } else if (!t.chunked && finish.batches() != t.attemptBatches.size()) {
          violation(
              "copy Finish of "
                  + table.name()
                  + " counts "
                  + finish.batches()
                  + " batches, "
                  + t.attemptBatches.size()
                  + " arrived");
        }
        t.adopt(table);
        if (finish.attemptId().equals(t.currentAttempt)) {
          t.attemptOpen = false;
        }
        outcome = decide(DestinationOperation.FINISH, null, call);
      }
      changed.signalAll();
    } finally {
      lock.unlock();
    }
    answer(result, outcome);
  }

  /** Applies the events in order, skipping replayed ones (see the class comment). */
  @Override
  public void writeEvents(
      StreamId stream, List<Event> events, WriteDurability durability, AsyncResult result) {
    Objects.requireNonNull(stream, "stream");
    Objects.requireNonNull(events, "events");
    Objects.requireNonNull(durability, "durability");
    Objects.requireNonNull(result, "result");
    Outcome outcome;
    lock.lock();
    try {
      DestinationCall call =
          record(
              new DestinationCall(
                  sequence++,
                  DestinationOperation.WRITE_EVENTS,
                  Thread.currentThread().getName(),
                  null,
                  null,
                  events,
                  durability,
                  stream,
                  null,
                  result));
      checkRunning(call);
      if (events.isEmpty() && durability == WriteDurability.MAY_DEFER) {
        violation("empty writeEvents with MAY_DEFER (only REQUIRE_DURABLE may be empty)");
      }
      TableId streamTable = stream.table(); // null for the apply stream
      TableContents own = streamTable == null ? null : tables.get(streamTable);
      boolean stale =
          own != null && own.dropped && !Objects.equals(stream.copyAttempt(), own.currentAttempt);
      if (stale) {
        // the catch-up stream of an attempt that a later dropTableForCopy abandoned
        staleWrites.add(call);
      }
      for (Event e : stale ? List.<Event>of() : events) {
        this.events.add(e);
        if (receivedKey == null || e.sequenceKey().compareTo(receivedKey) > 0) {
          receivedKey = e.sequenceKey();
        }
        if (e instanceof Event.Commit c
            && (receivedCommitEnd == null || c.endLsn().isAfter(receivedCommitEnd))) {
          receivedCommitEnd = c.endLsn();
        }
        apply(e);
      }
      outcome = decide(DestinationOperation.WRITE_EVENTS, durability, call);
      changed.signalAll();
    } finally {
      lock.unlock();
    }
    answer(result, outcome);
  }

  /** Records the shutdown. */
  @Override
  public void shutdown() {
    lock.lock();
    try {
      record(DestinationOperation.SHUTDOWN, null, null, null, null);
      shutdowns++;
      if (!running) {
        violation("shutdown called without a startup before it (or twice)");
      }
      running = false;
      changed.signalAll();
    } finally {
      lock.unlock();
    }
  }

  // ---------------------------------------------------------------- answering

  /**
   * Sets how later writes are answered.
   *
   * @param answering the mode
   */
  public void setAnswering(Answering answering) {
    this.answering = Objects.requireNonNull(answering, "answering");
  }

  /**
   * Returns how writes are answered now.
   *
   * @return the mode
   */
  public Answering answering() {
    return answering;
  }

  /**
   * Sets the executor later answers are sent from.
   *
   * @param executor the executor, or null to answer on the calling thread
   */
  public void setAnswerExecutor(@Nullable Executor executor) {
    this.answerExecutor = executor;
  }

  /**
   * Sets whether later duplicates are skipped.
   *
   * @param deduplicate true to skip redelivered batches and replayed events, false to apply them
   */
  public void setDeduplicate(boolean deduplicate) {
    this.deduplicate = deduplicate;
  }

  /**
   * Returns whether duplicates are skipped.
   *
   * @return the switch
   */
  public boolean deduplicates() {
    return deduplicate;
  }

  /**
   * Confirms durability on demand in {@link Answering#ACCEPTED} mode: the next copy batch or events
   * write (of any stream) is answered {@code durable()}, which covers the writes its stream had
   * answered {@code accepted()}.
   */
  public void flushAccepted() {
    lock.lock();
    try {
      flushRequested = true;
    } finally {
      lock.unlock();
    }
  }

  // ---------------------------------------------------------------- views

  /**
   * Returns the rows of a table, sorted by {@link Rows#order()}, each a list of values in the order
   * of the table's latest schema; equal rows of a table without key occur as often as stored.
   *
   * @param table the table's name (its latest name, when it was renamed)
   * @return the rows; empty for a table the destination never saw
   */
  public List<List<@Nullable Object>> rows(TableName table) {
    lock.lock();
    try {
      TableId id = ids.get(table);
      return id == null ? List.of() : rows(id);
    } finally {
      lock.unlock();
    }
  }

  /**
   * Returns the rows of a table (see {@link #rows(TableName)}).
   *
   * @param table the table's id
   * @return the rows; empty for a table the destination never saw
   */
  public List<List<@Nullable Object>> rows(TableId table) {
    lock.lock();
    try {
      TableContents t = tables.get(table);
      return t == null ? List.of() : t.sortedRows();
    } finally {
      lock.unlock();
    }
  }

  /**
   * Returns the number of rows of a table.
   *
   * @param table the table's name
   * @return the row count; 0 for a table the destination never saw
   */
  public int rowCount(TableName table) {
    lock.lock();
    try {
      TableId id = ids.get(table);
      TableContents t = id == null ? null : tables.get(id);
      return t == null ? 0 : t.rowCount();
    } finally {
      lock.unlock();
    }
  }

  /**
   * Returns the latest schema a table's rows follow.
   *
   * @param table the table's name
   * @return the schema, or empty for a table the destination never saw
   */
  public Optional<ReplicatedTableSchema> schema(TableName table) {
    lock.lock();
    try {
      TableId id = ids.get(table);
      return id == null ? Optional.empty() : schema(id);
    } finally {
      lock.unlock();
    }
  }

  /**
   * Returns the latest schema a table's rows follow.
   *
   * @param table the table's id
   * @return the schema, or empty for a table the destination never saw
   */
  public Optional<ReplicatedTableSchema> schema(TableId table) {
    lock.lock();
    try {
      TableContents t = tables.get(table);
      return t == null ? Optional.empty() : Optional.ofNullable(t.schema);
    } finally {
      lock.unlock();
    }
  }

  /**
   * Returns the names of the tables the destination saw, by their latest names.
   *
   * @return the names, in the order first seen
   */
  public Set<TableName> tableNames() {
    lock.lock();
    try {
      Set<TableName> names = new LinkedHashSet<>();
      for (TableContents t : tables.values()) {
        if (t.schema != null) {
          names.add(t.schema.name());
        }
      }
      return Collections.unmodifiableSet(names);
    } finally {
      lock.unlock();
    }
  }

  /**
   * Returns every call, in the order the destination saw them.
   *
   * @return a snapshot of the calls
   */
  public List<DestinationCall> calls() {
    lock.lock();
    try {
      return List.copyOf(calls);
    } finally {
      lock.unlock();
    }
  }

  /**
   * Returns the calls of one operation, in order.
   *
   * @param operation the operation
   * @return a snapshot of those calls
   */
  public List<DestinationCall> calls(DestinationOperation operation) {
    lock.lock();
    try {
      List<DestinationCall> out = new ArrayList<>();
      for (DestinationCall c : calls) {
        if (c.operation() == operation) {
          out.add(c);
        }
      }
      return Collections.unmodifiableList(out);
    } finally {
      lock.unlock();
    }
  }

  /**
   * Returns how many calls of an operation the destination saw.
   *
   * @param operation the operation
   * @return the count
   */
  public int count(DestinationOperation operation) {
    return calls(operation).size();
  }

  /**
   * Returns how many calls of an operation about a table the destination saw (for events writes:
   * writes with at least one event of the table).
   *
   * @param operation the operation
   * @param table the table's name
   * @return the count
   */
  public int count(DestinationOperation operation, TableName table) {
    int n = 0;
    for (DestinationCall c : calls(operation)) {
      if (c.touches(table)) {
        n++;
      }
    }
    return n;
  }

  /**
   * Returns how many times {@code startup} was called.
   *
   * @return the count
   */
  public int startupCount() {
    lock.lock();
    try {
      return startups;
    } finally {
      lock.unlock();
    }
  }

  /**
   * Returns how many times {@code shutdown} was called.
   *
   * @return the count
   */
  public int shutdownCount() {
    lock.lock();
    try {
      return shutdowns;
    } finally {
      lock.unlock();
    }
  }

  /**
   * Returns every event received, duplicates included, in the order received.
   *
   * @return a snapshot of the events
   */
  public List<Event> events() {
    lock.lock();
    try {
      return List.copyOf(events);
    } finally {
      lock.unlock();
    }
  }

  /**
   * Returns the events received about a table (its changes, relations, and truncates naming it), in
   * order.
   *
   * @param table the table's name
   * @return a snapshot of those events; empty for a table the destination never saw
   */
  public List<Event> events(TableName table) {
    lock.lock();
    try {
      TableId id = ids.get(table);
      return id == null ? List.of() : events(id);
    } finally {
      lock.unlock();
    }
  }

  /**
   * Returns the events received about a table, in order.
   *
   * @param table the table's id
   * @return a snapshot of those events
   */
  public List<Event> events(TableId table) {
    lock.lock();
    try {
      List<Event> out = new ArrayList<>();
      for (Event e : events) {
        if (Events.concerns(e, table)) {
          out.add(e);
        }
      }
      return Collections.unmodifiableList(out);
    } finally {
      lock.unlock();
    }
  }

  /**
   * Returns the changes that arrived again after their table had applied them (by sequence key), in
   * order: skipped when deduplicating, applied otherwise.
   *
   * @return a snapshot of the duplicate events
   */
  public List<Event> duplicateEvents() {
    lock.lock();
    try {
      return List.copyOf(duplicateEvents);
    } finally {
      lock.unlock();
    }
  }

  /**
   * Returns the ids of copy batches that arrived again in the same copy attempt, in order.
   *
   * @return a snapshot of the duplicate batch ids
   */
  public List<TableCopyBatchId> duplicateBatchIds() {
    lock.lock();
    try {
      return List.copyOf(duplicateBatches);
    } finally {
      lock.unlock();
    }
  }

  /**
   * Returns the event writes of catch-up streams whose copy attempt a later {@code
   * dropTableForCopy} of their table had abandoned: not applied.
   *
   * @return a snapshot of the stale writes, in order
   */
  public List<DestinationCall> staleWrites() {
    lock.lock();
    try {
      return List.copyOf(staleWrites);
    } finally {
      lock.unlock();
    }
  }

  /**
   * Returns the ids of copy batches that arrived after a later {@code dropTableForCopy} of their
   * table had named another attempt: leftovers of an abandoned attempt, not applied.
   *
   * @return a snapshot of the stale batch ids, in order
   */
  public List<TableCopyBatchId> staleBatchIds() {
    lock.lock();
    try {
      return List.copyOf(staleBatches);
    } finally {
      lock.unlock();
    }
  }

  /**
   * Returns the id of every copy batch received, in the order first seen.
   *
   * @return a snapshot of the ids
   */
  public Set<TableCopyBatchId> batchIds() {
    lock.lock();
    try {
      return Collections.unmodifiableSet(new LinkedHashSet<>(batchIds));
    } finally {
      lock.unlock();
    }
  }

  /**
   * Returns the last call this destination answered {@code durable()}.
   *
   * @return the call, or empty when none was answered durable yet
   */
  public Optional<DestinationCall> lastDurable() {
    lock.lock();
    try {
      return Optional.ofNullable(lastDurable);
    } finally {
      lock.unlock();
    }
  }

  /**
   * Returns the greatest event sequence key received when this destination last answered {@code
   * durable()}: every event up to it had been received and applied then.
   *
   * @return the key, or empty when no event was received before a durable answer
   */
  public Optional<EventSequenceKey> durableEventKey() {
    lock.lock();
    try {
      return Optional.ofNullable(durableKey);
    } finally {
      lock.unlock();
    }
  }

  /**
   * Returns the greatest commit end LSN received when this destination last answered {@code
   * durable()}: the position a pipeline may confirm to PostgreSQL.
   *
   * @return the LSN, or empty when no commit was received before a durable answer
   */
  public Optional<Lsn> durableCommitEndLsn() {
    lock.lock();
    try {
      return Optional.ofNullable(durableCommitEnd);
    } finally {
      lock.unlock();
    }
  }

  /**
   * Returns the calls that broke the destination contract, as sentences, in order.
   *
   * @return a snapshot; empty when the caller kept the contract
   */
  public List<String> violations() {
    lock.lock();
    try {
      return List.copyOf(violations);
    } finally {
      lock.unlock();
    }
  }

  /**
   * Returns the changes that did not fit the stored data (an update or delete of a row the
   * destination does not hold, a partial update without a stored row), as sentences, in order.
   *
   * @return a snapshot; empty when every change found its row
   */
  public List<String> anomalies() {
    lock.lock();
    try {
      return List.copyOf(anomalies);
    } finally {
      lock.unlock();
    }
  }

  // ---------------------------------------------------------------- waiting

  /**
   * Waits until a table's rows satisfy a predicate, and returns them. The predicate runs under the
   * destination's lock after each write: it must be quick and must not block.
   *
   * @param table the table's name
   * @param predicate the condition on the sorted rows
   * @param timeout how long to wait
   * @return the rows that satisfied the predicate
   * @throws AssertionError when the timeout passes first (the message gives the row count)
   */
  public List<List<@Nullable Object>> awaitRows(
      TableName table,
      Predicate<? super List<List<@Nullable Object>>> predicate,
      Duration timeout) {
    return awaitValue(
        () -> {
          List<List<@Nullable Object>> rows = rows(table);
          return predicate.test(rows) ? rows : null;
        },
        timeout,
        () ->
            "rows of "
                + table
                + " did not match within "
                + timeout
                + " ("
                + rowCount(table)
                + " rows now)");
  }

  /**
   * Waits until a table's rows satisfy a predicate, and returns them (see {@link
   * #awaitRows(TableName, Predicate, Duration)}).
   *
   * @param table the table's id
   * @param predicate the condition on the sorted rows
   * @param timeout how long to wait
   * @return the rows that satisfied the predicate
   * @throws AssertionError when the timeout passes first
   */
  public List<List<@Nullable Object>> awaitRows(
      TableId table, Predicate<? super List<List<@Nullable Object>>> predicate, Duration timeout) {
    return awaitValue(
        () -> {
          List<List<@Nullable Object>> rows = rows(table);
          return predicate.test(rows) ? rows : null;
        },
        timeout,
        () -> "rows of table " + table + " did not match within " + timeout);
  }

  /**
   * Waits until a table holds exactly these rows (in any order), and returns them sorted.
   *
   * @param table the table's name
   * @param expected the expected rows
   * @param timeout how long to wait
   * @return the rows
   * @throws AssertionError when the timeout passes first (the message shows both sides)
   */
  public List<List<@Nullable Object>> awaitRowsEqual(
      TableName table, List<? extends List<?>> expected, Duration timeout) {
    List<List<@Nullable Object>> want = Rows.sorted(expected);
    return awaitValue(
        () -> {
          List<List<@Nullable Object>> rows = rows(table);
          return rows.equals(want) ? rows : null;
        },
        timeout,
        () ->
            "rows of "
                + table
                + " did not become the expected "
                + want.size()
                + " rows within "
                + timeout
                + "\nexpected: "
                + want
                + "\nactual:   "
                + rows(table));
  }

  /**
   * Waits until an event matching a predicate was received (also one received before the call), and
   * returns the first such event.
   *
   * @param predicate the condition; runs under the destination's lock, must not block
   * @param timeout how long to wait
   * @return the first matching event
   * @throws AssertionError when the timeout passes first
   */
  public Event awaitEvent(Predicate<? super Event> predicate, Duration timeout) {
    return awaitValue(
        () -> {
          for (Event e : events) {
            if (predicate.test(e)) {
              return e;
            }
          }
          return null;
        },
        timeout,
        () -> "no matching event within " + timeout + " (" + events().size() + " events received)");
  }

  /**
   * Waits until a condition about this destination holds, for example {@code () ->
   * recording.count(DestinationOperation.FINISH) == 2}. The condition is checked now and after each
   * call the destination records; it runs under the destination's lock and must not block.
   *
   * @param condition the condition
   * @param timeout how long to wait
   * @throws AssertionError when the timeout passes first
   */
  public void await(BooleanSupplier condition, Duration timeout) {
    awaitValue(
        () -> condition.getAsBoolean() ? Boolean.TRUE : null,
        timeout,
        () -> "condition not met within " + timeout);
  }

  /** Waits until the probe gives a value; null from the probe means not yet. */
  private <T> T awaitValue(
      Supplier<@Nullable T> probe, Duration timeout, Supplier<String> failure) {
    long deadline = System.nanoTime() + timeout.toNanos();
    lock.lock();
    try {
      while (true) {
        @Nullable T value = probe.get();
        if (value != null) {
          return value;
        }
        long left = deadline - System.nanoTime();
        if (left <= 0) {
          throw new AssertionError(failure.get());
        }
        changed.awaitNanos(left);
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new AssertionError("interrupted while waiting: " + failure.get(), e);
    } finally {
      lock.unlock();
    }
  }

  // ---------------------------------------------------------------- internals (under lock)

  /** Records a call without events: every operation but {@code writeEvents}. */
  private DestinationCall record(
      DestinationOperation op,
      @Nullable ReplicatedTableSchema table,
      @Nullable TableCopyWrite write,
      @Nullable UUID attemptId,
      @Nullable AsyncResult result) {
    return record(
        new DestinationCall(
            sequence++,
            op,
            Thread.currentThread().getName(),
            table,
            write,
            List.of(),
            null,
            null,
            attemptId,
            result));
  }

  private DestinationCall record(DestinationCall call) {
    calls.add(call);
    return call;
  }

  private void checkRunning(DestinationCall call) {
    if (!running) {
      violation(
          call.operation()
              + (call.table() == null ? "" : " of " + call.table().name())
              + (startups == 0 ? " before startup" : " after shutdown"));
    }
  }

  private void violation(String what) {
    violations.add(what);
  }

  private void anomaly(String what) {
    anomalies.add(what);
  }

  private TableContents table(ReplicatedTableSchema schema) {
    ids.put(schema.name(), schema.id());
    return tables.computeIfAbsent(schema.id(), TableContents::new);
  }

  private Outcome decide(
      DestinationOperation op, @Nullable WriteDurability durability, DestinationCall call) {
    Outcome outcome;
    if (answering == Answering.DURABLE) {
      outcome = Outcome.DURABLE;
    } else {
      outcome =
          switch (op) {
            case DROP_TABLE_FOR_COPY -> Outcome.ACCEPTED;
            case FINISH, CHUNK_END -> Outcome.DURABLE;
            case WRITE_EVENTS ->
                durability == WriteDurability.REQUIRE_DURABLE ? Outcome.DURABLE : flushOr();
            default -> flushOr();
          };
    }
    if (outcome.kind() == Outcome.Kind.DURABLE) {
      lastDurable = call;
      durableKey = receivedKey;
      durableCommitEnd = receivedCommitEnd;
    }
    return outcome;
  }

  private Outcome flushOr() {
    if (flushRequested) {
      flushRequested = false;
      return Outcome.DURABLE;
    }
    return Outcome.ACCEPTED;
  }

  private void answer(AsyncResult result, Outcome outcome) {
    Executor executor = answerExecutor;
    if (executor == null) {
      result.send(outcome);
      return;
    }
    try {
      executor.execute(() -> result.send(outcome));
    } catch (RejectedExecutionException e) {
      // the test's executor is gone: answer here rather than never
      result.send(outcome);
    }
  }

  private void copyBatch(TableContents t, ReplicatedTableSchema schema, TableCopyWrite.Batch b) {
    TableCopyBatchId id = b.id();
    batchIds.add(id);
    if (!t.dropped) {
      violation("copy batch " + id + " of " + schema.name() + " without dropTableForCopy first");
    }
    if (t.dropped && !id.attemptId().equals(t.currentAttempt)) {
      // a late batch of an attempt that a later dropTableForCopy abandoned
      staleBatches.add(id);
      return;
    }
    if (!t.attemptBatches.add(id)) {
      duplicateBatches.add(id);
      if (deduplicate) {
        return;
      }
    }
    t.adopt(schema);
    for (TableRow row : b.rows()) {
      if (width(schema, row.size(), "copy batch " + id)) {
        t.insert(row.values().toArray());
      }
    }
  }

  private boolean width(ReplicatedTableSchema schema, int size, String what) {
    if (size != schema.columnCount()) {
      violation(
          what
              + " of "
              + schema.name()
              + " has a row of "
              + size
              + " values for "
              + schema.columnCount()
              + " columns");
      return false;
    }
    return true;
  }

  private void apply(Event e) {
    switch (e.kind()) {
      case BEGIN, COMMIT, MESSAGE -> {}
      case RELATION -> {
        Event.Relation r = (Event.Relation) e;
        TableContents t = table(r.table());
        if (deduplicate && t.schemaKey != null && r.sequenceKey().compareTo(t.schemaKey) < 0) {
          return; // a replay of a schema older than the one the rows follow
        }
        t.adopt(r.table());
        t.schemaKey = r.sequenceKey();
      }
      case TRUNCATE -> {
        Event.Truncate tr = (Event.Truncate) e;
        boolean counted = false;
        for (ReplicatedTableSchema s : tr.tables()) {
          TableContents t = table(s);
          if (isDuplicate(t, e, counted)) {
            counted = true;
            if (deduplicate) {
              continue;
            }
          }
          if (t.schema == null) {
            t.adopt(s);
          }
          t.clearRows();
        }
      }
      case INSERT -> {
        Event.Insert ins = (Event.Insert) e;
        TableContents t = prepare(e, ins.table());
        if (t != null && width(ins.table(), ins.row().size(), "insert at " + e.sequenceKey())) {
          t.insert(ins.row().values().toArray());
        }
      }
      case UPDATE -> {
        Event.Update u = (Event.Update) e;
        TableContents t = prepare(e, u.table());
        if (t != null) {
          update(t, u);
        }
      }
      case DELETE -> {
        Event.Delete d = (Event.Delete) e;
        TableContents t = prepare(e, d.table());
        if (t != null) {
          delete(t, d);
        }
      }
    }
  }

  /**
   * Returns the table of a change, adopting its schema, or null when the change is skipped.
   *
   * @param s the change's table ({@code e.table()}, read from the change's own type, where it is
   *     never null)
   */
  private @Nullable TableContents prepare(Event e, ReplicatedTableSchema s) {
    TableContents t = table(s);
    if (isDuplicate(t, e, false) && deduplicate) {
      return null;
    }
    if (t.adopt(s)) {
      t.schemaKey = e.sequenceKey();
    }
    return t;
  }

  private boolean isDuplicate(TableContents t, Event e, boolean alreadyCounted) {
    EventSequenceKey key = e.sequenceKey();
    if (t.appliedKey != null && key.compareTo(t.appliedKey) <= 0) {
      if (!alreadyCounted) {
        duplicateEvents.add(e);
      }
      return true;
    }
    t.appliedKey = key;
    return false;
  }

  private void update(TableContents t, Event.Update u) {
    ReplicatedTableSchema s = u.table();
    String where = "update of " + s.name() + " at " + u.sequenceKey();
    if (u.row().columnCount() != s.columnCount()) {
      width(s, u.row().columnCount(), where);
      return;
    }
    List<@Nullable Object> oldKey;
    OldRow old = u.oldRow();
    if (old instanceof OldRow.Key k) {
      if (!t.keyed()) {
        anomaly(where + " carries a key old row, but the table has no identity key");
        return;
      }
      oldKey = Rows.of(k.row());
    } else if (old instanceof OldRow.Full f) {
      if (!width(s, f.row().size(), where + " (old row)")) {
        return;
      }
      oldKey = t.keyOf(f.row().values().toArray());
    } else {
      if (!t.keyed()) {
        anomaly(where + " has no old row, and the table has no identity key to find the row by");
        return;
      }
      int[] idx = s.identityColumnIndexes();
      Object[] key = new Object[idx.length];
      for (int i = 0; i < idx.length; i++) {
        if (!u.row().isPresent(idx[i])) {
          anomaly(where + " misses key column " + s.columns().get(idx[i]).name());
          return;
        }
        key[i] = u.row().get(idx[i]);
      }
      oldKey = Rows.row(key);
    }
    TableContents.Entry existing = t.find(oldKey);
    Object[] values = new Object[s.columnCount()];
    boolean lenient = chunkedCopy && t.attemptOpen;
    if (u.row() instanceof UpdatedRow.Partial p) {
      if (existing == null) {
        if (lenient) {
          return; // a row whose chunk is not copied yet: the chunk brings it
        }
        anomaly("partial " + where + " for a row the destination does not hold");
        return;
      }
      for (int i = 0; i < values.length; i++) {
        values[i] = p.isPresent(i) ? p.get(i) : existing.values[i];
      }
    } else {
      for (int i = 0; i < values.length; i++) {
        values[i] = u.row().get(i);
      }
    }
    if (existing == null && lenient) {
      // a table copied in chunks: only a row that moved to another key is written
      if (t.keyOf(values).equals(oldKey)) {
        return;
      }
    } else if (existing == null) {
      anomaly(where + " for a row the destination does not hold (stored as an insert)");
    } else {
      t.removeOne(oldKey);
    }
    t.insert(values);
  }

  private void delete(TableContents t, Event.Delete d) {
    ReplicatedTableSchema s = d.table();
    String where = "delete from " + s.name() + " at " + d.sequenceKey();
    List<@Nullable Object> key;
    if (d.oldRow() instanceof OldRow.Key k) {
      if (!t.keyed()) {
        anomaly(where + " carries a key old row, but the table has no identity key");
        return;
      }
      key = Rows.of(k.row());
    } else {
      TableRow full = d.oldRow().row();
      if (!width(s, full.size(), where)) {
        return;
      }
      key = t.keyOf(full.values().toArray());
    }
    if (!t.removeOne(key) && !(chunkedCopy && t.attemptOpen)) {
      anomaly(where + " for a row the destination does not hold");
    }
  }

  @Override
  public String toString() {
    return "RecordingDestination[" + name + "]";
  }
}
