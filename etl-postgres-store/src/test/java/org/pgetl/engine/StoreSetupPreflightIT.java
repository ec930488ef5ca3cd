package org.pgetl.engine;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.pgetl.PgConnectionConfig;
import org.pgetl.Pipeline;
import org.pgetl.PipelineConfig;
import org.pgetl.PipelineStatus;
import org.pgetl.Preflight;
import org.pgetl.error.ErrorKind;
import org.pgetl.error.EtlException;
import org.pgetl.store.postgres.PostgresStore;
import org.pgetl.testkit.TestDatabase;
import org.pgetl.testkit.WithPostgres;
import org.pgetl.testkit.destination.RecordingDestination;

/**
 * The preflight checks with a {@link PostgresStore} opened without migrating, in the source
 * database: they change nothing in the catalogs, say what a start will create, fail the store check
 * when the role could not create it, and a start that fails several checks names them all in its
 * one error, creating nothing; a start that passes them creates the schema.
 */
@WithPostgres
@Timeout(value = 5, unit = TimeUnit.MINUTES)
class StoreSetupPreflightIT {
  private static TestDatabase db;
  private static String role;

  @BeforeAll
  static void schema(TestDatabase database) {
    db = database;
    role = "store_pf_" + Long.toUnsignedString(ThreadLocalRandom.current().nextLong(), 36);
    db.execute(
        "CREATE TABLE items (id int PRIMARY KEY, name text)",
        "INSERT INTO items VALUES (1, 'one')",
        "CREATE PUBLICATION items_pub FOR TABLE items",
        // REPLICATION, without CREATE on the database
        "CREATE ROLE " + role + " LOGIN REPLICATION PASSWORD 'pw'",
        // neither REPLICATION nor CREATE on the database
        "CREATE ROLE " + role + "_none LOGIN PASSWORD 'pw'",
        "GRANT SELECT ON items TO " + role + ", " + role + "_none");
  }

  @AfterAll
  static void dropRoles() {
    db.dropAllSlots();
    db.execute(
        "DROP OWNED BY " + role + ", " + role + "_none",
        "DROP ROLE " + role,
        "DROP ROLE " + role + "_none");
  }

  private static PgConnectionConfig as(String user) {
    return PipelineHarness.source(db).toBuilder().user(user).password("pw").build();
  }

  private static PostgresStore unmigrated(PgConnectionConfig connection, String pipelineId) {
    return PostgresStore.builder()
        .connection(connection)
        .pipelineId(pipelineId)
        .buildWithoutMigrating();
  }

  /** The schemas, relations and slots of the database, sorted: what a read-only check keeps. */
  private static List<List<@Nullable String>> catalogs() {
    return db.queryRows(
        "SELECT 'namespace', oid::text, nspname FROM pg_namespace"
            + " UNION ALL SELECT 'class', oid::text, relname || ' in ' || relnamespace::text"
            + " FROM pg_class"
            + " UNION ALL SELECT 'slot', slot_name::text, plugin::text FROM pg_replication_slots"
            + " WHERE database = current_database()"
            + " ORDER BY 1, 2, 3");
  }

  private static Preflight.Check check(List<Preflight.Check> checks, String name) {
    return checks.stream().filter(c -> c.name().equals(name)).findFirst().orElseThrow();
  }

  private static boolean schemaExists(String schema) {
    return db.queryLong("SELECT count(*) FROM pg_namespace WHERE nspname = ?", schema) > 0;
  }

  @Test
  void aCheckOnAFreshDatabaseChangesNoCatalogAndSaysWhatStartCreatesWhichStartThenDoes() {
    PipelineConfig config = PipelineHarness.config(db, "fresh", "items_pub").build();
    List<List<@Nullable String>> before = catalogs();
    List<Preflight.Check> checks;
    try (PostgresStore store = unmigrated(PipelineHarness.source(db), "fresh")) {
      checks = Preflight.run(config, store);
    }
    assertThat(catalogs()).isEqualTo(before);
    assertThat(schemaExists("etl")).isFalse();
    assertThat(Preflight.failure(checks)).isEmpty();
    assertThat(check(checks, "state store").summary())
        .isEqualTo(
            "state store: schema etl does not exist; start will create it (needs CREATE on"
                + " database "
                + db.name()
                + ", which role "
                + db.user()
                + " has)");
    // the slot count takes every published table as new
    assertThat(check(checks, "replication slots").passed()).isTrue();

    try (PostgresStore store = unmigrated(PipelineHarness.source(db), "fresh")) {
      Pipeline p = PipelineHarness.start(config, store, RecordingDestination.create());
      try {
        PipelineHarness.awaitAllReady(store, 1);
        assertThat(schemaExists("etl")).isTrue();
        assertThat(db.queryLong("SELECT count(*) FROM etl.replication_state")).isPositive();
        List<Preflight.Check> again = Preflight.run(config, store);
        assertThat(check(again, "state store").summary())
            .startsWith("state store: reachable, 1 table state");
      } finally {
        p.close();
      }
    }
  }

