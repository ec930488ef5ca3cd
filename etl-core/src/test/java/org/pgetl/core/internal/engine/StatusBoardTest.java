package org.pgetl.core.internal.engine;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.time.Instant;
import org.junit.jupiter.api.Test;
import org.pgetl.core.internal.time.ManualTicker;
import org.pgetl.model.Lsn;

/** The status board's times come from the engine's ticker. */
class StatusBoardTest {

  @Test
  void aLagSampleIsStampedWithTheTickersWallClock() {
    ManualTicker ticker = new ManualTicker(Instant.parse("2026-03-01T12:00:00Z"));
    StatusBoard board = new StatusBoard(ticker);
    assertThat(board.lagSampledAtMillis()).isZero();
    ticker.advance(Duration.ofMinutes(5));
    board.lag(4096);
    assertThat(Instant.ofEpochMilli(board.lagSampledAtMillis()))
        .isEqualTo(Instant.parse("2026-03-01T12:05:00Z"));
    assertThat(board.lagBytes()).isEqualTo(4096);
  }

  @Test
  void theLagInTimeRunsFromTheOldestCommitNotYetDurable() {
    ManualTicker ticker = new ManualTicker();
    StatusBoard board = new StatusBoard(ticker);
    board.received(Lsn.parse("0/100"), ticker.now().toEpochMilli());
    ticker.advance(Duration.ofSeconds(2));
    board.received(Lsn.parse("0/200"), ticker.now().toEpochMilli());
    ticker.advance(Duration.ofSeconds(3));
    assertThat(board.lagTime(ticker.now().toEpochMilli())).isEqualTo(Duration.ofSeconds(5));
    board.caughtUpTo(Lsn.parse("0/100"));
    assertThat(board.lagTime(ticker.now().toEpochMilli())).isEqualTo(Duration.ofSeconds(3));
    board.caughtUpTo(Lsn.parse("0/200"));
    assertThat(board.lagTime(ticker.now().toEpochMilli())).isZero();
  }
}
