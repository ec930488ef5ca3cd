package org.pgetl.core.internal.engine;

import org.pgetl.PipelineConfig;
import org.pgetl.Shutdown;
import org.pgetl.core.internal.apply.LoopEnv;
import org.pgetl.core.internal.apply.SpoolFolder;
import org.pgetl.core.internal.pg.PgConnector;
import org.pgetl.core.internal.sync.TableStates;
import org.pgetl.destination.Destination;
import org.pgetl.store.PipelineStore;

/**
 * What the workers of one generation share: the pipeline's parts, the generation's stop signal, and
 * the stream settings decided at its start.
 */
final class EngineContext {
  final PipelineConfig config;
  final PipelineStore store;
  final Destination destination;
  final EngineMetrics metrics;
  final Shutdown shutdown;
  final PgConnector connector;
  final TableStates tables;
  final StopSignal stop;
  final LoopEnv env;
  final StreamSettings streams;
  final SyncPool pool;
  final ErrorLog errors;
  final StatusBoard board;
  private volatile String resyncReason;

  /** Table changes for the apply worker to carry out ({@link ApplyStreamRole#tick}). */
  final java.util.Queue<TableCommand> commands = new java.util.concurrent.ConcurrentLinkedQueue<>();

  EngineContext(
      PipelineConfig config,
      PipelineStore store,
      Destination destination,
      EngineMetrics metrics,
      Shutdown shutdown,
      PgConnector connector,
      TableStates tables,
      StopSignal stop,
      StreamSettings streams,
      ErrorLog errors,
      StatusBoard board,
      SpoolFolder spool) {
    this.config = config;
    this.store = store;
    this.destination = destination;
    this.metrics = metrics;
    this.shutdown = shutdown;
    this.connector = connector;
    this.tables = tables;
    this.stop = stop;
    this.streams = streams;
    this.errors = errors;
    this.board = board;
    this.env = new LoopEnv(config, store, destination, metrics, stop, shutdown, errors, spool);
    this.pool = new SyncPool(this);
  }

  /**
   * Asks the supervisor to copy every table again: after this generation stopped, it drops the
   * apply slot, resets every table to {@code Init} and starts a new generation. Called by the apply
   * worker when its slot was lost, before it returns.
   *
   * @param reason why, for the log
   */
  void requestResync(String reason) {
    resyncReason = reason;
  }

  /**
   * Returns why every table must be copied again, or null.
   *
   * @return the reason
   */
  String resyncReason() {
    return resyncReason;
  }
}
