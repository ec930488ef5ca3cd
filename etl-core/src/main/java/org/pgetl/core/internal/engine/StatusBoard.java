package org.pgetl.core.internal.engine;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.jspecify.annotations.Nullable;
import org.pgetl.core.internal.time.Ticker;
import org.pgetl.model.Lsn;
import org.pgetl.model.TableId;
import org.pgetl.model.TableName;

/**
 * What {@code Pipeline.status()} reports, kept up to date by the workers as they learn it, so that
 * reading the status never does I/O and never fails: the tables' names, the stored apply progress,
 * the last lag sample and when it was taken. Thread-safe; written by any worker.
 */
public final class StatusBoard {
  private final Map<TableId, TableName> names = new ConcurrentHashMap<>();
  private final Map<TableId, java.util.concurrent.atomic.AtomicLong> rowsCopied =
      new ConcurrentHashMap<>();
  // commit times of received transactions not yet durable, oldest first (apply stream only)
  private final java.util.ArrayDeque<long[]> pending = new java.util.ArrayDeque<>();
  private static final int MAX_PENDING = 4096;
  private volatile Lsn applyLsn = Lsn.ZERO;
  private volatile long lagBytes = -1;
  private volatile long lagSampledAtMillis;
  private final Ticker ticker;

  /**
   * Creates an empty board.
   *
   * @param ticker where the time of a lag sample is read
   */
  public StatusBoard(Ticker ticker) {
    this.ticker = ticker;
  }

  /**
   * Records a table's name.
   *
   * @param table the table
   * @param name its name
   */
  public void name(TableId table, TableName name) {
    names.put(table, name);
  }

  /**
   * Returns a table's last known name.
   *
   * @param table the table
   * @return the name, or null when not known yet
   */
  public @Nullable TableName name(TableId table) {
    return names.get(table);
  }

  /**
   * Records the apply stream's stored durable progress (monotonic).
   *
   * @param lsn the progress
   */
  public void applyLsn(Lsn lsn) {
    synchronized (this) {
      if (lsn.isAfter(applyLsn)) {
        applyLsn = lsn;
      }
    }
  }

  /**
   * Returns the apply stream's stored durable progress.
   *
   * @return the progress
   */
  public Lsn applyLsn() {
    return applyLsn;
  }

  /**
   * Sets the rows copied of a table's current (or last) copy attempt.
   *
   * @param table the table
   * @param rows the count
   */
  public void rowsCopied(TableId table, long rows) {
    rowsCopied.computeIfAbsent(table, t -> new java.util.concurrent.atomic.AtomicLong()).set(rows);
  }

  /**
   * Adds to the rows copied of a table's current copy attempt.
   *
   * @param table the table
   * @param rows the rows just answered
   */
  public void addRowsCopied(TableId table, long rows) {
    rowsCopied
        .computeIfAbsent(table, t -> new java.util.concurrent.atomic.AtomicLong())
        .addAndGet(rows);
  }

  /** The progress of a table copied in chunks, in this run of its copy. */
  private static final class Chunked {
    final long startNanos;
    final int kept;
    final long keptBytes;
    volatile int done;
    volatile int total;
    volatile long rows;
    volatile long bytes;

    Chunked(long startNanos, int kept, long keptBytes) {
      this.startNanos = startNanos;
      this.kept = kept;
      this.keptBytes = keptBytes;
    }
  }

  private final Map<TableId, Chunked> chunked = new ConcurrentHashMap<>();

  /**
   * A run of a table's chunked copy begins.
   *
   * @param table the table
   * @param done the chunks done already (kept)
   * @param total the chunks in all
   * @param rows the rows of the chunks done
   * @param bytes the bytes of the chunks done
   */
  public void chunkedCopyStarted(TableId table, int done, int total, long rows, long bytes) {
    Chunked c = new Chunked(ticker.nanoTime(), done, bytes);
    c.done = done;
    c.total = total;
    c.rows = rows;
    c.bytes = bytes;
    chunked.put(table, c);
  }

  /**
   * A chunk of a table copied in chunks is done.
   *
   * @param table the table
   * @param done the chunks done now
   * @param total the chunks in all now
   * @param rows the chunk's rows
   * @param bytes the chunk's bytes
   */
  public void chunkDone(TableId table, int done, int total, long rows, long bytes) {
    Chunked c = chunked.get(table);
    if (c != null) {
      synchronized (c) {
        // copy threads report in any order: the counts only grow
        c.done = Math.max(c.done, done);
        c.total = Math.max(c.total, total);
        c.rows += rows;
        c.bytes += bytes;
      }
    }
  }

  /**
   * A table's chunked copy ended (finished, stopped or replaced).
   *
   * @param table the table
   */
  public void chunkedCopyEnded(TableId table) {
    chunked.remove(table);
  }

