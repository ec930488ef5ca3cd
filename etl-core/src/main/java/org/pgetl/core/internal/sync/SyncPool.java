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
import org.pgetl.core.internal.engine.StopSignal;
import org.pgetl.core.internal.time.Ticker;
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
  public interface Body {
    /**
     * Runs the work of one table on the calling pool thread.
     *
     * @param table the table
     * @param priorAttempts timed retries already made for the table's last failure
     * @param stop the table's own stop signal
     */
    void run(TableId table, int priorAttempts, StopSignal stop);
  }

  private final String pipelineId;
  private final StopSignal generationStop;
  private final TableStateMachine tables;
  private final Ticker ticker;
  private final Body body;
  private final ThreadPoolExecutor executor;
  private final Map<TableId, StopSignal> stops = new ConcurrentHashMap<>();
  private final Set<Thread> busy = ConcurrentHashMap.newKeySet();

  /**
   * Creates the pool of a generation. It is given only what it uses, not the generation's context,
   * which holds the pool.
   *
   * @param pipelineId the pipeline, for the thread names
   * @param workers how many threads run tables at once ({@code maxTableSyncWorkers})
   * @param generationStop the generation's stop signal, parent of every table's own
   * @param tables the tables' states, where a worker claims and releases its table
   * @param ticker the generation's clock, for {@link #awaitAll}'s deadline
   * @param body what a thread runs for one table
   */
  public SyncPool(
      String pipelineId,
      int workers,
      StopSignal generationStop,
      TableStateMachine tables,
      Ticker ticker,
      Body body) {
    this.pipelineId = pipelineId;
    this.generationStop = generationStop;
    this.tables = tables;
    this.ticker = ticker;
    this.body = body;
    AtomicInteger n = new AtomicInteger();
    this.executor =
        new ThreadPoolExecutor(
            workers,
            workers,
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
    if (generationStop.isRequested() || !tables.claimWorker(table)) {
      return;
    }
    StopSignal stop = generationStop.child();
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
    thread.setName("pgetl-sync-" + pipelineId + "-" + table);
    try {
      if (!stop.isRequested()) {
        body.run(table, priorAttempts, stop);
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
    tables.releaseWorker(table);
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
   * @param deadlineNanos the deadline, in the terms of the generation's {@link Ticker#nanoTime()}
   * @return the threads still running a worker at the deadline
   */
  public List<Thread> awaitAll(long deadlineNanos) {
    executor.shutdown();
    try {
      long left = deadlineNanos - ticker.nanoTime();
      if (executor.awaitTermination(Math.max(0, left), TimeUnit.NANOSECONDS)) {
        return List.of();
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    return new ArrayList<>(busy);
  }
}
