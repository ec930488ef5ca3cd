package org.pgetl.examples.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.pgetl.testkit.EmbeddedPostgres;
import org.pgetl.testkit.TestDatabase;
import org.pgetl.testkit.WithPostgres;

/**
 * What a user sees when a preflight check fails: {@code pgetl check} prints one FAIL line among its
 * ok lines and exits 1, {@code pgetl replicate} prints one error line and exits 1, and neither
 * leaves a replication slot or a state row behind. On a good setup {@code pgetl check} exits 0.
 */
@WithPostgres
@Timeout(value = 5, unit = TimeUnit.MINUTES)
class CliPreflightIT {
  private static TestDatabase db;
  private static String role;

  @BeforeAll
  static void schema(TestDatabase database) {
    db = database;
    role = "cli_pf_" + Long.toUnsignedString(ThreadLocalRandom.current().nextLong(), 36);
    db.execute(
        "CREATE TABLE items (id int PRIMARY KEY, name text)",
        "CREATE TABLE secret (id int PRIMARY KEY, v text)",
        "CREATE TABLE no_key (id int, v text)",
        "CREATE PUBLICATION items_pub FOR TABLE items",
        "CREATE PUBLICATION two_pub FOR TABLE items, secret",
        "CREATE PUBLICATION no_key_pub FOR TABLE items, no_key",
        "CREATE ROLE " + role + " LOGIN REPLICATION PASSWORD 'pw'",
        "CREATE ROLE " + role + "_norepl LOGIN PASSWORD 'pw'",
        // REPLICATION without CREATE on the database; neither of the two
        "CREATE ROLE " + role + "_nocreate LOGIN REPLICATION PASSWORD 'pw'",
        "CREATE ROLE " + role + "_bare LOGIN PASSWORD 'pw'",
        "GRANT SELECT ON items TO "
            + role
            + ", "
            + role
            + "_norepl, "
            + role
            + "_nocreate, "
            + role
            + "_bare",
        // each role keeps its state in a schema of its own, which it creates
        "GRANT CREATE ON DATABASE " + db.name() + " TO " + role + ", " + role + "_norepl");
  }

  @AfterAll
  static void dropRoles() {
    db.execute(
        "DROP OWNED BY " + role + ", " + role + "_norepl, " + role + "_nocreate, " + role + "_bare",
        "DROP ROLE " + role,
        "DROP ROLE " + role + "_norepl",
        "DROP ROLE " + role + "_nocreate",
        "DROP ROLE " + role + "_bare");
  }

  private static String url(TestDatabase d, String user, String password) {
    return d.jdbcUrl() + "?user=" + user + "&password=" + password;
  }

  private static String[] args(
      String command, String url, String publication, String pipeline, String schema) {
    return new String[] {
      command,
      "--source-url",
      url,
      "--publication",
      publication,
      "--pipeline-id",
      pipeline,
      "--store-schema",
      schema
    };
  }

  /**
   * Runs {@code check} and {@code replicate} against a setup with one problem; returns the FAIL
   * line of {@code check}, after checking both outputs, the exit codes, and that nothing was left.
   */
  private static String failsAlone(
      TestDatabase d, String url, String publication, String pipeline, String schema, String kind) {
    long slotsBefore = d.queryLong("SELECT count(*) FROM pg_replication_slots");

    CliRun.Finished check = CliRun.run(args("check", url, publication, pipeline, schema));
    assertThat(check.exitCode()).as(check.out() + check.err()).isEqualTo(Main.EXIT_FAILURE);
    List<String> lines = check.out().lines().toList();
    List<String> failed = lines.stream().filter(l -> l.startsWith("FAIL ")).toList();
    assertThat(failed).as(check.out()).hasSize(1);
    assertThat(failed.get(0)).contains(": " + kind + ": ").contains(" — ");
    assertThat(lines).filteredOn(l -> l.startsWith("ok   ")).isNotEmpty();
    assertThat(lines.get(lines.size() - 1))
        .isEqualTo("pgetl check: 1 of 10 checks failed; pgetl replicate would not start");

    CliRun.Finished replicate = CliRun.run(args("replicate", url, publication, pipeline, schema));
    assertThat(replicate.exitCode()).isEqualTo(Main.EXIT_FAILURE);
    assertThat(replicate.errLines()).hasSize(1);
    assertThat(replicate.errLines().get(0))
        .startsWith("error: " + kind + ": ")
        .contains(". hint: ")
        .doesNotContain("[+");
    assertThat(replicate.out()).isEmpty();

    assertThat(d.queryLong("SELECT count(*) FROM pg_replication_slots")).isEqualTo(slotsBefore);
    assertThat(stateRows(d, schema, pipeline)).isZero();
    return failed.get(0);
  }

