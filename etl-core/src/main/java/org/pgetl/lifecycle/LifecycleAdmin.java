package org.pgetl.lifecycle;

import java.util.Objects;
import java.util.Optional;
import org.jspecify.annotations.Nullable;
import org.pgetl.store.PipelineStore;
import org.pgetl.store.PipelineStore.LifecycleRecord;

/**
 * Changes a destination's lifecycle from Java: pause, resume, drain. The running pipeline follows
 * within its lifecycle poll interval, as it would after the same change made with SQL.
 *
 * <p>There is no {@code retire}: retiring drops the pipeline's slots and state, so only an operator
 * does it, with SQL (see {@code docs/operations.md}).
 */
// its signatures carry @Nullable of org.jspecify, read at compile time only (requires static)
@SuppressWarnings("exports")
public final class LifecycleAdmin {
  private final PipelineStore store;

  /**
   * Creates an admin over a pipeline's store.
   *
   * @param store the pipeline's store (its lifecycle rows)
   */
  public LifecycleAdmin(PipelineStore store) {
    this.store = Objects.requireNonNull(store, "store");
  }

  /**
   * Pauses a destination: no WAL intake, buffered work discarded, connections closed once writes in
   * flight finished; the slot stays (WAL is retained).
   *
   * @param destinationName the destination's {@code name()}
   * @param reason why, for the row's {@code reason}, or null
   * @param updatedBy who, for the row's {@code updated_by}
   */
  public void pause(String destinationName, @Nullable String reason, String updatedBy) {
    store.writeLifecycle(destinationName, LifecycleState.PAUSED, reason, updatedBy);
  }

  /**
   * Resumes a paused or drained destination: it reads again from its durable point.
   *
   * @param destinationName the destination's {@code name()}
   * @param reason why, or null
   * @param updatedBy who
   */
  public void resume(String destinationName, @Nullable String reason, String updatedBy) {
    store.writeLifecycle(destinationName, LifecycleState.ACTIVE, reason, updatedBy);
  }

  /**
   * Drains a destination: no new intake, buffered work flushed and awaited, then idle.
   *
   * @param destinationName the destination's {@code name()}
   * @param reason why, or null
   * @param updatedBy who
   */
  public void drain(String destinationName, @Nullable String reason, String updatedBy) {
    store.writeLifecycle(destinationName, LifecycleState.DRAINING, reason, updatedBy);
  }

  /**
   * Returns the stored lifecycle row of a destination.
   *
   * @param destinationName the destination's {@code name()}
   * @return the row, or empty (which means active)
   */
  public Optional<LifecycleRecord> read(String destinationName) {
    return store.readLifecycle(destinationName);
  }

  /**
   * Returns the state a pipeline follows for this row: active when there is none, paused for an
   * unknown value.
   *
   * @param destinationName the destination's {@code name()}
   * @return the effective state
   */
  public LifecycleState effectiveState(String destinationName) {
    return read(destinationName)
        .map(r -> LifecycleState.fromDbValue(r.rawState()).orElse(LifecycleState.PAUSED))
        .orElse(LifecycleState.ACTIVE);
  }
}
