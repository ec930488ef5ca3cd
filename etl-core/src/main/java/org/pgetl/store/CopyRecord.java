package org.pgetl.store;

import java.time.Instant;
import java.util.Objects;
import java.util.UUID;

/**
 * The last finished copy of a table: what {@code pgetl tables list} and a monitoring query show.
 * Stored when the copy's {@code Finish} barrier was answered durable.
 *
 * @param attemptId the copy attempt
 * @param rows the rows copied
 * @param batches the batches sent
 * @param finishedAt when the copy finished
 */
public record CopyRecord(UUID attemptId, long rows, long batches, Instant finishedAt) {
  /** Validates the components. */
  public CopyRecord {
    Objects.requireNonNull(attemptId, "attemptId");
    Objects.requireNonNull(finishedAt, "finishedAt");
  }
}
