package org.pgetl.core.internal.time;

import java.time.Instant;

/**
 * Where the engine reads time: a monotonic clock for intervals and deadlines, and a wall clock for
 * what is recorded (retry times, status timestamps). The engine takes one ticker and passes it to
 * every part that measures time, so a unit test can drive retries, idle rules and batching
 * deadlines with a hand-moved clock instead of sleeping.
 *
 * <p>Waiting is not part of the ticker: a part that must wait still blocks on its stop signal or a
 * queue, with a timeout computed from the ticker's reading.
 */
public interface Ticker {

  /**
   * Returns a monotonic reading in nanoseconds, comparable only with other readings of this ticker.
   *
   * @return the reading
   */
  long nanoTime();

  /**
   * Returns the current wall-clock time.
   *
   * @return the instant
   */
  Instant now();

  /**
   * Returns the ticker of the system clocks ({@link System#nanoTime()}, {@link Instant#now()}).
   *
   * @return the system ticker
   */
  static Ticker system() {
    return SystemTicker.INSTANCE;
  }
}
