package org.pgetl.core.internal.engine;

import java.util.List;
import org.jspecify.annotations.Nullable;
import org.pgetl.PipelineConfig;
import org.pgetl.Shutdown;
import org.pgetl.core.internal.apply.LoopEnv;
import org.pgetl.core.internal.apply.SpoolFolder;
import org.pgetl.core.internal.pg.PgConnector;
import org.pgetl.core.internal.pg.StreamOptions;
import org.pgetl.core.internal.sync.SyncPool;
import org.pgetl.core.internal.sync.TableStateMachine;
import org.pgetl.core.internal.time.Ticker;
import org.pgetl.destination.Destination;
import org.pgetl.model.Lsn;
import org.pgetl.model.TableId;
import org.pgetl.store.PipelineStore;

/**
 * What the workers of one generation share: the pipeline's parts, the generation's stop signal, and
 * the stream settings decided at its start.
 */
public final class EngineContext {
  public final PipelineConfig config;
  public final PipelineStore store;
  public final Destination destination;
  public final EngineMetrics metrics;
  public final Shutdown shutdown;
  public final PgConnector connector;
  public final TableStateMachine tables;
  public final StopSignal stop;
  public final LoopEnv env;
  public final StreamSettings streams;
  public final SyncPool pool;
  public final ErrorLog errors;
  public final StatusBoard board;
  public final Ticker ticker;
  public final org.pgetl.core.internal.chunk.ChunkTracker chunks;
  private volatile @Nullable String resyncReason;
  // counted down once the apply worker found or created the apply slot in this generation
  private final java.util.concurrent.CountDownLatch applySlot =
      new java.util.concurrent.CountDownLatch(1);

  /**
   * The work of one table on a table-sync thread, given the generation: the table-sync worker (a
   * stand-in in tests). The pool runs it without seeing the context.
   */
  public interface TableWork {
    /**
     * Runs the work of one table on the calling pool thread.
     *
     * @param ctx the generation
     * @param table the table
     * @param priorAttempts timed retries already made for the table's last failure
     * @param stop the table's own stop signal
     */
    void run(EngineContext ctx, TableId table, int priorAttempts, StopSignal stop);
  }

  /** Table changes for the apply worker to carry out ({@link ApplyStreamRole#tick}). */
  public final java.util.Queue<TableCommand> commands =
      new java.util.concurrent.ConcurrentLinkedQueue<>();

  EngineContext(
      PipelineConfig config,
      PipelineStore store,
      Destination destination,
      EngineMetrics metrics,
      Shutdown shutdown,
      PgConnector connector,
      TableStateMachine tables,
      StopSignal stop,
      StreamSettings streams,
      ErrorLog errors,
      StatusBoard board,
      SpoolFolder spool,
      Ticker ticker,
      TableWork tableWork) {
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
    this.ticker = ticker;
    this.chunks = new org.pgetl.core.internal.chunk.ChunkTracker(store);
    this.env =
        new LoopEnv(config, store, destination, metrics, stop, shutdown, errors, spool, ticker);
    this.pool =
        new SyncPool(
            config.pipelineId(),
            config.maxTableSyncWorkers(),
            stop,
            tables,
            ticker,
            (table, priorAttempts, tableStop) ->
                tableWork.run(this, table, priorAttempts, tableStop));
  }

  /**
   * Asks the supervisor to copy every table again: after this generation stopped, it drops the
   * apply slot, resets every table to {@code Init} and starts a new generation. Called by the apply
   * worker when its slot was lost, before it returns.
   *
   * @param reason why, for the log
   */
  public void requestResync(String reason) {
    resyncReason = reason;
  }

  /**
   * Returns why every table must be copied again, or null.
   *
   * @return the reason
   */
  public @Nullable String resyncReason() {
    return resyncReason;
  }

  /**
   * Returns the options of a stream of this generation.
   *
   * @param slot the slot
   * @param start where to start
   * @return the options
   */
  public StreamOptions streamOptions(String slot, Lsn start) {
    return StreamOptions.of(slot, start, List.of(config.publication()))
        .withProtoVersion(streams.protocolVersion())
        .withMessages(streams.messages())
        .withBinary(streams.binary())
        .withStreaming(streams.streaming())
        .withStatusInterval(config.statusInterval())
        .withTicker(ticker);
  }

  /** The apply worker found or created the apply slot: changes from here on reach its stream. */
  public void applySlotExists() {
    applySlot.countDown();
  }

  /**
   * Waits until the apply slot exists in this generation. A table copied under its own snapshot
   * needs only its own slot (its catch-up streams from its snapshot to past the apply stream's
   * position), so its copy starts while the apply slot is being created; a chunked copy's
   * watermarks and changes go through the apply stream, so it waits.
   *
   * @param stop the worker's stop signal
   * @return false when the stop came first
   */
  public boolean awaitApplySlot(StopSignal stop) {
    try {
      while (!applySlot.await(100, java.util.concurrent.TimeUnit.MILLISECONDS)) {
        if (stop.isRequested()) {
          return false;
        }
      }
      return !stop.isRequested();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return false;
    }
  }
}
