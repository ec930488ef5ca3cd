package org.pgetl.testkit.destination;

import java.util.List;
import java.util.Objects;
import java.util.UUID;
import org.pgetl.destination.AsyncResult;
import org.pgetl.destination.Destination;
import org.pgetl.destination.DestinationContext;
import org.pgetl.destination.StreamId;
import org.pgetl.destination.TableCopyWrite;
import org.pgetl.destination.WriteDurability;
import org.pgetl.model.Event;
import org.pgetl.model.ReplicatedTableSchema;

/**
 * A destination that passes every call to another one: extend it and override the calls a test
 * changes (a check that refuses a table, an answer that comes late), keeping the rest.
 */
public class ForwardingDestination implements Destination {
  /** The destination every call goes to. */
  protected final Destination delegate;

  /**
   * Creates a destination that forwards to {@code delegate}.
   *
   * @param delegate the destination every call goes to
   */
  public ForwardingDestination(Destination delegate) {
    this.delegate = Objects.requireNonNull(delegate, "delegate");
  }

  @Override
  public String name() {
    return delegate.name();
  }

  @Override
  public void checkTables(List<ReplicatedTableSchema> tables) {
    delegate.checkTables(tables);
  }

  @Override
  public void startup(DestinationContext context) {
    delegate.startup(context);
  }

  @Override
  public void dropTableForCopy(ReplicatedTableSchema table, UUID attemptId, AsyncResult result) {
    delegate.dropTableForCopy(table, attemptId, result);
  }

  @Override
  public void writeTableRows(
      ReplicatedTableSchema table, TableCopyWrite write, AsyncResult result) {
    delegate.writeTableRows(table, write, result);
  }

  @Override
  public void writeEvents(
      StreamId stream, List<Event> events, WriteDurability durability, AsyncResult result) {
    delegate.writeEvents(stream, events, durability, result);
  }

  @Override
  public boolean supportsChunkedCopy() {
    return delegate.supportsChunkedCopy();
  }

  @Override
  public void shutdown() {
    delegate.shutdown();
  }
}
