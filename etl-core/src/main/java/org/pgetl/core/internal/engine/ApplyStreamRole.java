package org.pgetl.core.internal.engine;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Iterator;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import org.jspecify.annotations.Nullable;
import org.pgetl.core.internal.apply.StreamRole;
import org.pgetl.core.internal.chunk.ChunkKey;
import org.pgetl.core.internal.chunk.ChunkTracker;
import org.pgetl.destination.StreamId;
import org.pgetl.error.EtlException;
import org.pgetl.model.Lsn;
import org.pgetl.model.ReplicatedTableSchema;
import org.pgetl.model.TableId;
import org.pgetl.model.TableName;
import org.pgetl.store.PipelineStore.ProgressKey;
import org.pgetl.store.TableState;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The role of the apply worker's stream: apply the changes of tables that are {@code Ready} (or
 * {@code SyncDone} at or before the change's commit), hand tables over from their table-sync
 * workers, promote {@code SyncDone} tables to {@code Ready} once its own progress passed them,
 * start table-sync workers for tables that need a copy, retry tables whose timed retry is due, and
 * carry out the {@link TableCommand}s of the generation (tables joining or leaving the publication,
 * operator requests). Being the one thread that hands tables over and promotes them, it changes a
 * table's state without racing with either.
 *
 * <p>A table copied again while it was {@code Ready} stops being owned by this stream at once, but
 * its worker starts only once every write that may still carry its changes was answered (a write
 * fence): otherwise an old change could land after the new copy's {@code dropTableForCopy}.
 */
final class ApplyStreamRole implements StreamRole {
  private static final Logger LOG = LoggerFactory.getLogger(ApplyStreamRole.class);
  private static final Duration CATCHUP_WAIT_SLICE = Duration.ofMillis(200);
  private static final long TICK_NANOS = 200_000_000L;

