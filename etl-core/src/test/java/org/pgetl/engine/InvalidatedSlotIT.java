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
import org.pgetl.error.ErrorKind;
import org.pgetl.model.TableName;
import org.pgetl.store.MemoryStore;
import org.pgetl.store.TableState;
import org.pgetl.testkit.EmbeddedPostgres;
import org.pgetl.testkit.destination.RecordingDestination;
import org.pgetl.testkit.destination.SourceTables;

/**
 * An apply slot invalidated by the server ({@code max_slot_wal_keep_size} exceeded while the
 * pipeline was down): the pipeline fails with a clear error, or, configured to, recreates the slot
 * and copies every table again. Runs on a server of its own with a tiny WAL allowance.
 */
@Timeout(value = 4, unit = TimeUnit.MINUTES)
class InvalidatedSlotIT {
  private static final Duration WAIT = Duration.ofSeconds(90);
  private static EmbeddedPostgres server;

  @BeforeAll
  static void start() {
    server =
        EmbeddedPostgres.builder()
            .setting("max_slot_wal_keep_size", "1MB")
            .setting("max_wal_size", "32MB")
            .setting("min_wal_size", "32MB")
            .start();
  }

  @AfterAll
  static void stop() {
    server.close();
  }

  private static PgConnectionConfig source(String db) {
    return PgConnectionConfig.builder()
        .host(server.host())
        .port(server.port())
        .database(db)
        .user(server.superuser())
        .password(server.password())
        .build();
  }

  private static void exec(String db, String... sql) throws Exception {
    try (Connection c = server.connect(db);
        Statement st = c.createStatement()) {
      for (String s : sql) {
        st.execute(s);
      }
    }
  }

  /** Stops the pipeline, pushes the server past the slot's WAL allowance, returns the config. */
  private static PipelineConfig invalidate(
      String db, String id, PipelineConfig.InvalidatedSlotBehavior behavior, MemoryStore store)
      throws Exception {
    server.createDatabase(db);
    exec(
        db,
        "CREATE TABLE t (id int PRIMARY KEY, v text)",
        "INSERT INTO t SELECT g, 'v' || g FROM generate_series(1, 1000) g",
        "CREATE PUBLICATION pub FOR TABLE t");
    PipelineConfig config =
        PipelineConfig.builder()
            .pipelineId(id)
            .publication("pub")
            .source(source(db))
            .batchMaxFill(Duration.ofMillis(100))
            .retryDelay(Duration.ofMillis(200))
            .invalidatedSlotBehavior(behavior)
            .build();
    try (Pipeline p = Pipeline.create(config, store, RecordingDestination.create())) {
      p.start();
      await()
          .atMost(WAIT)
          .until(
              () ->
                  !store.tableStates().isEmpty()
                      && store.tableStates().values().stream()
                          .allMatch(s -> s.type() == TableState.Type.READY));
    }
    // far more WAL than the slot may keep, then checkpoints that remove it
    for (int i = 0; i < 4; i++) {
      exec(
          db,
          "INSERT INTO t SELECT g, repeat('x', 200) FROM generate_series("
              + (10000 + i * 40000)
              + ", "
              + (49999 + i * 40000)
              + ") g",
          "SELECT pg_switch_wal()",
          "CHECKPOINT");
    }
    await()
        .atMost(WAIT)
        .until(
            () -> {
              exec(db, "CHECKPOINT");
              try (Connection c = server.connect(db);
                  Statement st = c.createStatement();
                  var rs =
                      st.executeQuery(
                          "SELECT wal_status FROM pg_replication_slots WHERE slot_name = 'pgetl_apply_"
                              + id
                              + "'")) {
                return rs.next() && "lost".equals(rs.getString(1));
              }
            });
    return config;
  }

  @Test
  void failsWithAClearErrorByDefault() throws Exception {
    MemoryStore store = new MemoryStore("lost_fail");
    PipelineConfig config =
        invalidate("lost_fail", "lost_fail", PipelineConfig.InvalidatedSlotBehavior.FAIL, store);
    Pipeline p = Pipeline.create(config, store, RecordingDestination.create());
    p.start();
    assertThat(p.awaitTermination(WAIT)).isTrue();
    assertThat(p.status().phase()).isEqualTo(PipelineStatus.Phase.FAILED);
    assertThat(p.failure())
        .get()
        .satisfies(
            e -> {
              assertThat(e.kind()).isEqualTo(ErrorKind.REPLICATION_SLOT_INVALIDATED);
              assertThat(e.getMessage()).contains("pgetl_apply_lost_fail");
              assertThat(e.hint()).contains("RECREATE");
            });
  }

  @Test
  void recreatesTheSlotAndCopiesEveryTableAgainWhenConfigured() throws Exception {
    MemoryStore store = new MemoryStore("lost_again");
    PipelineConfig config =
        invalidate(
            "lost_again", "lost_again", PipelineConfig.InvalidatedSlotBehavior.RECREATE, store);
    RecordingDestination dest = RecordingDestination.create();
    try (Pipeline p = Pipeline.create(config, store, dest)) {
      p.start();
      await()
          .atMost(WAIT)
          .until(
              () ->
                  store.tableStates().values().stream()
                          .allMatch(s -> s.type() == TableState.Type.READY)
                      && dest.count(
                              org.pgetl.testkit.destination.DestinationOperation
                                  .DROP_TABLE_FOR_COPY)
                          == 1);
      try (Connection c = server.connect("lost_again")) {
        dest.awaitRowsEqual(TableName.parse("t"), SourceTables.read(c, TableName.parse("t")), WAIT);
      }
    }
  }
}
