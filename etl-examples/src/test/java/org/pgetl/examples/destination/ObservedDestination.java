package org.pgetl.examples.destination;

import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicInteger;
import org.jspecify.annotations.Nullable;
import org.pgetl.destination.AsyncResult;
import org.pgetl.destination.AsyncResult.Outcome;
import org.pgetl.destination.Destination;
import org.pgetl.destination.StreamId;
import org.pgetl.destination.TableCopyWrite;
import org.pgetl.destination.WriteDurability;
import org.pgetl.error.EtlException;
import org.pgetl.model.Event;
import org.pgetl.model.ReplicatedTableSchema;
import org.pgetl.model.UpdatedRow;
import org.pgetl.testkit.destination.ForwardingDestination;

/**
 * Wraps a destination and watches what it is sent and how it answers, forwarding every call and
 * every answer unchanged: partial updates and schema changes seen, failures answered, and when a
 * marker row's insert was answered durable (the pipeline caught up to that point).
 */
final class ObservedDestination extends ForwardingDestination {
  private final String markerTable;
  final AtomicInteger partialUpdates = new AtomicInteger();
  final AtomicInteger relationsWithColumn = new AtomicInteger();
  final AtomicInteger copiedRows = new AtomicInteger();
  final ConcurrentLinkedQueue<EtlException> failures = new ConcurrentLinkedQueue<>();
  final CompletableFuture<Void> markerDurable = new CompletableFuture<>();
  // streams whose marker write was answered accepted: their next durable answer covers it
  private final java.util.Set<StreamId> markerAccepted = ConcurrentHashMap.newKeySet();
  private final String watchedColumn;

  /**
   * Wraps a destination.
   *
   * @param delegate the destination under test
   * @param markerTable the unqualified name of the table whose insert marks "caught up"
   * @param watchedColumn a column name whose appearance in a Relation event is counted
   */
  ObservedDestination(Destination delegate, String markerTable, String watchedColumn) {
    super(delegate);
    this.markerTable = markerTable;
    this.watchedColumn = watchedColumn;
  }

  /**
   * False, as the tests that observe a destination expect: every table copied under one snapshot.
   */
  @Override
  public boolean supportsChunkedCopy() {
    return false;
  }

  @Override
  public void dropTableForCopy(ReplicatedTableSchema table, UUID attemptId, AsyncResult result) {
    delegate.dropTableForCopy(table, attemptId, forward(result, false, null));
  }

  @Override
  public void writeTableRows(
      ReplicatedTableSchema table, TableCopyWrite write, AsyncResult result) {
    if (write instanceof TableCopyWrite.Batch b) {
      copiedRows.addAndGet(b.rows().size());
    }
    delegate.writeTableRows(table, write, forward(result, false, null));
  }

  @Override
  public void writeEvents(
      StreamId stream, List<Event> events, WriteDurability durability, AsyncResult result) {
    boolean marker = false;
    for (Event e : events) {
      if (e instanceof Event.Update u && u.row() instanceof UpdatedRow.Partial) {
        partialUpdates.incrementAndGet();
      } else if (e instanceof Event.Relation r && r.table().indexOf(watchedColumn) >= 0) {
        relationsWithColumn.incrementAndGet();
      } else if (e instanceof Event.Insert i && i.table().name().name().equals(markerTable)) {
        marker = true;
      }
    }
    delegate.writeEvents(stream, events, durability, forward(result, marker, stream));
  }

  /**
   * The answer slot handed to the delegate: forwards its answer, and completes {@link
   * #markerDurable} when the marker's write is answered durable, or answered accepted and then
   * covered by a later durable answer of the same stream.
   */
  private AsyncResult forward(AsyncResult outer, boolean marker, @Nullable StreamId stream) {
    AsyncResult inner = AsyncResult.create();
    inner
        .completion()
        .thenAccept(
            o -> {
              if (o.kind() == Outcome.Kind.FAILED) {
                failures.add(o.error());
              } else if (o.kind() == Outcome.Kind.DURABLE
                  && (marker || (stream != null && markerAccepted.contains(stream)))) {
                markerDurable.complete(null);
              } else if (marker && o.kind() == Outcome.Kind.ACCEPTED && stream != null) {
                markerAccepted.add(stream);
              }
              outer.send(o);
            });
    return inner;
  }
}
