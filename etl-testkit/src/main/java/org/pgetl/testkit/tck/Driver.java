package org.pgetl.testkit.tck;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.fail;

import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.UUID;
import org.pgetl.destination.AsyncResult;
import org.pgetl.destination.AsyncResult.Outcome;
import org.pgetl.destination.Destination;
import org.pgetl.destination.DestinationContext;
import org.pgetl.destination.StreamId;
import org.pgetl.destination.TableCopyBatchId;
import org.pgetl.destination.TableCopyWrite;
import org.pgetl.destination.WriteDurability;
import org.pgetl.model.Event;
import org.pgetl.model.ReplicatedTableSchema;
import org.pgetl.model.TableRow;

/**
 * Calls a destination the way the engine does and checks each call against the contract: the method
 * returns within a bound and does not throw; the result is answered within a timeout, not with a
 * failure or shutdown; {@code Finish} and {@code REQUIRE_DURABLE} writes are answered {@code
 * durable()}. Thread-safe (copy partitions and streams call it from several threads).
 */
final class Driver {
  private final Destination destination;
  private final Duration answerTimeout;
  private final Duration callBound;
  private volatile boolean shutdown;

  Driver(Destination destination, Duration answerTimeout, Duration callBound) {
    this.destination = destination;
    this.answerTimeout = answerTimeout;
    this.callBound = callBound;
  }

  boolean isShutdown() {
    return shutdown;
  }

  void startup(DestinationContext context) {
    try {
      destination.startup(context);
    } catch (RuntimeException e) {
      fail("startup threw " + e, e);
    }
  }

  void shutdown() {
    shutdown = true;
    try {
      destination.shutdown();
    } catch (RuntimeException e) {
      fail("shutdown after the last write threw " + e, e);
    }
  }

  /** Drops the table for a new copy attempt and returns the attempt's id. */
  UUID drop(ReplicatedTableSchema table) {
    UUID attempt = UUID.randomUUID();
    AsyncResult r = AsyncResult.create();
    String what = "dropTableForCopy(" + table.name() + ", " + attempt + ")";
    timed(what, () -> destination.dropTableForCopy(table, attempt, r));
    await(r, what);
    return attempt;
  }

  Outcome batch(ReplicatedTableSchema table, TableCopyBatchId id, List<TableRow> rows) {
    AsyncResult r = AsyncResult.create();
    String what = "writeTableRows(" + table.name() + ", batch " + id + ")";
    TableCopyWrite write = new TableCopyWrite.Batch(id, WireForms.copied(table, rows));
    timed(what, () -> destination.writeTableRows(table, write, r));
    return await(r, what);
  }

  void finish(ReplicatedTableSchema table, UUID attempt, long batches, long rows) {
    AsyncResult r = AsyncResult.create();
    TableCopyWrite.Finish finish = new TableCopyWrite.Finish(attempt, batches, rows);
    String what = "writeTableRows(" + table.name() + ", " + finish + ")";
    timed(what, () -> destination.writeTableRows(table, finish, r));
    Outcome o = await(r, what);
    assertEquals(
        Outcome.DURABLE,
        o,
        what
            + " was answered "
            + o
            + ": the Finish barrier must be answered durable() once every batch of the attempt is"
            + " durable");
  }

  Outcome events(List<Event> events, WriteDurability durability) {
    return events(StreamId.APPLY, events, durability);
  }

  Outcome events(StreamId stream, List<Event> events, WriteDurability durability) {
    AsyncResult r = eventsAsync(stream, events, durability);
    return awaitEvents(r, events.size(), durability);
  }

  AsyncResult eventsAsync(List<Event> events, WriteDurability durability) {
    return eventsAsync(StreamId.APPLY, events, durability);
  }

  AsyncResult eventsAsync(StreamId stream, List<Event> events, WriteDurability durability) {
    AsyncResult r = AsyncResult.create();
    List<Event> sent = WireForms.streamed(events);
    timed(
        "writeEvents(" + stream + ", " + events.size() + " events, " + durability + ")",
        () -> destination.writeEvents(stream, sent, durability, r));
    return r;
  }

  Outcome awaitEvents(AsyncResult r, int size, WriteDurability durability) {
    String what = "writeEvents(" + size + " events, " + durability + ")";
    Outcome o = await(r, what);
    if (durability == WriteDurability.REQUIRE_DURABLE) {
      assertEquals(
          Outcome.DURABLE,
          o,
          what
              + " was answered "
              + o
              + ": a REQUIRE_DURABLE write must be answered durable() (or fail); accepted() breaks"
              + " the contract");
    }
    return o;
  }

  private void timed(String what, Runnable call) {
    long t0 = System.nanoTime();
    try {
      call.run();
    } catch (RuntimeException e) {
      fail(what + " threw " + e, e);
    }
    long elapsed = System.nanoTime() - t0;
    if (elapsed > callBound.toNanos()) {
      fail(
          what
              + " took "
              + Duration.ofNanos(elapsed).toMillis()
              + " ms to return (bound "
              + callBound.toMillis()
              + " ms): destination methods must return quickly and answer the result later");
    }
  }

  private Outcome await(AsyncResult r, String what) {
    Optional<Outcome> o;
    try {
      o = r.await(answerTimeout);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new AssertionError("interrupted while waiting for the answer to " + what, e);
    }
    if (o.isEmpty()) {
      fail(
          what
              + " was not answered within "
              + answerTimeout.toMillis()
              + " ms: every call must be answered exactly once");
    }
    Outcome outcome = o.get();
    switch (outcome.kind()) {
      case FAILED -> fail(what + " failed: " + outcome.error(), outcome.error());
      case SHUTDOWN -> fail(what + " was answered shutdown() although no shutdown was under way");
      default -> {}
    }
    return outcome;
  }
}