  @Test
  void aRoleWithoutCreateOnTheDatabaseFailsTheStoreCheckWithTheGrantAndChangesNothing() {
    PipelineConfig config =
        PipelineHarness.config(db, "nocreate", "items_pub").source(as(role)).build();
    List<List<@Nullable String>> before = catalogs();
    List<Preflight.Check> checks;
    try (PostgresStore store = unmigrated(as(role), "nocreate")) {
      checks = Preflight.run(config, store);
    }
    assertThat(catalogs()).isEqualTo(before);
    Preflight.Check store = check(checks, "state store");
    assertThat(store.status()).isEqualTo(Preflight.Status.FAILED);
    assertThat(store.failure().kind()).isEqualTo(ErrorKind.PERMISSION_DENIED);
    assertThat(store.summary())
        .isEqualTo(
            "schema etl does not exist in database "
                + db.name()
                + " and role "
                + role
                + " has no CREATE on the database to create it at start: GRANT CREATE ON DATABASE "
                + db.name()
                + " TO "
                + role
                + ", or create it for the role: CREATE SCHEMA etl AUTHORIZATION "
                + role);
    assertThat(checks)
        .filteredOn(c -> c.status() == Preflight.Status.FAILED)
        .extracting(Preflight.Check::name)
        .containsExactly("state store");
  }

  @Test
  void aStartByARoleWithoutReplicationNorCreateNamesBothInItsOneErrorAndCreatesNothing() {
    PipelineConfig config =
        PipelineHarness.config(db, "neither", "items_pub").source(as(role + "_none")).build();
    List<List<@Nullable String>> before = catalogs();
    EtlException e;
    try (PostgresStore store = unmigrated(as(role + "_none"), "neither")) {
      Pipeline p = Pipeline.create(config, store, RecordingDestination.create());
      try {
        p.start();
        throw new AssertionError("the pipeline started");
      } catch (EtlException failed) {
        e = failed;
      }
      assertThat(p.status().phase()).isEqualTo(PipelineStatus.Phase.FAILED);
    }
    assertThat(e.kind()).isEqualTo(ErrorKind.PERMISSION_DENIED);
    assertThat(e.getMessage())
        .startsWith("PERMISSION_DENIED: 2 preflight checks failed: (1) replication privilege: ")
        .contains("has neither REPLICATION nor SUPERUSER")
        .contains("ALTER ROLE " + role + "_none REPLICATION")
        .contains("; (2) state store: schema etl does not exist")
        .contains("GRANT CREATE ON DATABASE " + db.name() + " TO " + role + "_none");
    assertThat(e.getSuppressed()).hasSize(1);
    assertThat(catalogs()).isEqualTo(before);
  }

  @Test
  void aSchemaBehindTheJarIsReportedAsMigratedByStartAndTheCheckChangesNothing() {
    try (PostgresStore store =
        PostgresStore.builder()
            .connection(PipelineHarness.source(db))
            .schema("etl_old")
            .pipelineId("old")
            .build()) {
      // as a store of the version before the lease table (and so before the chunk table)
      db.execute(
          "DROP TABLE etl_old.table_chunks",
          "DROP TABLE etl_old.pipeline_leases",
          "DELETE FROM etl_old.pgetl_schema_history WHERE version IN ('4', '5')");
    }
    PipelineConfig config = PipelineHarness.config(db, "old", "items_pub").build();
    List<List<@Nullable String>> before = catalogs();
    List<Preflight.Check> checks;
    try (PostgresStore store =
        PostgresStore.builder()
            .connection(PipelineHarness.source(db))
            .schema("etl_old")
            .pipelineId("old")
            .buildWithoutMigrating()) {
      checks = Preflight.run(config, store);
    }
    assertThat(catalogs()).isEqualTo(before);
    assertThat(check(checks, "state store").summary())
        .isEqualTo(
            "state store: schema etl_old lacks migrations 4, 5; start will migrate it (needs"
                + " CREATE on schema etl_old, which role "
                + db.user()
                + " has)");
  }
}
