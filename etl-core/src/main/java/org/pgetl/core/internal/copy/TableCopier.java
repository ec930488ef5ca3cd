package org.pgetl.core.internal.copy;

import java.sql.Connection;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.pgetl.PipelineConfig;
import org.pgetl.Shutdown;
import org.pgetl.core.internal.codec.CopyBinaryParser;
import org.pgetl.core.internal.codec.ValueCodec;
import org.pgetl.core.internal.engine.EngineMetrics;
import org.pgetl.core.internal.engine.Results;
import org.pgetl.core.internal.engine.StopSignal;
import org.pgetl.core.internal.pg.ApplicationNames;
import org.pgetl.core.internal.pg.PgConnector;
import org.pgetl.core.internal.pg.PgErrors;
import org.pgetl.destination.AsyncResult;
import org.pgetl.destination.Destination;
import org.pgetl.destination.Outcome;
import org.pgetl.destination.TableCopyBatchId;
import org.pgetl.destination.TableCopyWrite;
import org.pgetl.error.ErrorKind;
import org.pgetl.error.EtlException;
import org.pgetl.model.ColumnSchema;
import org.pgetl.model.ReplicatedTableSchema;
import org.pgetl.model.TableName;
import org.pgetl.model.TableRow;
import org.postgresql.PGConnection;
import org.postgresql.copy.CopyOut;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Copies one published table from an exported snapshot, in parallel: each of up to {@code
 * copyConnectionsPerTable} threads imports the snapshot on its own connection and copies ctid
 * ranges with {@code COPY (SELECT ...) TO STDOUT (FORMAT binary)}, parsing rows straight into
 * batches bounded by bytes and time. Each batch is answered before its thread reads the next one.
 *
 * <p>The copy stops early, without error, when the generation is asked to stop or the destination
 * answers {@code shutdown()}: the table then stays restartable and is copied again next time.
 */
public final class TableCopier {
  private static final Logger LOG = LoggerFactory.getLogger(TableCopier.class);

  /** What a copy did. */
  public record Result(long rows, boolean barrierRequired, boolean stopped) {}

  /** One physical table to read and its ranges' source. */
  public record Source(
      ReplicatedTableSchema schema,
      List<CopyPlanner.TableSize> physicalTables,
      List<TableName> physicalNames,
      String rowFilter,
      List<ValueCodec> codecs) {}

  private final PipelineConfig config;
  private final PgConnector connector;
  private final Destination destination;
  private final EngineMetrics metrics;
  private final StopSignal stop;
  private final Shutdown shutdown;

  /**
   * Creates a copier.
   *
   * @param config the pipeline's configuration
   * @param connector opens the copy connections
   * @param destination where rows go
   * @param metrics where to count
   * @param stop the generation's stop request
   * @param shutdown the pipeline's shutdown handle, requested when the destination abandons a batch
   */
  public TableCopier(
      PipelineConfig config,
      PgConnector connector,
      Destination destination,
      EngineMetrics metrics,
      StopSignal stop,
      Shutdown shutdown) {
    this.config = config;
    this.connector = connector;
    this.destination = destination;
    this.metrics = metrics;
    this.stop = stop;
    this.shutdown = shutdown;
  }