  /**
   * Returns the progress of a table copied in chunks, or null.
   *
   * @param table the table
   * @return the progress
   */
  public org.pgetl.PipelineStatus.@Nullable ChunkProgress chunkProgress(TableId table) {
    Chunked c = chunked.get(table);
    if (c == null) {
      return null;
    }
    synchronized (c) {
      double seconds = (ticker.nanoTime() - c.startNanos) / 1e9;
      long bytesThisRun = c.bytes - c.keptBytes;
      int doneThisRun = c.done - c.kept;
      double rate = seconds > 0 && bytesThisRun > 0 ? bytesThisRun / seconds : 0;
      java.time.Duration eta =
          doneThisRun > 0
              ? java.time.Duration.ofMillis(
                  (long) (seconds * 1000 * (c.total - c.done) / doneThisRun))
              : null;
      return new org.pgetl.PipelineStatus.ChunkProgress(
          c.done, c.total, c.kept, c.rows, c.bytes, rate, eta);
    }
  }

  /**
   * Returns the rows copied of a table's current (or last) copy attempt.
   *
   * @param table the table
   * @return the count, 0 when none
   */
  public long rowsCopied(TableId table) {
    java.util.concurrent.atomic.AtomicLong n = rowsCopied.get(table);
    return n == null ? 0 : n.get();
  }

  /**
   * Records a transaction the apply stream received (its commit end LSN and commit time).
   *
   * @param commitEnd the commit's end LSN
   * @param commitTimeMillis the commit time, epoch milliseconds
   */
  public void received(Lsn commitEnd, long commitTimeMillis) {
    synchronized (pending) {
      if (pending.size() < MAX_PENDING) {
        pending.addLast(new long[] {commitEnd.value(), commitTimeMillis});
      }
    }
  }

  /**
   * Records that the apply stream's durable point reached {@code durable}: the transactions up to
   * it are no longer behind.
   *
   * @param durable the durable point
   */
  public void caughtUpTo(Lsn durable) {
    synchronized (pending) {
      while (!pending.isEmpty()
          && Long.compareUnsigned(pending.peekFirst()[0], durable.value()) <= 0) {
        pending.removeFirst();
      }
    }
  }

  /** Forgets the transactions received on a stream that ended (they are read again). */
  public void clearReceived() {
    synchronized (pending) {
      pending.clear();
    }
  }

  /**
   * Returns how far behind the destination is in time: from the commit of the oldest transaction
   * received but not yet durable until now; zero when nothing received waits.
   *
   * @param nowMillis the current time, epoch milliseconds
   * @return the lag
   */
  public java.time.Duration lagTime(long nowMillis) {
    synchronized (pending) {
      if (pending.isEmpty()) {
        return java.time.Duration.ZERO;
      }
      return java.time.Duration.ofMillis(Math.max(0, nowMillis - pending.peekFirst()[1]));
    }
  }

  private volatile org.pgetl.store.PipelineStore.@Nullable LeaseHolder leaseHolder;

  /**
   * Records who holds the lease, as a standby last saw it.
   *
   * @param holder the holder, or null (none, or this instance)
   */
  public void leaseHolder(org.pgetl.store.PipelineStore.@Nullable LeaseHolder holder) {
    leaseHolder = holder;
  }

  /**
   * Returns who holds the lease, as a standby last saw it.
   *
   * @return the holder, or null
   */
  public org.pgetl.store.PipelineStore.@Nullable LeaseHolder leaseHolder() {
    return leaseHolder;
  }

  /**
   * Records a lag sample.
   *
   * @param bytes the lag, -1 when unknown
   */
  public void lag(long bytes) {
    lagBytes = bytes;
    lagSampledAtMillis = ticker.now().toEpochMilli();
  }

  /**
   * Returns the last lag sample.
   *
   * @return the lag in bytes, -1 when unknown
   */
  public long lagBytes() {
    return lagBytes;
  }

  /**
   * Returns when the last lag sample was taken.
   *
   * @return epoch milliseconds, 0 when never
   */
  public long lagSampledAtMillis() {
    return lagSampledAtMillis;
  }

  private volatile long progressedAtMillis;
  private volatile @Nullable String heldBy;

  /**
   * Records that the apply stream works: it streams again after a (re)connection, stored its
   * progress, or read everything the server had. An error recorded before this is recovered.
   */
  public void progressed() {
    progressedAtMillis = ticker.now().toEpochMilli();
  }

  /**
   * Returns when the apply stream last worked ({@link #progressed()}).
   *
   * @return epoch milliseconds, 0 when never
   */
  public long progressedAtMillis() {
    return progressedAtMillis;
  }

  /**
   * Records what holds the apply stream back, as the server says it (a standby of {@code
   * synchronized_standby_slots} that has not confirmed the WAL), from the last sample.
   *
   * @param what the description, or null when nothing does
   */
  public void heldBy(@Nullable String what) {
    heldBy = what;
  }

  /**
   * Returns what holds the apply stream back, from the last sample.
   *
   * @return the description, or null
   */
  public @Nullable String heldBy() {
    return heldBy;
  }
}
