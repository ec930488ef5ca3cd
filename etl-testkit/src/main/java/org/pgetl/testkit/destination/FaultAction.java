package org.pgetl.testkit.destination;

/**
 * What a {@link Fault} does to the call it fires on. "Delegate" means the wrapped destination gets
 * the call (with a result of its own) and does the work.
 */
public enum FaultAction {
  /** Throw the fault's {@code EtlException} from the method, without delegating. */
  REJECT,
  /**
   * Throw any exception or error from the method, without delegating: what a destination with a bug
   * (a {@code RuntimeException}) or a JVM in trouble (an {@code OutOfMemoryError}, a {@code
   * StackOverflowError}) does.
   */
  THROW,
  /**
   * Answer {@code fail(error)} without delegating (for startup and shutdown, which have no result:
   * throw, like {@link #REJECT}).
   */
  FAIL,
  /**
   * Delegate, then answer {@code fail(error)} once the delegate answered (for startup and shutdown:
   * delegate, then throw).
   */
  FAIL_AFTER_WRITE,
  /**
   * Delegate, then keep the answer back until the test releases it through a {@link HoldHandle}
   * (for startup and shutdown: block the calling thread until released, then delegate).
   */
  HOLD,
  /**
   * Delegate, and forward the delegate's answer after a delay, from another thread; the calling
   * thread is not held (for startup and shutdown: return after the delay, then delegate).
   */
  DELAY,
  /** Answer {@code shutdown()} without delegating. */
  ANSWER_SHUTDOWN,
  /** Delegate, then answer {@code shutdown()} once the delegate answered. */
  ANSWER_SHUTDOWN_AFTER_WRITE,
  /**
   * Delegate, then answer {@code accepted()} when the delegate answers {@code accepted()} or {@code
   * durable()} (a failure or shutdown answer is forwarded as it is).
   */
  ANSWER_ACCEPTED,
  /** Delegate, and never answer the caller's result. */
  NEVER_ANSWER;

  /**
   * Returns true when the action applies to startup and shutdown, which have no result.
   *
   * @return whether the action can be armed on {@link DestinationOperation#STARTUP} and {@link
   *     DestinationOperation#SHUTDOWN}
   */
  public boolean appliesWithoutResult() {
    return this == REJECT
        || this == THROW
        || this == FAIL
        || this == FAIL_AFTER_WRITE
        || this == HOLD
        || this == DELAY;
  }
}
