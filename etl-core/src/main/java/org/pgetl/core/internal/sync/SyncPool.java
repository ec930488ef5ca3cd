package org.pgetl.core.internal.sync;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.pgetl.core.internal.engine.EngineContext;
import org.pgetl.core.internal.engine.StopSignal;
import org.pgetl.model.TableId;

/**
 * The table-sync workers of one generation: at most one per table, run on a fixed pool of {@code
 * maxTableSyncWorkers} daemon threads (a thousand tables to copy are a thousand queued tasks, not a
 * thousand threads). Each worker gets a {@linkplain StopSignal#child() child} of the generation's
 * stop signal, so one table's worker can be stopped alone ({@link #cancel}). While a worker runs,
 * its thread is named {@code pgetl-sync-<pipeline>-<table oid>}.
 */
public final class SyncPool {
  /** What a pool thread runs for one table: the table-sync worker (a stand-in in tests). */
  interface Body {
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

  private final EngineContext ctx;
  private final Body body;
  private final ThreadPoolExecutor executor;
  private final Map<TableId, StopSignal> stops = new ConcurrentHashMap<>();
  private final Set<Thread> busy = ConcurrentHashMap.newKeySet();

  /**
   * Creates the pool of a generation.
   *
   * @param ctx the generation
   */
  public SyncPool(EngineContext ctx) {
    this(
        ctx,
        (c, table, priorAttempts, stop) ->
            new TableSyncWorker(c, table, priorAttempts, stop).run());
  }

  SyncPool(EngineContext ctx, Body body) {
    this.ctx = ctx;
    this.body = body;
    int size = ctx.config.maxTableSyncWorkers();
    String pipelineId = ctx.config.pipelineId();
    AtomicInteger n = new AtomicInteger();
    this.executor =
        new ThreadPoolExecutor(
            size,
            size,
            0,
            TimeUnit.MILLISECONDS,
            new LinkedBlockingQueue<>(),
            r -> {
              Thread t = new Thread(r, "pgetl-sync-" + pipelineId + "-" + n.incrementAndGet());
              t.setDaemon(true);
              return t;
            });
  }

  /**
   * Queues a worker for a table unless one runs (or waits) or the generation stops.
   *
   * @param table the table
   * @param priorAttempts timed retries already made for the table's last failure
   */
  public void spawn(TableId table, int priorAttempts) {
    if (ctx.stop.isRequested() || !ctx.tables.claimWorker(table)) {
      return;
    }
    StopSignal stop = ctx.stop.child();
    stops.put(table, stop);
    try {
      executor.execute(() -> run(table, priorAttempts, stop));
    } catch (RejectedExecutionException e) {
      finished(table, stop); // the generation is stopping
    }
  }

  private void run(TableId table, int priorAttempts, StopSignal stop) {
    Thread thread = Thread.currentThread();
    String poolName = thread.getName();
    busy.add(thread);
    thread.setName("pgetl-sync-" + ctx.config.pipelineId() + "-" + table);
    try {
      if (!stop.isRequested()) {
        body.run(ctx, table, priorAttempts, stop);
      }
    } finally {
      thread.setName(poolName);
      busy.remove(thread);
      finished(table, stop);
    }
  }

  private void finished(TableId table, StopSignal stop) {
    stops.remove(table, stop);
    stop.detach();
    ctx.tables.releaseWorker(table);
  }

  /**
   * Stops the worker of one table (queued or running), discarding what it has not delivered.
   *
   * @param table the table
   * @return true when a worker was asked to stop
   */
  public boolean cancel(TableId table) {
    StopSignal stop = stops.get(table);
    if (stop == null) {
      return false;
    }
    stop.request(StopSignal.Mode.DISCARD);
    return true;
  }

  /**
   * Waits for every worker to end (after a stop request), until a deadline; queued workers see the
   * stop and end at once.
   *
   * @param deadlineNanos the deadline, in the terms of the generation's {@link
   *     org.pgetl.core.internal.time.Ticker#nanoTime()}
   * @return the threads still running a worker at the deadline
   */
  public List<Thread> awaitAll(long deadlineNanos) {
    executor.shutdown();
    try {
      long left = deadlineNanos - ctx.ticker.nanoTime();
      if (executor.awaitTermination(Math.max(0, left), TimeUnit.NANOSECONDS)) {
        return List.of();
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    return new ArrayList<>(busy);
  }
}
