package org.pgetl.testkit.destination;

import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;
import org.jspecify.annotations.Nullable;
import org.pgetl.destination.AsyncResult;
import org.pgetl.destination.AsyncResult.Outcome;
import org.pgetl.error.ErrorKind;
import org.pgetl.error.EtlException;

/**
 * One call held by a {@link FaultAction#HOLD} fault: the test waits until the call is reached, then
 * decides when and how it is answered.
 *
 * <p>For a call with a result, the wrapped destination got the call (and answered its own result,
 * {@link #delegateResult()}); the caller's {@link #result()} stays unanswered until one of the
 * {@code release...} methods. For startup and shutdown, the calling thread is blocked until
 * released; {@link #release()}, {@link #releaseDurable()} and {@link #releaseAccepted()} then let
 * the call through to the wrapped destination, {@link #releaseShutdown()} returns without
 * delegating, and {@code releaseWith(failed)} throws the failure from the call.
 *
 * <p>Thread-safe. Releasing before the call is reached is an error.
 */
public final class HoldHandle {
  private final ReentrantLock lock = new ReentrantLock();
  private final Condition stateChanged = lock.newCondition();
  private final DestinationOperation operation;

  // guarded by lock; call, result and delegateResult are null until reached, and the two results
  // stay null for startup and shutdown
  private @Nullable DestinationCall call;
  private @Nullable AsyncResult result;
  private @Nullable AsyncResult delegateResult;
  private boolean reached;
  private boolean released;
  // null with released == true: forward the delegate's answer
  private @Nullable Outcome releasedWith;

  HoldHandle(DestinationOperation operation) {
    this.operation = operation;
  }

  /** Marks the call reached; for calls with a result, after the delegate got the call. */
  void reach(
      DestinationCall call, @Nullable AsyncResult result, @Nullable AsyncResult delegateResult) {
    lock.lock();
    try {
      this.call = call;
      this.result = result;
      this.delegateResult = delegateResult;
      this.reached = true;
      stateChanged.signalAll();
    } finally {
      lock.unlock();
    }
  }

  /**
   * Blocks the calling thread of a startup or shutdown until released.
   *
   * @return the release: null to let the call through, or the outcome given
   */
  @Nullable Outcome awaitRelease() {
    lock.lock();
    try {
      while (!released) {
        stateChanged.await();
      }
      return releasedWith;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new EtlException(
          ErrorKind.DESTINATION_ERROR,
          "interrupted while a test held " + operation,
          "the thread was interrupted before the test released the held call",
          e);
    } finally {
      lock.unlock();
    }
  }

  /**
   * Returns the held operation.
   *
   * @return the operation
   */
  public DestinationOperation operation() {
    return operation;
  }

  /**
   * Waits until a call is held by this handle.
   *
   * @param timeout how long to wait
   * @return true once the call is held, false when the timeout passed first
   */
  public boolean awaitReached(Duration timeout) {
    long deadline = System.nanoTime() + timeout.toNanos();
    lock.lock();
    try {
      while (!reached) {
        long left = deadline - System.nanoTime();
        if (left <= 0) {
          return false;
        }
        stateChanged.awaitNanos(left);
      }
      return true;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return reached;
    } finally {
      lock.unlock();
    }
  }

  /**
   * Returns true once a call is held by this handle.
   *
   * @return whether the call was reached
   */
  public boolean isReached() {
    lock.lock();
    try {
      return reached;
    } finally {
      lock.unlock();
    }
  }

  /**
   * Returns true once the call was released.
   *
   * @return whether a release happened
   */
  public boolean isReleased() {
    lock.lock();
    try {
      return released;
    } finally {
      lock.unlock();
    }
  }

  /**
   * Returns the held call.
   *
   * @return the call, or null before it is reached
   */
  public @Nullable DestinationCall call() {
    lock.lock();
    try {
      return call;
    } finally {
      lock.unlock();
    }
  }

  /**
   * Returns the caller's result, which this handle keeps unanswered until released.
   *
   * @return the result, or null before the call is reached and for startup and shutdown
   */
  public @Nullable AsyncResult result() {
    lock.lock();
    try {
      return result;
    } finally {
      lock.unlock();
    }
  }

  /**
   * Returns the result the wrapped destination answered.
   *
   * @return the delegate's result, or null before the call is reached and for startup and shutdown
   */
  public @Nullable AsyncResult delegateResult() {
    lock.lock();
    try {
      return delegateResult;
    } finally {
      lock.unlock();
    }
  }

  /**
   * Answers the held call with an outcome, whatever the wrapped destination answered.
   *
   * @param outcome the answer
   * @return true when this answered the call, false when it was already released
   * @throws IllegalStateException when the call was not reached yet
   */
  public boolean releaseWith(Outcome outcome) {
    Objects.requireNonNull(outcome, "outcome");
    AsyncResult r;
    lock.lock();
    try {
      checkReached();
      if (released) {
        return false;
      }
      released = true;
      releasedWith = outcome;
      r = result;
      stateChanged.signalAll();
    } finally {
      lock.unlock();
    }
    return r == null || r.send(outcome);
  }

  /**
   * Answers the held call {@code durable()}.
   *
   * @return true when this answered the call
   * @throws IllegalStateException when the call was not reached yet
   */
  public boolean releaseDurable() {
    return releaseWith(Outcome.DURABLE);
  }

  /**
   * Answers the held call {@code accepted()}.
   *
   * @return true when this answered the call
   * @throws IllegalStateException when the call was not reached yet
   */
  public boolean releaseAccepted() {
    return releaseWith(Outcome.ACCEPTED);
  }

  /**
   * Answers the held call {@code shutdown()}.
   *
   * @return true when this answered the call
   * @throws IllegalStateException when the call was not reached yet
   */
  public boolean releaseShutdown() {
    return releaseWith(Outcome.SHUTDOWN);
  }

  /**
   * Answers the held call {@code fail(new EtlException(kind, ...))}.
   *
   * @param kind the failure's kind
   * @return true when this answered the call
   * @throws IllegalStateException when the call was not reached yet
   */
  public boolean releaseFailed(ErrorKind kind) {
    return releaseWith(
        Outcome.failed(
            new EtlException(
                kind, "injected fault: held " + operation + " released as failed", null)));
  }

  /**
   * Forwards the wrapped destination's answer to the held call, now if it came, or when it comes.
   * For startup and shutdown, lets the call through to the wrapped destination.
   *
   * @throws IllegalStateException when the call was not reached yet
   */
  public void release() {
    AsyncResult r;
    AsyncResult inner;
    lock.lock();
    try {
      checkReached();
      if (released) {
        return;
      }
      released = true;
      releasedWith = null;
      r = result;
      inner = delegateResult;
      stateChanged.signalAll();
    } finally {
      lock.unlock();
    }
    if (r != null && inner != null) {
      inner.completion().thenAccept(r::send);
    }
  }

  private void checkReached() {
    if (!reached) {
      throw new IllegalStateException(
          "the held " + operation + " call was not reached yet: awaitReached first");
    }
  }

  @Override
  public String toString() {
    lock.lock();
    try {
      return "HoldHandle["
          + operation
          + (reached ? " reached" : " waiting")
          + (released ? " released" : "")
          + "]";
    } finally {
      lock.unlock();
    }
  }
}