  /**
   * Copies a table.
   *
   * @param source what to read
   * @param snapshotId the exported snapshot
   * @return rows copied, whether the Finish barrier is needed, whether the copy stopped early
   * @throws EtlException when a copy connection or the destination fails
   */
  public Result copy(Source source, String snapshotId) {
    List<CopyPlanner.Partition> plan =
        CopyPlanner.plan(source.physicalTables(), config.copyConnectionsPerTable());
    ConcurrentLinkedQueue<CopyPlanner.Partition> queue = new ConcurrentLinkedQueue<>(plan);
    int workers = Math.min(config.copyConnectionsPerTable(), plan.size());
    UUID attempt = UUID.randomUUID();
    AtomicLong sequence = new AtomicLong();
    AtomicLong rows = new AtomicLong();
    AtomicBoolean accepted = new AtomicBoolean();
    AtomicBoolean stopped = new AtomicBoolean();
    AtomicReference<EtlException> failure = new AtomicReference<>();
    ReplicatedTableSchema schema = source.schema();
    String pipelineId = config.pipelineId();
    LOG.info(
        "pipeline {}: copying {} in {} ranges over {} connections (attempt {})",
        pipelineId,
        schema.name(),
        plan.size(),
        workers,
        attempt);
    List<Thread> threads = new ArrayList<>();
    for (int w = 0; w < workers; w++) {
      int worker = w;
      Thread t =
          new Thread(
              () -> {
                try {
                  copyPartitions(
                      source,
                      snapshotId,
                      queue,
                      worker,
                      attempt,
                      sequence,
                      rows,
                      accepted,
                      stopped,
                      failure);
                } catch (EtlException e) {
                  failure.compareAndSet(null, e);
                } catch (RuntimeException e) {
                  failure.compareAndSet(
                      null,
                      new EtlException(
                          ErrorKind.WORKER_PANIC,
                          "copy worker of " + schema.name() + " died",
                          e.toString(),
                          e));
                }
              },
              "pgetl-copy-" + pipelineId + "-" + schema.id() + "-" + w);
      t.setDaemon(true);
      threads.add(t);
      t.start();
    }
    for (Thread t : threads) {
      joinUninterruptibly(t);
    }
    EtlException e = failure.get();
    if (e != null && !stopped.get() && !stop.isRequested()) {
      throw e;
    }
    return new Result(rows.get(), accepted.get(), stopped.get() || stop.isRequested());
  }

  private void copyPartitions(
      Source source,
      String snapshotId,
      ConcurrentLinkedQueue<CopyPlanner.Partition> queue,
      int worker,
      UUID attempt,
      AtomicLong sequence,
      AtomicLong rows,
      AtomicBoolean accepted,
      AtomicBoolean stopped,
      AtomicReference<EtlException> failure) {
    ReplicatedTableSchema schema = source.schema();
    try (Connection c =
        connector.openSnapshotChild(
            ApplicationNames.copy(config.pipelineId(), schema.id(), worker), snapshotId)) {
      CopyPlanner.Partition p;
      while ((p = queue.poll()) != null) {
        if (stop.isRequested() || stopped.get() || failure.get() != null) {
          return;
        }
        copyRange(c, source, p, attempt, sequence, rows, accepted, stopped);
      }
      c.commit();
    } catch (SQLException e) {
      throw PgErrors.map(e, "copy of " + schema.name() + " failed");
    }
  }

  private void copyRange(
      Connection c,
      Source source,
      CopyPlanner.Partition p,
      UUID attempt,
      AtomicLong sequence,
      AtomicLong rows,
      AtomicBoolean accepted,
      AtomicBoolean stopped)
      throws SQLException {
    ReplicatedTableSchema schema = source.schema();
    String sql = copySql(source, p);
    CopyBinaryParser parser = new CopyBinaryParser(source.codecs());
    CopyOut out = c.unwrap(PGConnection.class).getCopyAPI().copyOut(sql);
    List<TableRow> batch = new ArrayList<>();
    long batchBytes = 0;
    long batchStarted = System.nanoTime();
    long maxBytes = config.batchMaxBytes();
    long maxFillNanos = config.batchMaxFill().toNanos();
    try {
      byte[] data;
      while ((data = out.readFromCopy()) != null) {
        Object[] values = parser.parseRow(data, 0, data.length);
        if (values == null) {
          continue;
        }
        TableRow row = TableRow.wrap(values, parser.lastRowSizeHint());
        if (batch.isEmpty()) {
          batchStarted = System.nanoTime();
        }
        batch.add(row);
        batchBytes += row.sizeHintBytes();
        if (batchBytes >= maxBytes || System.nanoTime() - batchStarted >= maxFillNanos) {
          if (!send(schema, batch, batchBytes, attempt, sequence, rows, accepted, stopped)) {
            out.cancelCopy();
            return;
          }
          batch = new ArrayList<>();
          batchBytes = 0;
        }
      }
      parser.finish();
    } finally {
      if (out.isActive()) {
        try {
          out.cancelCopy();
        } catch (SQLException ignored) {
          // the connection is closed with the copy
        }
      }
    }
    if (!batch.isEmpty()) {
      send(schema, batch, batchBytes, attempt, sequence, rows, accepted, stopped);
    }
  }

