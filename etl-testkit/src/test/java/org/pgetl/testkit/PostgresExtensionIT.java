package org.pgetl.testkit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.platform.engine.discovery.DiscoverySelectors.selectClass;

import java.sql.Connection;
import java.sql.SQLException;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.platform.testkit.engine.EngineExecutionResults;
import org.junit.platform.testkit.engine.EngineTestKit;
import org.postgresql.PGConnection;
import org.postgresql.replication.PGReplicationStream;

/**
 * Runs a test class under {@link PostgresExtension} and checks from outside that its database
 * existed while it ran and that the database and its slots, active ones included, are gone after.
 */
@Timeout(value = 2, unit = TimeUnit.MINUTES)
class PostgresExtensionIT {

  /** What the class under the extension saw, for the outer test to check afterwards. */
  static final class Seen {
    static volatile String constructorDb;
    static volatile String beforeAllDb;
    static volatile String testDb;
    static volatile String nestedDb;
    static volatile Connection replicationConnection;
    static volatile PGReplicationStream stream;

    static void reset() {
      constructorDb = null;
      beforeAllDb = null;
      testDb = null;
      nestedDb = null;
      replicationConnection = null;
      stream = null;
    }
  }

  @AfterEach
  void closeLeftovers() {
    Connection c = Seen.replicationConnection;
    if (c != null) {
      try {
        c.close();
      } catch (SQLException expected) {
        // the extension terminated its walsender
      }
    }
    Seen.reset();
  }

  @Test
  void databaseLivesForTheClassAndGoesWithItsSlots() throws Exception {
    Seen.reset();

    EngineExecutionResults results =
        EngineTestKit.engine("junit-jupiter")
            .selectors(selectClass(UnderExtension.class))
            .execute();

    results.allEvents().failed().stream().forEach(e -> System.err.println("failed: " + e));
    results.testEvents().assertStatistics(stats -> stats.succeeded(2).failed(0).aborted(0));
    results.containerEvents().assertStatistics(stats -> stats.failed(0));
    String db = Seen.testDb;
    assertThat(db).startsWith(PostgresExtension.DATABASE_PREFIX);
    assertThat(List.of(Seen.constructorDb, Seen.beforeAllDb, Seen.nestedDb)).containsOnly(db);

    PostgresServer server = EmbeddedPostgres.shared();
    TestDatabase postgres = new TestDatabase(server, "postgres");
    assertThat(postgres.queryLong("SELECT count(*) FROM pg_database WHERE datname = ?", db))
        .isZero();
    assertThat(
            postgres.queryLong("SELECT count(*) FROM pg_replication_slots WHERE database = ?", db))
        .isZero();
    assertThat(postgres.queryLong("SELECT count(*) FROM pg_stat_activity WHERE datname = ?", db))
        .isZero();
  }

  @Test
  void everyRunOfAClassGetsAFreshDatabase() {
    Seen.reset();
    EngineTestKit.engine("junit-jupiter").selectors(selectClass(UnderExtension.class)).execute();
    String first = Seen.testDb;
    closeLeftovers();

    EngineExecutionResults second =
        EngineTestKit.engine("junit-jupiter")
            .selectors(selectClass(UnderExtension.class))
            .execute();

    second.testEvents().assertStatistics(stats -> stats.succeeded(2).failed(0));
    assertThat(first).isNotNull();
    assertThat(Seen.testDb).isNotNull().isNotEqualTo(first);
  }

  /** The class run through the engine test kit; its name keeps the build from running it alone. */
  @WithPostgres
  static class UnderExtension {
    private final TestDatabase db;

    UnderExtension(TestDatabase db) {
      this.db = db;
      Seen.constructorDb = db.name();
    }

    @BeforeAll
    static void createSchema(TestDatabase db) {
      Seen.beforeAllDb = db.name();
      db.execute(
          "CREATE TABLE items (id bigint PRIMARY KEY, name text)",
          "CREATE PUBLICATION pub FOR TABLE items");
    }

    @Test
    void usesItsOwnDatabaseWithSlots(PostgresServer server) throws Exception {
      Seen.testDb = db.name();
      assertThat(db.queryString("SELECT current_database()")).isEqualTo(db.name());
      assertThat(db.jdbcUrl()).isEqualTo(server.jdbcUrl(db.name()));
      assertThat(db.serverVersionNum()).isEqualTo(server.serverVersionNum());

      db.execute(
          "SELECT pg_create_logical_replication_slot('idle_slot', 'pgoutput')",
          "SELECT pg_create_logical_replication_slot('busy_slot', 'pgoutput')",
          "INSERT INTO items VALUES (1, 'one')");
      Connection replication = db.connectReplication();
      Seen.replicationConnection = replication;
      Seen.stream =
          replication
              .unwrap(PGConnection.class)
              .getReplicationAPI()
              .replicationStream()
              .logical()
              .withSlotName("busy_slot")
              .withSlotOption("proto_version", "1")
              .withSlotOption("publication_names", "pub")
              .start();

      List<ReplicationSlotInfo> slots = db.replicationSlots();
      assertThat(slots)
          .extracting(ReplicationSlotInfo::slotName)
          .containsExactly("busy_slot", "idle_slot");
      assertThat(slots.get(0).active()).isTrue();
      assertThat(slots.get(0).activePid()).isNotNull();
      assertThat(slots.get(1).active()).isFalse();
      assertThat(slots.get(1).confirmedFlushLsn()).matches("[0-9A-F]+/[0-9A-F]+");
      assertThat(slots.get(1).walStatus()).isEqualTo("reserved");
    }

    @Nested
    class Inner {
      @Test
      void sharesTheOuterDatabase(TestDatabase inner) {
        Seen.nestedDb = inner.name();
        assertThat(inner.queryLong("SELECT count(*) FROM items")).isEqualTo(1);
      }
    }
  }
}
