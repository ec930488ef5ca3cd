package org.pgetl;

import java.util.Optional;
import org.jspecify.annotations.Nullable;
import org.pgetl.error.EtlException;
import org.pgetl.lifecycle.LifecycleState;
import org.pgetl.model.TableId;
import org.pgetl.model.TableName;
import org.pgetl.store.TableState;

/**
 * Told what a pipeline does, so that a host application can alert, log or fail its health check:
 * each table's state changes, the failures the pipeline recorded (table errors, retried failures),
 * lifecycle and phase changes, and the stop with its cause.
 *
 * <p>Register with {@link Pipeline#addListener}. Calls come in order on one thread of the
 * pipeline's own ({@code pgetl-events-<pipeline>}), never on a thread that reads a stream or copies
 * a table: a slow listener delays only the listeners. An exception a listener throws is logged and
 * ignored. Every method has an empty default.
 */
// its signatures carry @Nullable of org.jspecify, read at compile time only (requires static)
@SuppressWarnings("exports")
public interface PipelineListener {

  /**
   * A table's state changed.
   *
   * @param table the table
   * @param name its name, or null while not known
   * @param from the state before, or null when the table joined the pipeline
   * @param to the state now, or null when the table left the pipeline
   */
  default void tableStateChanged(
      TableId table,
      @Nullable TableName name,
      @Nullable TableState from,
      @Nullable TableState to) {}

  /**
   * The pipeline recorded a failure: a table error, or a failure it retries (a lost connection, an
   * outage of the source).
   *
   * @param error the failure
   */
  default void errorRecorded(EtlException error) {}

  /**
   * The destination's lifecycle state changed (an operator's change took effect).
   *
   * @param from the state before, or null when it was not known yet
   * @param to the state now
   */
  default void lifecycleChanged(@Nullable LifecycleState from, LifecycleState to) {}

  /**
   * The pipeline's phase changed.
   *
   * @param from the phase before
   * @param to the phase now
   */
  default void phaseChanged(PipelineStatus.Phase from, PipelineStatus.Phase to) {}

  /**
   * The pipeline stopped; the last call a listener gets.
   *
   * @param failure the failure that stopped it, or empty after a clean stop
   */
  default void stopped(Optional<EtlException> failure) {}
}
