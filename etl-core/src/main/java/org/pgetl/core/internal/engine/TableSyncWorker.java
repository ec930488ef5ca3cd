package org.pgetl.core.internal.engine;

import java.sql.Connection;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import org.pgetl.core.internal.apply.ApplyLoop;
import org.pgetl.core.internal.codec.ValueCodec;
import org.pgetl.core.internal.copy.CopyPlanner;
import org.pgetl.core.internal.copy.TableCopier;
import org.pgetl.core.internal.decode.PgOutputDecoder;
import org.pgetl.core.internal.pg.ApplicationNames;
import org.pgetl.core.internal.pg.CreatedSlot;
import org.pgetl.core.internal.pg.PgCatalog;
import org.pgetl.core.internal.pg.PublishedTable;
import org.pgetl.core.internal.pg.ReplicationConnection;
import org.pgetl.core.internal.pg.ReplicationStream;
import org.pgetl.core.internal.pg.SlotAdmin;
import org.pgetl.core.internal.pg.SlotNames;
import org.pgetl.core.internal.pg.SnapshotMode;
import org.pgetl.core.internal.pg.TableSize;
import org.pgetl.destination.AsyncResult;
import org.pgetl.destination.Outcome;
import org.pgetl.destination.TableCopyWrite;
import org.pgetl.error.ErrorKind;
import org.pgetl.error.EtlException;
import org.pgetl.error.RetryDirective;
import org.pgetl.model.Lsn;
import org.pgetl.model.ReplicatedTableSchema;
import org.pgetl.model.TableId;
import org.pgetl.model.TableName;
import org.pgetl.store.ProgressKey;
import org.pgetl.store.RetryPolicy;
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
 * stored (work abandoned because of a shutdown never produces {@code Errored}).
 */
final class TableSyncWorker {
  private static final Logger LOG = LoggerFactory.getLogger(TableSyncWorker.class);
  private static final Duration WAIT_SLICE = Duration.ofMillis(200);

  private final EngineContext ctx;
  private final TableId table;
  private final int priorAttempts;
  private final String pipelineId;
  private final String slotName;
  private boolean completed;

  TableSyncWorker(EngineContext ctx, TableId table, int priorAttempts) {
    this.ctx = ctx;
    this.table = table;
    this.priorAttempts = priorAttempts;
    this.pipelineId = ctx.config.pipelineId();
    this.slotName = SlotNames.tableSync(pipelineId, table);
  }

