package org.pgetl.store;

import java.time.Instant;
import java.util.Objects;

/**
 * When an {@link TableState.Errored} table is tried again: never, after an operator rolls it back,
 * or automatically at a given time.
 */
public sealed interface RetryPolicy
    permits RetryPolicy.None, RetryPolicy.Manual, RetryPolicy.Timed {

  /** The policy that never retries. */
  RetryPolicy NONE = new None();

  /** The policy that waits for an operator. */
  RetryPolicy MANUAL = new Manual();

  /** Never retried: the failure is final for this table. */
  record None() implements RetryPolicy {}

  /**
   * Retried after an operator fixes the cause and rolls the table state back ({@link
   * StateStore#rollbackTableState}) or resets it ({@link StateStore#resetTableState}).
   */
  record Manual() implements RetryPolicy {}

  /**
   * Retried automatically at {@code nextRetry}, also after a restart of the process.
   *
   * @param nextRetry when the retry is due
   * @param attempts how many timed retries were already made for this failure, from 0
   */
  record Timed(Instant nextRetry, int attempts) implements RetryPolicy {
    /** Validates the components. */
    public Timed {
      Objects.requireNonNull(nextRetry, "nextRetry");
      if (attempts < 0) {
        throw new IllegalArgumentException("attempts must be >= 0, was " + attempts);
      }
    }
  }
}
