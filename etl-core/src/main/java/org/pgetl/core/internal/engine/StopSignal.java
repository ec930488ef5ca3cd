package org.pgetl.core.internal.engine;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicReference;

/**
 * Asks the workers of one generation (an apply worker and the table-sync workers it started) to
 * stop, and how: {@link Mode#DRAIN} flushes buffered work and waits for the answers (a shutdown, a
 * lifecycle drain); {@link Mode#DISCARD} drops buffered work and waits only for writes already in
 * flight (a lifecycle pause or retire). A later request can only make the stop stricter (DRAIN to
 * DISCARD). Thread-safe.
 */
public final class StopSignal {
  /** How a generation stops. */
  public enum Mode {
    /** Keep running. */
    NONE,
    /** No new intake; buffered work is flushed and its answers awaited. */
    DRAIN,
    /** No new intake; buffered work is discarded; writes in flight may finish. */
    DISCARD
  }

  private final AtomicReference<Mode> mode = new AtomicReference<>(Mode.NONE);
  private final AtomicReference<String> incomplete = new AtomicReference<>();
  private final List<Runnable> wakers = new CopyOnWriteArrayList<>();

  /**
   * Requests a stop. Idempotent; a stricter mode replaces a laxer one.
   *
   * @param requested DRAIN or DISCARD
   */
  public void request(Mode requested) {
    mode.accumulateAndGet(requested, (a, b) -> a.ordinal() >= b.ordinal() ? a : b);
    for (Runnable w : wakers) {
      w.run();
    }
  }

  /**
   * Returns the requested mode.
   *
   * @return NONE while running
   */
  public Mode mode() {
    return mode.get();
  }

  /**
   * Returns true once a stop was requested.
   *
   * @return whether to stop
   */
  public boolean isRequested() {
    return mode.get() != Mode.NONE;
  }

  /**
   * Records that a stream did not stop cleanly: a write failed or stayed unanswered while it
   * stopped, so what it had read was not all delivered. The first reason is kept.
   *
   * @param reason what went wrong
   */
  public void noteIncomplete(String reason) {
    incomplete.compareAndSet(null, reason);
  }

  /**
   * Returns why a stream did not stop cleanly.
   *
   * @return the first reason, or null when every stream stopped cleanly
   */
  public String incompleteReason() {
    return incomplete.get();
  }

  /**
   * Registers a callback run on every request (to unpark a worker thread).
   *
   * @param waker the callback; must not block
   * @return a handle that unregisters it
   */
  public Runnable onRequest(Runnable waker) {
    wakers.add(waker);
    return () -> wakers.remove(waker);
  }
}
