package org.pgetl;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * A shutdown request, shared by a pipeline and every one of its workers: one object carries both
 * the sending side ({@link #request()}) and the receiving side ({@link #isRequested()}, {@link
 * #whenRequested()}, {@link #awaitRequested(Duration)}).
 *
 * <p>Any thread may request shutdown, any number of times; only the first request counts. Because
 * every worker holds the same handle, a worker that observes a reason to stop (for example a
 * destination answering {@code shutdown()}) requests it through the same path as the host
 * application. Thread-safe; never blocks except in {@link #awaitRequested(Duration)}.
 */
public final class Shutdown {
  private final CompletableFuture<Void> requested = new CompletableFuture<>();

  /** Creates a handle on which shutdown is not yet requested. */
  public Shutdown() {}

  /**
   * Requests shutdown. Idempotent.
   *
   * @return true if this call made the request, false if it was already requested
   */
  public boolean request() {
    return requested.complete(null);
  }

  /**
   * Returns true once shutdown has been requested.
   *
   * @return whether shutdown was requested
   */
  public boolean isRequested() {
    return requested.isDone();
  }

  /**
   * Returns a stage that completes when shutdown is requested (at once if it already was).
   * Callbacks run on the requesting thread (or the registering one when already requested) and must
   * not block.
   *
   * @return the stage
   */
  public CompletionStage<Void> whenRequested() {
    return requested.minimalCompletionStage();
  }

  /**
   * Waits until shutdown is requested, at most {@code timeout}.
   *
   * @param timeout the longest wait
   * @return true if shutdown was requested, false if the wait timed out
   * @throws InterruptedException when the waiting thread is interrupted
   */
  public boolean awaitRequested(Duration timeout) throws InterruptedException {
    if (requested.isDone()) {
      return true;
    }
    try {
      requested.get(Math.max(0, timeout.toNanos()), TimeUnit.NANOSECONDS);
      return true;
    } catch (TimeoutException e) {
      return false;
    } catch (ExecutionException e) {
      throw new IllegalStateException("shutdown future never fails", e);
    }
  }

  @Override
  public String toString() {
    return "Shutdown[" + (isRequested() ? "requested" : "running") + "]";
  }
}
