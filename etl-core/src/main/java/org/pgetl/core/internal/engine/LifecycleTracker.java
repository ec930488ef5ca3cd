package org.pgetl.core.internal.engine;

import java.util.Objects;
import java.util.Optional;
import org.jspecify.annotations.Nullable;
import org.pgetl.error.EtlException;
import org.pgetl.lifecycle.LifecycleState;
import org.pgetl.store.PipelineStore.LifecycleRecord;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Turns the operator's lifecycle row of a destination into the state the pipeline follows.
 *
 * <ul>
 *   <li>No row means {@code active}.
 *   <li>An unknown value (the table's CHECK was altered) reads as {@code paused}: deliver nothing
 *       we do not understand. It is logged as an ERROR once per transition, not per poll.
 *   <li>A failed read keeps the last-known state: a blip of the store must not pause (or resume) a
 *       fleet. Until a read succeeded once there is no last-known state: the state is unknown
 *       (null) and the pipeline reads and delivers nothing, since the destination may be paused or
 *       retired.
 *   <li>{@code retired} is terminal in a running process: a later {@code active} is refused (a
 *       re-added destination starts fresh at the next start).
 * </ul>
 *
 * Owned by the pipeline's supervisor thread.
 */
final class LifecycleTracker {
  private static final Logger LOG = LoggerFactory.getLogger(LifecycleTracker.class);

  private final String pipelineId;
  private final String destination;
  private volatile @Nullable LifecycleState state;
  private @Nullable String lastRaw;
  private boolean readFailing;
  private boolean refusalLogged;

  LifecycleTracker(String pipelineId, String destination) {
    this.pipelineId = pipelineId;
    this.destination = destination;
  }

  /**
   * Applies the result of a read.
   *
   * @param row the row read, or empty when none exists
   * @return the state to follow
   */
  LifecycleState apply(Optional<LifecycleRecord> row) {
    if (readFailing) {
      LOG.info("pipeline {}: lifecycle of {} readable again", pipelineId, destination);
      readFailing = false;
    }
    String raw = row.map(LifecycleRecord::rawState).orElse(null);
    LifecycleState next;
    boolean unknown = false;
    if (raw == null) {
      next = LifecycleState.ACTIVE;
    } else {
      Optional<LifecycleState> parsed = LifecycleState.fromDbValue(raw);
      unknown = parsed.isEmpty();
      next = parsed.orElse(LifecycleState.PAUSED);
    }
    if (state == LifecycleState.RETIRED && next != LifecycleState.RETIRED) {
      if (!refusalLogged) {
        LOG.error(
            "pipeline {}: destination {} is retired; '{}' is refused while this process runs —"
                + " restart the pipeline to start it fresh (its tables are copied again)",
            pipelineId,
            destination,
            raw == null ? "active" : raw);
        refusalLogged = true;
      }
      lastRaw = raw;
      return state;
    }
    if (state == null || next != state || (unknown && !Objects.equals(raw, lastRaw))) {
      if (unknown) {
        LOG.error(
            "pipeline {}: destination {} has unknown lifecycle state '{}'; treating it as paused",
            pipelineId,
            destination,
            raw);
      }
      if (state != null && next != state) {
        LOG.warn(
            "pipeline {}: destination {} lifecycle: {} -> {}{}",
            pipelineId,
            destination,
            state.dbValue(),
            next.dbValue(),
            row.map(r -> r.reason() == null ? "" : " (" + r.reason() + ")").orElse(""));
      }
      state = next;
    }
    lastRaw = raw;
    return state;
  }

  /**
   * Records a failed read: the last-known state stays.
   *
   * @param e the failure
   * @return the last-known state, or null when no read succeeded yet
   */
  @Nullable LifecycleState readFailed(EtlException e) {
    if (!readFailing) {
      LOG.warn(
          "pipeline {}: lifecycle of {} could not be read ({}); {}",
          pipelineId,
          destination,
          e.getMessage(),
          state == null
              ? "nothing is read or delivered until it can be"
              : "keeping '" + state.dbValue() + "'");
      readFailing = true;
    }
    return state;
  }

  /** Returns the state followed, or null while no read ever succeeded. */
  @Nullable LifecycleState state() {
    return state;
  }
}
