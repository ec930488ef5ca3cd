package org.pgetl.core.internal.sync;

import java.sql.Connection;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.UUID;
import java.util.function.Consumer;
import org.pgetl.PipelineConfig;
import org.pgetl.core.internal.apply.ApplyLoop;
import org.pgetl.core.internal.chunk.ChunkKey;
import org.pgetl.core.internal.codec.ValueCodec;
import org.pgetl.core.internal.copy.CopyPlanner;
import org.pgetl.core.internal.copy.TableCopier;
import org.pgetl.core.internal.decode.PgOutputDecoder;
import org.pgetl.core.internal.engine.Backoff;
import org.pgetl.core.internal.engine.CatalogSchemaResolver;
import org.pgetl.core.internal.engine.DestinationCalls;
import org.pgetl.core.internal.engine.EngineContext;
import org.pgetl.core.internal.engine.StopSignal;
import org.pgetl.core.internal.pg.ApplicationNames;
import org.pgetl.core.internal.pg.CreatedSlot;
import org.pgetl.core.internal.pg.PgCatalog;
import org.pgetl.core.internal.pg.PublicationInfo;
import org.pgetl.core.internal.pg.PublishedTable;
import org.pgetl.core.internal.pg.ReplicationConnection;
import org.pgetl.core.internal.pg.ReplicationStream;
import org.pgetl.core.internal.pg.SlotAdmin;
import org.pgetl.core.internal.pg.SlotNames;
import org.pgetl.core.internal.pg.SnapshotMode;
import org.pgetl.core.internal.pg.TableIdentity;
import org.pgetl.core.internal.pg.TableSize;
import org.pgetl.destination.AsyncResult;
import org.pgetl.destination.AsyncResult.Outcome;
import org.pgetl.destination.TableCopyWrite;
import org.pgetl.destination.WriteDurability;
import org.pgetl.error.ErrorKind;
import org.pgetl.error.EtlException;
import org.pgetl.error.RetryDirective;
import org.pgetl.model.IdentityKind;
import org.pgetl.model.Lsn;
import org.pgetl.model.ReplicatedTableSchema;
import org.pgetl.model.TableId;
import org.pgetl.model.TableName;
import org.pgetl.store.PipelineStore.ChunkRecord;
import org.pgetl.store.PipelineStore.CopyRecord;
import org.pgetl.store.PipelineStore.ProgressKey;
import org.pgetl.store.TableState;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Brings one table from {@code Init}/{@code DataSync}/{@code FinishedCopy} to {@code SyncDone}: the
 * copy from scratch, the Finish barrier, the hand-off with the apply worker and the catch-up on its
 * own slot; then drops the slot.
 *
 * <p>Any failure is stored as {@code Errored} with the retry policy of its kind — unless the
 * generation is stopping, in which case the table keeps its restartable state and no error is
 * stored (work abandoned because of a shutdown never produces {@code Errored}). An {@link Error}
 * (out of memory, a linkage error, in pgetl or in destination code) is no table's fault and leaves
 * nothing consistent behind: it fails the pipeline, and the table keeps its restartable state.
 *
 * <p>While the worker runs statements that the server may hold indefinitely (the slot creation
 * waits for every open transaction, the copy for table locks) a stop request aborts their
 * connections, so a stop never waits for another session.
 */
public final class TableSyncWorker {
  private static final Logger LOG = LoggerFactory.getLogger(TableSyncWorker.class);
  private static final Duration WAIT_SLICE = Duration.ofMillis(200);

  private final EngineContext ctx;
  private final TableId table;
  private final int priorAttempts;
  private final StopSignal stop;
  private final String pipelineId;
  private final String slotName;
  private boolean completed;

  private TableSyncWorker(EngineContext ctx, TableId table, int priorAttempts, StopSignal stop) {
    this.ctx = ctx;
    this.table = table;
    this.priorAttempts = priorAttempts;
    this.stop = stop;
    this.pipelineId = ctx.config.pipelineId();
    this.slotName = SlotNames.tableSync(pipelineId, table);
  }

  /**
   * Runs the worker of one table on the calling thread, until the table is caught up, fails or the
   * table's stop signal is raised: what a table-sync thread of the generation's pool runs.
   *
   * @param ctx the generation
   * @param table the table
   * @param priorAttempts timed retries already made for the table's last failure
   * @param stop the table's own stop signal
   */
  public static void runFor(EngineContext ctx, TableId table, int priorAttempts, StopSignal stop) {
    new TableSyncWorker(ctx, table, priorAttempts, stop).run();
  }