  private boolean send(
      ReplicatedTableSchema schema,
      List<TableRow> batch,
      long bytes,
      UUID attempt,
      AtomicLong sequence,
      AtomicLong rows,
      AtomicBoolean accepted,
      AtomicBoolean stopped) {
    TableCopyBatchId id = new TableCopyBatchId(attempt, sequence.getAndIncrement());
    AsyncResult result = AsyncResult.create();
    long started = System.nanoTime();
    try {
      destination.writeTableRows(schema, new TableCopyWrite.Batch(id, batch), result);
    } catch (EtlException e) {
      result.fail(e);
    } catch (RuntimeException e) {
      result.fail(
          new EtlException(
              ErrorKind.DESTINATION_ERROR,
              "destination " + destination.name() + " threw from writeTableRows",
              e.toString(),
              e));
    }
    Outcome o = Results.await(result, stop, "copy batch " + id + " of " + schema.name());
    metrics.batchLatency("copy", System.nanoTime() - started);
    if (o == null || o.kind() == Outcome.Kind.SHUTDOWN) {
      if (o != null) {
        LOG.info(
            "pipeline {}: destination abandoned copy batch {} of {}; stopping",
            config.pipelineId(),
            id,
            schema.name());
        shutdown.request();
      }
      stopped.set(true);
      return false;
    }
    switch (o.kind()) {
      case FAILED:
        throw o.error();
      case ACCEPTED:
        accepted.set(true);
        break;
      default:
        break;
    }
    rows.addAndGet(batch.size());
    metrics.rowsCopied(schema.name(), batch.size(), bytes);
    return true;
  }

  static String copySql(Source source, CopyPlanner.Partition p) {
    StringBuilder sql = new StringBuilder("COPY (SELECT ");
    List<ColumnSchema> cols = source.schema().columns();
    for (int i = 0; i < cols.size(); i++) {
      if (i > 0) {
        sql.append(", ");
      }
      sql.append(TableName.quoteIdentifier(cols.get(i).name()));
      if (CopyBinaryParser.needsTextCast(source.codecs().get(i))) {
        sql.append("::text");
      }
    }
    // A table without columns selects none ("SELECT FROM"): each row is then a tuple of zero
    // fields, as the parser expects for a schema without columns.
    int idx = source.physicalTables().indexOf(findSize(source, p));
    TableName physical = source.physicalNames().get(idx);
    sql.append(" FROM ONLY ").append(physical.quoted());
    String pred = p.ctidPredicate();
    String filter = source.rowFilter();
    if (!pred.isEmpty() || filter != null) {
      sql.append(" WHERE ");
      if (!pred.isEmpty()) {
        sql.append(pred);
      }
      if (filter != null) {
        sql.append(pred.isEmpty() ? "" : " AND ").append('(').append(filter).append(')');
      }
    }
    return sql.append(") TO STDOUT (FORMAT binary)").toString();
  }

  private static CopyPlanner.TableSize findSize(Source source, CopyPlanner.Partition p) {
    for (CopyPlanner.TableSize s : source.physicalTables()) {
      if (s.table().equals(p.table())) {
        return s;
      }
    }
    throw new IllegalStateException("partition of unknown table " + p.table());
  }

  private static void joinUninterruptibly(Thread t) {
    boolean interrupted = false;
    while (true) {
      try {
        t.join();
        break;
      } catch (InterruptedException e) {
        interrupted = true;
      }
    }
    if (interrupted) {
      Thread.currentThread().interrupt();
    }
  }
}
