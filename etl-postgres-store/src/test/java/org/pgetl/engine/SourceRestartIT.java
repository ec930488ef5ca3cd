package org.pgetl.engine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.sql.Connection;
import java.sql.Statement;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.pgetl.PgConnectionConfig;
import org.pgetl.Pipeline;
import org.pgetl.PipelineConfig;
import org.pgetl.PipelineStatus;
import org.pgetl.model.TableName;
import org.pgetl.store.TableState;
import org.pgetl.store.postgres.PostgresStore;
import org.pgetl.testkit.EmbeddedPostgres;
import org.pgetl.testkit.destination.RecordingDestination;
import org.pgetl.testkit.destination.SourceTables;

/**
 * The source server — which also holds the state store, as by default — goes away for 30 seconds
 * while the pipeline streams, then comes back: the pipeline resumes by itself and converges, and
 * its status answers at once all along. Runs on a server of its own, since it stops it.
 */
@Timeout(value = 4, unit = TimeUnit.MINUTES)
class SourceRestartIT {
  private static final Duration WAIT = Duration.ofSeconds(120);
  private static EmbeddedPostgres server;

  @BeforeAll
  static void start() {
    server = EmbeddedPostgres.builder().start();
    server.createDatabase("shop");
  }

  @AfterAll
  static void stop() {
    server.close();
  }

  private static void exec(String... sql) throws Exception {
    try (Connection c = server.connect("shop");
        Statement st = c.createStatement()) {
      for (String s : sql) {
        st.execute(s);
      }
    }
  }

  /**
   * Regression: with the store in the source, stopping the source for 15–40 s made {@code
   * Pipeline.status()} throw (it read the store) and the pipeline give up after its retries.
   */
  @Test
  void aSourceStoppedForThirtySecondsIsFollowedByItselfAndStatusNeverFails() throws Exception {
    exec(
        "CREATE TABLE orders (id int PRIMARY KEY, v int)",
        "INSERT INTO orders SELECT g, 0 FROM generate_series(1, 1000) g",
        "CREATE PUBLICATION pub_orders FOR TABLE orders");
    PgConnectionConfig source =
        PgConnectionConfig.builder()
            .host(server.host())
            .port(server.port())
            .database("shop")
            .user(server.superuser())
            .password(server.password())
            .build();
    PipelineConfig config =
        PipelineConfig.builder()
            .pipelineId("outage")
            .publication("pub_orders")
            .source(source)
            .batchMaxFill(Duration.ofMillis(100))
            .retryDelay(Duration.ofMillis(500))
            .retryMaxDelay(Duration.ofSeconds(4))
            .lifecyclePollInterval(Duration.ofMillis(200))
            .build();
    RecordingDestination dest = RecordingDestination.create();
    TableName orders = TableName.parse("orders");
    try (PostgresStore store =
            PostgresStore.builder()
                .connection(source)
                .pipelineId("outage")
                .connectionTimeout(Duration.ofSeconds(2))
                .build();
        Pipeline p = Pipeline.create(config, store, dest)) {
      p.start();
      await()
          .atMost(WAIT)
          .until(
              () ->
                  !store.tableStates().isEmpty()
                      && store.tableStates().values().stream()
                          .allMatch(s -> s.type() == TableState.Type.READY));
      exec("UPDATE orders SET v = 1 WHERE id <= 100");
      try (Connection c = server.connect("shop")) {
        dest.awaitRowsEqual(orders, SourceTables.read(c, orders), WAIT);
      }

      server.stop();
      long outageEnd = System.nanoTime() + Duration.ofSeconds(30).toNanos();
      while (System.nanoTime() < outageEnd) {
        long t0 = System.nanoTime();
        PipelineStatus status = p.status();
        assertThat((System.nanoTime() - t0) / 1_000_000).isLessThan(200);
        assertThat(status.phase())
            .isNotIn(PipelineStatus.Phase.FAILED, PipelineStatus.Phase.STOPPED);
        assertThat(p.failure()).isEmpty();
        await().pollDelay(Duration.ofMillis(500)).until(() -> true);
      }
      server.restart();

      exec("UPDATE orders SET v = 2 WHERE id > 900", "INSERT INTO orders VALUES (5000, 5)");
      try (Connection c = server.connect("shop")) {
        dest.awaitRowsEqual(orders, SourceTables.read(c, orders), WAIT);
      }
      assertThat(p.status().phase()).isEqualTo(PipelineStatus.Phase.RUNNING);
      assertThat(p.failure()).isEmpty();
      assertThat(p.status().errors()).isNotEmpty(); // the outage was seen and reported
    }
  }
}
