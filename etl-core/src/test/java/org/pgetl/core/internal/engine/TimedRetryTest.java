package org.pgetl.core.internal.engine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.io.IOException;
import java.net.ServerSocket;
import java.time.Duration;
import java.time.Instant;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.pgetl.PgConnectionConfig;
import org.pgetl.PipelineConfig;
import org.pgetl.core.internal.apply.StreamRole;
import org.pgetl.core.internal.time.ManualTicker;
import org.pgetl.error.ErrorKind;
import org.pgetl.error.RetryDirective;
import org.pgetl.model.TableId;
import org.pgetl.store.MemoryStore;
import org.pgetl.store.TableState;

/**
 * Timed retries of errored tables, driven by a hand-moved ticker: a retry happens at its due time
 * and not before, a failed retry waits the backoff of its attempt, and the apply stream looks for
 * due retries once per tick interval. The source is a closed local port, so a retried table's
 * worker fails at once with a connection failure, without a server.
 */
class TimedRetryTest {
  private static final TableId TABLE = new TableId(16_500);
  private static final Duration RETRY_DELAY = Duration.ofSeconds(10);

  private final ManualTicker ticker = new ManualTicker();
  private final MemoryStore store = new MemoryStore("retries");
  private EngineContext ctx;

  @AfterEach
  void stopWorkers() {
    if (ctx != null) {
      ctx.stop.request(StopSignal.Mode.DISCARD);
      assertThat(ctx.pool.awaitAll(ctx.ticker.nanoTime() + Duration.ofSeconds(10).toNanos()))
          .isEmpty();
    }
  }

  private EngineContext generation() throws IOException {
    int closedPort;
    try (ServerSocket s = new ServerSocket(0)) {
      closedPort = s.getLocalPort();
    }
    PgConnectionConfig source =
        PgConnectionConfig.builder()
            .host("127.0.0.1")
            .port(closedPort)
            .database("shop")
            .user("pgetl")
            .connectTimeout(Duration.ofSeconds(5))
            .build();
    PipelineConfig config =
        PipelineConfig.builder()
            .pipelineId("retries")
            .publication("orders")
            .source(source)
            .retryDelay(RETRY_DELAY)
            .retryBackoffMultiplier(2.0)
            .retryMaxDelay(Duration.ofMinutes(5))
            .retryMaxAttempts(5)
            .build();
    ctx = GenerationFixture.context(config, store, ticker);
    return ctx;
  }

  private void erroredUntil(Instant nextRetry, int attempts) {
    ctx.tables.add(TABLE);
    ctx.tables.error(
        TABLE,
        new TableState.Errored(
            ErrorKind.SOURCE_CONNECTION_FAILED,
            "connection refused",
            "the source is down",
            RetryDirective.TIMED,
            nextRetry,
            attempts));
  }

  /** Waits until the retried worker failed again and left the table errored at {@code attempts}. */
  private void awaitTimedRetryAfter(int attempts) {
    await()
        .atMost(Duration.ofSeconds(30))
        .until(
            () ->
                !ctx.tables.hasWorker(TABLE)
                    && store.tableStates().get(TABLE) instanceof TableState.Errored e
                    && e.retry() == RetryDirective.TIMED
                    && e.attempts() == attempts);
  }

  private static TableState.Errored timedRetry(TableState state) {
    assertThat(state).isInstanceOf(TableState.Errored.class);
    TableState.Errored errored = (TableState.Errored) state;
    assertThat(errored.retry()).isEqualTo(RetryDirective.TIMED);
    return errored;
  }

  @Test
  void anErroredTableIsRetriedAtItsDueTimeAndItsFailedRetryWaitsTheNextBackoff()
      throws IOException {
    ApplyStreamRole role = new ApplyStreamRole(generation());
    erroredUntil(ticker.now().plus(Duration.ofSeconds(30)), 0);
    StreamRole.Control control = new QuietControl();

    role.tick(control);
    ticker.advance(Duration.ofSeconds(29));
    role.tick(control);
    assertThat(timedRetry(store.tableStates().get(TABLE)).attempts()).isZero();
    assertThat(ctx.tables.hasWorker(TABLE)).isFalse();

    ticker.advance(Duration.ofSeconds(1));
    role.tick(control);
    // the retry started a worker, which failed to connect: the table errs again, attempt 1
    awaitTimedRetryAfter(1);
    TableState.Errored second = timedRetry(store.tableStates().get(TABLE));
    assertThat(ctx.errors.recent()).anyMatch(e -> e.kind() == ErrorKind.SOURCE_CONNECTION_FAILED);
    // attempt 1 waits retryDelay * 2, with equal jitter: between 10 s and 20 s from the failure
    Instant failedAt = ticker.now();
    assertThat(second.nextRetry())
        .isBetween(failedAt.plus(RETRY_DELAY), failedAt.plus(RETRY_DELAY.multipliedBy(2)));

    // a quarter second early (ticks look at most every 200 ms), then at the due time
    ticker.advance(Duration.between(failedAt, second.nextRetry()).minusMillis(250));
    role.tick(control);
    assertThat(timedRetry(store.tableStates().get(TABLE)).attempts()).isEqualTo(1);
    assertThat(ctx.tables.hasWorker(TABLE)).isFalse();

    ticker.advance(Duration.ofMillis(250));
    role.tick(control);
    awaitTimedRetryAfter(2);
  }

  @Test
  void dueRetriesAreLookedForOncePerTickInterval() throws IOException {
    ApplyStreamRole role = new ApplyStreamRole(generation());
    ctx.stop.request(StopSignal.Mode.DISCARD); // no worker starts: only the roll-back is seen
    erroredUntil(ticker.now().plus(Duration.ofMillis(100)), 0);
    StreamRole.Control control = new QuietControl();

    role.tick(control); // not due yet; the next look is a tick interval (200 ms) away
    assertThat(store.tableStates().get(TABLE).type()).isEqualTo(TableState.Type.ERRORED);
    ticker.advance(Duration.ofMillis(150)); // due now
    role.tick(control);
    assertThat(store.tableStates().get(TABLE).type())
        .as("a tick within 200 ms of the last one does nothing")
        .isEqualTo(TableState.Type.ERRORED);

    ticker.advance(Duration.ofMillis(50));
    role.tick(control);
    assertThat(store.tableStates().get(TABLE).type()).isEqualTo(TableState.Type.INIT);
  }

  /** A loop with nothing in flight that never stops. */
  private static final class QuietControl implements StreamRole.Control {
    @Override
    public void completeAfterThisTransaction() {}

    @Override
    public void finish() {}

    @Override
    public void keepAlive() {}

    @Override
    public boolean stopRequested() {
      return false;
    }

    @Override
    public long writeFence() {
      return 0;
    }

    @Override
    public boolean answeredBefore(long fence) {
      return true;
    }
  }
}
