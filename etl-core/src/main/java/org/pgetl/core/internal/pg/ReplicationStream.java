package org.pgetl.core.internal.pg;

import java.nio.ByteBuffer;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.Objects;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.LockSupport;
import java.util.function.LongConsumer;
import org.jspecify.annotations.Nullable;
import org.pgetl.core.internal.time.Ticker;
import org.pgetl.error.ErrorKind;
import org.pgetl.error.EtlException;
import org.pgetl.model.Lsn;
import org.postgresql.replication.LogSequenceNumber;
import org.postgresql.replication.PGReplicationStream;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One logical replication stream, owned by one thread: it reads the next {@code XLogData} payload,
 * tracks the last received LSN, and sends standby status updates with the flush LSN the caller
 * reports. It is the server's {@link MessageSource}; it reads time from the {@link Ticker} of its
 * {@link StreamOptions} (status intervals, feedback delay, read bounds) and waits by parking.
 *
 * <h2>Threads</h2>
 *
 * The first thread that reads becomes the owner; every other call except {@link
 * #advanceFlushed(Lsn)}, {@link #flushedLsn()} and {@link #lastReceivedLsn()} must come from it
 * (others fail with {@link ErrorKind#INVALID_STATE}). {@code advanceFlushed} may be called from any
 * thread (a destination's acknowledgement): it only records the LSN, and the owner passes it to the
 * server at its next status update.
 *
 * <h2>How it waits</h2>
 *
 * pgjdbc offers no readiness notification: {@link PGReplicationStream#read()} blocks until a
 * message arrives with no bound (so the owner could not send status updates, watch for shutdown or
 * pause while waiting), and {@link PGReplicationStream#readPending()} returns null when nothing is
 * pending, after asking the socket with a 1 ms timeout. So {@link #readNext(long)} waits for the
 * server's next bytes itself, through a {@link DataWait}: a socket read with a timeout that peeks
 * one byte and consumes nothing ({@link SocketDataWait}), bounded by the caller's bound and by the
 * next status update that falls due, then reads the message with {@code readPending()}, which finds
 * its bytes buffered. The owner sleeps in the kernel and wakes as the bytes arrive; an idle owner
 * wakes once per bound (20 ms in the apply loop). Measured on a 2-vCPU machine with PostgreSQL 17:
 * an idle owner costs about 0.2% of one core (4.4% polling {@code readPending()} back to back, 2 to
 * 3% with the earlier back-off), and a single-row insert arrives as soon as a raw reader blocked in
 * {@code read()} sees it, also after an idle gap. Without a socket wait (a pgjdbc whose internals
 * differ, or a test's stand-in) it polls {@code readPending()} and parks with an {@link
 * IdleBackoff} (three free rounds, then 20 µs doubling up to 1 ms, reset by any message), never
 * past the caller's bound; a message that arrives during a park then waits for its end.
 *
 * <h2>Status updates</h2>
 *
 * The write position pgjdbc reports is its last received LSN; flush and apply are both the LSN
 * given to {@link #advanceFlushed(Lsn)}, which never moves back. pgjdbc's automatic flush is off:
 * only the caller decides what is confirmed, so work it dropped is never confirmed behind its back.
 * Updates go out when the server asks for one (inside {@code readPending}), every status interval
 * (also while the owner is not reading, if it calls {@link #sendStatusIfDue()}), soon after the
 * flush LSN advances (rate-limited by the feedback delay), on {@link #forceStatusUpdate()}, and at
 * {@link #close()}.
 */
public final class ReplicationStream implements MessageSource {
  private static final Logger LOG = LoggerFactory.getLogger(ReplicationStream.class);

  /** A read that took this long waited for its bytes: a buffered message takes microseconds. */
  private static final long WAITED_NANOS = 100_000L;

  private final PGReplicationStream stream;
  private final Connection connection;
  private final String slotName;
  private final long statusIntervalNanos;
  private final long feedbackDelayNanos;
  private final int closeTimeoutMillis;
  private final IdleBackoff backoff;
  private final @Nullable DataWait dataWait;
  private final Ticker ticker;
  private final LongConsumer parker;

  private final AtomicReference<Thread> owner = new AtomicReference<>();
  private final AtomicLong flushRequested;
  private volatile long lastReceived;

  // Owner-only state.
  private long lastMessageLsn;
  private boolean lastReadWaited;
  private long flushGivenToDriver;
  private boolean feedbackPending;
  private long lastStatusSentNanos;
  private int idleRounds;
  private long statusUpdatesSent;
  private boolean closed;

  ReplicationStream(
      PGReplicationStream stream,
      Connection connection,
      String slotName,
      Lsn startLsn,
      long statusIntervalNanos,
      long feedbackDelayNanos,
      int closeTimeoutMillis,
      IdleBackoff backoff,
      @Nullable DataWait dataWait,
      Ticker ticker,
      LongConsumer parker) {
    this.stream = Objects.requireNonNull(stream, "stream");
    this.connection = connection;
    this.slotName = slotName;
    this.statusIntervalNanos = statusIntervalNanos;
    this.feedbackDelayNanos = feedbackDelayNanos;
    this.closeTimeoutMillis = closeTimeoutMillis;
    this.backoff = Objects.requireNonNull(backoff, "backoff");
    this.dataWait = dataWait;
    this.ticker = Objects.requireNonNull(ticker, "ticker");
    this.parker = parker;
    this.lastReceived = startLsn.value();
    // Nothing before the start LSN is ours to hold back, but nothing is confirmed by us yet
    // either: report 0/0 until the caller advances, which the server ignores (it never moves a
    // slot's confirmed_flush_lsn backwards).
    this.flushRequested = new AtomicLong(0);
    this.flushGivenToDriver = 0;
    this.lastStatusSentNanos = ticker.nanoTime();
  }

  static ReplicationStream create(
      PGReplicationStream stream,
      Connection connection,
      String slotName,
      Lsn startLsn,
      long statusIntervalNanos,
      long feedbackDelayNanos,
      int closeTimeoutMillis,
      IdleBackoff backoff,
      @Nullable DataWait dataWait,
      Ticker ticker) {
    return new ReplicationStream(
        stream,
        connection,
        slotName,
        startLsn,
        statusIntervalNanos,
        feedbackDelayNanos,
        closeTimeoutMillis,
        backoff,
        dataWait,
        ticker,
        LockSupport::parkNanos);
  }

  /**
   * Returns the next {@code XLogData} payload (a {@code pgoutput} message), or null when none
   * arrived within {@code maxWaitNanos}. Also processes keepalives and sends status updates that
   * are due. Never blocks much longer than the bound: at most about 1 ms past it (the socket
   * timeout's resolution, or one pgjdbc poll).
   *
   * @param maxWaitNanos the longest to wait, in nanoseconds; 0 checks once
   * @return the payload, positioned at the message's first byte, or null
   * @throws EtlException when the stream fails, of the kind {@link PgErrors} decides
   */
  @Override
  public @Nullable ByteBuffer readNext(long maxWaitNanos) {
    checkOwner();
    checkOpen();
    long entered = ticker.nanoTime();
    long deadline = entered + Math.max(0, maxWaitNanos);
    boolean waitOnData = dataWait != null && maxWaitNanos > 0;
    boolean foundNothing = false;
    long now = entered;
    while (true) {
      if (waitOnData) {
        sendStatusIfDue(now);
        long remaining = deadline - now;
        if (remaining <= 0) {
          return null;
        }
        // sleep in the kernel until bytes come, the bound, or the next status update is due
        long wait = Math.min(remaining, Math.max(1, nanosUntilStatusDue(now)));
        if (!Objects.requireNonNull(dataWait).awaitData(wait)) {
          foundNothing = true;
          now = ticker.nanoTime();
          continue;
        }
      }
      ByteBuffer buf;
      try {
        buf = stream.readPending();
      } catch (SQLException e) {
        throw PgErrors.map(
            e,
            "replication stream of slot "
                + slotName
                + " failed after LSN "
                + Lsn.of(lastReceived)
                + "; it restarts from the last confirmed position");
      }
      long seen = stream.getLastReceiveLSN().asLong();
      if (Long.compareUnsigned(seen, lastReceived) > 0) {
        lastReceived = seen;
      }
      now = ticker.nanoTime();
      if (buf != null) {
        lastMessageLsn = seen;
        // a poll that found nothing, or one that waited in the kernel until bytes came
        lastReadWaited = foundNothing || now - entered >= WAITED_NANOS;
        idleRounds = 0;
        sendStatusIfDue(now);
        return buf;
      }
      // nothing, or a keepalive (which the wait woke for)
      foundNothing = true;
      if (waitOnData) {
        continue;
      }
      sendStatusIfDue(now);
      long remaining = deadline - now;
      if (remaining <= 0) {
        return null;
      }
      long park = backoff.parkNanos(idleRounds);
      if (idleRounds < Integer.MAX_VALUE) {
        idleRounds++;
      }
      if (park == 0) {
        Thread.onSpinWait();
      } else {
        parker.accept(Math.min(park, remaining));
      }
    }
  }

  /** Returns the time until the next status update is due: periodic, or a flush to report. */
  private long nanosUntilStatusDue(long now) {
    long due = lastStatusSentNanos + statusIntervalNanos;
    if (feedbackPending || flushRequested.get() != flushGivenToDriver) {
      due = Math.min(due, lastStatusSentNanos + feedbackDelayNanos);
    }
    return due - now;
  }

  @Override
  public boolean lastReadWaited() {
    checkOwner();
    return lastReadWaited;
  }

  /**
   * Returns the WAL start LSN of the payload {@link #readNext(long)} returned last, as the server
   * sent it. Some messages (RELATION, TYPE) carry {@code 0/0}: never move progress from this
   * blindly.
   *
   * @return the start LSN of the last message
   */
  @Override
  public Lsn lastMessageLsn() {
    return Lsn.of(lastMessageLsn);
  }

  /**
   * Returns the greatest LSN the server has sent: message start LSNs and keepalive WAL ends. When
   * the caller has durably delivered everything it received and no transaction is open (a streamed
   * in-progress transaction stays open until its stream commit), this is the position it may report
   * as flushed, so that an idle slot follows the server's WAL. Readable from any thread.
   *
   * @return the last received LSN, at least the start LSN
   */
  @Override
  public Lsn lastReceivedLsn() {
    return Lsn.of(lastReceived);
  }

  /**
   * Records that everything up to {@code lsn} is durable at the destination. Monotonic: a smaller
   * LSN than one recorded before is ignored. Thread-safe; the owner sends it to the server at its
   * next status update (rate-limited by the feedback delay).
   *
   * @param lsn the flushed position
   * @return true when the flush LSN moved forward
   */
  @Override
  public boolean advanceFlushed(Lsn lsn) {
    long v = lsn.value();
    while (true) {
      long cur = flushRequested.get();
      if (Long.compareUnsigned(v, cur) <= 0) {
        return false;
      }
      if (flushRequested.compareAndSet(cur, v)) {
        return true;
      }
    }
  }

  /**
   * Returns the greatest flush LSN recorded by {@link #advanceFlushed(Lsn)}, {@code 0/0} when none.
   * Readable from any thread.
   *
   * @return the flush LSN
   */
  public Lsn flushedLsn() {
    return Lsn.of(flushRequested.get());
  }

  /**
   * Sends a status update if one is due: the status interval has passed since the last one, or the
   * flush LSN advanced and the feedback delay has passed. For an owner that is not reading (intake
   * paused), which must still answer the server within {@code wal_sender_timeout}.
   *
   * @return true when an update was sent
   * @throws EtlException when the update cannot be sent
   */
  @Override
  public boolean sendStatusIfDue() {
    checkOwner();
    checkOpen();
    return sendStatusIfDue(ticker.nanoTime());
  }

  /**
   * Sends a status update now, asking the server to reply (its keepalive then carries its current
   * WAL position, which {@link #lastReceivedLsn()} picks up at the next read).
   *
   * @throws EtlException when the update cannot be sent
   */
  @Override
  public void forceStatusUpdate() {
    checkOwner();
    checkOpen();
    sendStatus(ticker.nanoTime());
  }

  /**
   * Returns the interval between periodic status updates, after clamping to the server's {@code
   * wal_sender_timeout}.
   *
   * @return the interval in nanoseconds
   */
  public long statusIntervalNanos() {
    return statusIntervalNanos;
  }

  /**
   * Returns the number of status updates this wrapper sent (not counting those pgjdbc sends on its
   * own when the server asks), for tests and metrics.
   *
   * @return the count
   */
  public long statusUpdatesSent() {
    return statusUpdatesSent;
  }

  /**
   * Returns the slot this stream reads.
   *
   * @return the slot name
   */
  @Override
  public String slotName() {
    return slotName;
  }

  /**
   * Returns true once the stream is closed, by {@link #close()} or because the server ended it.
   *
   * @return whether the stream is closed
   */
  public boolean isClosed() {
    return closed || stream.isClosed();
  }

  private boolean sendStatusIfDue(long now) {
    long flush = flushRequested.get();
    if (flush != flushGivenToDriver) {
      giveFlushToDriver(flush);
    }
    long since = now - lastStatusSentNanos;
    if (since >= statusIntervalNanos || (feedbackPending && since >= feedbackDelayNanos)) {
      sendStatus(now);
      return true;
    }
    return false;
  }

  private void giveFlushToDriver(long flush) {
    LogSequenceNumber l = LogSequenceNumber.valueOf(flush);
    stream.setFlushedLSN(l);
    stream.setAppliedLSN(l);
    flushGivenToDriver = flush;
    feedbackPending = true;
  }

  private void sendStatus(long now) {
    long flush = flushRequested.get();
    if (flush != flushGivenToDriver) {
      giveFlushToDriver(flush);
    }
    try {
      stream.forceUpdateStatus();
    } catch (SQLException e) {
      throw PgErrors.map(
          e,
          "could not send a status update on slot " + slotName + " (flush " + Lsn.of(flush) + ")");
    }
    lastStatusSentNanos = now;
    feedbackPending = false;
    statusUpdatesSent++;
  }

  /**
   * Sends a last status update with the current flush LSN, then ends the stream; waits at most the
   * close timeout for the server. Idempotent. Call it from the owner, or after the owner stopped.
   * Never throws: a stream that cannot end cleanly is logged and left to the connection's close.
   */
  @Override
  public void close() {
    if (closed) {
      return;
    }
    closed = true;
    if (stream.isClosed()) {
      return;
    }
    try {
      long flush = flushRequested.get();
      if (flush != flushGivenToDriver) {
        giveFlushToDriver(flush);
      }
      stream.forceUpdateStatus();
      statusUpdatesSent++;
    } catch (SQLException e) {
      LOG.debug("final status update on slot {} failed: {}", slotName, e.getMessage());
    }
    try {
      if (connection != null) {
        // Bounds the wait for the server's CopyDone: a walsender busy decoding a large transaction
        // may answer late.
        connection.setNetworkTimeout(Runnable::run, closeTimeoutMillis);
      }
      stream.close();
    } catch (SQLException e) {
      LOG.debug("replication stream of slot {} did not end cleanly: {}", slotName, e.getMessage());
    }
  }

  private void checkOpen() {
    if (closed) {
      throw new EtlException(
          ErrorKind.INVALID_STATE, "replication stream of slot " + slotName + " is closed");
    }
  }

  private void checkOwner() {
    Thread me = Thread.currentThread();
    Thread o = owner.get();
    if (o == me) {
      return;
    }
    if (o == null && owner.compareAndSet(null, me)) {
      return;
    }
    throw new EtlException(
        ErrorKind.INVALID_STATE,
        "replication stream of slot "
            + slotName
            + " is owned by thread "
            + Objects.requireNonNull(owner.get(), "the owner is set once and never cleared")
                .getName()
            + " but was used from thread "
            + me.getName());
  }
}
