package org.pgetl.testkit.destination;

import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.UUID;
import org.jspecify.annotations.Nullable;
import org.pgetl.destination.AsyncResult;
import org.pgetl.destination.AsyncResult.Outcome;
import org.pgetl.destination.StreamId;
import org.pgetl.destination.TableCopyBatchId;
import org.pgetl.destination.TableCopyWrite;
import org.pgetl.destination.WriteDurability;
import org.pgetl.model.Event;
import org.pgetl.model.ReplicatedTableSchema;
import org.pgetl.model.TableId;
import org.pgetl.model.TableName;
import org.pgetl.model.TableRow;

/**
 * One call a pipeline made on a destination, with its arguments: what {@link RecordingDestination}
 * records and what {@link FaultyDestination} matches faults against.
 *
 * @param sequence the call's number, from 0, in the order the destination saw the calls
 * @param operation what was called
 * @param threadName the name of the calling thread
 * @param table the table of a drop or copy call, or null
 * @param write the batch or barrier of a copy call, or null
 * @param events the events of a {@code writeEvents} call (empty for the other calls)
 * @param durability the durability of a {@code writeEvents} call, or null
 * @param stream the stream of a {@code writeEvents} call, or null
 * @param attemptId the copy attempt a {@code dropTableForCopy} call names, or null
 * @param result the result the caller passed, or null for startup and shutdown
 */
public record DestinationCall(
    long sequence,
    DestinationOperation operation,
    String threadName,
    @Nullable ReplicatedTableSchema table,
    @Nullable TableCopyWrite write,
    List<Event> events,
    @Nullable WriteDurability durability,
    @Nullable StreamId stream,
    @Nullable UUID attemptId,
    @Nullable AsyncResult result) {

  /** Validates the components and copies the event list. */
  public DestinationCall {
    Objects.requireNonNull(operation, "operation");
    Objects.requireNonNull(threadName, "threadName");
    // a caller whose nulls are not checked may pass null for a call without events: read as none
    events = events == null ? List.of() : List.copyOf(events);
  }

  /**
   * Returns the answer the call got so far.
   *
   * @return the outcome, or empty while unanswered (always empty for startup and shutdown)
   */
  public Optional<Outcome> outcome() {
    return result == null ? Optional.empty() : result.outcome();
  }

  /**
   * Returns the batch id of a copy batch.
   *
   * @return the id, or null when this call is not a {@link DestinationOperation#WRITE_TABLE_ROWS}
   */
  public @Nullable TableCopyBatchId batchId() {
    return write instanceof TableCopyWrite.Batch b ? b.id() : null;
  }

  /**
   * Returns the rows of a copy batch.
   *
   * @return the rows, empty when this call is not a copy batch
   */
  public List<TableRow> rows() {
    return write instanceof TableCopyWrite.Batch b ? b.rows() : List.of();
  }

  /**
   * Returns true when the call is about this table: a drop or copy call of the table, or an events
   * write with an event of the table (a truncate naming it included).
   *
   * @param name the table's name
   * @return whether the call touches the table
   */
  public boolean touches(TableName name) {
    if (table != null && table.name().equals(name)) {
      return true;
    }
    for (Event e : events) {
      if (Events.concerns(e, name)) {
        return true;
      }
    }
    return false;
  }

  /**
   * Returns true when the call is about the table with this id (see {@link #touches(TableName)}).
   *
   * @param id the table's id
   * @return whether the call touches the table
   */
  public boolean touches(TableId id) {
    if (table != null && table.id().equals(id)) {
      return true;
    }
    for (Event e : events) {
      if (Events.concerns(e, id)) {
        return true;
      }
    }
    return false;
  }

  /**
   * Returns true when the events of this call hold an event of this kind about this table.
   *
   * @param kind the event kind (for {@link Event.Kind#TRUNCATE}: a truncate naming the table)
   * @param name the table's name
   * @return whether such an event is in the call
   */
  public boolean hasEvent(Event.Kind kind, TableName name) {
    for (Event e : events) {
      if (e.kind() == kind && Events.concerns(e, name)) {
        return true;
      }
    }
    return false;
  }

  /**
   * Returns true when the events of this call hold an insert into this table; a shortcut for {@code
   * hasEvent(Event.Kind.INSERT, name)}, handy as a fault predicate.
   *
   * @param name the table's name
   * @return whether the call inserts into the table
   */
  public boolean hasInsertInto(TableName name) {
    return hasEvent(Event.Kind.INSERT, name);
  }

  /** Returns the operation, the table and the sizes; never row values. */
  @Override
  public String toString() {
    StringBuilder sb = new StringBuilder("DestinationCall[#").append(sequence).append(' ');
    sb.append(operation);
    if (table != null) {
      sb.append(' ').append(table.name());
    }
    if (write != null) {
      sb.append(' ').append(write);
    }
    if (operation == DestinationOperation.WRITE_EVENTS) {
      sb.append(' ').append(events.size()).append(" events ").append(durability);
    }
    sb.append(" on ").append(threadName);
    if (result != null) {
      sb.append(' ').append(result.outcome().map(Outcome::toString).orElse("pending"));
    }
    return sb.append(']').toString();
  }
}
