package org.pgetl.core.internal.engine;

import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.jspecify.annotations.Nullable;
import org.pgetl.core.internal.time.Ticker;
import org.postgresql.PGConnection;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Asks the workers of one generation (an apply worker and the table-sync workers it started) to
 * stop, and how: {@link Mode#DRAIN} flushes buffered work and waits for the answers (a shutdown, a
 * lifecycle drain); {@link Mode#DISCARD} drops buffered work and waits only for writes already in
 * flight (a lifecycle pause or retire). A later request can only make the stop stricter (DRAIN to
 * DISCARD). A {@linkplain #child() child} signal stops with its parent and can also be stopped on
 * its own (one table's worker, when that table is copied again or leaves the publication).
 * Thread-safe.
 */
public final class StopSignal {
  private static final Logger LOG = LoggerFactory.getLogger(StopSignal.class);

  /** How a generation stops. */
  public enum Mode {
    /** Keep running. */
    NONE,
    /** No new intake; buffered work is flushed and its answers awaited. */
    DRAIN,
    /** No new intake; buffered work is discarded; writes in flight may finish. */
    DISCARD,
    /**
     * The pipeline's lease is lost: stop at once, without a new destination call, store write or
     * slot change (another instance is taking over); answers in flight are not awaited.
     */
    FENCED
  }

  private final AtomicReference<Mode> mode = new AtomicReference<>(Mode.NONE);
  private final AtomicReference<String> incomplete = new AtomicReference<>();
  private final AtomicLong requestedAtNanos = new AtomicLong();
  private final List<Runnable> wakers = new CopyOnWriteArrayList<>();
  private final @Nullable StopSignal parent;
  private final Ticker ticker;
  private volatile Runnable detachFromParent = () -> {};

  /** Creates a signal on which no stop is requested, timed by the system clock. */
  public StopSignal() {
    this(Ticker.system());
  }

  /**
   * Creates a signal on which no stop is requested.
   *
   * @param ticker where the grace period of a stop is measured
   */
  public StopSignal(Ticker ticker) {
    this(null, ticker);
  }

  private StopSignal(@Nullable StopSignal parent, Ticker ticker) {
    this.parent = parent;
    this.ticker = ticker;
  }

  /**
   * Returns a signal that is requested whenever this one is (with the same mode), and that can also
   * be requested alone. {@link #detach()} it when its worker ends.
   *
   * @return the child
   */
  public StopSignal child() {
    StopSignal c = new StopSignal(this, ticker);
    c.detachFromParent = onRequest(() -> c.request(mode()));
    if (isRequested()) {
      c.request(mode());
    }
    return c;
  }

  /** Stops following the parent (the child's worker ended). */
  public void detach() {
    detachFromParent.run();
  }

  /**
   * Requests a stop. Idempotent; a stricter mode replaces a laxer one.
   *
   * @param requested DRAIN, DISCARD or FENCED
   */
  public void request(Mode requested) {
    long now = ticker.nanoTime();
    requestedAtNanos.compareAndSet(0, now == 0 ? 1 : now);
    mode.accumulateAndGet(requested, (a, b) -> a.compareTo(b) >= 0 ? a : b);
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
    return Objects.requireNonNull(mode.get(), "the mode is never null");
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
  public void noteIncomplete(@Nullable String reason) {
    incomplete.compareAndSet(null, reason);
    if (parent != null && parent.isRequested()) {
      // only a stop of the whole generation reports what its workers left unfinished
      parent.noteIncomplete(reason);
    }
  }

  /**
   * Returns why a stream did not stop cleanly.
   *
   * @return the first reason, or null when every stream stopped cleanly
   */
  public @Nullable String incompleteReason() {
    return incomplete.get();
  }

  /**
   * Returns how long is left of the grace period a stop gives writes in flight: {@code timeout}
   * from the first request.
   *
   * @param timeout the grace period ({@code shutdownTimeout})
   * @return the time left, zero when it is over; the whole timeout while no stop is requested
   */
  public Duration graceLeft(Duration timeout) {
    long at = requestedAtNanos.get();
    if (at == 0) {
      return timeout;
    }
    long left = timeout.toNanos() - (ticker.nanoTime() - at);
    return left <= 0 ? Duration.ZERO : Duration.ofNanos(left);
  }

  /**
   * Makes a stop cancel the statement running on a connection and close the connection, so that a
   * worker blocked in the server (a slot creation waiting for open transactions, a COPY waiting for
   * a lock) returns at once; when a stop was already requested this happens immediately. Close the
   * returned guard when the blocking part is over.
   *
   * @param connection the connection, used by the caller's thread only
   * @param what what the connection does, for the log
   * @return the guard that unregisters the callback
   */
  public Guard abortOnStop(Connection connection, String what) {
    Runnable abort =
        () -> {
          try {
            PGConnection pg = connection.unwrap(PGConnection.class);
            pg.cancelQuery();
          } catch (SQLException | RuntimeException e) {
            LOG.debug("cancelling the statement of {} failed: {}", what, e.toString());
          }
          try {
            // closes the socket without taking the connection's lock, which the blocked
            // thread holds
            connection.abort(Runnable::run);
          } catch (SQLException | RuntimeException e) {
            LOG.debug("aborting the connection of {} failed: {}", what, e.toString());
          }
        };
    Runnable once = new Once(abort);
    Runnable unregister = onRequest(once);
    if (isRequested()) {
      once.run();
    }
    return unregister::run;
  }

  /** A registration to undo; closing it twice is harmless. */
  public interface Guard extends AutoCloseable {
    @Override
    void close();
  }

  private static final class Once implements Runnable {
    private final Runnable action;
    private final java.util.concurrent.atomic.AtomicBoolean done =
        new java.util.concurrent.atomic.AtomicBoolean();

    Once(Runnable action) {
      this.action = action;
    }

    @Override
    public void run() {
      if (done.compareAndSet(false, true)) {
        action.run();
      }
    }
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
