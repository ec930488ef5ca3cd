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
import org.pgetl.model.Lsn;
import org.pgetl.model.TableName;
import org.pgetl.store.TableState;
import org.pgetl.store.postgres.PostgresStore;
import org.pgetl.testkit.EmbeddedPostgres;
import org.pgetl.testkit.destination.DestinationOperation;
import org.pgetl.testkit.destination.FaultyDestination;
import org.pgetl.testkit.destination.HoldHandle;
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
            .isEqualTo("true"); // failoverSlots=auto: a failover slot from 17 on
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
   * The full failover with the default settings (no failover setting given): a PostgreSQL 17
   * primary with a physical standby that synchronises slots and is listed in {@code
   * synchronized_standby_slots}; the pipeline lists both hosts. First the standby stops for a
   * while, and the status names it as what holds the pipeline. Then, under a workload of inserts,
   * updates, deletes and updates that leave a TOAST value unchanged, and while a table added to the
   * publication is being copied, the primary stops at once ({@code -m immediate}) and the standby
   * is promoted. The pipeline, not restarted, continues on the new primary from the synchronised
   * apply slot: every table ends equal to the new primary's, the only changes delivered twice are
   * replays of what the old primary had sent, and the failover's error reads as recovered.
   */
  @Test
  void aPromotedStandbyIsFollowedByDefaultUnderLoadAndNothingIsLostOrDoubled() throws Exception {
    TableName orders = TableName.parse("orders");
    TableName late = TableName.parse("late");
    RecordingDestination recording = RecordingDestination.create();
    FaultyDestination dest = FaultyDestination.wrap(recording);
    try (EmbeddedPostgres primary = EmbeddedPostgres.builder().version(17).start()) {
      primary.createDatabase("shop");
      exec(
          primary,
          "CREATE TABLE orders (id int PRIMARY KEY, v int, note text)",
          // EXTERNAL keeps the note out of line and uncompressed: an update of v leaves it
          // unchanged in the WAL (an unchanged-TOAST column)
          "ALTER TABLE orders ALTER COLUMN note SET STORAGE EXTERNAL",
          "INSERT INTO orders SELECT g, 0, repeat(md5(g::text), 200) FROM generate_series(1, 500) g",
          "CREATE TABLE late (id int PRIMARY KEY, v text)",
          "INSERT INTO late SELECT g, md5(g::text) FROM generate_series(1, 3000) g",
          "CREATE PUBLICATION pub_orders FOR TABLE orders");
      try (EmbeddedPostgres standby = primary.standby().slotSync(true).start()) {
        PgConnectionConfig source =
            connection(primary).toBuilder().addHost(standby.host(), standby.port()).build();
        PipelineConfig config = config("promoted", "pub_orders", source).build();
        assertThat(config.failoverSlots()).isEqualTo(PipelineConfig.FailoverSlots.AUTO);
        try (PostgresStore store = store(source, "promoted");
            Pipeline p = Pipeline.create(config, store, dest)) {
          p.start();
          awaitReady(store);
          assertThat(query(primary, "SELECT failover::text" + slotWhere("promoted")))
              .as("failoverSlots=auto makes the apply slot a failover slot on 17")
              .isEqualTo("true");

          // a stopped standby of synchronized_standby_slots holds the pipeline, by name
          standby.stop();
          exec(primary, "UPDATE orders SET v = 1 WHERE id <= 100");
          await()
              .atMost(WAIT)
              .untilAsserted(
                  () ->
                      assertThat(p.status().heldBy())
                          .contains("standby slot pgetl_standby")
                          .contains("synchronized_standby_slots"));
          standby.restart();
          recording.awaitRowsEqual(orders, read(primary, orders), WAIT);
          await().atMost(WAIT).until(() -> p.status().heldBy() == null);

          // the standby's copy of the slot becomes usable once the primary's copy has moved past
          // the standby's horizon; a logged snapshot lets the standby decode from there
          await()
              .atMost(WAIT)
              .pollInterval(Duration.ofMillis(500))
              .until(
                  () -> {
                    exec(
                        primary,
                        "INSERT INTO orders VALUES (-1, 0, 'x') ON CONFLICT (id) DO UPDATE"
                            + " SET v = orders.v + 1",
                        "SELECT pg_log_standby_snapshot()");
                    return "true"
                        .equals(
                            query(
                                standby,
                                "SELECT (synced AND NOT temporary)::text" + slotWhere("promoted")));
                  });

          // a table whose copy is under way at the promotion: its first rows are held unanswered
          HoldHandle copying =
              dest.holdNext(DestinationOperation.WRITE_TABLE_ROWS, c -> c.touches(late));
          exec(primary, "ALTER PUBLICATION pub_orders ADD TABLE late");
          assertThat(copying.awaitReached(WAIT)).as("the copy of late started").isTrue();
          await()
              .atMost(WAIT)
              .until(
                  () ->
                      "1"
                          .equals(
                              query(
                                  standby,
                                  "SELECT count(*)::text FROM pg_publication_tables"
                                      + " WHERE pubname = 'pub_orders' AND tablename = 'late'")));

          Workload load = new Workload(primary, 1000);
          Thread loader = new Thread(load, "failover-workload");
          loader.start();
          await().atMost(WAIT).until(() -> load.transactions.get() >= 20);
          primary.stopImmediately();
          loader.join(WAIT.toMillis());
          assertThat(loader.isAlive()).isFalse();
          standby.promote();
          long promoted = System.nanoTime();
          Lsn promotedAt = Lsn.parse(query(standby, "SELECT pg_current_wal_lsn()::text"));
          exec(standby, "INSERT INTO orders VALUES (100000, 7, 'after the promotion')");
          recording.awaitRows(
              orders, rows -> rows.stream().anyMatch(r -> r.get(0).equals(100000)), WAIT);
          long firstChangeMillis = (System.nanoTime() - promoted) / 1_000_000;
          System.out.printf(
              "failover (library, defaults): promotion to first change applied: %d ms%n",
              firstChangeMillis);
          copying.releaseDurable();

          Workload after = new Workload(standby, 50_000);
          after.run(30);
          recording.awaitRowsEqual(orders, read(standby, orders), WAIT);
          recording.awaitRowsEqual(late, read(standby, late), WAIT);
          assertThat(p.failure()).isEmpty();
          assertThat(recording.violations()).isEmpty();
          assertThat(recording.duplicateEvents())
              .as("only changes the old primary had sent are delivered again")
              .allMatch(e -> e.commitLsn().compareTo(promotedAt) < 0);
          assertThat(query(standby, "SELECT (synced AND active)::text" + slotWhere("promoted")))
              .as("the new primary streams the slot it synchronised, not a new one")
              .isEqualTo("true");
          await()
              .atMost(WAIT)
              .until(
                  () ->
                      store.tableStates().values().stream()
                          .allMatch(s -> s.type() == TableState.Type.READY));
          PipelineStatus.LastError last = p.status().lastError();
          if (last != null) {
            await().atMost(WAIT).until(() -> p.status().lastError().recovered());
          }
        }
      }
    }
  }

  /**
   * Inserts, updates (some leaving the TOAST column unchanged) and deletes rows of {@code orders},
   * one small transaction after another, until the server goes away or a count is reached.
   */
  private static final class Workload implements Runnable {
    private final EmbeddedPostgres server;
    private final int firstId;
    final java.util.concurrent.atomic.AtomicInteger transactions =
        new java.util.concurrent.atomic.AtomicInteger();

    Workload(EmbeddedPostgres server, int firstId) {
      this.server = server;
      this.firstId = firstId;
    }

    @Override
    public void run() {
      run(Integer.MAX_VALUE);
    }

    void run(int count) {
      try (Connection c = server.connect("shop");
          Statement st = c.createStatement()) {
        for (int i = 0; i < count; i++) {
          int n = transactions.getAndIncrement();
          int id = firstId + n;
          c.setAutoCommit(false);
          st.execute("INSERT INTO orders VALUES (" + id + ", 0, repeat(md5('" + id + "'), 200))");
          st.execute("UPDATE orders SET v = v + 1 WHERE id = " + (1 + n % 400)); // TOAST kept
          st.execute(
              "UPDATE orders SET note = repeat(md5('x"
                  + n
                  + "'), 150) WHERE id = "
                  + (401 + n % 90));
          if (n % 3 == 0) {
            st.execute("DELETE FROM orders WHERE id = " + (id - 1));
          }
          c.commit();
        }
      } catch (SQLException e) {
        // the server went away (the primary's immediate stop): the workload ends there
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
