package org.pgetl.core.internal.engine;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import org.pgetl.model.TableId;

/**
 * The table-sync workers of one generation: at most one per table, at most {@code
 * maxTableSyncWorkers} running at once (the others wait for a permit).
 */
final class SyncPool {
  private final EngineContext ctx;
  private final Semaphore permits;
  private final List<Thread> threads = new ArrayList<>();

  SyncPool(EngineContext ctx) {
    this.ctx = ctx;
    this.permits = new Semaphore(ctx.config.maxTableSyncWorkers(), true);
  }

  /**
   * Starts a worker for a table unless one runs or the generation stops.
   *
   * @param table the table
   * @param priorAttempts timed retries already made for the table's last failure
   */
  void spawn(TableId table, int priorAttempts) {
    if (ctx.stop.isRequested() || !ctx.tables.claimWorker(table)) {
      return;
    }
    Thread t =
        new Thread(
            () -> {
              try {
                if (acquire()) {
                  try {
                    new TableSyncWorker(ctx, table, priorAttempts).run();
                  } finally {
                    permits.release();
                  }
                }
              } finally {
                ctx.tables.releaseWorker(table);
              }
            },
            "pgetl-sync-" + ctx.config.pipelineId() + "-" + table);
    t.setDaemon(true);
    synchronized (threads) {
      threads.add(t);
    }
    t.start();
  }

  private boolean acquire() {
    try {
      while (!ctx.stop.isRequested()) {
        if (permits.tryAcquire(100, TimeUnit.MILLISECONDS)) {
          return true;
        }
      }
      return false;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return false;
    }
  }

  /**
   * Waits for every worker to end (after a stop request), until a deadline.
   *
   * @param deadlineNanos the deadline, in {@link System#nanoTime()} terms
   * @return the workers still running at the deadline
   */
  List<Thread> awaitAll(long deadlineNanos) {
    while (true) {
      List<Thread> snapshot;
      synchronized (threads) {
        threads.removeIf(t -> !t.isAlive());
        snapshot = new ArrayList<>(threads);
      }
      if (snapshot.isEmpty()) {
        return List.of();
      }
      List<Thread> left = new ArrayList<>();
      for (Thread t : snapshot) {
        if (!Engine.joinUntil(t, deadlineNanos)) {
          left.add(t);
        }
      }
      if (!left.isEmpty()) {
        return left;
      }
    }
  }
}
