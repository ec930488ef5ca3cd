package org.pgetl.core.internal.engine;

import java.time.Duration;
import org.pgetl.PipelineConfig;
import org.pgetl.error.ErrorKind;

/** The delay before a timed retry: exponential from {@code retryDelay}, capped. */
public final class Backoff {
  private Backoff() {}

  /**
   * Returns the delay before retry number {@code attempt} (0 for the first retry).
   *
   * @param config the pipeline's retry settings
   * @param attempt how many retries were already made
   * @return the delay
   */
  public static Duration delay(PipelineConfig config, int attempt) {
    double factor = Math.pow(config.retryBackoffMultiplier(), Math.max(0, attempt));
    double millis = config.retryDelay().toMillis() * factor;
    long capped = (long) Math.min(millis, (double) config.retryMaxDelay().toMillis());
    return Duration.ofMillis(Math.max(1, capped));
  }

  /**
   * Returns true for the kinds that mean the source (or the store in it) is unavailable for now:
   * the apply worker retries them for as long as the outage lasts, not a fixed number of times.
   *
   * @param kind the failure's kind
   * @return whether it is an outage
   */
  public static boolean isOutage(ErrorKind kind) {
    return switch (kind) {
      case SOURCE_CONNECTION_FAILED,
          SOURCE_DATABASE_SHUTDOWN,
          SOURCE_DATABASE_IN_RECOVERY,
          STATE_STORE_ERROR ->
          true;
      default -> false;
    };
  }
}
