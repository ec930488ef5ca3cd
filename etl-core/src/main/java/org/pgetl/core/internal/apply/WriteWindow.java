package org.pgetl.core.internal.apply;

import java.util.ArrayDeque;
import java.util.Iterator;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import org.jspecify.annotations.Nullable;
import org.pgetl.core.internal.engine.DestinationCalls;
import org.pgetl.destination.AsyncResult;
import org.pgetl.destination.AsyncResult.Outcome;
import org.pgetl.destination.WriteDurability;
import org.pgetl.error.EtlException;
import org.pgetl.model.Lsn;

/**
 * The streaming writes of one replication stream that are not yet known durable, and the durable
 * point they add up to.
 *
 * <p>Rules (ARCHITECTURE.md §4):
 *
 * <ul>
 *   <li>A write is <em>in flight</em> until answered; at most {@code capacity} are in flight.
 *   <li>{@code accepted} keeps the write's commit LSN for later: a later {@code durable} covers it.
 *   <li>{@code durable} covers the write itself and every earlier write that had been answered
 *       {@code accepted} <em>before</em> that durable answer was given — never an earlier write
 *       still unanswered at that moment.
 *   <li>The durable point advances over the longest prefix of writes known durable, to the greatest
 *       commit end LSN in that prefix (writes without a commit — a large transaction cut in batches
 *       — move nothing).
 *   <li>{@code accepted} to a {@link WriteDurability#REQUIRE_DURABLE} write is a contract
 *       violation.
 * </ul>
 *
 * <p>Answers arrive on any thread and are queued by their callbacks, whose order may differ from
 * the order in which the destination answered. So "before" is decided by each answer's {@link
 * AsyncResult#answerOrder()}, taken when the answer took effect, never by the order of the queue:
 * an accepted write is covered by a durable answer of a later write whose order is greater. Applied
 * by the owner thread in {@link #poll()}; everything else is called by the owner thread only.
 */
final class WriteWindow {

  /** What {@link #poll()} found. */
  record Progress(
      @Nullable Lsn durableAdvancedTo, @Nullable EtlException failure, boolean abandoned) {
    static final Progress NONE = new Progress(null, null, false);
  }

  private enum Status {
    PENDING,
    ACCEPTED,
    DURABLE
  }

  private static final class Entry {
    final long seq;
    final @Nullable Lsn commitEndLsn;
    final WriteDurability durability;
    Status status = Status.PENDING;
    long answerOrder;

    Entry(long seq, @Nullable Lsn commitEndLsn, WriteDurability durability) {
      this.seq = seq;
      this.commitEndLsn = commitEndLsn;
      this.durability = durability;
    }
  }

  private record Answer(long seq, Outcome outcome, long order) {}

  private final int capacity;
  private final Runnable wakeOwner;
  // dispatch order; answered entries stay until the prefix before them is durable
  private final ArrayDeque<Entry> entries = new ArrayDeque<>();
  private final Queue<Answer> answers = new ConcurrentLinkedQueue<>();
  private long nextSeq;
  private int pending;

  WriteWindow(int capacity, Runnable wakeOwner) {
    if (capacity < 1) {
      throw new IllegalArgumentException("capacity must be >= 1, was " + capacity);
    }
    this.capacity = capacity;
    this.wakeOwner = wakeOwner;
  }

  /**
   * Registers a dispatched write. The caller then hands {@code result} to the destination.
   *
   * @param result the write's result
   * @param commitEndLsn the greatest commit end LSN the write completes, or null
   * @param durability the durability the write asked for
   */
  void track(AsyncResult result, @Nullable Lsn commitEndLsn, WriteDurability durability) {
    long seq = nextSeq++;
    entries.addLast(new Entry(seq, commitEndLsn, durability));
    pending++;
    result
        .completion()
        .thenAccept(
            outcome -> {
              answers.add(new Answer(seq, outcome, result.answerOrder()));
              wakeOwner.run();
            });
  }