  private static long stateRows(TestDatabase d, String schema, String pipeline) {
    if (d.queryString("SELECT to_regclass(?)::text", schema + ".replication_state") == null) {
      return 0;
    }
    return d.queryLong(
        "SELECT count(*) FROM " + schema + ".replication_state WHERE pipeline_id = ?", pipeline);
  }

  /** The schemas, relations and slots of a database, sorted: what a read-only check keeps. */
  private static List<List<@Nullable String>> catalogs(TestDatabase d) {
    return d.queryRows(
        "SELECT 'namespace', oid::text, nspname FROM pg_namespace"
            + " UNION ALL SELECT 'class', oid::text, relname || ' in ' || relnamespace::text"
            + " FROM pg_class"
            + " UNION ALL SELECT 'slot', slot_name::text, plugin::text FROM pg_replication_slots"
            + " WHERE database = current_database()"
            + " ORDER BY 1, 2, 3");
  }

  @Test
  void checkOnAGoodSetupPrintsOnlyOkLinesExitsZeroAndChangesNoCatalog() {
    List<List<@Nullable String>> before = catalogs(db);
    CliRun.Finished r =
        CliRun.run(args("check", url(db, role, "pw"), "items_pub", "good", "store_" + role));
    assertThat(catalogs(db)).isEqualTo(before);
    assertThat(r.exitCode()).as(r.out() + r.err()).isZero();
    List<String> lines = r.out().lines().toList();
    assertThat(lines).hasSize(11);
    assertThat(lines.subList(0, 10)).allMatch(l -> l.startsWith("ok   "));
    assertThat(lines)
        .contains(
            "ok   wal_level = logical",
            "ok   role " + role + " has REPLICATION",
            "ok   publication items_pub publishes 1 table (insert, update, delete, truncate)",
            "ok   SELECT on the 1 table the copy reads",
            "ok   state store: schema store_"
                + role
                + " does not exist; start will create it (needs CREATE on database "
                + db.name()
                + ", which role "
                + role
                + " has)");
    assertThat(lines.get(10)).isEqualTo("pgetl check: all 10 checks passed");
    assertThat(r.err()).isEmpty();
    assertThat(db.replicationSlots()).isEmpty();
    assertThat(stateRows(db, "store_" + role, "good")).isZero();
  }

  @Test
  void aMissingPublication() {
    String line =
        failsAlone(
            db,
            url(db, role, "pw"),
            "no_such_pub",
            "no_pub",
            "store_" + role,
            "PUBLICATION_NOT_FOUND");
    assertThat(line)
        .startsWith("FAIL publication: PUBLICATION_NOT_FOUND: publication 'no_such_pub' does not")
        .contains("— create the publication");
  }

  @Test
  void aRoleWithoutReplication() {
    String line =
        failsAlone(
            db,
            url(db, role + "_norepl", "pw"),
            "items_pub",
            "no_repl",
            "store_" + role + "_norepl",
            "PERMISSION_DENIED");
    assertThat(line)
        .startsWith("FAIL replication privilege: PERMISSION_DENIED: role " + role + "_norepl")
        .contains("ALTER ROLE " + role + "_norepl REPLICATION");
  }

  @Test
  void aRoleWithoutCreateOnTheDatabaseForTheStoreInTheSource() {
    List<List<@Nullable String>> before = catalogs(db);
    String line =
        failsAlone(
            db,
            url(db, role + "_nocreate", "pw"),
            "items_pub",
            "no_create",
            "store_nocreate",
            "PERMISSION_DENIED");
    assertThat(line)
        .startsWith(
            "FAIL state store: PERMISSION_DENIED: schema store_nocreate does not exist in database "
                + db.name()
                + " and role "
                + role
                + "_nocreate has no CREATE on the database")
        .contains("GRANT CREATE ON DATABASE " + db.name() + " TO " + role + "_nocreate");
    assertThat(catalogs(db)).isEqualTo(before);
  }