  private void run() {
    TableState state = ctx.tables.get(table);
    if (state == null
        || state.type() == TableState.Type.ERRORED
        || state.type() == TableState.Type.READY
        || state.type() == TableState.Type.SYNC_DONE) {
      return;
    }
    try {
      sync();
    } catch (EtlException e) {
      fail(e);
    } catch (RuntimeException e) {
      fail(
          new EtlException(
              ErrorKind.WORKER_PANIC,
              "table-sync worker of table " + table + " died",
              e.toString(),
              e));
    } catch (Error e) {
      LOG.error("pipeline {}: table-sync worker of table {} died", pipelineId, table, e);
      ctx.errors.fatal(
          new EtlException(
              ErrorKind.WORKER_PANIC,
              "table-sync worker of table " + table + " died",
              e.toString(),
              e));
      ctx.shutdown.request();
    } finally {
      if (!completed && stop.mode() != StopSignal.Mode.FENCED) {
        // every later attempt copies from scratch with a new slot: this one would only hold WAL
        // (a fenced worker leaves it: the instance taking over sweeps it, and may own one of that
        // name by then)
        dropSlot();
      }
    }
  }

  /**
   * Fails the table, before anything is copied, when it has no replica identity and the publication
   * publishes UPDATE or DELETE ({@code requireReplicaIdentity}).
   */
  private void requireIdentity(PgCatalog catalog) {
    PublicationInfo info = catalog.requirePublication(ctx.config.publication());
    if (!info.updates() && !info.deletes()) {
      return;
    }
    TableIdentity identity = catalog.replicaIdentity(table);
    if (identity.kind() != IdentityKind.NOTHING) {
      return;
    }
    TableName tableName = catalog.tableSchema(table).name();
    String name = tableName.quoted();
    String why =
        switch (identity.setting()) {
          case NOTHING -> "has REPLICA IDENTITY NOTHING";
          case INDEX -> "lost its replica identity index";
          default -> "has no primary key";
        };
    throw new EtlException(
        ErrorKind.SOURCE_REPLICA_IDENTITY_ERROR,
        "table "
            + tableName
            + " "
            + why
            + ", and requireReplicaIdentity is on: it is not replicated",
        "give it a primary key (ALTER TABLE "
            + name
            + " ADD PRIMARY KEY (...)) or run ALTER TABLE "
            + name
            + " REPLICA IDENTITY FULL, then retry the table (pgetl tables retry); or turn"
            + " requireReplicaIdentity off to replicate its INSERTs and TRUNCATEs as they are");
  }

  /** Drops this table's slot; a failure is logged: every start drops leftover slots anyway. */
  private boolean dropSlot() {
    try (Connection c = ctx.connector.openPlain(ApplicationNames.tableSync(pipelineId, table))) {
      new SlotAdmin(c, ctx.ticker).dropIfExists(slotName, SlotAdmin.DROP_TIMEOUT);
      return true;
    } catch (EtlException | java.sql.SQLException e) {
      LOG.warn(
          "pipeline {}: could not drop slot {} of table {} ({}); it is dropped at the next start",
          pipelineId,
          slotName,
          table,
          e.getMessage());
      return false;
    }
  }

