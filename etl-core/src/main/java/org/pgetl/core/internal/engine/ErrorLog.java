package org.pgetl.core.internal.engine;

import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import org.jspecify.annotations.Nullable;
import org.pgetl.core.internal.time.Ticker;
import org.pgetl.error.EtlException;

/** The failures of a pipeline's workers, in order, for its status and its termination. */
public final class ErrorLog {
  private static final int MAX = 50;
  private final List<EtlException> errors = new ArrayList<>();
  private final List<Instant> times = new ArrayList<>();
  private final Ticker ticker;
  private @Nullable EtlException fatal;
  private volatile java.util.function.Consumer<EtlException> listener = e -> {};

  /** Creates a log that stamps failures with the system clock. */
  public ErrorLog() {
    this(Ticker.system());
  }

  /**
   * Creates a log.
   *
   * @param ticker where the time of a failure is read
   */
  public ErrorLog(Ticker ticker) {
    this.ticker = ticker;
  }

  /**
   * Registers a callback run after every recorded failure (it must not block).
   *
   * @param listener the callback
   */
  public void onRecord(java.util.function.Consumer<EtlException> listener) {
    this.listener = listener;
  }

  /**
   * Records a failure a worker recovered from or recorded as a table error.
   *
   * @param e the failure
   */
  public void record(EtlException e) {
    synchronized (this) {
      if (errors.size() == MAX) {
        errors.remove(0);
        times.remove(0);
      }
      errors.add(e);
      times.add(ticker.now());
    }
    listener.accept(e);
  }

  /**
   * Records a failure that stops the pipeline.
   *
   * @param e the failure
   */
  public void fatal(EtlException e) {
    record(e);
    synchronized (this) {
      if (fatal == null) {
        fatal = e;
      } else if (fatal != e) {
        fatal.addSuppressed(e);
      }
    }
  }

  /**
   * Returns the failure that stopped the pipeline.
   *
   * @return it, or null
   */
  public synchronized @Nullable EtlException fatal() {
    return fatal;
  }

  /**
   * Returns the recent failures, oldest first.
   *
   * @return a copy
   */
  public synchronized List<EtlException> recent() {
    return List.copyOf(errors);
  }

  /**
   * Returns when the most recent failure was recorded.
   *
   * @return the time, or null when none was
   */
  public synchronized @Nullable Instant lastAt() {
    return times.isEmpty() ? null : times.get(times.size() - 1);
  }
}
