package org.pgetl.core.internal.engine;

import java.time.Duration;
import java.util.Optional;
import org.pgetl.destination.AsyncResult;
import org.pgetl.destination.Outcome;

/**
 * Waiting for a destination's answer while honouring a stop request: shutdown wins every race with
 * a pending result (ARCHITECTURE.md §5).
 */
public final class Results {
  private static final Duration SLICE = Duration.ofMillis(50);

  private Results() {}

  /**
   * Waits for the answer, or until a stop is requested.
   *
   * @param result the pending result
   * @param stop the generation's stop request
   * @param what a description for the interrupt message
   * @return the outcome, or null when a stop was requested before the answer was seen
   */
  public static Outcome await(AsyncResult result, StopSignal stop, String what) {
    while (true) {
      if (stop.isRequested()) {
        return null;
      }
      try {
        Optional<Outcome> o = result.await(SLICE);
        if (o.isPresent()) {
          return stop.isRequested() ? null : o.get();
        }
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        return null;
      }
    }
  }
}
