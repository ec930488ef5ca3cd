package org.pgetl.testkit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A physical standby of an embedded server replays its writes, keeps a synchronised copy of its
 * failover slots, and accepts writes once promoted.
 */
@Timeout(value = 3, unit = TimeUnit.MINUTES)
class StandbyIT {
  private static final Duration WAIT = Duration.ofSeconds(60);

  @Test
  void aStandbyReplaysThePrimaryKeepsItsFailoverSlotAndIsPromoted() throws Exception {
    try (EmbeddedPostgres primary = EmbeddedPostgres.builder().version(17).start()) {
      int primaryPort = primary.port();
      exec(primary, "CREATE TABLE t (id int PRIMARY KEY)", "INSERT INTO t VALUES (1)");
      try (EmbeddedPostgres standby = primary.standby().slotSync(true).start()) {
        assertThat(standby.isInRecovery()).isTrue();
        assertThat(standby.port()).isNotEqualTo(primaryPort);
        assertThat(primary.port()).isEqualTo(primaryPort);
        assertThat(primary.isInRecovery()).isFalse();
        assertThat(query(standby, "SELECT count(*)::text FROM t")).isEqualTo("1");
        assertThat(query(standby, "SHOW sync_replication_slots")).isEqualTo("on");
        assertThat(query(primary, "SHOW synchronized_standby_slots")).isEqualTo("pgetl_standby");
        assertThat(
                query(
                    primary,
                    "SELECT active::text FROM pg_replication_slots"
                        + " WHERE slot_name = 'pgetl_standby'"))
            .isEqualTo("true");

        exec(
            primary,
            "SELECT pg_create_logical_replication_slot('logical_fo', 'pgoutput', false, false,"
                + " true)",
            "INSERT INTO t VALUES (2)");
        await()
            .atMost(WAIT)
            .until(() -> "2".equals(query(standby, "SELECT count(*)::text FROM t")));
        // A synced slot turns persistent once the primary's copy moves past the standby's
        // horizon: move it, and log a snapshot so that the standby can decode from there.
        await()
            .atMost(WAIT)
            .pollInterval(Duration.ofMillis(500))
            .until(
                () -> {
                  exec(
                      primary,
                      "SELECT pg_replication_slot_advance('logical_fo', pg_current_wal_lsn())",
                      "SELECT pg_log_standby_snapshot()");
                  return "true"
                      .equals(
                          query(
                              standby,
                              "SELECT (synced AND NOT temporary)::text FROM pg_replication_slots"
                                  + " WHERE slot_name = 'logical_fo'"));
                });

        primary.stop();
        standby.promote();
        assertThat(standby.isInRecovery()).isFalse();
        exec(standby, "INSERT INTO t VALUES (3)");
        assertThat(query(standby, "SELECT count(*)::text FROM t")).isEqualTo("3");
        assertThat(
                query(
                    standby,
                    "SELECT failover::text FROM pg_replication_slots"
                        + " WHERE slot_name = 'logical_fo'"))
            .isEqualTo("true");
      }
    }
  }

  private static void exec(EmbeddedPostgres pg, String... sql) throws SQLException {
    try (Connection c = pg.connect("postgres");
        Statement st = c.createStatement()) {
      for (String s : sql) {
        st.execute(s);
      }
    }
  }

  private static String query(EmbeddedPostgres pg, String sql) throws SQLException {
    try (Connection c = pg.connect("postgres");
        Statement st = c.createStatement();
        ResultSet rs = st.executeQuery(sql)) {
      return rs.next() ? rs.getString(1) : null;
    }
  }
}