  @Test
  void replicateByARoleWithoutReplicationNorCreateNamesBothInItsOneErrorLine() {
    List<List<@Nullable String>> before = catalogs(db);
    String url = url(db, role + "_bare", "pw");

    CliRun.Finished check = CliRun.run(args("check", url, "items_pub", "bare", "store_bare"));
    assertThat(check.exitCode()).as(check.out() + check.err()).isEqualTo(Main.EXIT_FAILURE);
    assertThat(check.out().lines().filter(l -> l.startsWith("FAIL ")))
        .as(check.out())
        .extracting(l -> l.substring(0, l.indexOf(':')))
        .containsExactly("FAIL replication privilege", "FAIL state store");

    CliRun.Finished replicate =
        CliRun.run(args("replicate", url, "items_pub", "bare", "store_bare"));
    assertThat(replicate.exitCode()).isEqualTo(Main.EXIT_FAILURE);
    assertThat(replicate.errLines()).hasSize(1);
    assertThat(replicate.errLines().get(0))
        .startsWith(
            "error: PERMISSION_DENIED: 2 preflight checks failed: (1) replication privilege:")
        .contains("ALTER ROLE " + role + "_bare REPLICATION")
        .contains("(2) state store: schema store_bare does not exist")
        .contains("GRANT CREATE ON DATABASE " + db.name() + " TO " + role + "_bare")
        .doesNotContain("[+");
    assertThat(catalogs(db)).isEqualTo(before);
  }

  @Test
  void noSelectOnOneTable() {
    String line =
        failsAlone(
            db, url(db, role, "pw"), "two_pub", "no_select", "store_" + role, "PERMISSION_DENIED");
    assertThat(line)
        .startsWith("FAIL SELECT privilege: PERMISSION_DENIED: role " + role)
        .contains("GRANT SELECT ON TABLE public.secret TO " + role);
  }

  @Test
  void aTableWithoutReplicaIdentityIsAWarningAndCheckPasses() {
    CliRun.Finished check =
        CliRun.run(args("check", url(db, db.user(), db.password()), "no_key_pub", "no_key", "etl"));
    assertThat(check.exitCode()).as(check.out() + check.err()).isZero();
    List<String> lines = check.out().lines().toList();
    assertThat(lines)
        .filteredOn(l -> l.startsWith("warn "))
        .singleElement()
        .asString()
        .startsWith("warn replica identity: 1 table without a replica identity (copied, INSERT and")
        .contains("table public.no_key has no primary key")
        .contains("ALTER TABLE public.no_key REPLICA IDENTITY FULL");
    assertThat(lines).noneMatch(l -> l.startsWith("FAIL "));
    assertThat(lines.get(lines.size() - 1))
        .isEqualTo("pgetl check: all 10 checks passed (1 warning)");
  }

  @Test
  void walLevelReplica() throws Exception {
    try (EmbeddedPostgres pg = EmbeddedPostgres.builder().setting("wal_level", "replica").start()) {
      TestDatabase app = server(pg);
      String line =
          failsAlone(
              app,
              url(app, app.user(), app.password()),
              "items_pub",
              "replica",
              "etl",
              "SOURCE_WAL_LEVEL_NOT_LOGICAL");
      assertThat(line)
          .startsWith("FAIL wal_level: SOURCE_WAL_LEVEL_NOT_LOGICAL: wal_level is 'replica' on")
          .contains("— set wal_level = logical");
    }
  }

  @Test
  void onlyOneFreeReplicationSlot() throws Exception {
    try (EmbeddedPostgres pg =
        EmbeddedPostgres.builder().setting("max_replication_slots", "1").start()) {
      TestDatabase app = server(pg);
      String line =
          failsAlone(
              app,
              url(app, app.user(), app.password()),
              "items_pub",
              "one_slot",
              "etl",
              "SOURCE_CONFIGURATION_LIMIT_EXCEEDED");
      assertThat(line)
          .startsWith(
              "FAIL replication slots: SOURCE_CONFIGURATION_LIMIT_EXCEEDED: the pipeline needs 2"
                  + " replication slots (the apply slot and 1 table-sync worker), but only 1 of"
                  + " max_replication_slots = 1 is free")
          .contains("raise max_replication_slots to at least 2");
    }
  }

  private static TestDatabase server(EmbeddedPostgres pg) {
    pg.createDatabase("app");
    TestDatabase app = new TestDatabase(pg, "app");
    app.execute(
        "CREATE TABLE items (id int PRIMARY KEY)", "CREATE PUBLICATION items_pub FOR TABLE items");
    return app;
  }
}
