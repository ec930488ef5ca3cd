package org.pgetl.core.internal.pg;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.ByteBuffer;
import java.sql.SQLException;
import java.time.Instant;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.pgetl.core.internal.time.Ticker;
import org.pgetl.error.ErrorKind;
import org.pgetl.error.EtlException;
import org.pgetl.model.Lsn;
import org.postgresql.replication.LogSequenceNumber;
import org.postgresql.replication.PGReplicationStream;
import org.postgresql.util.PSQLException;
import org.postgresql.util.PSQLState;

/**
 * The stream wrapper's own logic, over a scripted stand-in for pgjdbc's stream and a fake clock.
 */
class ReplicationStreamTest {
  private static final long MS = 1_000_000L;

  /** What the server "sends": each step is a message, a keepalive, or nothing for one poll. */
  static final class ScriptedStream implements PGReplicationStream {
    record Step(ByteBuffer payload, long lsn) {}

    final Deque<Step> script = new ArrayDeque<>();
    final List<long[]> statusSent = new ArrayList<>(); // {received, flushed, applied}
    final FakeClock clock;
    LogSequenceNumber received;
    LogSequenceNumber flushed = LogSequenceNumber.INVALID_LSN;
    LogSequenceNumber applied = LogSequenceNumber.INVALID_LSN;
    boolean closed;
    SQLException failNext;

    ScriptedStream(FakeClock clock, long start) {
      this.clock = clock;
      this.received = LogSequenceNumber.valueOf(start);
    }

    void message(long lsn) {
      script.add(new Step(ByteBuffer.wrap(new byte[] {'I'}), lsn));
    }

    void keepalive(long walEnd) {
      script.add(new Step(null, walEnd));
    }

    @Override
    public ByteBuffer read() {
      throw new UnsupportedOperationException("the wrapper never blocks in read()");
    }

    @Override
    public ByteBuffer readPending() throws SQLException {
      if (failNext != null) {
        throw failNext;
      }
      Step s = script.poll();
      if (s == null) {
        clock.now += MS; // pgjdbc's idle poll waits about a millisecond
        return null;
      }
      if (s.payload == null) {
        if (s.lsn > received.asLong()) {
          received = LogSequenceNumber.valueOf(s.lsn);
        }
        return null;
      }
      received = LogSequenceNumber.valueOf(s.lsn);
      return s.payload;
    }

    @Override
    public LogSequenceNumber getLastReceiveLSN() {
      return received;
    }

    @Override
    public LogSequenceNumber getLastFlushedLSN() {
      return flushed;
    }

    @Override
    public LogSequenceNumber getLastAppliedLSN() {
      return applied;
    }

    @Override
    public void setFlushedLSN(LogSequenceNumber lsn) {
      flushed = lsn;
    }

    @Override
    public void setAppliedLSN(LogSequenceNumber lsn) {
      applied = lsn;
    }

    @Override
    public void forceUpdateStatus() {
      statusSent.add(new long[] {received.asLong(), flushed.asLong(), applied.asLong()});
    }

    @Override
    public boolean isClosed() {
      return closed;
    }

    @Override
    public void close() {
      closed = true;
    }
  }

  static final class FakeClock implements Ticker {
    long now = 1_000 * MS;
    final List<Long> parks = new ArrayList<>();

    @Override
    public long nanoTime() {
      return now;
    }

    @Override
    public Instant now() {
      return Instant.EPOCH.plusNanos(now);
    }

    void park(long nanos) {
      parks.add(nanos);
      now += nanos;
    }
  }

  private final FakeClock clock = new FakeClock();
  private final ScriptedStream pg = new ScriptedStream(clock, 0x1000);

  private ReplicationStream wrapper(long statusIntervalMs, long feedbackDelayMs) {
    return new ReplicationStream(
        pg,
        null,
        "slot_a",
        Lsn.of(0x1000),
        statusIntervalMs * MS,
        feedbackDelayMs * MS,
        1000,
        IdleBackoff.DEFAULT,
        null,
        clock,
        clock::park);
  }

  /** A socket wait over the script: data is there when a step is, else the clock moves on. */
  private final List<Long> dataWaits = new ArrayList<>();

  private int polls;

  private ReplicationStream waitingOnData(long statusIntervalMs, long feedbackDelayMs) {
    return new ReplicationStream(
        pg,
        null,
        "slot_a",
        Lsn.of(0x1000),
        statusIntervalMs * MS,
        feedbackDelayMs * MS,
        1000,
        IdleBackoff.DEFAULT,
        nanos -> {
          dataWaits.add(nanos);
          if (!pg.script.isEmpty()) {
            return true;
          }
          clock.now += nanos;
          return false;
        },
        clock,
        nanos -> polls++);
  }