  @SuppressWarnings("try") // the StopSignal.Guard is held only for its close()
  private void sync() {
    PublishedTable published;
    ReplicatedTableSchema previous;
    UUID attempt = UUID.randomUUID();
    try (Connection c = ctx.connector.openPlain(ApplicationNames.tableSync(pipelineId, table));
        StopSignal.Guard guard = stop.abortOnStop(c, "table sync of " + table)) {
      PgCatalog catalog = new PgCatalog(c);
      Optional<PublishedTable> p = catalog.publishedTable(ctx.config.publication(), table);
      if (p.isEmpty()) {
        leftThePublication(c);
        return;
      }
      published = p.get();
      if (ctx.config.requireReplicaIdentity()) {
        requireIdentity(catalog);
      }
      // the newest version the destination was told, with its identity and column list
      Optional<ReplicatedTableSchema> stored = ctx.store.tableSchema(table, Lsn.MAX);
      ReplicatedTableSchema current = catalog.replicatedTableSchema(table, published.columnNames());
      previous = stored.orElse(current);
      // a large table is copied in chunks while its changes stream
      if (syncInChunks(c, catalog, published, current, previous, attempt)) {
        return;
      }
      // 1. the destination forgets what earlier attempts wrote, and learns the new attempt's id
      if (!awaitDestination(
          "dropTableForCopy of " + previous.name(),
          r -> ctx.destination.dropTableForCopy(previous, attempt, r),
          WriteDurability.MAY_DEFER)) {
        return;
      }
      // 2. the old slot goes; 3. our own leftovers go; 4. DataSync
      new SlotAdmin(c, ctx.ticker).dropIfExists(slotName, SlotAdmin.DROP_TIMEOUT);
    } catch (java.sql.SQLException e) {
      throw org.pgetl.core.internal.pg.PgErrors.map(e, "table-sync of " + table + " failed");
    }
    ctx.store.prepareTableForCopy(table);
    ctx.tables.startCopy(table);
    if (stop.isRequested()) {
      return;
    }
    ReplicationConnection repl =
        ctx.connector.openReplication(ApplicationNames.tableSync(pipelineId, table));
    try {
      ReplicatedTableSchema schema;
      Lsn consistentPoint;
      TableCopier.Result copied;
      try (StopSignal.Guard guard = stop.abortOnStop(repl.jdbc(), "table sync of " + table)) {
        // 5. the slot and its snapshot
        CreatedSlot slot =
            repl.createSlot(
                slotName, SnapshotMode.USE_SNAPSHOT, ctx.config.temporarySlots(), false);
        consistentPoint = slot.consistentPoint();
        PgCatalog snapshotCatalog = new PgCatalog(repl.jdbc());
        schema = snapshotCatalog.replicatedTableSchema(table, published.columnNames());
        ctx.board.name(table, schema.name());
        ctx.board.rowsCopied(table, 0);
        ctx.store.storeTableSchema(
            schema.withTableSchema(schema.tableSchema().withSnapshotLsn(Lsn.ZERO)));
        // 6. the copy
        copied = new TableCopier.Result(0, 0, false);
        if (ctx.config.tableCopy().shouldCopy(schema.name())) {
          String snapshotId = repl.exportSnapshot();
          TableCopier.Source source = copySource(snapshotCatalog, schema, published);
          copied =
              new TableCopier(
                      ctx.config,
                      ctx.connector,
                      ctx.destination,
                      ctx.metrics,
                      stop,
                      ctx.shutdown,
                      ctx.ticker)
                  .copy(source, snapshotId, attempt, n -> ctx.board.addRowsCopied(table, n));
          if (copied.stopped()) {
            return;
          }
        } else {
          LOG.info(
              "pipeline {}: initial copy of {} skipped by configuration",
              pipelineId,
              schema.name());
        }
        repl.endSnapshotTransaction();
      }
      if (stop.isRequested()) {
        return;
      }
      // 7. the barrier, always: every batch of the attempt must be durable
      TableCopyWrite.Finish finish =
          new TableCopyWrite.Finish(attempt, copied.batches(), copied.rows());
      if (!awaitDestination(
          "Finish barrier of " + schema.name(),
          r -> ctx.destination.writeTableRows(schema, finish, r),
          WriteDurability.REQUIRE_DURABLE)) {
        return;
      }
      ctx.tables.copyFinished(table);
      try {
        ctx.store.recordCopy(
            table, new CopyRecord(attempt, copied.rows(), copied.batches(), ctx.ticker.now()));
      } catch (EtlException e) {
        LOG.warn(
            "pipeline {}: could not record the copy of {}: {}", pipelineId, table, e.getMessage());
      }
      LOG.info(
          "pipeline {}: copied {} rows of {} at {}",
          pipelineId,
          copied.rows(),
          schema.name(),
          consistentPoint);
      // 8. hand-off: ask the apply worker for a catch-up target
      ctx.tables.awaitCatchup(table, consistentPoint);
      if (!awaitCatchup()) {
        return;
      }
      // 9. catch up on our own slot
      ReplicationStream stream = repl.startStreaming(ctx.streamOptions(slotName, consistentPoint));
      try (CatalogSchemaResolver resolver =
          new CatalogSchemaResolver(ctx.connector, ApplicationNames.tableSync(pipelineId, table))) {
        ApplyLoop loop =
            new ApplyLoop(
                ctx.env.withStop(stop),
                new CatchupStreamRole(ctx.tables, table, schema.name(), attempt),
                stream,
                new PgOutputDecoder(ctx.streams.protocolVersion(), ctx.streams.streaming()),
                resolver,
                consistentPoint);
        completed = loop.run() == ApplyLoop.Exit.COMPLETED;
      } finally {
        stream.close();
      }
    } finally {
      repl.close();
    }
    if (completed) {
      cleanUp();
    }
  }

