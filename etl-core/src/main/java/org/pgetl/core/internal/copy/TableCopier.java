package org.pgetl.core.internal.copy;

import java.sql.Connection;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.jspecify.annotations.Nullable;
import org.pgetl.PipelineConfig;
import org.pgetl.Shutdown;
import org.pgetl.core.internal.codec.ColumnDecoder;
import org.pgetl.core.internal.codec.CopyBinaryParser;
import org.pgetl.core.internal.codec.ValueCodec;
import org.pgetl.core.internal.engine.DestinationCalls;
import org.pgetl.core.internal.engine.EngineMetrics;
import org.pgetl.core.internal.engine.StopSignal;
import org.pgetl.core.internal.pg.ApplicationNames;
import org.pgetl.core.internal.pg.PgConnector;
import org.pgetl.core.internal.pg.PgErrors;
import org.pgetl.core.internal.time.Ticker;
import org.pgetl.destination.AsyncResult;
import org.pgetl.destination.AsyncResult.Outcome;
import org.pgetl.destination.Destination;
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
 * batches bounded by time and by the heap their decoded rows take: the threads share {@code
 * batch.maxBytes}, each batch holding at most {@code batchMaxBytes / threads} (estimated by the
 * codecs, {@link org.pgetl.core.internal.codec.CopyRowParser#lastRowSizeHint()}). Each batch is
 * answered before its thread reads the next one, so a table's copy holds at most {@code
 * batch.maxBytes} of rows.
 *
 * <p>A copy succeeds only when every range was read to its end and every batch answered. It stops
 * early, without error, when the generation is asked to stop or the destination answers {@code
 * shutdown()}: the copy connections are aborted at once (a COPY waiting for a lock returns), the
 * batches in flight are awaited for the stop's grace period, and the table stays restartable. Any
 * other end of a copy thread fails the copy: an {@link EtlException} as it is, another exception as
 * {@code WORKER_PANIC}; an {@link Error} is rethrown to the caller, which fails the pipeline.
 */
public final class TableCopier {
  private static final Logger LOG = LoggerFactory.getLogger(TableCopier.class);

  /**
   * The most bytes the first batch of each copy connection holds: a few hundred rows, read in about
   * a millisecond, so that the destination starts while the rest is read (later batches hold up to
   * their share of {@code batch.maxBytes}).
   */
  static final long FIRST_BATCH_BYTES = 64 * 1024;

  /**
   * What a copy did.
   *
   * @param rows the rows of every answered batch
   * @param batches the batches sent (and answered)
   * @param stopped true when the copy stopped early (stop request or destination shutdown)
   */
  public record Result(long rows, long batches, boolean stopped) {}

  /**
   * One published table to read: its physical tables (the table itself, or the partitions of a
   * partitioned table) and how to decode their rows.
   *
   * @param schema the table's schema, whose columns the copy selects
   * @param physicalTables the physical tables and their sizes, to plan ranges over
   * @param physicalNames the physical tables' names, in the order of {@code physicalTables}
   * @param rowFilter the publication's row filter as SQL, or null for none
   * @param codecs the codecs of the schema's columns, in column order
   */
  public record Source(
      ReplicatedTableSchema schema,
      List<CopyPlanner.TableSize> physicalTables,
      List<TableName> physicalNames,
      @Nullable String rowFilter,
      List<ValueCodec> codecs) {

    /**
     * Returns true when the table is a partitioned table, whose rows are in its partitions.
     *
     * @return whether the physical tables are partitions of the table
     */
    public boolean partitioned() {
      return physicalTables.size() != 1 || !physicalTables.get(0).table().equals(schema.id());
    }

    /**
     * Returns the table as a {@code FROM} clause names it to read all of its rows and nothing else:
     * {@code ONLY} for a table of its own (no inheritance children), without it for a partitioned
     * table (its partitions).
     *
     * @return {@code ONLY "s"."t"} or {@code "s"."t"}
     */
    public String wholeTable() {
      return TableCopier.wholeTable(schema.name(), partitioned());
    }
  }

  /**
   * Returns a table as a {@code FROM} clause names it to read all of its rows and nothing else.
   *
   * @param name the table
   * @param partitioned whether it is a partitioned table (its rows are in its partitions)
   * @return {@code ONLY "s"."t"}, or {@code "s"."t"} for a partitioned table
   */
  public static String wholeTable(TableName name, boolean partitioned) {
    return (partitioned ? "" : "ONLY ") + name.quoted();
  }

  private final PipelineConfig config;
  private final PgConnector connector;
  private final Destination destination;
  private final EngineMetrics metrics;
  private final StopSignal stop;
  private final Shutdown shutdown;
  private final Ticker ticker;

  /**
   * Creates a copier.
   *
   * @param config the pipeline's configuration
   * @param connector opens the copy connections
   * @param destination where rows go
   * @param metrics where to count
   * @param stop the generation's stop request
   * @param shutdown the pipeline's shutdown handle, requested when the destination abandons a batch
   * @param ticker where batch fill times and latencies are measured
   */
  public TableCopier(
      PipelineConfig config,
      PgConnector connector,
      Destination destination,
      EngineMetrics metrics,
      StopSignal stop,
      Shutdown shutdown,
      Ticker ticker) {
    this.config = config;
    this.connector = connector;
    this.destination = destination;
    this.metrics = metrics;
    this.stop = stop;
    this.shutdown = shutdown;
    this.ticker = ticker;
  }

  /**
   * Copies a table.
   *
   * @param source what to read
   * @param snapshotId the exported snapshot
   * @param attemptId the copy attempt, as {@code dropTableForCopy} named it
   * @param progress told the rows of every answered batch (from the copy threads)
   * @return rows and batches copied, whether the copy stopped early
   * @throws EtlException when a copy connection or the destination fails, or a range ended early
   */
  public Result copy(
      Source source, String snapshotId, UUID attemptId, java.util.function.LongConsumer progress) {
    int connections =
        CopyPlanner.connections(
            source.physicalTables(),
            config.copyConnectionsPerTable(),
            config.copyMinBytesPerConnection());
    List<CopyPlanner.Partition> plan = CopyPlanner.plan(source.physicalTables(), connections);
    int workers = Math.min(connections, plan.size());
    CopyAttempt attempt = new CopyAttempt(source, snapshotId, attemptId, plan, workers, progress);
    String pipelineId = config.pipelineId();
    LOG.info(
        "pipeline {}: copying {} in {} ranges over {} connections (attempt {})",
        pipelineId,
        source.schema().name(),
        plan.size(),
        workers,
        attemptId);
    List<Thread> threads = new ArrayList<>();
    for (int w = 0; w < workers; w++) {
      int worker = w;
      Thread t =
          new Thread(
              () -> attempt.runWorker(worker),
              "pgetl-copy-" + pipelineId + "-" + source.schema().id() + "-" + w);
      t.setDaemon(true);
      threads.add(t);
      t.start();
    }
    for (Thread t : threads) {
      joinUninterruptibly(t);
    }
    return attempt.result();
  }

  /** The state one copy attempt's threads share. */
  private final class CopyAttempt {
    final Source source;
    final String snapshotId;
    final UUID id;
    final int partitions;
    final ConcurrentLinkedQueue<CopyPlanner.Partition> queue;
    final AtomicLong sequence = new AtomicLong();
    final AtomicLong rows = new AtomicLong();
    final AtomicLong answered = new AtomicLong();
    final AtomicInteger finishedPartitions = new AtomicInteger();
    final AtomicBoolean stopped = new AtomicBoolean();
    // the first failure of a thread, and an Error of any thread
    final AtomicReference<EtlException> failure = new AtomicReference<>();
    final AtomicReference<Error> error = new AtomicReference<>();
    final java.util.function.LongConsumer progress;
    // the copy's threads share batch.maxBytes: each holds one batch of decoded rows at a time
    final long maxBatchBytes;

    CopyAttempt(
        Source source,
        String snapshotId,
        UUID id,
        List<CopyPlanner.Partition> plan,
        int workers,
        java.util.function.LongConsumer progress) {
      this.progress = progress;
      this.maxBatchBytes = Math.max(1, config.batchMaxBytes() / Math.max(1, workers));
      this.source = source;
      this.snapshotId = snapshotId;
      this.id = id;
      this.partitions = plan.size();
      this.queue = new ConcurrentLinkedQueue<>(plan);
    }

    boolean shouldStop() {
      return stop.isRequested() || stopped.get() || failure.get() != null || error.get() != null;
    }

    void runWorker(int worker) {
      try {
        copyPartitions(worker);
      } catch (EtlException e) {
        failure.compareAndSet(null, e);
      } catch (RuntimeException e) {
        failure.compareAndSet(
            null,
            new EtlException(
                ErrorKind.WORKER_PANIC,
                "copy thread " + worker + " of " + source.schema().name() + " died",
                e.toString(),
                e));
      } catch (Error e) {
        Error first = error.compareAndExchange(null, e);
        if (first != null) {
          first.addSuppressed(e);
        }
        LOG.error(
            "pipeline {}: copy thread {} of {} died",
            config.pipelineId(),
            worker,
            source.schema().name(),
            e);
      }
    }

    @SuppressWarnings("try") // the StopSignal.Guard is held only for its close()
    private void copyPartitions(int worker) {
      ReplicatedTableSchema schema = source.schema();
      String what = "copy thread " + worker + " of " + schema.name();
      try (Connection c =
              connector.openSnapshotChild(
                  ApplicationNames.copy(config.pipelineId(), schema.id(), worker), snapshotId);
          StopSignal.Guard guard = stop.abortOnStop(c, what)) {
        CopyPlanner.Partition p;
        // the first batch of each connection is small: the destination starts sooner
        long firstBatch = Math.min(FIRST_BATCH_BYTES, maxBatchBytes);
        while (!shouldStop() && (p = queue.poll()) != null) {
          if (copyRange(c, p, firstBatch)) {
            finishedPartitions.incrementAndGet();
          }
          firstBatch = maxBatchBytes;
        }
        if (!shouldStop()) {
          c.commit();
        }
      } catch (SQLException e) {
        throw PgErrors.map(e, "copy of " + schema.name() + " failed");
      }
    }

    /** Copies one range; true when it was read to its end and every batch was answered. */
    private boolean copyRange(Connection c, CopyPlanner.Partition p, long firstBatchBytes)
        throws SQLException {
      return readBatches(
          c,
          copySql(source, p),
          source,
          firstBatchBytes,
          maxBatchBytes,
          config.batchMaxFill().toNanos(),
          ticker,
          () -> {},
          this::send);
    }

    /** Sends a batch and waits for its answer; false when the copy must stop. */
    private boolean send(List<TableRow> batch, long bytes, long wireBytes) {
      ReplicatedTableSchema schema = source.schema();
      TableCopyBatchId batchId = new TableCopyBatchId(id, sequence.getAndIncrement());
      String what = "copy batch " + batchId + " of " + schema.name();
      long started = ticker.nanoTime();
      AsyncResult result =
          DestinationCalls.invoke(
              destination,
              "writeTableRows",
              r -> destination.writeTableRows(schema, new TableCopyWrite.Batch(batchId, batch), r));
      Optional<Outcome> answer = DestinationCalls.await(result, stop, config.shutdownTimeout());
      metrics.batchLatency("copy", ticker.nanoTime() - started);
      if (answer.isEmpty()) {
        stop.noteIncomplete(what + " unanswered after " + config.shutdownTimeout());
        LOG.warn(
            "pipeline {}: {} stays unanswered after {}; the next attempt copies {} again",
            config.pipelineId(),
            what,
            config.shutdownTimeout(),
            schema.name());
        stopped.set(true);
        return false;
      }
      Outcome o = answer.get();
      if (o.kind() == Outcome.Kind.SHUTDOWN) {
        LOG.info("pipeline {}: destination abandoned {}; stopping", config.pipelineId(), what);
        shutdown.request();
        stopped.set(true);
        return false;
      }
      if (o.kind() == Outcome.Kind.FAILED) {
        throw o.error();
      }
      answered.incrementAndGet();
      rows.addAndGet(batch.size());
      progress.accept(batch.size());
      metrics.rowsCopied(schema.name(), batch.size(), bytes);
      return !stop.isRequested();
    }

    Result result() {
      Error e = error.get();
      if (e != null) {
        throw e;
      }
      boolean stoppedEarly = stopped.get() || stop.isRequested();
      EtlException f = failure.get();
      if (f != null && !stoppedEarly) {
        throw f;
      }
      if (!stoppedEarly && finishedPartitions.get() != partitions) {
        // cannot happen unless a thread ended without saying why: never count it as a copy
        throw new EtlException(
            ErrorKind.WORKER_PANIC,
            "copy of "
                + source.schema().name()
                + " ended with "
                + (partitions - finishedPartitions.get())
                + " of "
                + partitions
                + " ranges unfinished",
            "attempt " + id);
      }
      return new Result(rows.get(), answered.get(), stoppedEarly);
    }
  }

  static String copySql(Source source, CopyPlanner.Partition p) {
    int idx = source.physicalTables().indexOf(findSize(source, p));
    return copySql(source, source.physicalNames().get(idx), p.ctidPredicate());
  }

  /**
   * The binary COPY of a table's replicated columns from one physical table, of the rows a
   * predicate and the publication's row filter select.
   *
   * @param source the table
   * @param physical the physical table read (the table itself, or one of its partitions)
   * @param predicate an SQL condition, or an empty string for all rows
   * @return {@code COPY (SELECT ...) TO STDOUT (FORMAT binary)}
   */
  public static String copySql(Source source, TableName physical, String predicate) {
    return copySql(source, "ONLY " + physical.quoted(), predicate);
  }

  /**
   * The binary COPY of a table's replicated columns from a {@code FROM} item, of the rows a
   * predicate and the publication's row filter select.
   *
   * @param source the table
   * @param from what the {@code FROM} clause reads, such as {@link Source#wholeTable()}
   * @param predicate an SQL condition, or an empty string for all rows
   * @return {@code COPY (SELECT ...) TO STDOUT (FORMAT binary)}
   */
  public static String copySql(Source source, String from, String predicate) {
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
    sql.append(" FROM ").append(from);
    String filter = source.rowFilter();
    if (!predicate.isEmpty() || filter != null) {
      sql.append(" WHERE ");
      if (!predicate.isEmpty()) {
        sql.append(predicate);
      }
      if (filter != null) {
        sql.append(predicate.isEmpty() ? "" : " AND ").append('(').append(filter).append(')');
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

  /** Takes one batch of copied rows; false when the copy must stop. */
  @FunctionalInterface
  public interface BatchSink {
    /**
     * Takes a batch.
     *
     * @param rows the rows, never empty
     * @param bytes their estimated size in memory, which sizes batches
     * @param wireBytes their size as the COPY sent them, which progress reports
     * @return false when the copy must stop
     */
    boolean accept(List<TableRow> rows, long bytes, long wireBytes);
  }

  /**
   * Runs a binary COPY and hands its rows to {@code sink} in batches of at most {@code maxBytes}
   * (estimated by the codecs; the first one at most {@code firstBatchBytes}) or {@code
   * maxFillNanos} of filling, the last one after {@code afterRead} ran (the COPY is then read to
   * its end: a caller may end its transaction there).
   *
   * @param c the connection
   * @param sql the {@code COPY ... TO STDOUT (FORMAT binary)} statement
   * @param source the table, for its codecs and column names
   * @param firstBatchBytes the size of the first batch
   * @param maxBytes the size of a later batch
   * @param maxFillNanos the longest a batch fills
   * @param ticker where the fill time is read
   * @param afterRead runs once the COPY was read to its end, before the last batch is sent
   * @param sink takes each batch
   * @return true when the COPY was read to its end and every batch taken
   * @throws SQLException when the COPY fails
   */
  public static boolean readBatches(
      Connection c,
      String sql,
      Source source,
      long firstBatchBytes,
      long maxBytes,
      long maxFillNanos,
      Ticker ticker,
      SqlAction afterRead,
      BatchSink sink)
      throws SQLException {
    CopyBinaryParser parser = new CopyBinaryParser(source.codecs());
    List<String> names = new ArrayList<>();
    for (ColumnSchema col : source.schema().columns()) {
      names.add(col.name());
    }
    ColumnDecoder decoder = parser.decoder(names, source.schema().name().toString());
    CopyOut out = c.unwrap(PGConnection.class).getCopyAPI().copyOut(sql);
    List<TableRow> batch = new ArrayList<>();
    long batchBytes = 0;
    long batchWireBytes = 0;
    long limit = firstBatchBytes;
    long batchStarted = ticker.nanoTime();
    try {
      byte[] data;
      while ((data = out.readFromCopy()) != null) {
        // the row keeps the message: pgjdbc hands out a new array for each one
        TableRow row = parser.parseWire(data, decoder);
        if (row == null) {
          continue;
        }
        if (batch.isEmpty()) {
          batchStarted = ticker.nanoTime();
        }
        batch.add(row);
        batchBytes += row.sizeHintBytes();
        batchWireBytes += data.length;
        if (batchBytes >= limit || ticker.nanoTime() - batchStarted >= maxFillNanos) {
          if (!sink.accept(batch, batchBytes, batchWireBytes)) {
            return false;
          }
          batch = new ArrayList<>();
          batchBytes = 0;
          batchWireBytes = 0;
          limit = maxBytes;
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
    afterRead.run();
    return batch.isEmpty() || sink.accept(batch, batchBytes, batchWireBytes);
  }

  /** A step that may fail with an {@link SQLException}. */
  @FunctionalInterface
  public interface SqlAction {
    /**
     * Runs the step.
     *
     * @throws SQLException when it fails
     */
    void run() throws SQLException;
  }

  /**
   * Waits for a thread to end, whatever interrupts come meanwhile (the interrupt is kept).
   *
   * @param t the thread
   */
  public static void joinUninterruptibly(Thread t) {
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
