package org.pgetl.core.internal.apply;

import java.util.ArrayDeque;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import org.pgetl.destination.AsyncResult;
import org.pgetl.destination.Outcome;
import org.pgetl.destination.WriteDurability;
import org.pgetl.error.ErrorKind;
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
 *   <li>{@code durable} covers the write itself and every earlier write answered {@code accepted}
 *       at that moment — never an earlier write still unanswered.
 *   <li>The durable point advances over the longest prefix of writes known durable, to the greatest
 *       commit end LSN in that prefix (writes without a commit — a large transaction cut in batches
 *       — move nothing).
 *   <li>{@code accepted} to a {@link WriteDurability#REQUIRE_DURABLE} write is a contract
 *       violation.
 * </ul>
 *
 * <p>Answers arrive on any thread; they are queued in the order they were given and applied by the
 * owner thread in {@link #poll()}. Everything else is called by the owner thread only.
 */
final class WriteWindow {

  /** What {@link #poll()} found. */
  record Progress(Lsn durableAdvancedTo, EtlException failure, boolean abandoned) {
    static final Progress NONE = new Progress(null, null, false);
  }

  private enum Status {
    PENDING,
    ACCEPTED,
    DURABLE
  }

  private static final class Entry {
    final long seq;
    final Lsn commitEndLsn;
    final WriteDurability durability;
    Status status = Status.PENDING;

    Entry(long seq, Lsn commitEndLsn, WriteDurability durability) {
      this.seq = seq;
      this.commitEndLsn = commitEndLsn;
      this.durability = durability;
    }
  }

  private record Answer(long seq, Outcome outcome) {}

  private final int capacity;
  private final Runnable wakeOwner;
  private final ArrayDeque<Entry> entries = new ArrayDeque<>();
  private final Queue<Answer> answers = new ConcurrentLinkedQueue<>();
  private long nextSeq;
  private int pending;
  // greatest commit LSN of the accepted writes that were at the head of the window (collapsed)
  private Lsn acceptedPrefixLsn;
  private boolean acceptedPrefix;

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
  void track(AsyncResult result, Lsn commitEndLsn, WriteDurability durability) {
    long seq = nextSeq++;
    entries.addLast(new Entry(seq, commitEndLsn, durability));
    pending++;
    result
        .completion()
        .thenAccept(
            outcome -> {
              answers.add(new Answer(seq, outcome));
              wakeOwner.run();
            });
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
    return entries.isEmpty() && !acceptedPrefix;
  }

  /**
   * Returns true when some write was answered {@code accepted} and is not yet covered by a durable
   * answer.
   *
   * @return whether accepted work waits for durability
   */
  boolean hasAcceptedNotDurable() {
    if (acceptedPrefix) {
      return true;
    }
    for (Entry e : entries) {
      if (e.status == Status.ACCEPTED) {
        return true;
      }
    }
    return false;
  }

  /**
   * Applies the answers that arrived since the last call, in the order they were given.
   *
   * @return the durable advance, a failure, or an abandonment (shutdown answer)
   */
  Progress poll() {
    Lsn advanced = null;
    Answer a;
    while ((a = answers.poll()) != null) {
      Entry entry = find(a.seq);
      if (entry == null) {
        continue; // already collapsed: cannot happen for a first answer
      }
      if (entry.status == Status.PENDING) {
        pending--;
      }
      switch (a.outcome.kind()) {
        case FAILED:
          return new Progress(advanced, a.outcome.error(), false);
        case SHUTDOWN:
          return new Progress(advanced, null, true);
        case ACCEPTED:
          if (entry.durability == WriteDurability.REQUIRE_DURABLE) {
            return new Progress(
                advanced,
                new EtlException(
                    ErrorKind.DESTINATION_CONTRACT_VIOLATION,
                    "destination answered accepted() to a write that required durable()",
                    "writeEvents(..., REQUIRE_DURABLE, ...) must be answered durable() or failed"),
                false);
          }
          entry.status = Status.ACCEPTED;
          break;
        case DURABLE:
          entry.status = Status.DURABLE;
          for (Entry e : entries) {
            if (e == entry) {
              break;
            }
            if (e.status == Status.ACCEPTED) {
              e.status = Status.DURABLE;
            }
          }
          if (acceptedPrefix) {
            // the collapsed accepted prefix lies before every entry: covered too
            advanced = max(advanced, acceptedPrefixLsn);
            acceptedPrefix = false;
            acceptedPrefixLsn = null;
          }
          break;
        default:
          throw new IllegalStateException("unknown outcome " + a.outcome);
      }
      advanced = max(advanced, collapseHead());
    }
    return advanced == null ? Progress.NONE : new Progress(advanced, null, false);
  }

  /**
   * Removes the answered writes at the head of the window. Durable writes advance the durable
   * point, unless an accepted write lies before them: then they join the accepted prefix, which
   * becomes durable as a whole when a later write is answered durable.
   */
  private Lsn collapseHead() {
    Lsn advanced = null;
    while (!entries.isEmpty()) {
      Entry e = entries.peekFirst();
      if (e.status == Status.PENDING) {
        break;
      }
      entries.removeFirst();
      if (e.status == Status.DURABLE && !acceptedPrefix) {
        advanced = max(advanced, e.commitEndLsn);
      } else {
        acceptedPrefix = true;
        acceptedPrefixLsn = max(acceptedPrefixLsn, e.commitEndLsn);
      }
    }
    return advanced;
  }

  private Entry find(long seq) {
    for (Entry e : entries) {
      if (e.seq == seq) {
        return e;
      }
    }
    return null;
  }

  private static Lsn max(Lsn a, Lsn b) {
    if (a == null) {
      return b;
    }
    return b == null ? a : Lsn.max(a, b);
  }
}