  private final EngineContext ctx;
  private long lastTick;
  // commands waiting for their table's worker to stop
  private final List<TableCommand> waiting = new ArrayList<>();
  // tables reset for a new copy whose worker waits for the writes before the fence to be answered
  private final Map<TableId, Long> fenced = new HashMap<>();
  // tables the stream named that the publication does not list as tables of their own
  private final Set<TableId> notPublished = new HashSet<>();

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
    return ctx.tables.applyWorkerOwns(table, commitLsn) || ctx.chunks.isActive(table);
  }

  @Override
  public @Nullable ChunkKey chunkKey(ReplicatedTableSchema schema) {
    ChunkKey key = ctx.chunks.key(schema.id());
    // the chunks' key column in this version of the table (a column added or dropped before it
    // moves it); a version without it makes the chunked copy start over at its next read
    return key == null ? null : key.in(schema);
  }

  @Override
  public ChunkTracker.Admission admit(
      ReplicatedTableSchema schema,
      Lsn commitLsn,
      long xid,
      @Nullable Object key,
      @Nullable Object oldKey,
      boolean partial) {
    return ctx.chunks.admit(schema.id(), commitLsn, xid, key, oldKey, partial);
  }

  @Override
  public ChunkTracker.Admission admitTruncate(TableId table, Lsn commitLsn, long xid) {
    return ctx.chunks.admitTruncate(table, commitLsn, xid);
  }

  @Override
  public void watermark(String content, Lsn lsn) {
    ctx.chunks.watermark(content, lsn);
  }

  @Override
  public void durableInMemory(Lsn durable) {
    if (ctx.chunks.anyActive()) {
      ctx.chunks.durable(durable);
    }
  }

  @Override
  public boolean urgentDurability() {
    return ctx.chunks.anyActive() && ctx.chunks.awaitsDurability();
  }

  @Override
  public boolean deliversMessages() {
    return true;
  }

  @Override
  public void afterCommit(Lsn commitEndLsn, Instant commitTime, Control control) {
    ctx.board.received(commitEndLsn, commitTime.toEpochMilli());
    ctx.chunks.committed(commitEndLsn);
    if (ctx.tables.anySyncing()) {
      handOff(commitEndLsn, control);
    }
  }

  @Override
  public void afterDurable(Lsn durableLsn, Control control) {
    ctx.chunks.durable(durableLsn);
    ctx.board.applyLsn(durableLsn);
    ctx.board.progressed();
    ctx.board.caughtUpTo(durableLsn);
    if (ctx.tables.anySyncing()) {
      promoteReady(durableLsn);
    }
  }

  @Override
  public void whenIdle(Lsn lastReceived, Control control) {
    whenIdleButForOpenStreamedTransactions(lastReceived, control);
    if (ctx.tables.anySyncing()) {
      promoteReady(lastReceived);
    }
  }

  /**
   * As {@link #whenIdle} but without promoting a table to {@code Ready}: the position is not
   * confirmed and the stored progress may lie before a table's {@code SyncDone} point, so a restart
   * streams again from before it; a {@code Ready} table would take those changes a second time,
   * where a {@code SyncDone} one skips them. The promotion waits for a durable or confirmed
   * position.
   */
  @Override
  public void whenIdleButForOpenStreamedTransactions(Lsn lastReceived, Control control) {
    ctx.chunks.durable(lastReceived);
    ctx.board.caughtUpTo(lastReceived);
    ctx.board.progressed();
    if (ctx.tables.anySyncing()) {
      handOff(lastReceived, control);
    }
  }

  @Override
  public boolean settled() {
    return !ctx.tables.anySyncing() && !ctx.chunks.anyActive() && ctx.commands.isEmpty();
  }

  @Override
  public void tick(Control control) {
    long now = ctx.ticker.nanoTime();
    if (lastTick != 0 && now - lastTick < TICK_NANOS) {
      return;
    }
    lastTick = now;
    runCommands(control);
    fenced.entrySet().removeIf(e -> control.answeredBefore(e.getValue()));
    retryDueTables();
    startNeededWorkers();
  }

  @Override
  public void relationSeen(TableId table, TableName name, Control control) {
    if (ctx.tables.get(table) != null || notPublished.contains(table)) {
      return;
    }
    // A relation message does not mean the table is published as itself: with
    // publish_via_partition_root pgoutput sends a leaf partition's own relation after its root's,
    // and changes decoded from before an ATTACH PARTITION or a switch of the option name a table
    // that is now a partition. Only the publication's current table list decides.
    Boolean published = publishedNow(table);
    if (published == null) {
      return; // the periodic publication refresh decides instead
    }
    if (published) {
      ctx.commands.add(new TableCommand(TableCommand.Kind.ADD, table, name, 0));
    } else {
      notPublished.add(table);
      LOG.info(
          "pipeline {}: the stream names table {} ({}), which publication {} does not list as a"
              + " table of its own (a partition published through its root, or a table that left"
              + " the publication); its changes under that name are skipped",
          ctx.config.pipelineId(),
          name,
          table,
          ctx.config.publication());
    }
  }

  /** Warns when a joining table is a partition or an ancestor of a table of the pipeline. */
  private void warnOnPartitionOverlap(TableId joining) {
    String pipelineId = ctx.config.pipelineId();
    try (java.sql.Connection c =
        ctx.connector.openPlain(org.pgetl.core.internal.pg.ApplicationNames.catalog(pipelineId))) {
      PartitionSwitch.warnOnOverlap(
          pipelineId,
          ctx.config.publication(),
          new org.pgetl.core.internal.pg.PgCatalog(c),
          List.of(joining),
          ctx.tables.snapshot().keySet());
    } catch (java.sql.SQLException | EtlException e) {
      LOG.debug(
          "pipeline {}: could not compare table {} with the pipeline's partitions: {}",
          pipelineId,
          joining,
          e.getMessage());
    }
  }

  /** Whether every column type of a joining table decodes from pgoutput's binary form. */
  private boolean decodesBinary(TableId table) {
    String pipelineId = ctx.config.pipelineId();
    String catalogName = org.pgetl.core.internal.pg.ApplicationNames.catalog(pipelineId);
    List<Integer> types = new ArrayList<>();
    try (java.sql.Connection c = ctx.connector.openPlain(catalogName);
        java.sql.PreparedStatement ps =
            c.prepareStatement(
                "SELECT atttypid::bigint FROM pg_attribute"
                    + " WHERE attrelid = ? AND attnum > 0 AND NOT attisdropped")) {
      ps.setLong(1, table.oid());
      try (java.sql.ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          types.add((int) rs.getLong(1));
        }
      }
    } catch (java.sql.SQLException e) {
      throw org.pgetl.core.internal.pg.PgErrors.map(
          e, "could not read the column types of table " + table);
    }
    try (CatalogSchemaResolver resolver = new CatalogSchemaResolver(ctx.connector, catalogName)) {
      return resolver.allDecodeBinary(types);
    }
  }

  /** Whether the publication lists the table now; null when the catalog could not be read. */
  private @Nullable Boolean publishedNow(TableId table) {
    String pipelineId = ctx.config.pipelineId();
    try (java.sql.Connection c =
        ctx.connector.openPlain(org.pgetl.core.internal.pg.ApplicationNames.catalog(pipelineId))) {
      return new org.pgetl.core.internal.pg.PgCatalog(c)
          .publicationTables(ctx.config.publication())
          .contains(table);
    } catch (java.sql.SQLException | EtlException e) {
      LOG.debug(
          "pipeline {}: could not check whether table {} is published: {}",
          pipelineId,
          table,
          e.getMessage());
      return null;
    }
  }

  private void runCommands(Control control) {
    TableCommand c;
    while ((c = ctx.commands.poll()) != null) {
      waiting.add(c);
    }
    for (Iterator<TableCommand> it = waiting.iterator(); it.hasNext(); ) {
      TableCommand cmd = it.next();
      boolean done;
      try {
        done = run(cmd, control);
      } catch (EtlException e) {
        ctx.errors.record(e);
        LOG.warn(
            "pipeline {}: could not {} table {} yet: {}",
            ctx.config.pipelineId(),
            cmd.kind().name().toLowerCase(Locale.ROOT),
            cmd.table(),
            e.getMessage());
        done = e.directive() != org.pgetl.error.RetryDirective.TIMED;
      }
      if (done) {
        it.remove();
        if (cmd.requestId() != 0) {
          try {
            ctx.store.completeTableRequest(cmd.requestId());
          } catch (EtlException e) {
            LOG.warn(
                "pipeline {}: could not mark request {} done ({}); it is carried out again",
                ctx.config.pipelineId(),
                cmd.requestId(),
                e.getMessage());
          }
        }
      }
    }
  }

  /** Carries out a command; false when it waits for the table's worker to stop. */
  private boolean run(TableCommand cmd, Control control) {
    TableId table = cmd.table();
    String pipelineId = ctx.config.pipelineId();
    TableState state = ctx.tables.get(table);
    switch (cmd.kind()) {
      case ADD -> {
        if (state != null) {
          return true;
        }
        if (cmd.name() != null) {
          ctx.board.name(table, cmd.name());
        }
        warnOnPartitionOverlap(table);
        ctx.tables.add(table);
        LOG.info(
            "pipeline {}: table {} ({}) joined the publication; it is copied now",
            pipelineId,
            cmd.name() != null ? cmd.name() : table,
            table);
        if (ctx.streams.binary() && !decodesBinary(table)) {
          // pgoutput would send its values in a binary form no decoder reads: the next
          // generation decides the stream settings again, with this table, and reads text
          LOG.warn(
              "pipeline {}: table {} has a column whose type has no binary decoder; the streams"
                  + " restart with values in text form",
              pipelineId,
              table);
          ctx.stop.request(StopSignal.Mode.DRAIN);
        }
        return true;
      }
      case REMOVE -> {
        if (state == null) {
          return true;
        }
        if (ctx.tables.hasWorker(table)) {
          ctx.pool.cancel(table);
          return false;
        }
        try (java.sql.Connection c =
            ctx.connector.openPlain(
                org.pgetl.core.internal.pg.ApplicationNames.catalog(pipelineId))) {
          new org.pgetl.core.internal.pg.SlotAdmin(c)
              .dropIfExists(
                  org.pgetl.core.internal.pg.SlotNames.tableSync(pipelineId, table),
                  org.pgetl.core.internal.pg.SlotAdmin.DROP_TIMEOUT);
        } catch (java.sql.SQLException e) {
          throw org.pgetl.core.internal.pg.PgErrors.map(e, "could not drop the slot of " + table);
        }
        ctx.chunks.deactivate(table);
        ctx.tables.remove(table);
        fenced.remove(table);
        LOG.info(
            "pipeline {}: table {} left the publication; its state and slot are deleted",
            pipelineId,
            table);
        return true;
      }
      case RESYNC -> {
        if (state == null) {
          LOG.warn(
              "pipeline {}: resync of table {} ignored: not in the pipeline", pipelineId, table);
          return true;
        }
        if (ctx.tables.hasWorker(table)) {
          ctx.pool.cancel(table);
          return false;
        }
        ctx.tables.reset(table);
        // a table copied in chunks starts over: its changes are no longer this stream's
        ctx.chunks.deactivate(table);
        ctx.store.deleteChunks(table);
        fenced.put(table, control.writeFence());
        LOG.info(
            "pipeline {}: table {} is copied again from scratch (requested{})",
            pipelineId,
            table,
            cmd.requestId() != 0 ? " by an operator" : "");
        return true;
      }
      case RETRY -> {
        if (!(state instanceof TableState.Errored)) {
          LOG.warn(
              "pipeline {}: retry of table {} ignored: it is {}, not errored",
              pipelineId,
              table,
              state == null ? "not in the pipeline" : state.type());
          return true;
        }
        if (ctx.tables.hasWorker(table)) {
          return false;
        }
        TableState back = ctx.tables.retry(table);
        LOG.info(
            "pipeline {}: retrying table {} from {} (requested)", pipelineId, table, back.type());
        return true;
      }
      default -> throw new IllegalStateException("unknown command " + cmd.kind());
    }
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
        ctx.tables.startCatchup(table, target);
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
        ctx.tables.ready(e.getKey());
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
          && !ctx.tables.hasWorker(e.getKey())
          && !fenced.containsKey(e.getKey())) {
        ctx.pool.spawn(e.getKey(), 0);
      }
    }
  }

  /** Whether a timed retry's time has come; other directives never are. */
  private static boolean isDue(TableState.Errored err, Instant now) {
    Instant at = err.nextRetry();
    return err.retry() == org.pgetl.error.RetryDirective.TIMED && at != null && !at.isAfter(now);
  }

  private void retryDueTables() {
    Instant now = ctx.ticker.now();
    for (Map.Entry<TableId, TableState> e : ctx.tables.snapshot().entrySet()) {
      if (e.getValue() instanceof TableState.Errored err
          && isDue(err, now)
          && !ctx.tables.hasWorker(e.getKey())) {
        TableId table = e.getKey();
        try {
          TableState back = ctx.tables.retry(table);
          LOG.info(
              "pipeline {}: retrying table {} (attempt {}) from {}",
              ctx.config.pipelineId(),
              table,
              err.attempts() + 1,
              back.type());
          if (back.isSyncing() && back.type() != TableState.Type.SYNC_DONE) {
            ctx.pool.spawn(table, err.attempts() + 1);
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
