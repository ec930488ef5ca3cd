package org.pgetl.core.internal.pg;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.nio.ByteBuffer;
import java.sql.Connection;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.pgetl.PgConnectionConfig;
import org.pgetl.model.Lsn;

/** What the server records from the client's status updates: {@code confirmed_flush_lsn}. */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class FeedbackIT {
  private static final long POLL = TimeUnit.MILLISECONDS.toNanos(20);
  private static PgConnectionConfig config;
  private static PgConnector connector;
  private static Connection admin;
  private static Connection otherDatabase;
  private static SlotAdmin slots;

  @BeforeAll
  static void setUp() throws Exception {
    config = TestSource.freshDatabase("pgetl_feedback_it");
    connector = new PgConnector(config);
    admin = TestSource.open(config);
    otherDatabase = TestSource.open(TestSource.server());
    TestSource.exec(
        admin,
        "CREATE TABLE items (id int PRIMARY KEY, v text)",
        "CREATE PUBLICATION pub_items FOR TABLE items");
    TestSource.exec(otherDatabase, "CREATE TABLE IF NOT EXISTS pgetl_feedback_noise (x int)");
    slots = new SlotAdmin(connector.openPlain("pgetl:catalog:feedback_it"));
  }

  @AfterAll
  static void tearDown() throws Exception {
    if (otherDatabase != null) {
      TestSource.exec(otherDatabase, "DROP TABLE IF EXISTS pgetl_feedback_noise");
      otherDatabase.close();
    }
    if (admin != null) {
      admin.close();
    }
  }

  private static Lsn confirmed(String slot) {
    return slots.find(slot).orElseThrow().confirmedFlushLsn();
  }

  @Test
  void reportedFlushBecomesConfirmedFlushLsnAndNeverMovesBack() throws Exception {
    String slot = "pgetl_apply_feedback";
    try (ReplicationConnection repl = connector.openReplication("pgetl:apply:feedback")) {
      CreatedSlot created = repl.createSlot(slot, SnapshotMode.NOEXPORT_SNAPSHOT);
      ReplicationStream stream =
          repl.startStreaming(
              StreamOptions.of(slot, created.consistentPoint(), List.of("pub_items"))
                  .withFeedbackDelay(Duration.ofMillis(10)));
      TestSource.exec(admin, "INSERT INTO items VALUES (1, 'one')");
      long commitEnd = 0;
      while (commitEnd == 0) {
        ByteBuffer msg = stream.readNext(POLL);
        if (msg != null && PgoutputProbe.type(msg) == 'C') {
          commitEnd = PgoutputProbe.commitEndLsn(msg);
        }
      }
      Lsn x = Lsn.of(commitEnd);
      assertThat(x.isAfter(created.consistentPoint())).isTrue();
      assertThat(confirmed(slot)).isEqualTo(created.consistentPoint());

      assertThat(stream.advanceFlushed(x)).isTrue();
      await()
          .atMost(Duration.ofSeconds(30))
          .pollInSameThread()
          .pollInterval(Duration.ofMillis(20))
          .until(
              () -> {
                stream.readNext(POLL);
                return confirmed(slot).equals(x);
              });

      // A smaller flush LSN is never reported.
      assertThat(stream.advanceFlushed(created.consistentPoint())).isFalse();
      stream.forceStatusUpdate();
      stream.readNext(POLL);
      assertThat(stream.flushedLsn()).isEqualTo(x);
      assertThat(confirmed(slot)).isEqualTo(x);
    }
  }

  @Test
  void idleStreamReportingLastReceivedFollowsTheServersWalEnd() throws Exception {
    String slot = "pgetl_apply_idle";
    try (ReplicationConnection repl = connector.openReplication("pgetl:apply:idle")) {
      CreatedSlot created = repl.createSlot(slot, SnapshotMode.NOEXPORT_SNAPSHOT);
      ReplicationStream stream =
          repl.startStreaming(
              StreamOptions.of(slot, created.consistentPoint(), List.of("pub_items"))
                  .withFeedbackDelay(Duration.ofMillis(10)));
      // WAL that this slot never publishes: another database, and an unpublished message here.
      for (int i = 0; i < 3; i++) {
        TestSource.exec(otherDatabase, "INSERT INTO pgetl_feedback_noise VALUES (" + i + ")");
      }
      TestSource.exec(admin, "SELECT pg_logical_emit_message(false, 'pgetl-test', 'noise')");
      Lsn walEnd = Lsn.parse(TestSource.queryString(admin, "SELECT pg_current_wal_lsn()::text"));
      assertThat(walEnd.isAfter(created.consistentPoint())).isTrue();

      await()
          .atMost(Duration.ofSeconds(30))
          .pollInSameThread()
          .pollInterval(Duration.ofMillis(20))
          .until(
              () -> {
                ByteBuffer msg = stream.readNext(POLL);
                assertThat(msg).as("nothing published, so no data").isNull();
                // Fully idle: everything received was delivered, so the received LSN may be
                // confirmed. A forced update makes the walsender answer with its WAL position.
                stream.advanceFlushed(stream.lastReceivedLsn());
                stream.forceStatusUpdate();
                return !confirmed(slot).isBefore(walEnd);
              });
      assertThat(stream.lastReceivedLsn().isBefore(walEnd)).isFalse();
    }
  }
}