  /**
   * Copies the table in chunks, or resumes its chunked copy, when it is one to copy so (see {@link
   * PipelineConfig#chunkedCopyMinBytes()}); false when it is copied under one snapshot instead.
   */
  private boolean syncInChunks(
      Connection c,
      PgCatalog catalog,
      PublishedTable published,
      ReplicatedTableSchema current,
      ReplicatedTableSchema previous,
      UUID attempt)
      throws java.sql.SQLException {
    List<ChunkRecord> stored = ctx.store.chunks(table);
    Optional<ChunkKey> key = ChunkKey.of(current);
    boolean possible =
        ctx.destination.supportsChunkedCopy()
            && ctx.streams.messages()
            && key.isPresent()
            && ctx.config.tableCopy().shouldCopy(current.name());
    if (stored.isEmpty()) {
      if (ctx.config.chunkedCopyMinBytes() == Long.MAX_VALUE
          || !ctx.config.tableCopy().shouldCopy(current.name())) {
        return false;
      }
      TableSize size = rowsSize(catalog, catalog.partitionLeaves(table));
      if (size.totalBytes() < ctx.config.chunkedCopyMinBytes()) {
        return false;
      }
      if (!possible) {
        // large enough to be copied in chunks: say why it is not
        LOG.info(
            "pipeline {}: {} ({} MiB) is copied under one snapshot, not in chunks: {}",
            pipelineId,
            current.name(),
            size.totalBytes() >> 20,
            !ctx.destination.supportsChunkedCopy()
                ? "the destination does not take chunked copies"
                : !ctx.streams.messages()
                    ? "the source is older than PostgreSQL 14"
                    : ChunkKey.whyNot(current));
        return false;
      }
    } else if (!possible) {
      LOG.info(
          "pipeline {}: the chunked copy of {} cannot resume ({}); it is copied from scratch",
          pipelineId,
          current.name(),
          key.isEmpty() ? ChunkKey.whyNot(current) : "the destination or the source changed");
      ctx.chunks.deactivate(table);
      ctx.store.deleteChunks(table);
      return false;
    }
    // the chunks' watermarks and the table's changes go through the apply stream: its slot first
    if (!ctx.awaitApplySlot(stop)) {
      return true;
    }
    ReplicatedTableSchema dropped = previous;
    for (int restarts = 0; ; restarts++) {
      UUID att;
      if (stored.isEmpty()) {
        att = restarts == 0 ? attempt : UUID.randomUUID();
        // 1. the destination forgets what earlier attempts wrote
        ReplicatedTableSchema d = dropped;
        if (!awaitDestination(
            "dropTableForCopy of " + d.name(),
            r -> ctx.destination.dropTableForCopy(d, att, r),
            WriteDurability.MAY_DEFER)) {
          return true;
        }
        new SlotAdmin(c, ctx.ticker).dropIfExists(slotName, SlotAdmin.DROP_TIMEOUT);
        ctx.store.prepareTableForCopy(table);
        TableState before = ctx.tables.get(table);
        if (before != null && before.type() != TableState.Type.DATA_SYNC) {
          ctx.tables.startCopy(table);
        }
        ctx.store.storeTableSchema(
            current.withTableSchema(current.tableSchema().withSnapshotLsn(Lsn.ZERO)));
        // 2. the chunks, planned from a sample of the key
        List<TableId> leaves = catalog.partitionLeaves(table);
        TableSize size = rowsSize(catalog, leaves);
        List<ChunkRecord> plan =
            ChunkedCopier.plan(
                c,
                TableCopier.wholeTable(current.name(), !List.of(table).equals(leaves)),
                key.get(),
                size.totalBytes(),
                size.estimatedRows(),
                ctx.config.copyChunkBytes(),
                att);
        ctx.store.planChunks(table, att, plan);
        stored = ctx.store.chunks(table);
      } else {
        att = stored.get(0).attemptId();
        TableState s = ctx.tables.get(table);
        if (s != null && s.type() != TableState.Type.DATA_SYNC) {
          ctx.tables.startCopy(table);
        }
      }
      ChunkKey tracked = ctx.chunks.key(table);
      if (tracked == null || restarts > 0) {
        // 3. from here on the apply stream applies the table's changes (a copy that starts over
        // replaces its chunks without a gap)
        ctx.chunks.replace(table, att, key.get(), stored);
        tracked = key.get();
      }
      ctx.board.name(table, current.name());
      long kept = stored.stream().filter(ChunkRecord::done).count();
      long keptRows = stored.stream().mapToLong(ChunkRecord::rows).sum();
      ctx.board.rowsCopied(table, keptRows);
      if (kept > 0) {
        LOG.info(
            "pipeline {}: the chunked copy of {} resumes: {} of {} chunks ({} rows) are kept",
            pipelineId,
            current.name(),
            kept,
            stored.size(),
            keptRows);
      }
      TableCopier.Source source = copySource(catalog, current, published);
      ctx.board.chunkedCopyStarted(
          table,
          (int) kept,
          stored.size(),
          keptRows,
          stored.stream().mapToLong(ChunkRecord::bytes).sum());
      ChunkedCopier.Result result;
      try {
        if (!tracked.sameColumn(key.get())) {
          // resumed with chunks cut on another column
          throw new ChunkedCopier.SchemaChanged(
              "the key of " + current.name() + " changed while it was copied in chunks");
        }
        // 4. the chunks not done
        result =
            new ChunkedCopier(
                    ctx,
                    table,
                    source,
                    key.get(),
                    att,
                    stop,
                    published.columnNames(),
                    catalog.serverVersion().major())
                .run();
      } catch (ChunkedCopier.SchemaChanged e) {
        if (restarts >= 3) {
          throw new EtlException(
              ErrorKind.SOURCE_SCHEMA_ERROR, e.getMessage() + ", again and again", null, e);
        }
        LOG.warn("pipeline {}: {}; its chunked copy starts over", pipelineId, e.getMessage());
        ctx.board.chunkedCopyEnded(table);
        // the apply stream keeps applying the table's changes: none is lost between the old
        // chunks and the new attempt's drop (a change before the drop is gone with it)
        ctx.chunks.abandonReads(table);
        ctx.store.deleteChunks(table);
        dropped = ctx.store.tableSchema(table, Lsn.MAX).orElse(current);
        current = catalog.replicatedTableSchema(table, published.columnNames());
        key = ChunkKey.of(current);
        if (key.isEmpty()) {
          throw new EtlException(
              ErrorKind.SOURCE_SCHEMA_ERROR,
              e.getMessage()
                  + ", and it can no longer be copied in chunks: "
                  + ChunkKey.whyNot(current),
              null,
              e);
        }
        stored = List.of();
        continue;
      }
      if (result.stopped() || stop.isRequested() || !ctx.chunks.allDone(table)) {
        return true;
      }
      // 5. the barrier, then Ready once the apply stream's stored progress passed every
      // watermark (a replay from before one would apply changes the chunk's rows already hold)
      List<ChunkRecord> done = ctx.store.chunks(table);
      long rows = done.stream().mapToLong(ChunkRecord::rows).sum();
      ReplicatedTableSchema schema = current;
      TableCopyWrite.Finish finish = new TableCopyWrite.Finish(att, done.size(), rows);
      if (!awaitDestination(
          "Finish barrier of " + schema.name(),
          r -> ctx.destination.writeTableRows(schema, finish, r),
          WriteDurability.REQUIRE_DURABLE)) {
        return true;
      }
      Lsn last = Lsn.ZERO;
      for (ChunkRecord r : done) {
        if (r.watermark() != null) {
          last = Lsn.max(last, r.watermark());
        }
      }
      if (!awaitApplyProgress(c, last)) {
        return true;
      }
      ctx.tables.chunkedCopyDone(table);
      ctx.chunks.deactivate(table);
      ctx.board.chunkedCopyEnded(table);
      ctx.store.deleteChunks(table);
      try {
        ctx.store.recordCopy(table, new CopyRecord(att, rows, done.size(), ctx.ticker.now()));
      } catch (EtlException e) {
        LOG.warn(
            "pipeline {}: could not record the copy of {}: {}", pipelineId, table, e.getMessage());
      }
      LOG.info(
          "pipeline {}: copied {} rows of {} in {} chunks; it streams",
          pipelineId,
          rows,
          schema.name(),
          done.size());
      completed = true;
      return true;
    }
  }

