package org.pgetl.core.internal.engine;

import java.time.Duration;
import org.pgetl.PipelineConfig;

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
}