  /**
   * Returns how many writes were dispatched so far; the next write gets this number.
   *
   * @return the count
   */
  long dispatched() {
    return nextSeq;
  }

  /**
   * Returns true when every write numbered below {@code seq} has been answered (whatever the
   * answer).
   *
   * @param seq a write number
   * @return whether they all were answered
   */
  boolean answeredBefore(long seq) {
    for (Entry e : entries) {
      if (e.seq >= seq) {
        break;
      }
      if (e.status == Status.PENDING) {
        return false;
      }
    }
    return true;
  }

  /**
   * Returns true when no more writes may be dispatched until one is answered.
   *
   * @return whether the window is full
   */
  boolean isFull() {
    return pending >= capacity;
  }

  /**
   * Returns the number of unanswered writes.
   *
   * @return the in-flight count
   */
  int inFlight() {
    return pending;
  }

  /**
   * Returns true when every write is answered and known durable: nothing in flight and nothing
   * accepted waiting for a durable answer.
   *
   * @return whether the window is empty
   */
  boolean isClear() {
    return entries.isEmpty();
  }

  /**
   * Returns true when some write was answered {@code accepted} and is not yet covered by a durable
   * answer.
   *
   * @return whether accepted work waits for durability
   */
  boolean hasAcceptedNotDurable() {
    for (Entry e : entries) {
      if (e.status == Status.ACCEPTED && !coveredLater(e)) {
        return true;
      }
    }
    return false;
  }

  /**
   * Applies the answers that arrived since the last call.
   *
   * @return the durable advance, a failure, or an abandonment (shutdown answer)
   */
  Progress poll() {
    Lsn advanced = null;
    Answer a;
    while ((a = answers.poll()) != null) {
      Entry entry = find(a.seq);
      if (entry == null || entry.status != Status.PENDING) {
        continue; // a result is answered once
      }
      pending--;
      entry.answerOrder = a.order;
      switch (a.outcome.kind()) {
        case FAILED -> {
          return new Progress(advanced, a.outcome.error(), false);
        }
        case SHUTDOWN -> {
          return new Progress(advanced, null, true);
        }
        case ACCEPTED -> {
          try {
            DestinationCalls.requireDurable(a.outcome, entry.durability, "a streaming write");
          } catch (EtlException violation) {
            return new Progress(advanced, violation, false);
          }
          entry.status = Status.ACCEPTED;
        }
        case DURABLE -> entry.status = Status.DURABLE;
        default -> throw new IllegalStateException("unknown outcome " + a.outcome);
      }
      advanced = max(advanced, collapseHead());
    }
    return advanced == null ? Progress.NONE : new Progress(advanced, null, false);
  }

  /**
   * Removes the durable writes at the head of the window and returns the greatest commit LSN among
   * them. An accepted write at the head counts as durable once a later write was answered durable
   * after it; otherwise it stops the prefix.
   */
  private @Nullable Lsn collapseHead() {
    Lsn advanced = null;
    while (!entries.isEmpty()) {
      Entry e = entries.peekFirst();
      if (e.status == Status.PENDING || (e.status == Status.ACCEPTED && !coveredLater(e))) {
        break;
      }
      entries.removeFirst();
      advanced = max(advanced, e.commitEndLsn);
    }
    return advanced;
  }

  /** True when a write dispatched after {@code e} was answered durable after {@code e}'s answer. */
  private boolean coveredLater(Entry e) {
    boolean after = false;
    for (Iterator<Entry> it = entries.iterator(); it.hasNext(); ) {
      Entry f = it.next();
      if (f == e) {
        after = true;
      } else if (after && f.status == Status.DURABLE && f.answerOrder > e.answerOrder) {
        return true;
      }
    }
    return false;
  }

  private @Nullable Entry find(long seq) {
    for (Entry e : entries) {
      if (e.seq == seq) {
        return e;
      }
    }
    return null;
  }

  private static @Nullable Lsn max(@Nullable Lsn a, @Nullable Lsn b) {
    if (a == null) {
      return b;
    }
    return b == null ? a : Lsn.max(a, b);
  }
}