  /**
   * Waits until a restart of the apply stream would begin after {@code lsn}: its stored progress or
   * its slot's confirmed position (an idle stream confirms what it received) reached it; false on a
   * stop.
   */
  private boolean awaitApplyProgress(Connection c, Lsn lsn) throws java.sql.SQLException {
    while (!stop.isRequested()) {
      Optional<Lsn> p = ctx.store.progress(ProgressKey.apply());
      if (p.isPresent() && p.get().compareTo(lsn) >= 0) {
        return true;
      }
      try (java.sql.PreparedStatement ps =
          c.prepareStatement(
              "SELECT confirmed_flush_lsn::text FROM pg_replication_slots WHERE slot_name = ?")) {
        ps.setString(1, ctx.config.applySlotName());
        try (java.sql.ResultSet rs = ps.executeQuery()) {
          if (rs.next()
              && rs.getString(1) != null
              && Lsn.parse(rs.getString(1)).compareTo(lsn) >= 0) {
            return true;
          }
        }
      }
      try {
        Thread.sleep(WAIT_SLICE.toMillis());
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        return false;
      }
    }
    return false;
  }

  /**
   * The table is no longer published (or no longer exists): its state, progress and slot go now,
   * once, and the pipeline stops following it.
   */
  private void leftThePublication(Connection c) {
    new SlotAdmin(c, ctx.ticker).dropIfExists(slotName, SlotAdmin.DROP_TIMEOUT);
    ctx.chunks.deactivate(table);
    ctx.tables.remove(table);
    LOG.info(
        "pipeline {}: table {} left the publication; its state and slot are deleted",
        pipelineId,
        table);
  }

