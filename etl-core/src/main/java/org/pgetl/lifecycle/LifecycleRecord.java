package org.pgetl.lifecycle;

import java.time.Instant;
import java.util.Objects;

/**
 * One row of the destination lifecycle table, as stored (the state is kept raw so that an unknown
 * value can be reported).
 *
 * @param destinationName the destination's {@code name()}
 * @param rawState the stored state value
 * @param reason why the operator changed it, or null
 * @param updatedBy who changed it, or null
 * @param updatedAt when it was changed
 */
public record LifecycleRecord(
    String destinationName, String rawState, String reason, String updatedBy, Instant updatedAt) {
  /** Validates the components. */
  public LifecycleRecord {
    Objects.requireNonNull(destinationName, "destinationName");
    Objects.requireNonNull(rawState, "rawState");
    Objects.requireNonNull(updatedAt, "updatedAt");
  }
}
