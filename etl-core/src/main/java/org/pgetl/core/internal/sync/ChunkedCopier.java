package org.pgetl.core.internal.sync;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicReference;
import org.jspecify.annotations.Nullable;
import org.pgetl.core.internal.chunk.ChunkKey;
import org.pgetl.core.internal.chunk.ChunkTracker;
import org.pgetl.core.internal.chunk.PgSnapshot;
import org.pgetl.core.internal.copy.TableCopier;
import org.pgetl.core.internal.engine.Backoff;
import org.pgetl.core.internal.engine.DestinationCalls;
import org.pgetl.core.internal.engine.EngineContext;
import org.pgetl.core.internal.engine.StopSignal;
import org.pgetl.core.internal.pg.ApplicationNames;
import org.pgetl.core.internal.pg.PgCatalog;
import org.pgetl.core.internal.pg.PgErrors;
import org.pgetl.core.internal.pg.SessionTimeouts;
import org.pgetl.destination.AsyncResult;
import org.pgetl.destination.AsyncResult.Outcome;
import org.pgetl.destination.TableCopyBatchId;
import org.pgetl.destination.TableCopyWrite;
import org.pgetl.destination.WriteDurability;
import org.pgetl.error.ErrorKind;
import org.pgetl.error.EtlException;
import org.pgetl.error.RetryDirective;
import org.pgetl.model.ColumnSchema;
import org.pgetl.model.ReplicatedTableSchema;
import org.pgetl.model.TableId;
import org.pgetl.model.TableName;
import org.pgetl.model.TableRow;
import org.pgetl.store.PipelineStore.ChunkKind;
import org.pgetl.store.PipelineStore.ChunkRecord;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Copies the chunks of a table copied in chunks that are not done, on up to {@code
 * copyConnectionsPerTable} connections, while the apply stream applies the table's changes (see
 * {@link ChunkTracker} for the protocol). Each read of a chunk: a {@code REPEATABLE READ}
 * transaction that locks the table against schema changes, takes its snapshot, registers the read,
 * writes the watermark, waits for the apply stream to meet it, then reads the chunk with {@code
 * COPY (SELECT ... WHERE key range) TO STDOUT (FORMAT binary)} and ends the transaction; its
 * batches are sent, ended by a {@code ChunkEnd} answered durable, and the chunk is stored as done.
 *
 * <p>A lost connection reads the chunk again on a new one, for as long as the outage lasts; any
 * other failure ends the copy with it (the chunks done stay done).
 */
final class ChunkedCopier {
  private static final Logger LOG = LoggerFactory.getLogger(ChunkedCopier.class);
  private static final Duration RUNNING_WAIT = Duration.ofMillis(100);

  /** Thrown when the table's columns changed under the copy: it starts over with a new attempt. */
  static final class SchemaChanged extends RuntimeException {
    private static final long serialVersionUID = 1L;

    SchemaChanged(String message) {
      super(message);
    }
  }

  /**
   * How the copy ended (what it copied is in the store's chunks).
   *
   * @param stopped true when it stopped early (a stop request, the destination's shutdown)
   */
  record Result(boolean stopped) {}

  private final EngineContext ctx;
  private final TableId table;
  private final TableCopier.Source source;
  private final ChunkKey key;
  private final UUID attempt;
  private final StopSignal stop;
  private final @Nullable List<String> publishedColumns;
  private final AtomicReference<RuntimeException> failure = new AtomicReference<>();
  private final AtomicReference<Error> error = new AtomicReference<>();
  private volatile boolean stopped;
  private final boolean flushArgument;
  private final @Nullable Connection[] flushConnections;
  // the transactions that held a write lock on the table when the copy began: they may have
  // committed before the apply stream took the table over, unseen by its checks
  private long[] startXip = new long[0];
  private long maxStartXip = -1;
  private volatile boolean startSeen;

  ChunkedCopier(
      EngineContext ctx,
      TableId table,
      TableCopier.Source source,
      ChunkKey key,
      UUID attempt,
      StopSignal stop,
      @Nullable List<String> publishedColumns,
      int serverMajor) {
    this.ctx = ctx;
    this.flushArgument = serverMajor >= 17;
    this.flushConnections = new Connection[Math.max(1, ctx.config.copyConnectionsPerTable())];
    this.table = table;
    this.source = source;
    this.key = key;
    this.attempt = attempt;
    this.stop = stop;
    this.publishedColumns = publishedColumns;
  }