  /**
   * The size of the table's rows: its own, or the sum of its partitions' for a partitioned table
   * (which holds none itself); estimated rows -1 when any of them was never analyzed.
   */
  private static TableSize rowsSize(PgCatalog catalog, List<TableId> leaves) {
    long rows = 0;
    long pages = 0;
    long blocks = 0;
    long bytes = 0;
    for (TableId t : leaves) {
      TableSize s = catalog.tableSize(t);
      rows = rows < 0 || s.estimatedRows() < 0 ? -1 : rows + s.estimatedRows();
      pages += s.relPages();
      blocks += s.blocks();
      bytes += s.totalBytes();
    }
    return new TableSize(rows, pages, blocks, bytes);
  }

  private TableCopier.Source copySource(
      PgCatalog catalog, ReplicatedTableSchema schema, PublishedTable published) {
    List<TableId> physical = new ArrayList<>();
    List<TableId> leaves = catalog.partitionLeaves(table);
    if (leaves.isEmpty()) {
      physical.add(table);
    } else {
      physical.addAll(leaves);
    }
    List<CopyPlanner.TableSize> sizes = new ArrayList<>();
    List<TableName> names = new ArrayList<>();
    for (TableId t : physical) {
      TableSize size = catalog.tableSize(t);
      sizes.add(
          new CopyPlanner.TableSize(t, size.blocks(), size.estimatedRows(), size.totalBytes()));
      names.add(t.equals(table) ? schema.name() : catalog.tableSchema(t).name());
    }
    int[] oids = new int[schema.columnCount()];
    for (int i = 0; i < oids.length; i++) {
      oids[i] = schema.columns().get(i).typeOid();
    }
    List<ValueCodec> codecs;
    try (CatalogSchemaResolver resolver =
        new CatalogSchemaResolver(ctx.connector, ApplicationNames.catalog(pipelineId))) {
      codecs = resolver.codecs(oids);
    }
    return new TableCopier.Source(schema, sizes, names, published.rowFilter(), codecs);
  }