  void run() {
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
    } finally {
      if (!completed) {
        // every later attempt copies from scratch with a new slot: this one would only hold WAL
        dropSlot();
      }
    }
  }

  /** Drops this table's slot; a failure is logged: every start drops leftover slots anyway. */
  private boolean dropSlot() {
    try (Connection c = ctx.connector.openPlain(ApplicationNames.tableSync(pipelineId, table))) {
      new SlotAdmin(c).dropIfExists(slotName, SlotAdmin.DROP_TIMEOUT);
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

  private void sync() {
    PublishedTable published;
    ReplicatedTableSchema previous;
    try (Connection c = ctx.connector.openPlain(ApplicationNames.tableSync(pipelineId, table))) {
      PgCatalog catalog = new PgCatalog(c);
      Optional<PublishedTable> p = catalog.publishedTable(ctx.config.publication(), table);
      if (p.isEmpty()) {
        LOG.info(
            "pipeline {}: table {} left the publication; it is cleaned up at the next start",
            pipelineId,
            table);
        return;
      }
      published = p.get();
      // the newest version the destination was told, with its identity and column list
      Optional<ReplicatedTableSchema> stored = ctx.store.tableSchema(table, Lsn.MAX);
      previous =
          stored.isPresent()
              ? stored.get()
              : catalog.replicatedTableSchema(table, published.columnNames());
      // 1. the destination forgets what an earlier attempt wrote
      if (!awaitDestination(
          "dropTableForCopy of " + previous.name(),
          r -> ctx.destination.dropTableForCopy(previous, r),
          false)) {
        return;
      }
      // 2. the old slot goes; 3. our own leftovers go; 4. DataSync
      new SlotAdmin(c).dropIfExists(slotName, SlotAdmin.DROP_TIMEOUT);
    } catch (java.sql.SQLException e) {
      throw org.pgetl.core.internal.pg.PgErrors.map(e, "table-sync of " + table + " failed");
    }
    ctx.store.prepareTableForCopy(table);
    ctx.tables.setAndStore(table, TableState.DATA_SYNC);
    if (ctx.stop.isRequested()) {
      return;
    }
    ReplicationConnection repl =
        ctx.connector.openReplication(ApplicationNames.tableSync(pipelineId, table));
    try {
      // 5. the slot and its snapshot
      CreatedSlot slot = repl.createSlot(slotName, SnapshotMode.USE_SNAPSHOT);
      Lsn consistentPoint = slot.consistentPoint();
      PgCatalog snapshotCatalog = new PgCatalog(repl.jdbc());
      ReplicatedTableSchema schema =
          snapshotCatalog.replicatedTableSchema(table, published.columnNames());
      ctx.store.storeTableSchema(
          schema.withTableSchema(schema.tableSchema().withSnapshotLsn(Lsn.ZERO)));
      // 6. the copy
      TableCopier.Result copied = new TableCopier.Result(0, false, false);
      if (ctx.config.tableCopy().shouldCopy(schema.name())) {
        String snapshotId = repl.exportSnapshot();
        TableCopier.Source source = copySource(snapshotCatalog, schema, published);
        copied =
            new TableCopier(
                    ctx.config, ctx.connector, ctx.destination, ctx.metrics, ctx.stop, ctx.shutdown)
                .copy(source, snapshotId);
        if (copied.stopped()) {
          return;
        }
      } else {
        LOG.info(
            "pipeline {}: initial copy of {} skipped by configuration", pipelineId, schema.name());
      }
      repl.endSnapshotTransaction();
      // 7. the barrier: every accepted batch (or the empty table) must be durable
      if (copied.barrierRequired() || copied.rows() == 0) {
        if (!awaitDestination(
            "Finish barrier of " + schema.name(),
            r -> ctx.destination.writeTableRows(schema, TableCopyWrite.finish(), r),
            true)) {
          return;
        }
      }
      ctx.tables.setAndStore(table, TableState.FINISHED_COPY);
      LOG.info(
          "pipeline {}: copied {} rows of {} at {}",
          pipelineId,
          copied.rows(),
          schema.name(),
          consistentPoint);
      // 8. hand-off: ask the apply worker for a catch-up target
      ctx.tables.setInMemory(table, new TableState.SyncWait(consistentPoint));
      if (!awaitCatchup()) {
        return;
      }
      // 9. catch up on our own slot
      ReplicationStream stream =
          repl.startStreaming(ApplyWorker.streamOptions(ctx, slotName, consistentPoint));
      try (CatalogSchemaResolver resolver =
          new CatalogSchemaResolver(ctx.connector, ApplicationNames.tableSync(pipelineId, table))) {
        ApplyLoop loop =
            new ApplyLoop(
                ctx.env,
                new CatchupStreamRole(ctx.tables, table, schema.name()),
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
      sizes.add(new CopyPlanner.TableSize(t, size.blocks(), size.estimatedRows()));
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

  private interface Call {
    void send(AsyncResult result);
  }

  /** Sends one destination call and waits for its answer; false when the worker must stop. */
  private boolean awaitDestination(String what, Call call, boolean requireDurable) {
    AsyncResult result = AsyncResult.create();
    try {
      call.send(result);
    } catch (EtlException e) {
      result.fail(e);
    } catch (RuntimeException e) {
      result.fail(
          new EtlException(
              ErrorKind.DESTINATION_ERROR,
              "destination " + ctx.destination.name() + " threw from " + what,
              e.toString(),
              e));
    }
    Outcome o = Results.await(result, ctx.stop, what);
    if (o == null) {
      return false;
    }
    switch (o.kind()) {
      case SHUTDOWN:
        LOG.info("pipeline {}: destination abandoned {}; stopping", pipelineId, what);
        ctx.shutdown.request();
        return false;
      case FAILED:
        throw o.error();
      case ACCEPTED:
        if (requireDurable) {
          throw new EtlException(
              ErrorKind.DESTINATION_CONTRACT_VIOLATION,
              "destination answered accepted() to the " + what,
              "the Finish barrier must be answered durable(): it confirms every batch of the copy");
        }
        return true;
      default:
        return true;
    }
  }

  private boolean awaitCatchup() {
    while (!ctx.stop.isRequested()) {
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

  private void fail(EtlException e) {
    if (ctx.stop.isRequested() || ctx.shutdown.isRequested()) {
      LOG.info(
          "pipeline {}: table {} stopped during shutdown ({}); it resumes from {} at the next start",
          pipelineId,
          table,
          e.getMessage(),
          ctx.tables.get(table) == null ? "Init" : ctx.tables.get(table).type());
      return;
    }
    ctx.errors.record(e);
    RetryPolicy policy;
    if (e.directive() == RetryDirective.TIMED && priorAttempts < ctx.config.retryMaxAttempts()) {
      policy =
          new RetryPolicy.Timed(
              Instant.now().plus(Backoff.delay(ctx.config, priorAttempts)), priorAttempts);
    } else if (e.directive() == RetryDirective.NONE) {
      policy = RetryPolicy.NONE;
    } else {
      policy = RetryPolicy.MANUAL;
    }
    LOG.warn(
        "pipeline {}: table {} errored ({}); retry {}: {}",
        pipelineId,
        table,
        e.getMessage(),
        policy,
        e.hint());
    try {
      ctx.tables.setAndStore(
          table, new TableState.Errored(e.kind(), e.getMessage(), e.hint(), policy));
    } catch (EtlException storeFailure) {
      storeFailure.addSuppressed(e);
      ctx.errors.fatal(storeFailure);
      ctx.shutdown.request();
    }
  }
}
