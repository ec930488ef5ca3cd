package org.pgetl.core.internal.engine;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.pgetl.core.internal.time.ManualTicker;

/** The grace period of a stop, measured on the generation's ticker. */
class StopSignalTest {
  private static final Duration GRACE = Duration.ofSeconds(10);

  @Test
  void theGraceIsWholeUntilAStopAndShrinksWithTheTickerFromTheFirstRequest() {
    ManualTicker ticker = new ManualTicker();
    StopSignal stop = new StopSignal(ticker);
    ticker.advance(Duration.ofSeconds(30));
    assertThat(stop.graceLeft(GRACE)).isEqualTo(GRACE);

    stop.request(StopSignal.Mode.DRAIN);
    ticker.advance(Duration.ofSeconds(3));
    // a stricter request later does not restart the grace period
    stop.request(StopSignal.Mode.DISCARD);
    ticker.advance(Duration.ofSeconds(4));
    assertThat(stop.graceLeft(GRACE)).isEqualTo(Duration.ofSeconds(3));

    ticker.advance(Duration.ofSeconds(3));
    assertThat(stop.graceLeft(GRACE)).isZero();
    ticker.advance(Duration.ofSeconds(60));
    assertThat(stop.graceLeft(GRACE)).isZero();
  }

  @Test
  void aChildMeasuresItsGraceOnTheParentsTicker() {
    ManualTicker ticker = new ManualTicker();
    StopSignal parent = new StopSignal(ticker);
    StopSignal child = parent.child();
    parent.request(StopSignal.Mode.DRAIN);
    ticker.advance(Duration.ofSeconds(7));
    assertThat(child.isRequested()).isTrue();
    assertThat(child.graceLeft(GRACE)).isEqualTo(Duration.ofSeconds(3));
  }
}
