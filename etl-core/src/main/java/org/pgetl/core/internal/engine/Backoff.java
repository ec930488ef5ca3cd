package org.pgetl.core.internal.engine;

import java.time.Duration;
import org.pgetl.PipelineConfig;
import org.pgetl.error.ErrorKind;

/** The delay before a timed retry: exponential from {@code retryDelay}, capped. */
public final class Backoff {
  private Backoff() {}

  /**
   * Returns the delay before retry number {@code attempt} (0 for the first retry): exponential from
   * {@code retryDelay} by {@code retryBackoffMultiplier}, capped at {@code retryMaxDelay}, with
   * "equal jitter" (between half of it and all of it), so that the workers of many pipelines that
   * failed together do not retry in step.
   *
   * @param config the pipeline's retry settings
   * @param attempt how many retries were already made
   * @return the delay
   */
  public static Duration delay(PipelineConfig config, int attempt) {
    double factor = Math.pow(config.retryBackoffMultiplier(), Math.max(0, attempt));
    double millis = config.retryDelay().toMillis() * factor;
    long capped = (long) Math.min(millis, (double) config.retryMaxDelay().toMillis());
    long half = Math.max(1, capped / 2);
    return Duration.ofMillis(
        half + java.util.concurrent.ThreadLocalRandom.current().nextLong(half + 1));
  }

  /**
   * Returns true for the kinds that mean the source (or the store in it) is unavailable for now, or
   * out of a resource that frees itself (replication slots, WAL senders, connections): they are
   * retried for as long as the condition lasts, not a fixed number of times.
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
