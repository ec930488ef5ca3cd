package org.pgetl.destination;

import java.util.Objects;
import java.util.UUID;

/**
 * The identity of one batch of an initial table copy: the copy attempt and the batch's sequence
 * number inside that attempt.
 *
 * <p>Every copy attempt of a table gets a fresh {@code attemptId}; sequence numbers start at 0 and
 * are unique across the attempt's parallel partitions. A batch that is delivered again keeps its
 * id, so a destination can make copy writes idempotent by remembering the ids it stored.
 *
 * @param attemptId the copy attempt, new for every attempt
 * @param sequence the batch number inside the attempt, from 0
 */
public record TableCopyBatchId(UUID attemptId, long sequence) {
  /**
   * Validates the components.
   *
   * @param attemptId the copy attempt, new for every attempt
   * @param sequence the batch number inside the attempt, from 0
   */
  public TableCopyBatchId {
    Objects.requireNonNull(attemptId, "attemptId");
    if (sequence < 0) {
      throw new IllegalArgumentException("sequence must be >= 0, was " + sequence);
    }
  }

  /** Returns {@code attemptId#sequence}. */
  @Override
  public String toString() {
    return attemptId + "#" + sequence;
  }
}
