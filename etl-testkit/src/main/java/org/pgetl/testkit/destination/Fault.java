package org.pgetl.testkit.destination;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Predicate;
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;
import org.pgetl.error.EtlException;

/**
 * A fault armed on a {@link FaultyDestination}: which operation it fires on, how often, what it
 * does, and what it hit so far. Created by {@link FaultyDestination#on(DestinationOperation)}.
 *
 * <p>Thread-safe: it shares its destination's lock.
 */
public final class Fault {
  private final ReentrantLock lock;
  private final Condition hit;
  private final DestinationOperation operation;
  private final FaultAction action;
  private final @Nullable Predicate<? super DestinationCall> predicate; // null: every call
  private final @Nullable Supplier<EtlException> errors; // REJECT, FAIL, FAIL_AFTER_WRITE only
  private final @Nullable Supplier<? extends Throwable> thrown; // THROW only
  private final @Nullable Duration delay; // DELAY only

  // guarded by lock
  private int remaining; // -1: every matching call
  private boolean armed = true;
  private final List<DestinationCall> hits = new ArrayList<>();
  private final List<HoldHandle> holds = new ArrayList<>();
  private int holdsTaken;

  Fault(
      ReentrantLock lock,
      DestinationOperation operation,
      FaultAction action,
      @Nullable Predicate<? super DestinationCall> predicate,
      int times,
      @Nullable Supplier<EtlException> errors,
      @Nullable Supplier<? extends Throwable> thrown,
      @Nullable Duration delay) {
    this.lock = lock;
    this.hit = lock.newCondition();
    this.operation = operation;
    this.action = action;
    this.predicate = predicate;
    this.remaining = times;
    this.errors = errors;
    this.thrown = thrown;
    this.delay = delay;
  }

  /** Under lock: returns true and counts the call when this fault fires on it. */
  boolean take(DestinationCall call) {
    if (!armed || call.operation() != operation) {
      return false;
    }
    if (predicate != null && !predicate.test(call)) {
      return false;
    }
    if (remaining > 0 && --remaining == 0) {
      armed = false;
    }
    return true;
  }

  /** Under lock: the handle for the next held call. */
  HoldHandle nextHold() {
    return handle(holdsTaken++);
  }

  private HoldHandle handle(int index) {
    while (holds.size() <= index) {
      holds.add(new HoldHandle(operation));
    }
    return holds.get(index);
  }

  void recordHit(DestinationCall call) {
    lock.lock();
    try {
      hits.add(call);
      hit.signalAll();
    } finally {
      lock.unlock();
    }
  }

  /** Returns the exception to throw or answer for one hit. */
  EtlException error() {
    return Objects.requireNonNull(errors, "only faults that fail or reject are asked for an error")
        .get();
  }

  Duration delay() {
    return Objects.requireNonNull(delay, "only a DELAY fault is asked for its delay");
  }

  /** Throws what a {@link FaultAction#THROW} fault throws (checked exceptions wrapped). */
  RuntimeException throwIt() {
    Throwable t = Objects.requireNonNull(thrown, "only a THROW fault throws").get();
    if (t instanceof Error e) {
      throw e;
    }
    if (t instanceof RuntimeException e) {
      throw e;
    }
    throw new IllegalStateException("injected fault", t);
  }

  /**
   * Returns the operation this fault fires on.
   *
   * @return the operation
   */
  public DestinationOperation operation() {
    return operation;
  }

  /**
   * Returns what this fault does.
   *
   * @return the action
   */
  public FaultAction action() {
    return action;
  }

  /**
   * Returns true while the fault can still fire.
   *
   * @return false once disarmed or once it fired as many times as it was armed for
   */
  public boolean isArmed() {
    lock.lock();
    try {
      return armed;
    } finally {
      lock.unlock();
    }
  }

  /** Stops the fault from firing on later calls; calls it holds stay held. */
  public void disarm() {
    lock.lock();
    try {
      armed = false;
    } finally {
      lock.unlock();
    }
  }

  /**
   * Returns how many calls the fault fired on.
   *
   * @return the count
   */
  public int hits() {
    lock.lock();
    try {
      return hits.size();
    } finally {
      lock.unlock();
    }
  }

  /**
   * Returns the calls the fault fired on, in order.
   *
   * @return a snapshot of the calls
   */
  public List<DestinationCall> calls() {
    lock.lock();
    try {
      return List.copyOf(hits);
    } finally {
      lock.unlock();
    }
  }

  /**
   * Waits until the fault fired on at least {@code count} calls.
   *
   * @param count the number of hits to wait for
   * @param timeout how long to wait
   * @return true when it did, false when the timeout passed first
   */
  public boolean awaitHits(int count, Duration timeout) {
    long deadline = System.nanoTime() + timeout.toNanos();
    lock.lock();
    try {
      while (hits.size() < count) {
        long left = deadline - System.nanoTime();
        if (left <= 0) {
          return false;
        }
        hit.awaitNanos(left);
      }
      return true;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return hits.size() >= count;
    } finally {
      lock.unlock();
    }
  }

  /**
   * Returns the handle of the {@code index}-th call this {@link FaultAction#HOLD} fault holds (from
   * 0); the handle exists before the call arrives, so a test can wait on it.
   *
   * @param index which held call
   * @return its handle
   * @throws IllegalStateException when the fault's action is not {@link FaultAction#HOLD}
   */
  public HoldHandle held(int index) {
    if (action != FaultAction.HOLD) {
      throw new IllegalStateException("a " + action + " fault holds no calls");
    }
    if (index < 0) {
      throw new IllegalArgumentException("index must be >= 0, was " + index);
    }
    lock.lock();
    try {
      return handle(index);
    } finally {
      lock.unlock();
    }
  }

  @Override
  public String toString() {
    lock.lock();
    try {
      return "Fault["
          + operation
          + " "
          + action
          + (predicate == null ? "" : " matching")
          + (remaining < 0 ? " always" : " remaining=" + remaining)
          + " hits="
          + hits.size()
          + (armed ? "" : " disarmed")
          + "]";
    } finally {
      lock.unlock();
    }
  }
}
