package org.pgetl.core.internal.apply;

import org.pgetl.PipelineConfig;
import org.pgetl.Shutdown;
import org.pgetl.core.internal.engine.EngineMetrics;
import org.pgetl.core.internal.engine.ErrorLog;
import org.pgetl.core.internal.engine.StopSignal;
import org.pgetl.core.internal.time.Ticker;
import org.pgetl.destination.Destination;
import org.pgetl.store.PipelineStore;

/**
 * What every stream loop of a pipeline shares.
 *
 * @param config the pipeline's configuration
 * @param store the pipeline's store
 * @param destination the destination
 * @param metrics where to report
 * @param stop the stop request of the current generation of workers
 * @param shutdown the pipeline's shutdown handle (a destination's {@code shutdown()} answer
 *     requests it)
 * @param errors the pipeline's failures (a failure of the spool stops the pipeline)
 * @param spool where streamed in-progress transactions wait for their commit
 * @param ticker where the loops read time
 */
public record LoopEnv(
    PipelineConfig config,
    PipelineStore store,
    Destination destination,
    EngineMetrics metrics,
    StopSignal stop,
    Shutdown shutdown,
    ErrorLog errors,
    SpoolFolder spool,
    Ticker ticker) {

  /**
   * Returns the same environment with another stop signal (a table-sync worker's own).
   *
   * @param other the stop signal
   * @return the environment
   */
  public LoopEnv withStop(StopSignal other) {
    return new LoopEnv(config, store, destination, metrics, other, shutdown, errors, spool, ticker);
  }
}