  @Test
  void idleReadWaitsOnTheSocketNotInPolls() {
    ReplicationStream s = waitingOnData(10_000, 100);
    long start = clock.now;
    assertThat(s.readNext(20 * MS)).isNull();
    // one wait for the whole bound: no pgjdbc poll, no park
    assertThat(dataWaits).containsExactly(20 * MS);
    assertThat(clock.now - start).isEqualTo(20 * MS);
    assertThat(polls).isZero();
    assertThat(pg.statusSent).isEmpty();
  }

  @Test
  void dataEndsTheWaitAndTheMessageCountsAsWaitedFor() {
    ReplicationStream s = waitingOnData(10_000, 100);
    assertThat(s.readNext(20 * MS)).isNull();
    pg.keepalive(0x1800); // wakes the wait, but is no message: the wait goes on
    pg.message(0x2000);
    assertThat(s.readNext(20 * MS)).isNotNull();
    assertThat(s.lastMessageLsn()).isEqualTo(Lsn.of(0x2000));
    assertThat(s.lastReceivedLsn()).isEqualTo(Lsn.of(0x2000));
    assertThat(s.lastReadWaited()).isTrue();
    // a read that must not wait checks once, as before
    pg.message(0x2100);
    assertThat(s.readNext(0)).isNotNull();
    assertThat(s.lastReadWaited()).isFalse();
  }

  @Test
  void socketWaitEndsWhenAStatusUpdateIsDue() {
    ReplicationStream s = waitingOnData(1_000, 100);
    assertThat(s.readNext(2_500 * MS)).isNull();
    assertThat(pg.statusSent).hasSize(2);
    assertThat(dataWaits).containsExactly(1_000 * MS, 1_000 * MS, 500 * MS);
  }

  @Test
  void socketWaitEndsWhenAFlushAdvanceIsDueToBeReported() {
    ReplicationStream s = waitingOnData(10_000, 100);
    clock.now += 40 * MS;
    s.advanceFlushed(Lsn.of(0x6000));
    assertThat(s.readNext(400 * MS)).isNull();
    // reported after the feedback delay, not at the end of the read's bound
    assertThat(dataWaits).containsExactly(60 * MS, 340 * MS);
    assertThat(pg.statusSent).hasSize(1);
    assertThat(pg.statusSent.get(0)[1]).isEqualTo(0x6000);
  }

  @Test
  void returnsMessagesWithTheirStartLsnAndTracksTheGreatestReceived() {
    ReplicationStream s = wrapper(10_000, 100);
    pg.message(0x2000);
    pg.message(0); // a RELATION message carries 0/0
    pg.keepalive(0x3000);
    assertThat(s.readNext(0)).isNotNull();
    assertThat(s.lastMessageLsn()).isEqualTo(Lsn.of(0x2000));
    assertThat(s.readNext(0)).isNotNull();
    assertThat(s.lastMessageLsn()).isEqualTo(Lsn.ZERO);
    assertThat(s.lastReceivedLsn()).isEqualTo(Lsn.of(0x2000));
    assertThat(s.readNext(5 * MS)).isNull();
    assertThat(s.lastReceivedLsn()).isEqualTo(Lsn.of(0x3000));
  }

  @Test
  void aMessageIsWaitedForWhenAPollFoundNothingBeforeIt() {
    ReplicationStream s = wrapper(10_000, 100);
    pg.message(0x2000);
    pg.message(0x2100);
    pg.keepalive(0x2200); // a poll that finds no data message
    pg.message(0x3000);
    assertThat(s.readNext(0)).isNotNull();
    assertThat(s.lastReadWaited()).isFalse();
    assertThat(s.readNext(0)).isNotNull();
    assertThat(s.lastReadWaited()).isFalse();
    assertThat(s.readNext(10 * MS)).isNotNull();
    assertThat(s.lastMessageLsn()).isEqualTo(Lsn.of(0x3000));
    assertThat(s.lastReadWaited()).isTrue();
  }

  @Test
  void idleReadParksWithBackoffAndReturnsByTheDeadline() {
    ReplicationStream s = wrapper(10_000, 100);
    long start = clock.now;
    assertThat(s.readNext(20 * MS)).isNull();
    long waited = clock.now - start;
    assertThat(waited).isBetween(20 * MS, 22 * MS);
    // three free rounds, then 20 µs, 40 µs, ... capped at 1 ms and at the time left
    assertThat(clock.parks.get(0)).isEqualTo(20_000);
    assertThat(clock.parks.get(1)).isEqualTo(40_000);
    assertThat(clock.parks).allMatch(p -> p <= MS);
    // a message resets the backoff
    pg.message(0x5000);
    assertThat(s.readNext(0)).isNotNull();
    clock.parks.clear();
    assertThat(s.readNext(10 * MS)).isNull();
    assertThat(clock.parks.get(0)).isEqualTo(20_000);
  }

