package org.pgetl.engine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
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
import org.pgetl.error.EtlException;
import org.pgetl.model.TableName;
import org.pgetl.store.TableState;
import org.pgetl.store.postgres.PostgresStore;
import org.pgetl.testkit.EmbeddedPostgres;
import org.pgetl.testkit.destination.DestinationOperation;
import org.pgetl.testkit.destination.RecordingDestination;
import org.pgetl.testkit.destination.SourceTables;

/**
 * Source failover: a source configured with several hosts is reached through the first primary of
 * the list (by the pipeline and by the state store built from the same configuration), a host that
 * is down is skipped, a restarted server is followed, and a promoted physical standby is followed
 * from its synchronised copy of the failover apply slot without losing a change.
 *
 * <p>Runs on servers of its own, since it stops them.
 */
@Timeout(value = 5, unit = TimeUnit.MINUTES)
class FailoverIT {
  private static final Duration WAIT = Duration.ofSeconds(90);
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

  @Test
  void aFirstHostThatRefusesConnectionsIsSkippedByThePipelineAndTheStore() throws Exception {
    exec(
        server,
        "CREATE TABLE skipped (id int PRIMARY KEY, v int)",
        "INSERT INTO skipped SELECT g, 0 FROM generate_series(1, 200) g",
        "CREATE PUBLICATION pub_skipped FOR TABLE skipped");
    PgConnectionConfig source =
        connection(server).toBuilder()
            .host(EmbeddedPostgres.HOST)
            .port(freePort())
            .addHost(server.host(), server.port())
            .build();
    TableName table = TableName.parse("skipped");
    RecordingDestination dest = RecordingDestination.create();
    try (PostgresStore store = store(source, "skip_first");
        Pipeline p =
            Pipeline.create(config("skip_first", "pub_skipped", source).build(), store, dest)) {
      p.start();
      awaitReady(store);
      exec(
          server, "UPDATE skipped SET v = 1 WHERE id <= 50", "INSERT INTO skipped VALUES (900, 9)");
      dest.awaitRowsEqual(table, read(server, table), WAIT);
      assertThat(p.failure()).isEmpty();
      assertThat(query(server, "SELECT active::text" + slotWhere("skip_first"))).isEqualTo("true");
      if (server.serverVersionNum() >= 170000) {
        assertThat(query(server, "SELECT failover::text" + slotWhere("skip_first")))
            .isEqualTo("false"); // failover slots are opt-in
      }
    }
  }

  @Test
  void aSourceRestartedWhileAnotherHostIsListedIsFollowed() throws Exception {
    exec(
        server,
        "CREATE TABLE restarted (id int PRIMARY KEY, v int)",
        "INSERT INTO restarted SELECT g, 0 FROM generate_series(1, 200) g",
        "CREATE PUBLICATION pub_restarted FOR TABLE restarted");
    PgConnectionConfig source =
        connection(server).toBuilder().addHost(EmbeddedPostgres.HOST, freePort()).build();
    TableName table = TableName.parse("restarted");
    RecordingDestination dest = RecordingDestination.create();
    try (PostgresStore store = store(source, "restarted");
        Pipeline p =
            Pipeline.create(config("restarted", "pub_restarted", source).build(), store, dest)) {
      p.start();
      awaitReady(store);
      exec(server, "UPDATE restarted SET v = 1 WHERE id <= 50");
      dest.awaitRowsEqual(table, read(server, table), WAIT);

      server.stop();
      server.restart();

      exec(
          server,
          "UPDATE restarted SET v = 2 WHERE id > 150",
          "DELETE FROM restarted WHERE id = 7");
      dest.awaitRowsEqual(table, read(server, table), WAIT);
      assertThat(p.failure()).isEmpty();
      assertThat(p.status().phase()).isEqualTo(PipelineStatus.Phase.RUNNING);
    }
  }

  @Test
  void failoverSlotsOnAServerBeforeSeventeenFailAtStartNamingSettingAndVersion() throws Exception {
    try (EmbeddedPostgres old = EmbeddedPostgres.builder().version(16).start()) {
      old.createDatabase("shop");
      exec(old, "CREATE TABLE t (id int PRIMARY KEY)", "CREATE PUBLICATION pub_t FOR TABLE t");
      PgConnectionConfig source = connection(old);
      PipelineConfig config =
          PipelineConfig.builder()
              .pipelineId("old_server")
              .publication("pub_t")
              .source(source)
              .failoverSlots(true)
              .build();
      try (PostgresStore store = store(source, "old_server");
          Pipeline p = Pipeline.create(config, store, RecordingDestination.create())) {
        assertThatThrownBy(p::start)
            .isInstanceOf(EtlException.class)
            .satisfies(e -> assertThat(((EtlException) e).kind()).isEqualTo(ErrorKind.CONFIG_ERROR))
            .hasMessageContaining("failoverSlots needs PostgreSQL 17 or later")
            .hasMessageContaining("PostgreSQL 16.");
      }
      assertThat(query(old, "SELECT count(*)::text FROM pg_replication_slots")).isEqualTo("0");
    }
  }