  /** Sends one destination call and waits for its answer; false when the worker must stop. */
  private boolean awaitDestination(
      String what, Consumer<AsyncResult> call, WriteDurability required) {
    AsyncResult result = DestinationCalls.invoke(ctx.destination, what, call);
    Optional<Outcome> answer = DestinationCalls.await(result, stop, ctx.config.shutdownTimeout());
    if (answer.isEmpty()) {
      stop.noteIncomplete(what + " unanswered after " + ctx.config.shutdownTimeout());
      return false;
    }
    Outcome o = answer.get();
    switch (o.kind()) {
      case SHUTDOWN -> {
        LOG.info("pipeline {}: destination abandoned {}; stopping", pipelineId, what);
        ctx.shutdown.request();
        return false;
      }
      case FAILED -> throw o.error();
      default -> {
        DestinationCalls.requireDurable(o, required, what);
        return !stop.isRequested();
      }
    }
  }

  private boolean awaitCatchup() {
    while (!stop.isRequested()) {
      try {
        TableState s =
            ctx.tables.await(table, st -> st.type() == TableState.Type.CATCHUP, WAIT_SLICE);
        if (s != null) {
          return true;
        }
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        return false;
      }
    }
    return false;
  }

  private void cleanUp() {
    try {
      ctx.store.deleteProgress(ProgressKey.tableSync(table));
    } catch (EtlException e) {
      LOG.warn(
          "pipeline {}: could not delete the progress of table {}: {}",
          pipelineId,
          table,
          e.getMessage());
    }
    if (dropSlot()) {
      LOG.info("pipeline {}: table {} caught up; slot {} dropped", pipelineId, table, slotName);
    }
  }

  /**
   * Decides how a table whose worker failed is retried: a timed retry, {@link Backoff#delay} after
   * {@code now}, while the failure asks for one and attempts are left (outages are retried for as
   * long as they last); otherwise as the failure's directive says.
   *
   * @param e the failure
   * @param priorAttempts timed retries already made
   * @param config the retry settings
   * @param now the current time
   * @return the {@code Errored} state to store, with its retry directive
   */
  static TableState.Errored errored(
      EtlException e, int priorAttempts, PipelineConfig config, Instant now) {
    String reason = Objects.requireNonNullElse(e.getMessage(), e.kind().toString());
    if (e.directive() == RetryDirective.TIMED
        && (Backoff.isOutage(e.kind()) || priorAttempts < config.retryMaxAttempts())) {
      return new TableState.Errored(
          e.kind(),
          reason,
          e.hint(),
          RetryDirective.TIMED,
          now.plus(Backoff.delay(config, priorAttempts)),
          priorAttempts);
    }
    return new TableState.Errored(
        e.kind(),
        reason,
        e.hint(),
        e.directive() == RetryDirective.NONE ? RetryDirective.NONE : RetryDirective.MANUAL);
  }

  private void fail(EtlException e) {
    if (stop.isRequested() || ctx.shutdown.isRequested()) {
      TableState now = ctx.tables.get(table);
      LOG.info(
          "pipeline {}: table {} stopped during shutdown ({}); it resumes from {} at the next start",
          pipelineId,
          table,
          e.getMessage(),
          now == null ? "Init" : now.type());
      return;
    }
    ctx.errors.record(e);
    if (ctx.tables.get(table) == null) {
      LOG.info(
          "pipeline {}: table {} left the pipeline while it failed: {}",
          pipelineId,
          table,
          e.getMessage());
      return;
    }
    TableState.Errored errored = errored(e, priorAttempts, ctx.config, ctx.ticker.now());
    LOG.warn(
        "pipeline {}: table {} errored ({}); retry {}: {}",
        pipelineId,
        table,
        e.getMessage(),
        errored.retry() == RetryDirective.TIMED
            ? "at " + errored.nextRetry() + " (attempt " + (errored.attempts() + 1) + ")"
            : errored.retry(),
        e.hint());
    try {
      ctx.tables.error(table, errored);
    } catch (EtlException storeFailure) {
      storeFailure.addSuppressed(e);
      if (Backoff.isOutage(storeFailure.kind())) {
        // the store is away too (it usually lives in the source): the table goes back to its
        // last stored state, and the apply worker starts a worker for it again once it is back
        TableState stored = ctx.tables.revert(table);
        if (stored == null) {
          return;
        }
        LOG.warn(
            "pipeline {}: table {} could not be marked errored ({}); it resumes from {}",
            pipelineId,
            table,
            storeFailure.getMessage(),
            stored.type());
        return;
      }
      ctx.errors.fatal(storeFailure);
      ctx.shutdown.request();
    }
  }
}
