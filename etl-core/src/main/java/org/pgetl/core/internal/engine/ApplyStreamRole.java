package org.pgetl.core.internal.engine;

import java.time.Duration;
import java.time.Instant;
import java.util.Map;
import org.pgetl.core.internal.apply.StreamRole;
import org.pgetl.destination.StreamId;
import org.pgetl.error.EtlException;
import org.pgetl.model.Lsn;
import org.pgetl.model.TableId;
import org.pgetl.store.ProgressKey;
import org.pgetl.store.RetryPolicy;
import org.pgetl.store.TableState;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The role of the apply worker's stream: apply the changes of tables that are {@code Ready} (or
 * {@code SyncDone} at or before the change's commit), hand tables over from their table-sync
 * workers, promote {@code SyncDone} tables to {@code Ready} once its own progress passed them,
 * start table-sync workers for tables that need a copy, and retry tables whose timed retry is due.
 */
final class ApplyStreamRole implements StreamRole {
  private static final Logger LOG = LoggerFactory.getLogger(ApplyStreamRole.class);
  private static final Duration CATCHUP_WAIT_SLICE = Duration.ofMillis(200);
  private static final long TICK_NANOS = 200_000_000L;

  private final EngineContext ctx;
  private long lastTick;

  ApplyStreamRole(EngineContext ctx) {
    this.ctx = ctx;
  }

  @Override
  public String describe() {
    return "apply";
  }

  @Override
  public StreamId streamId() {
    return StreamId.APPLY;
  }

  @Override
  public ProgressKey progressKey() {
    return ProgressKey.apply();
  }

  @Override
  public boolean owns(TableId table, Lsn commitLsn) {
    return ctx.tables.applyWorkerOwns(table, commitLsn);
  }

  @Override
  public boolean deliversMessages() {
    return true;
  }

  @Override
  public void afterCommit(Lsn commitEndLsn, Control control) {
    if (ctx.tables.anySyncing()) {
      handOff(commitEndLsn, control);
    }
  }

  @Override
  public void afterDurable(Lsn durableLsn, Control control) {
    ctx.board.applyLsn(durableLsn);
    if (ctx.tables.anySyncing()) {
      promoteReady(durableLsn);
    }
  }

  @Override
  public void whenIdle(Lsn lastReceived, Control control) {
    if (ctx.tables.anySyncing()) {
      handOff(lastReceived, control);
      promoteReady(lastReceived);
    }
  }

  @Override
  public void tick(Control control) {
    long now = System.nanoTime();
    if (now - lastTick < TICK_NANOS) {
      return;
    }
    lastTick = now;
    retryDueTables();
    startNeededWorkers();
  }

  /**
   * Moves every table whose worker waits in {@code SyncWait} to {@code Catchup(max(snapshot,
   * current))} and waits until it caught up (or failed, or the loop must stop).
   */
  private void handOff(Lsn current, Control control) {
    for (Map.Entry<TableId, TableState> e : ctx.tables.snapshot().entrySet()) {
      TableId table = e.getKey();
      TableState s = e.getValue();
      if (!ctx.tables.hasWorker(table)) {
        continue;
      }
      if (s instanceof TableState.SyncWait w) {
        Lsn target = Lsn.max(w.lsn(), current);
        LOG.info(
            "pipeline {}: table {} copied at {}; catching up to {}",
            ctx.config.pipelineId(),
            table,
            w.lsn(),
            target);
        ctx.tables.setInMemory(table, new TableState.Catchup(target));
        awaitCatchup(table, control);
      } else if (s instanceof TableState.Catchup) {
        awaitCatchup(table, control);
      }
    }
    startNeededWorkers();
  }

  private void awaitCatchup(TableId table, Control control) {
    while (!control.stopRequested()) {
      try {
        TableState s =
            ctx.tables.await(
                table,
                st ->
                    st.type() == TableState.Type.SYNC_DONE
                        || st.type() == TableState.Type.ERRORED
                        || st.type() == TableState.Type.READY,
                CATCHUP_WAIT_SLICE);
        if (s != null || !ctx.tables.hasWorker(table)) {
          return;
        }
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        return;
      }
      control.keepAlive();
    }
  }

  private void promoteReady(Lsn position) {
    for (Map.Entry<TableId, TableState> e : ctx.tables.snapshot().entrySet()) {
      if (e.getValue() instanceof TableState.SyncDone d && d.lsn().compareTo(position) <= 0) {
        ctx.tables.setAndStore(e.getKey(), TableState.READY);
        LOG.info("pipeline {}: table {} is ready", ctx.config.pipelineId(), e.getKey());
      }
    }
  }

  void startNeededWorkers() {
    for (Map.Entry<TableId, TableState> e : ctx.tables.snapshot().entrySet()) {
      TableState.Type t = e.getValue().type();
      if ((t == TableState.Type.INIT
              || t == TableState.Type.DATA_SYNC
              || t == TableState.Type.FINISHED_COPY)
          && !ctx.tables.hasWorker(e.getKey())) {
        ctx.pool.spawn(e.getKey(), 0);
      }
    }
  }

  private void retryDueTables() {
    Instant now = Instant.now();
    for (Map.Entry<TableId, TableState> e : ctx.tables.snapshot().entrySet()) {
      if (e.getValue() instanceof TableState.Errored err
          && err.retry() instanceof RetryPolicy.Timed timed
          && !timed.nextRetry().isAfter(now)
          && !ctx.tables.hasWorker(e.getKey())) {
        TableId table = e.getKey();
        try {
          TableState back = ctx.store.rollbackTableState(table);
          ctx.tables.publish(table, back);
          LOG.info(
              "pipeline {}: retrying table {} (attempt {}) from {}",
              ctx.config.pipelineId(),
              table,
              timed.attempts() + 1,
              back.type());
          if (back.isSyncing() && back.type() != TableState.Type.SYNC_DONE) {
            ctx.pool.spawn(table, timed.attempts() + 1);
          }
        } catch (EtlException ex) {
          LOG.warn(
              "pipeline {}: could not roll table {} back for its retry: {}",
              ctx.config.pipelineId(),
              table,
              ex.getMessage());
          ctx.errors.record(ex);
        }
      }
    }
  }
}
