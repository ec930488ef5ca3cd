package org.pgetl.core.internal.sync;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.time.Instant;
import org.junit.jupiter.api.Test;
import org.pgetl.PgConnectionConfig;
import org.pgetl.PipelineConfig;
import org.pgetl.core.internal.time.ManualTicker;
import org.pgetl.error.ErrorKind;
import org.pgetl.error.EtlException;
import org.pgetl.error.RetryDirective;
import org.pgetl.store.TableState;

/** How a failed table-sync worker's table is retried, from the ticker's time. */
class RetryPolicyDecisionTest {
  private final ManualTicker ticker = new ManualTicker();
  private final PipelineConfig config =
      PipelineConfig.builder()
          .pipelineId("p")
          .publication("orders")
          .source(PgConnectionConfig.builder().host("127.0.0.1").database("d").user("u").build())
          .retryDelay(Duration.ofSeconds(4))
          .retryBackoffMultiplier(3.0)
          .retryMaxDelay(Duration.ofSeconds(60))
          .retryMaxAttempts(3)
          .build();

  @Test
  void aTimedRetryIsDueOneBackoffAfterTheFailureAndTheBackoffGrowsToItsCap() {
    ticker.advance(Duration.ofHours(1));
    Instant now = ticker.now();
    // attempt n waits between half and all of min(4 s * 3^n, 60 s)
    long[] fullMillis = {4_000, 12_000, 36_000, 60_000, 60_000};
    for (int attempt = 0; attempt < fullMillis.length; attempt++) {
      EtlException outage = new EtlException(ErrorKind.SOURCE_CONNECTION_FAILED, "down");
      TableState.Errored t = TableSyncWorker.errored(outage, attempt, config, now);
      assertThat(t.retry()).isEqualTo(RetryDirective.TIMED);
      assertThat(t.attempts()).isEqualTo(attempt);
      assertThat(t.nextRetry())
          .as("attempt %d", attempt)
          .isBetween(now.plusMillis(fullMillis[attempt] / 2), now.plusMillis(fullMillis[attempt]));
    }
  }

  @Test
  void aTimedFailureThatIsNoOutageGoesManualOnceItsAttemptsAreSpent() {
    EtlException e = new EtlException(ErrorKind.SOURCE_LOCK_TIMEOUT, "lock busy");
    assertThat(e.directive()).isEqualTo(RetryDirective.TIMED);
    assertThat(TableSyncWorker.errored(e, 2, config, ticker.now()).retry())
        .isEqualTo(RetryDirective.TIMED);
    TableState.Errored spent = TableSyncWorker.errored(e, 3, config, ticker.now());
    assertThat(spent.retry()).isEqualTo(RetryDirective.MANUAL);
    assertThat(spent.nextRetry()).isNull();
    // outages are retried for as long as they last
    EtlException outage = new EtlException(ErrorKind.SOURCE_CONNECTION_FAILED, "down");
    assertThat(TableSyncWorker.errored(outage, 50, config, ticker.now()).retry())
        .isEqualTo(RetryDirective.TIMED);
  }
}
