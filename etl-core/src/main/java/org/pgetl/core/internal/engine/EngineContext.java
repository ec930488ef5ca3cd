package org.pgetl.core.internal.engine;

import org.pgetl.PipelineConfig;
import org.pgetl.Shutdown;
import org.pgetl.core.internal.apply.LoopEnv;
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
      ErrorLog errors) {
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
    this.env = new LoopEnv(config, store, destination, metrics, stop, shutdown);
    this.pool = new SyncPool(this);
  }
}
