package org.pgetl.core.internal.apply;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.pgetl.destination.AsyncResult;
import org.pgetl.destination.Destination;
import org.pgetl.destination.StreamId;
import org.pgetl.destination.TableCopyWrite;
import org.pgetl.destination.WriteDurability;
import org.pgetl.model.Event;
import org.pgetl.model.ReplicatedTableSchema;

/**
 * A destination that answers streaming writes as the test says: at once ({@code durable}, or {@code
 * accepted} where the contract allows it), or not until the test answers a held write.
 */
final class ScriptedDestination implements Destination {

  /** How writes are answered when they arrive. */
  enum Policy {
    /** {@code durable()} at once. */
    DURABLE,
    /** {@code accepted()} for {@code MAY_DEFER}, {@code durable()} for {@code REQUIRE_DURABLE}. */
    ACCEPTED,
    /** No answer: the test answers. */
    HOLD
  }

  /** One {@code writeEvents} call. */
  record Write(
      StreamId stream, List<Event> events, WriteDurability durability, AsyncResult result) {
    List<Event.Kind> kinds() {
      return events.stream().map(Event::kind).toList();
    }
  }

  private final BlockingQueue<Write> arrived = new LinkedBlockingQueue<>();
  private final List<Write> all = new ArrayList<>();
  private volatile Policy policy;

  ScriptedDestination(Policy policy) {
    this.policy = policy;
  }

  void policy(Policy p) {
    policy = p;
  }

  /** Returns the next write that arrived, waiting up to five seconds for it. */
  Write next() {
    try {
      Write w = arrived.poll(5, TimeUnit.SECONDS);
      if (w == null) {
        throw new AssertionError("no write arrived within 5 s; all writes: " + writes());
      }
      return w;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new AssertionError(e);
    }
  }

  /** Returns the next write if one arrives within {@code wait}, else null. */
  Write nextWithin(Duration wait) throws InterruptedException {
    return arrived.poll(wait.toNanos(), TimeUnit.NANOSECONDS);
  }

  synchronized List<Write> writes() {
    return List.copyOf(all);
  }

  /** Every event of every write, in order. */
  synchronized List<Event> events() {
    return all.stream().flatMap(w -> w.events().stream()).toList();
  }

  @Override
  public String name() {
    return "scripted";
  }

  @Override
  public void dropTableForCopy(ReplicatedTableSchema table, UUID attemptId, AsyncResult result) {
    throw new UnsupportedOperationException("no copy in these tests");
  }

  @Override
  public void writeTableRows(
      ReplicatedTableSchema table, TableCopyWrite write, AsyncResult result) {
    throw new UnsupportedOperationException("no copy in these tests");
  }

  @Override
  public void writeEvents(
      StreamId stream, List<Event> events, WriteDurability durability, AsyncResult result) {
    Write w = new Write(stream, List.copyOf(events), durability, result);
    synchronized (this) {
      all.add(w);
    }
    switch (policy) {
      case DURABLE -> result.durable();
      case ACCEPTED -> {
        if (durability == WriteDurability.MAY_DEFER) {
          result.accepted();
        } else {
          result.durable();
        }
      }
      case HOLD -> {}
    }
    arrived.add(w);
  }
}
