package org.pgetl.bench;

import java.util.List;
import java.util.UUID;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicLong;
import org.pgetl.destination.AsyncResult;
import org.pgetl.destination.Destination;
import org.pgetl.destination.StreamId;
import org.pgetl.destination.TableCopyWrite;
import org.pgetl.destination.WriteDurability;
import org.pgetl.model.Event;
import org.pgetl.model.ReplicatedTableSchema;

/**
 * The harnesses' destination: answers every write durable at once and counts what arrives, with the
 * times of the first copied row, of the copy's and the stream's last row, and of the first and last
 * insert. Its latches open when {@code copyTarget} rows were copied and {@code streamTarget}
 * inserts streamed (0: never).
 */
final class CountingDestination implements Destination {
  final AtomicLong rows = new AtomicLong();
  final AtomicLong inserts = new AtomicLong();
  final AtomicLong copyDoneNanos = new AtomicLong();
  final AtomicLong firstRowNanos = new AtomicLong();
  final AtomicLong streamDoneNanos = new AtomicLong();
  final AtomicLong lastInsertNanos = new AtomicLong();
  final AtomicLong firstInsertNanos = new AtomicLong();
  final CountDownLatch copied = new CountDownLatch(1);
  final CountDownLatch streamed = new CountDownLatch(1);
  private final long copyTarget;
  private final long streamTarget;

  CountingDestination(long copyTarget, long streamTarget) {
    this.copyTarget = copyTarget;
    this.streamTarget = streamTarget;
  }

  @Override
  public String name() {
    return "counting";
  }

  @Override
  public void dropTableForCopy(ReplicatedTableSchema table, UUID attemptId, AsyncResult result) {
    result.durable();
  }

  @Override
  public void writeTableRows(
      ReplicatedTableSchema table, TableCopyWrite write, AsyncResult result) {
    if (write instanceof TableCopyWrite.Batch) {
      firstRowNanos.compareAndSet(0, System.nanoTime());
    }
    if (write instanceof TableCopyWrite.Batch b
        && rows.addAndGet(b.rows().size()) >= copyTarget
        && copyTarget > 0
        && copied.getCount() > 0) {
      copyDoneNanos.set(System.nanoTime());
      copied.countDown();
    }
    result.durable();
  }

  @Override
  public void writeEvents(
      StreamId stream, List<Event> events, WriteDurability durability, AsyncResult result) {
    long n = 0;
    for (Event e : events) {
      if (e.kind() == Event.Kind.INSERT) {
        n++;
      }
    }
    if (n > 0) {
      lastInsertNanos.set(System.nanoTime());
      firstInsertNanos.compareAndSet(0, lastInsertNanos.get());
      long total = inserts.addAndGet(n);
      if (streamTarget > 0 && total >= streamTarget && streamed.getCount() > 0) {
        streamDoneNanos.set(System.nanoTime());
        streamed.countDown();
      }
    }
    result.durable();
  }
}