  /**
   * Plans the chunks of a table: about {@code totalBytes / copyChunkBytes} ranges of its key, split
   * at quantiles of a sample of the key's values, the first and last open-ended.
   *
   * @param c a plain connection
   * @param wholeTable the table as a {@code FROM} clause reads all its rows ({@link
   *     TableCopier#wholeTable})
   * @param key its chunk key
   * @param totalBytes its size
   * @param estimatedRows its estimated rows
   * @param chunkBytes the chunk size
   * @param attempt the copy attempt
   * @return the chunks
   * @throws SQLException when the sample fails
   */
  static List<ChunkRecord> plan(
      Connection c,
      String wholeTable,
      ChunkKey key,
      long totalBytes,
      long estimatedRows,
      long chunkBytes,
      UUID attempt)
      throws SQLException {
    long wanted = Math.max(1, Math.min(1L << 20, (totalBytes + chunkBytes - 1) / chunkBytes));
    List<Object> splits = new ArrayList<>();
    if (wanted > 1) {
      // about 100 sampled keys per chunk, at least 10,000; TABLESAMPLE SYSTEM reads whole pages
      double sample = Math.max(10_000, 100 * wanted);
      double percent = estimatedRows <= 0 ? 100 : Math.min(100, 100 * sample / estimatedRows);
      Double[] fractions = new Double[(int) wanted - 1];
      for (int i = 1; i < wanted; i++) {
        fractions[i - 1] = (double) i / wanted;
      }
      String col = TableName.quoteIdentifier(key.name());
      String sql =
          "SELECT percentile_disc(?::float8[]) WITHIN GROUP (ORDER BY "
              + col
              + ")::text[] FROM "
              + wholeTable
              + (percent < 100 ? " TABLESAMPLE SYSTEM (" + percent + ")" : "")
              + " WHERE "
              + col
              + " IS NOT NULL";
      try (PreparedStatement ps = c.prepareStatement(sql)) {
        ps.setArray(1, c.createArrayOf("float8", fractions));
        try (ResultSet rs = ps.executeQuery()) {
          if (rs.next() && rs.getArray(1) != null) {
            for (Object v : (Object[]) rs.getArray(1).getArray()) {
              if (v != null) {
                Object k = key.parse(v.toString());
                if (splits.isEmpty() || key.order().compare(splits.get(splits.size() - 1), k) < 0) {
                  splits.add(k);
                }
              }
            }
          }
        }
      }
    }
    List<ChunkRecord> chunks = new ArrayList<>();
    Object from = null;
    for (Object s : splits) {
      chunks.add(
          ChunkRecord.planned(
              attempt, chunks.size(), ChunkKind.RANGE, bound(key, from), bound(key, s)));
      from = s;
    }
    chunks.add(
        ChunkRecord.planned(attempt, chunks.size(), ChunkKind.RANGE, bound(key, from), null));
    return chunks;
  }

  private static @Nullable List<String> bound(ChunkKey key, @Nullable Object v) {
    return v == null ? null : List.of(key.format(v));
  }

  /**
   * Copies every chunk not done.
   *
   * @return what it copied
   */
  Result run() {
    String pipelineId = ctx.config.pipelineId();
    int[] progress = ctx.chunks.progress(table);
    int pending = progress == null ? 0 : progress[1] - progress[0];
    int workers = Math.max(1, Math.min(ctx.config.copyConnectionsPerTable(), pending));
    startXip = writersNow();
    maxStartXip = startXip.length == 0 ? -1 : startXip[startXip.length - 1];
    startSeen = startXip.length == 0;
    LOG.info(
        "pipeline {}: copying {} in chunks: {} of {} chunks to copy over {} connections (attempt"
            + " {})",
        pipelineId,
        source.schema().name(),
        pending,
        progress == null ? 0 : progress[1],
        workers,
        attempt);
    List<Thread> threads = new ArrayList<>();
    for (int w = 0; w < workers; w++) {
      int worker = w;
      Thread t =
          new Thread(
              () -> runWorker(worker),
              "pgetl-chunk-" + pipelineId + "-" + table.oid() + "-" + worker);
      t.setDaemon(true);
      threads.add(t);
      t.start();
    }
    for (Thread t : threads) {
      TableCopier.joinUninterruptibly(t);
    }
    for (Connection f : flushConnections) {
      if (f != null) {
        try {
          f.close();
        } catch (SQLException ignored) {
          // closing only
        }
      }
    }
    Error e = error.get();
    if (e != null) {
      throw e;
    }
    boolean early = stopped || stop.isRequested();
    RuntimeException f = failure.get();
    if (f != null && !early) {
      throw f;
    }
    return new Result(early);
  }