  /**
   * The full failover: a PostgreSQL 17 primary with a physical standby that synchronises slots; the
   * pipeline lists both hosts and asks for failover slots. The primary stops, the standby is
   * promoted, and the pipeline (and its store, in the source database) continues on the new primary
   * from the synchronised apply slot: no table is copied again, and the destination ends equal to
   * the new primary.
   */
  @Test
  void aPromotedStandbyIsFollowedFromTheSyncedApplySlotAndNothingIsLost() throws Exception {
    TableName table = TableName.parse("orders");
    RecordingDestination dest = RecordingDestination.create();
    try (EmbeddedPostgres primary = EmbeddedPostgres.builder().version(17).start()) {
      primary.createDatabase("shop");
      try (EmbeddedPostgres standby = primary.standby().slotSync(true).start()) {
        exec(
            primary,
            "CREATE TABLE orders (id int PRIMARY KEY, v int)",
            "INSERT INTO orders SELECT g, 0 FROM generate_series(1, 500) g",
            "CREATE PUBLICATION pub_orders FOR TABLE orders");
        PgConnectionConfig source =
            connection(primary).toBuilder().addHost(standby.host(), standby.port()).build();
        try (PostgresStore store = store(source, "promoted");
            Pipeline p =
                Pipeline.create(
                    config("promoted", "pub_orders", source).failoverSlots(true).build(),
                    store,
                    dest)) {
          p.start();
          awaitReady(store);
          assertThat(query(primary, "SELECT failover::text" + slotWhere("promoted")))
              .isEqualTo("true");
          exec(primary, "UPDATE orders SET v = 1 WHERE id <= 100");
          dest.awaitRowsEqual(table, read(primary, table), WAIT);

          // The standby's copy of the slot becomes usable once the primary's copy has moved past
          // the standby's horizon; a logged snapshot lets the standby decode from there.
          await()
              .atMost(WAIT)
              .pollInterval(Duration.ofMillis(500))
              .until(
                  () -> {
                    exec(
                        primary,
                        "INSERT INTO orders VALUES (-1, 0) ON CONFLICT (id) DO UPDATE"
                            + " SET v = orders.v + 1",
                        "SELECT pg_log_standby_snapshot()");
                    return "true"
                        .equals(
                            query(
                                standby,
                                "SELECT (synced AND NOT temporary)::text" + slotWhere("promoted")));
                  });
          exec(primary, "INSERT INTO orders SELECT g, 2 FROM generate_series(501, 600) g");
          int copies = dest.count(DestinationOperation.DROP_TABLE_FOR_COPY, table);

          primary.stop();
          standby.promote();
          exec(
              standby,
              "UPDATE orders SET v = 3 WHERE id BETWEEN 400 AND 550",
              "DELETE FROM orders WHERE id <= 10",
              "INSERT INTO orders VALUES (1000, 4)");

          dest.awaitRowsEqual(table, read(standby, table), WAIT);
          assertThat(p.failure()).isEmpty();
          assertThat(dest.count(DestinationOperation.DROP_TABLE_FOR_COPY, table))
              .as("no table is copied again after the promotion")
              .isEqualTo(copies);
          assertThat(query(standby, "SELECT (synced AND active)::text" + slotWhere("promoted")))
              .as("the new primary streams the slot it synchronised, not a new one")
              .isEqualTo("true");
          assertThat(store.tableStates().values()).allMatch(s -> s.type() == TableState.Type.READY);
        }
      }
    }
  }

  private static PipelineConfig.Builder config(
      String id, String publication, PgConnectionConfig source) {
    return PipelineConfig.builder()
        .pipelineId(id)
        .publication(publication)
        .source(source)
        .batchMaxFill(Duration.ofMillis(100))
        .statusInterval(Duration.ofMillis(500))
        .retryDelay(Duration.ofMillis(200))
        .retryMaxDelay(Duration.ofSeconds(2))
        .lifecyclePollInterval(Duration.ofMillis(200));
  }

  private static PostgresStore store(PgConnectionConfig source, String id) {
    return PostgresStore.builder()
        .connection(source)
        .pipelineId(id)
        .connectionTimeout(Duration.ofSeconds(2))
        .build();
  }

  private static PgConnectionConfig connection(EmbeddedPostgres pg) {
    return PgConnectionConfig.builder()
        .host(pg.host())
        .port(pg.port())
        .database("shop")
        .user(pg.superuser())
        .password(pg.password())
        .connectTimeout(Duration.ofSeconds(2))
        .build();
  }

  private static void awaitReady(PostgresStore store) {
    await()
        .atMost(WAIT)
        .until(
            () ->
                !store.tableStates().isEmpty()
                    && store.tableStates().values().stream()
                        .allMatch(s -> s.type() == TableState.Type.READY));
  }

  private static String slotWhere(String pipelineId) {
    return " FROM pg_replication_slots WHERE slot_name = 'pgetl_apply_" + pipelineId + "'";
  }

  private static java.util.List<java.util.List<Object>> read(EmbeddedPostgres pg, TableName table)
      throws SQLException {
    try (Connection c = pg.connect("shop")) {
      return SourceTables.read(c, table);
    }
  }

  private static void exec(EmbeddedPostgres pg, String... sql) throws SQLException {
    try (Connection c = pg.connect("shop");
        Statement st = c.createStatement()) {
      for (String s : sql) {
        st.execute(s);
      }
    }
  }

  private static String query(EmbeddedPostgres pg, String sql) throws SQLException {
    try (Connection c = pg.connect("shop");
        Statement st = c.createStatement();
        ResultSet rs = st.executeQuery(sql)) {
      return rs.next() ? rs.getString(1) : null;
    }
  }

  /** Returns a port nothing listens on (free a moment ago, on the loopback address). */
  private static int freePort() throws IOException {
    try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getByName(EmbeddedPostgres.HOST))) {
      return s.getLocalPort();
    }
  }
}