  @Test
  void flushLsnIsMonotonicAndReportedAsFlushAndApply() {
    ReplicationStream s = wrapper(10_000, 0);
    assertThat(s.advanceFlushed(Lsn.of(0x5000))).isTrue();
    assertThat(s.advanceFlushed(Lsn.of(0x4000))).isFalse();
    assertThat(s.advanceFlushed(Lsn.of(0x5000))).isFalse();
    assertThat(s.flushedLsn()).isEqualTo(Lsn.of(0x5000));
    s.forceStatusUpdate();
    assertThat(pg.statusSent).hasSize(1);
    assertThat(pg.statusSent.get(0)[1]).isEqualTo(0x5000);
    assertThat(pg.statusSent.get(0)[2]).isEqualTo(0x5000);
    s.advanceFlushed(Lsn.of(0x4500));
    s.forceStatusUpdate();
    assertThat(pg.statusSent.get(1)[1]).isEqualTo(0x5000);
  }

  @Test
  void flushAdvanceIsSentAfterTheFeedbackDelayNotBefore() {
    ReplicationStream s = wrapper(10_000, 100);
    s.readNext(0); // binds the owner
    clock.now += 150 * MS; // the last status was long enough ago
    s.advanceFlushed(Lsn.of(0x6000));
    assertThat(s.sendStatusIfDue()).isTrue();
    assertThat(pg.statusSent).hasSize(1);
    s.advanceFlushed(Lsn.of(0x7000));
    assertThat(s.sendStatusIfDue()).isFalse(); // within 100 ms of the last update
    clock.now += 100 * MS;
    assertThat(s.sendStatusIfDue()).isTrue();
    assertThat(pg.statusSent.get(1)[1]).isEqualTo(0x7000);
    assertThat(s.sendStatusIfDue()).isFalse(); // nothing new, interval not reached
  }

  @Test
  void periodicStatusIsSentWhileReadingAndWhilePaused() {
    ReplicationStream s = wrapper(1_000, 100);
    assertThat(s.readNext(2_500 * MS)).isNull();
    assertThat(pg.statusSent).hasSize(2);
    // paused owner: not reading, only calling sendStatusIfDue
    clock.now += 999 * MS;
    int before = pg.statusSent.size();
    s.sendStatusIfDue();
    clock.now += 1_000 * MS;
    s.sendStatusIfDue();
    assertThat(pg.statusSent.size()).isGreaterThan(before);
  }

  @Test
  void advanceFromAnotherThreadReachesTheServerThroughTheOwner() throws Exception {
    ReplicationStream s = wrapper(10_000, 0);
    s.readNext(0);
    CompletableFuture.runAsync(() -> s.advanceFlushed(Lsn.of(0x9000))).get(5, TimeUnit.SECONDS);
    assertThat(s.sendStatusIfDue()).isTrue();
    assertThat(pg.flushed.asLong()).isEqualTo(0x9000);
  }

  @Test
  void onlyTheOwnerMayRead() throws Exception {
    ReplicationStream s = wrapper(10_000, 100);
    s.readNext(0);
    Throwable t =
        CompletableFuture.supplyAsync(
                () -> {
                  try {
                    s.readNext(0);
                    return null;
                  } catch (EtlException e) {
                    return e;
                  }
                })
            .get(5, TimeUnit.SECONDS);
    assertThat(t).isInstanceOf(EtlException.class).hasMessageContaining("is owned by thread");
    assertThat(((EtlException) t).kind()).isEqualTo(ErrorKind.INVALID_STATE);
  }

  @Test
  void closeSendsAFinalUpdateAndEndsTheStream() {
    ReplicationStream s = wrapper(10_000, 100);
    s.advanceFlushed(Lsn.of(0xA000));
    s.close();
    assertThat(pg.closed).isTrue();
    assertThat(pg.statusSent).hasSize(1);
    assertThat(pg.statusSent.get(0)[1]).isEqualTo(0xA000);
    s.close();
    assertThat(pg.statusSent).hasSize(1);
    assertThatThrownBy(() -> s.readNext(0)).hasMessageContaining("is closed");
  }

  @Test
  void readFailureIsMappedWithSlotAndLsn() {
    ReplicationStream s = wrapper(10_000, 100);
    pg.failNext =
        new PSQLException(
            "Database connection failed when reading from copy",
            PSQLState.CONNECTION_FAILURE,
            new java.io.EOFException());
    assertThatThrownBy(() -> s.readNext(0))
        .isInstanceOf(EtlException.class)
        .hasMessageContaining("slot slot_a")
        .hasMessageContaining("after LSN 0/1000")
        .satisfies(
            e ->
                assertThat(((EtlException) e).kind())
                    .isEqualTo(ErrorKind.SOURCE_CONNECTION_FAILED));
  }
}