  private int lastLoggedTenth = -1;

  /** Logs the progress at each tenth of the chunks. */
  private synchronized void logProgress(int done, int total) {
    int tenth = total == 0 ? 10 : done * 10 / total;
    if (tenth == lastLoggedTenth) {
      return;
    }
    lastLoggedTenth = tenth;
    org.pgetl.PipelineStatus.ChunkProgress p = ctx.board.chunkProgress(table);
    if (p == null) {
      return;
    }
    LOG.info(
        "pipeline {}: {}: {} of {} chunks copied ({} rows, {} MiB, {} MiB/s{})",
        ctx.config.pipelineId(),
        source.schema().name(),
        p.chunksDone(),
        p.chunks(),
        p.rowsCopied(),
        p.bytesCopied() / (1024 * 1024),
        String.format(java.util.Locale.ROOT, "%.1f", p.bytesPerSecond() / (1024 * 1024)),
        p.eta() == null ? "" : ", about " + p.eta().toSeconds() + " s left");
  }

  /**
   * The transactions that hold a lock on the table that writes take, now (after the table was
   * handed to the apply stream): one of them may have committed before that, with its commit not
   * visible yet (a synchronous standby's wait), so the apply stream passed it unrecorded. A read
   * must see each of them. Transactions that never wrote the table cannot matter, and a transaction
   * that commits later is recorded by the stream.
   */
  private long[] writersNow() {
    String sql =
        "SELECT DISTINCT x.transactionid::text::bigint FROM pg_locks r"
            + " JOIN pg_locks x ON x.pid = r.pid AND x.locktype = 'transactionid'"
            + " AND x.mode = 'ExclusiveLock' AND x.granted"
            + " WHERE r.locktype = 'relation' AND r.database = (SELECT oid FROM pg_database"
            + " WHERE datname = current_database()) AND r.relation = ?::oid AND r.granted"
            + " AND r.mode IN ('RowExclusiveLock', 'ShareRowExclusiveLock', 'ExclusiveLock',"
            + " 'AccessExclusiveLock')";
    List<Long> out = new ArrayList<>();
    try (Connection c =
            ctx.connector.openPlain(ApplicationNames.tableSync(ctx.config.pipelineId(), table));
        PreparedStatement ps = c.prepareStatement(sql);
        Statement st = c.createStatement()) {
      PgSnapshot now;
      try (ResultSet rs = st.executeQuery("SELECT pg_current_snapshot()::text")) {
        rs.next();
        now = PgSnapshot.parse(rs.getString(1));
      }
      ps.setLong(1, table.oid());
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          // pg_locks names 32-bit ids; snapshots list them with their epoch
          out.add(now.widen(rs.getLong(1)));
        }
      }
    } catch (SQLException e) {
      throw PgErrors.map(e, "could not read the transactions writing " + source.schema().name());
    }
    return out.stream().mapToLong(Long::longValue).sorted().toArray();
  }

  /**
   * Waits, before the first read of a worker, until a snapshot sees every transaction that held a
   * write lock on the table when the copy began; false when the copy must stop.
   */
  private boolean awaitStartWriters(Connection c) throws SQLException, InterruptedException {
    long since = System.nanoTime();
    long nextLog = since + 10_000_000_000L;
    while (!startSeen && !shouldStop()) {
      PgSnapshot now;
      try (Statement st = c.createStatement();
          ResultSet rs = st.executeQuery("SELECT pg_current_snapshot()::text")) {
        rs.next();
        now = PgSnapshot.parse(rs.getString(1));
      } finally {
        c.rollback();
      }
      if (now.xmin() > maxStartXip) {
        startSeen = true; // every later snapshot sees them too
        return true;
      }
      if (!now.anyRunning(startXip)) {
        return true;
      }
      if (System.nanoTime() > nextLog) {
        nextLog += 30_000_000_000L;
        LOG.info(
            "pipeline {}: the chunked copy of {} waits for transactions that were writing it when"
                + " it began to end, for {} s (running: {})",
            ctx.config.pipelineId(),
            source.schema().name(),
            (System.nanoTime() - since) / 1_000_000_000L,
            now);
      }
      Thread.sleep(RUNNING_WAIT.toMillis());
    }
    return !shouldStop();
  }

  private boolean shouldStop() {
    return stopped || stop.isRequested() || failure.get() != null || error.get() != null;
  }

  private void runWorker(int worker) {
    try {
      copyChunks(worker);
    } catch (RuntimeException e) {
      failure.compareAndSet(null, e);
    } catch (Error e) {
      Error first = error.compareAndExchange(null, e);
      if (first != null) {
        first.addSuppressed(e);
      }
      LOG.error(
          "pipeline {}: chunk thread {} of {} died",
          ctx.config.pipelineId(),
          worker,
          source.schema().name(),
          e);
    }
  }

  @SuppressWarnings("try") // the StopSignal.Guard is held only for its close()
  private void copyChunks(int worker) {
    int outages = 0;
    while (!shouldStop()) {
      try (Connection c =
              ctx.connector.openPlain(
                  ApplicationNames.copy(ctx.config.pipelineId(), table, worker),
                  SessionTimeouts.NONE);
          StopSignal.Guard guard =
              stop.abortOnStop(c, "chunk copy " + worker + " of " + source.schema().name())) {
        c.setAutoCommit(false);
        c.setTransactionIsolation(Connection.TRANSACTION_REPEATABLE_READ);
        while (!shouldStop()) {
          ChunkTracker.Chunk chunk = ctx.chunks.take(table);
          if (chunk == null) {
            if (ctx.chunks.allDone(table) || !ctx.chunks.isActive(table)) {
              return;
            }
            ctx.chunks.awaitWork(table, this::shouldStop);
            continue;
          }
          try {
            copyChunk(c, chunk, worker);
            outages = 0;
          } finally {
            ctx.chunks.release(chunk);
          }
        }
        return;
      } catch (SQLException e) {
        EtlException mapped = PgErrors.map(e, "chunk copy of " + source.schema().name());
        outages = waitAfterOutage(mapped, outages);
      } catch (EtlException e) {
        outages = waitAfterOutage(e, outages);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        stopped = true;
        return;
      }
    }
  }

  /**
   * Waits before the chunk is read again after a lost connection (for as long as the outage lasts)
   * or a failure the destination says a retry cures (a deadlock between its writes of the table's
   * rows and changes, at most {@code retry.maxAttempts} times in a row); rethrows anything else.
   */
  private int waitAfterOutage(EtlException e, int outages) {
    boolean retryable =
        Backoff.isOutage(e.kind())
            || (e.kind().group() == ErrorKind.Group.DESTINATION
                && e.kind().directive() == RetryDirective.TIMED
                && outages < ctx.config.retryMaxAttempts());
    if (shouldStop() || !retryable) {
      throw e;
    }
    Duration d = Backoff.delay(ctx.config, outages);
    LOG.warn(
        "pipeline {}: chunk copy of {} failed ({}); the chunk is read again in {}",
        ctx.config.pipelineId(),
        source.schema().name(),
        e.getMessage(),
        d);
    try {
      Thread.sleep(d.toMillis());
    } catch (InterruptedException ie) {
      Thread.currentThread().interrupt();
      stopped = true;
    }
    return outages + 1;
  }

  private void copyChunk(Connection c, ChunkTracker.Chunk chunk, int worker)
      throws SQLException, InterruptedException {
    ChunkRecord record = chunk.record();
    while (!shouldStop()) {
      if (!awaitStartWriters(c)) {
        return;
      }
      try (Statement st = c.createStatement()) {
        // the lock first (it takes no snapshot): every ALTER TABLE either committed before this
        // read's snapshot or waits for its transaction
        // (a partitioned table with its partitions)
        st.execute("LOCK TABLE " + source.wholeTable() + " IN ACCESS SHARE MODE");
      }
      int read = ctx.store.startChunkRead(table, attempt, record.index());
      ChunkTracker.Read r = ctx.chunks.register(table, chunk);
      boolean done = false;
      try {
        // the snapshot and the watermark in one statement: the fewer commits between them, the
        // fewer reads the apply stream's check sends back
        PgSnapshot snapshot;
        try (PreparedStatement ps =
            c.prepareStatement(
                "SELECT pg_current_snapshot()::text, pg_logical_emit_message(false, ?, ?"
                    + (flushArgument ? ", true" : "")
                    + ")::text")) {
          ps.setString(1, ChunkTracker.WATERMARK_PREFIX);
          ps.setString(2, r.id());
          try (ResultSet rs = ps.executeQuery()) {
            rs.next();
            snapshot = PgSnapshot.parse(rs.getString(1));
          }
        }
        if (!flushArgument) {
          flush(worker);
        }
        ctx.chunks.snapshot(r, snapshot);
        if (!startSeen && snapshot.anyRunning(startXip)) {
          continue; // cannot happen once the check above passed; read again to be sure
        }
        checkColumns(c);
        ChunkTracker.ReadOutcome outcome = ctx.chunks.await(r, this::shouldStop);
        if (outcome == ChunkTracker.ReadOutcome.STOP) {
          c.rollback();
          return;
        }
        if (outcome == ChunkTracker.ReadOutcome.RETRY) {
          c.rollback();
          if (!ctx.chunks.isActive(table)) {
            return;
          }
          continue;
        }
        long firstBatch = sequenceBase(record.index(), read);
        long[] sent = copy(c, chunk, firstBatch);
        if (sent == null) {
          return;
        }
        TableCopyWrite.ChunkEnd end =
            new TableCopyWrite.ChunkEnd(attempt, record.index(), firstBatch, sent[0], sent[1]);
        String what = "end of chunk " + record.index() + " of " + source.schema().name();
        if (!await(what, end, WriteDurability.REQUIRE_DURABLE)) {
          return;
        }
        ctx.store.completeChunk(table, attempt, record.index(), r.watermark(), sent[1], sent[2]);
        int[] p = ctx.chunks.done(r);
        done = true;
        ctx.board.chunkDone(table, p[0], p[1], sent[1], sent[2]);
        logProgress(p[0], p[1]);
        return;
      } finally {
        if (!done) {
          ctx.chunks.failed(r);
          try {
            c.rollback();
          } catch (SQLException ignored) {
            // the connection is closed with the failure
          }
        }
      }
    }
  }

  /**
   * Makes the server flush its WAL (and the watermark in it) with an empty transactional message
   * committed on a connection of its own: before PostgreSQL 17 a non-transactional message is not
   * flushed by itself, and the apply stream only receives flushed WAL.
   */
  private void flush(int worker) throws SQLException {
    Connection f = flushConnections[worker];
    if (f == null || f.isClosed()) {
      f = ctx.connector.openPlain(ApplicationNames.copy(ctx.config.pipelineId(), table, worker));
      flushConnections[worker] = f;
    }
    try (PreparedStatement ps =
        f.prepareStatement("SELECT pg_logical_emit_message(true, ?, '')::text")) {
      ps.setString(1, ChunkTracker.FLUSH_PREFIX);
      ps.executeQuery().close();
    }
  }

  /** Fails the copy when the table's columns under the chunk's snapshot are not the copy's. */
  private void checkColumns(Connection c) {
    ReplicatedTableSchema now = new PgCatalog(c).replicatedTableSchema(table, publishedColumns);
    List<ColumnSchema> a = now.columns();
    List<ColumnSchema> b = source.schema().columns();
    boolean same =
        a.size() == b.size()
            && now.identity() == source.schema().identity()
            && java.util.Arrays.equals(
                now.identityColumnIndexes(), source.schema().identityColumnIndexes());
    for (int i = 0; same && i < a.size(); i++) {
      same = a.get(i).name().equals(b.get(i).name()) && a.get(i).typeOid() == b.get(i).typeOid();
    }
    if (!same) {
      throw new SchemaChanged(
          "the columns or the key of "
              + source.schema().name()
              + " changed while it was copied in chunks");
    }
  }

  /** Batch numbers of a chunk's read: apart from every other chunk's and every other read's. */
  static long sequenceBase(int chunk, int read) {
    if (chunk >= (1 << 23) || read >= (1 << 16)) {
      throw new EtlException(
          ErrorKind.WORKER_PANIC,
          "chunk " + chunk + " was read " + read + " times: no batch numbers are left for it",
          "copy the table again (pgetl tables resync)");
    }
    // 23 bits of chunk, 16 of read, 24 of batch: a read's batches never reuse another read's
    return TableCopyBatchId.firstOfChunkRead(chunk, read);
  }

  /** Reads the chunk and sends it; {batches, rows, bytes}, or null when the copy must stop. */
  private long @Nullable [] copy(Connection c, ChunkTracker.Chunk chunk, long firstBatch)
      throws SQLException {
    long maxBytes =
        Math.max(1, ctx.config.batchMaxBytes() / Math.max(1, ctx.config.copyConnectionsPerTable()));
    long[] sent = {0, 0, 0}; // batches, rows, bytes as the COPY sent them
    boolean complete =
        TableCopier.readBatches(
            c,
            copySql(chunk),
            source,
            maxBytes,
            maxBytes,
            Long.MAX_VALUE, // a chunk's batches are cut by size only
            ctx.ticker,
            c::commit, // the rows are read: the snapshot is no longer needed
            (rows, bytes, wireBytes) -> {
              if (!send(firstBatch + sent[0], rows, bytes)) {
                return false;
              }
              sent[0]++;
              sent[1] += rows.size();
              sent[2] += wireBytes;
              return true;
            });
    return complete ? sent : null;
  }

  String copySql(ChunkTracker.Chunk chunk) {
    boolean keyChunk = chunk.record().kind() == ChunkKind.KEY;
    return TableCopier.copySql(
        source, source.wholeTable(), key.predicate(chunk.from(), chunk.to(), keyChunk));
  }

  private boolean send(long sequence, List<TableRow> batch, long bytes) {
    TableCopyBatchId id = new TableCopyBatchId(attempt, sequence);
    boolean ok =
        await(
            "copy batch " + id + " of " + source.schema().name(),
            new TableCopyWrite.Batch(id, batch),
            null);
    if (ok) {
      ctx.board.addRowsCopied(table, batch.size());
      ctx.metrics.rowsCopied(source.schema().name(), batch.size(), bytes);
    }
    return ok;
  }

  /** Sends a write and waits for its answer; false when the copy must stop. */
  private boolean await(String what, TableCopyWrite write, @Nullable WriteDurability required) {
    ReplicatedTableSchema schema = source.schema();
    AsyncResult result =
        DestinationCalls.invoke(
            ctx.destination,
            "writeTableRows",
            r -> ctx.destination.writeTableRows(schema, write, r));
    Optional<Outcome> answer = DestinationCalls.await(result, stop, ctx.config.shutdownTimeout());
    if (answer.isEmpty()) {
      stop.noteIncomplete(what + " unanswered after " + ctx.config.shutdownTimeout());
      stopped = true;
      return false;
    }
    Outcome o = answer.get();
    switch (o.kind()) {
      case SHUTDOWN -> {
        LOG.info("pipeline {}: destination abandoned {}; stopping", ctx.config.pipelineId(), what);
        ctx.shutdown.request();
        stopped = true;
        return false;
      }
      case FAILED -> throw o.error();
      default -> {
        if (required != null) {
          DestinationCalls.requireDurable(o, required, what);
        }
        return !stop.isRequested();
      }
    }
  }

  @Override
  public String toString() {
    return "chunked copy of " + source.schema().name() + " " + Arrays.toString(startXip);
  }
}
