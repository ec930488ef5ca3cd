package org.pgetl.lifecycle;

import java.util.Optional;

/**
 * Reads and writes the operator's lifecycle row of a destination, scoped to one pipeline.
 * Thread-safe.
 */
public interface DestinationLifecycleStore {

  /**
   * Reads the lifecycle row of a destination.
   *
   * @param destinationName the destination's {@code name()}
   * @return the row, or empty when none exists (which means {@link LifecycleState#ACTIVE})
   * @throws org.pgetl.error.EtlException of kind {@code STATE_STORE_ERROR} when the read fails
   */
  Optional<LifecycleRecord> readLifecycle(String destinationName);

  /**
   * Writes (upserts) the lifecycle row of a destination. Refuses {@link LifecycleState#RETIRED}:
   * only an operator retires a destination, with SQL.
   *
   * @param destinationName the destination's {@code name()}
   * @param state {@code ACTIVE}, {@code PAUSED} or {@code DRAINING}
   * @param reason why, or null
   * @param updatedBy who, or null
   * @throws org.pgetl.error.EtlException of kind {@code CONFIG_ERROR} for {@code RETIRED}
   */
  void writeLifecycle(
      String destinationName, LifecycleState state, String reason, String updatedBy);
}
