package org.pgetl.engine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;
import static org.pgetl.engine.PipelineHarness.config;

import java.sql.Connection;
import java.sql.Statement;
import java.util.List;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.pgetl.PgConnectionConfig;
import org.pgetl.Pipeline;
import org.pgetl.PipelineConfig;
import org.pgetl.PipelineStatus;
import org.pgetl.Preflight;
import org.pgetl.TableCopySelection;
import org.pgetl.destination.Destination;
import org.pgetl.destination.DestinationContext;
import org.pgetl.error.ErrorKind;
import org.pgetl.error.EtlException;
import org.pgetl.model.ReplicatedTableSchema;
import org.pgetl.model.TableName;
import org.pgetl.store.MemoryStore;
import org.pgetl.testkit.EmbeddedPostgres;
import org.pgetl.testkit.ReplicationSlotInfo;
import org.pgetl.testkit.TestDatabase;
import org.pgetl.testkit.WithPostgres;
import org.pgetl.testkit.destination.ForwardingDestination;
import org.pgetl.testkit.destination.RecordingDestination;

/**
 * The checks {@code Pipeline.start()} runs before it creates anything: each failure on its own
 * fails the start with one error that names the object and the fix, and leaves no replication slot
 * and no table state behind; {@link Preflight#run} reports the same without starting.
 */
@WithPostgres
@Timeout(value = 4, unit = TimeUnit.MINUTES)
class PreflightIT {
  private static TestDatabase db;
  private static String role;

  @BeforeAll
  static void schema(TestDatabase database) {
    db = database;
    role = "preflight_" + Long.toUnsignedString(ThreadLocalRandom.current().nextLong(), 36);
    db.execute(
        "CREATE TABLE items (id int PRIMARY KEY, name text)",
        "CREATE TABLE secret (id int PRIMARY KEY, v text)",
        "CREATE TABLE no_key (id int, v text)",
        "CREATE TABLE measures (id int NOT NULL, v int, PRIMARY KEY (id)) PARTITION BY RANGE (id)",
        "CREATE TABLE measures_low PARTITION OF measures FOR VALUES FROM (0) TO (100)",
        "CREATE TABLE measures_high PARTITION OF measures FOR VALUES FROM (100) TO (200)",
        "CREATE PUBLICATION items_pub FOR TABLE items",
        "CREATE PUBLICATION two_pub FOR TABLE items, secret",
        "CREATE PUBLICATION no_key_pub FOR TABLE items, no_key",
        "CREATE PUBLICATION no_key_inserts FOR TABLE no_key WITH (publish = 'insert')",
        "CREATE PUBLICATION measures_pub FOR TABLE measures"
            + " WITH (publish_via_partition_root = true)",
        "CREATE ROLE " + role + " LOGIN REPLICATION PASSWORD 'pw'",
        "CREATE ROLE " + role + "_norepl LOGIN PASSWORD 'pw'",
        "GRANT SELECT ON items, measures, measures_high TO " + role + ", " + role + "_norepl");
  }

  @AfterAll
  static void dropRoles() {
    db.execute(
        "DROP OWNED BY " + role + ", " + role + "_norepl",
        "DROP ROLE " + role,
        "DROP ROLE " + role + "_norepl");
  }

  private static PgConnectionConfig as(String user) {
    return PipelineHarness.source(db).toBuilder().user(user).password("pw").build();
  }

  /** Starts a pipeline that must fail in preflight; checks that nothing was left behind. */
  private static EtlException failedStart(PipelineConfig config) {
    return failedStart(config, RecordingDestination.create());
  }

  private static EtlException failedStart(PipelineConfig config, Destination destination) {
    List<ReplicationSlotInfo> slotsBefore = db.replicationSlots();
    MemoryStore store = new MemoryStore(config.pipelineId());
    Pipeline p = Pipeline.create(config, store, destination);
    EtlException e = catchEtl(p);
    assertThat(p.status().phase()).isEqualTo(PipelineStatus.Phase.FAILED);
    assertThat(db.replicationSlots()).isEqualTo(slotsBefore);
    assertThat(store.loadTableStates()).isEmpty();
    assertThat(store.progressSnapshot()).isEmpty();
    return e;
  }

  private static EtlException catchEtl(Pipeline p) {
    try {
      p.start();
    } catch (EtlException e) {
      return e;
    }
    p.close();
    throw new AssertionError("the pipeline started");
  }

  private static Preflight.Check check(List<Preflight.Check> checks, String name) {
    return checks.stream().filter(c -> c.name().equals(name)).findFirst().orElseThrow();
  }

  @Test
  void aGoodSetupPassesEveryCheckAndRunningThemCreatesNothing() {
    List<ReplicationSlotInfo> slotsBefore = db.replicationSlots();
    MemoryStore store = new MemoryStore("good");
    List<Preflight.Check> checks =
        Preflight.run(config(db, "good", "items_pub").source(as(role)).build(), store);
    assertThat(checks)
        .extracting(Preflight.Check::name)
        .containsExactly(
            "source connection",
            "wal_level",
            "replication privilege",
            "publication",
            "SELECT privilege",
            "replica identity",
            "state store",
            "replication slots",
            "WAL senders",
            "failover");
    assertThat(checks).allMatch(Preflight.Check::passed, "every check passed");
    assertThat(check(checks, "wal_level").summary()).isEqualTo("wal_level = logical");
    assertThat(check(checks, "replication privilege").summary())
        .isEqualTo("role " + role + " has REPLICATION");
    assertThat(check(checks, "replication slots").summary())
        .startsWith("replication slots: 2 needed (the apply slot and 1 table-sync worker), ");
    assertThat(Preflight.failure(checks)).isEmpty();
    assertThat(db.replicationSlots()).isEqualTo(slotsBefore);
    assertThat(store.tableStates()).isEmpty();
  }

  /** Regression: pg_stat_activity hides other roles' walsenders from a non-superuser. */
  @Test
  void walSendersOfOtherRolesCountForARoleWithoutStatsPrivileges() throws Exception {
    try (Connection walsender = db.connectReplication();
        Statement st = walsender.createStatement()) {
      st.execute("IDENTIFY_SYSTEM");
      long max = db.queryLong("SELECT current_setting('max_wal_senders')::int");
      long inUse = db.queryLong("SELECT count(*) FROM pg_stat_replication");
      assertThat(inUse).isPositive();
      List<Preflight.Check> checks =
          Preflight.run(
              config(db, "senders", "items_pub").source(as(role)).build(),
              new MemoryStore("senders"));
      assertThat(check(checks, "WAL senders").summary())
          .endsWith((max - inUse) + " of max_wal_senders = " + max + " free");
    }
  }

  @Test
  void aMissingPublicationFailsAloneAndTheTableChecksAreSkipped() {
    PipelineConfig cfg = config(db, "no_pub", "no_such_pub").build();
    EtlException e = failedStart(cfg);
    assertThat(e.kind()).isEqualTo(ErrorKind.PUBLICATION_NOT_FOUND);
    assertThat(e.description()).contains("'no_such_pub' does not exist");
    assertThat(e.getSuppressed()).isEmpty();
    List<Preflight.Check> checks = Preflight.run(cfg, new MemoryStore("no_pub"));
    assertThat(check(checks, "SELECT privilege").status()).isEqualTo(Preflight.Status.SKIPPED);
    assertThat(check(checks, "SELECT privilege").summary()).isEqualTo("needs the publication");
    assertThat(check(checks, "replication slots").status()).isEqualTo(Preflight.Status.SKIPPED);
  }

  @Test
  void aRoleWithoutReplicationIsNamedWithItsFix() {
    EtlException e =
        failedStart(config(db, "no_repl", "items_pub").source(as(role + "_norepl")).build());
    assertThat(e.kind()).isEqualTo(ErrorKind.PERMISSION_DENIED);
    assertThat(e.description())
        .isEqualTo(
            "role "
                + role
                + "_norepl has neither REPLICATION nor SUPERUSER, which replication slots and"
                + " connections need: ALTER ROLE "
                + role
                + "_norepl REPLICATION");
    assertThat(e.getSuppressed()).isEmpty();
    assertThat(e.hint()).contains("docs/operations.md");
  }

  @Test
  void noSelectOnOnePublishedTableNamesItAndTheGrant() {
    EtlException e = failedStart(config(db, "no_select", "two_pub").source(as(role)).build());
    assertThat(e.kind()).isEqualTo(ErrorKind.PERMISSION_DENIED);
    assertThat(e.description())
        .isEqualTo(
            "role "
                + role
                + " has no SELECT on table public.secret, which the copy of publication two_pub"
                + " reads: GRANT SELECT ON TABLE public.secret TO "
                + role);
    assertThat(e.getSuppressed()).isEmpty();
  }

  @Test
  void aTableThatTableCopyLeavesOutNeedsNoSelect() {
    List<Preflight.Check> checks =
        Preflight.run(
            config(db, "copy_some", "two_pub")
                .source(as(role))
                .tableCopy(TableCopySelection.only(List.of(TableName.parse("public.items"))))
                .build(),
            new MemoryStore("copy_some"));
    assertThat(check(checks, "SELECT privilege").passed()).isTrue();
    assertThat(check(checks, "SELECT privilege").summary())
        .isEqualTo("SELECT on the 1 table the copy reads");
  }

  @Test
  void noSelectOnAPartitionTheCopyReadsNamesThePartition() {
    // SELECT on the root and one partition: the copy reads each partition by itself
    EtlException e = failedStart(config(db, "no_leaf", "measures_pub").source(as(role)).build());
    assertThat(e.kind()).isEqualTo(ErrorKind.PERMISSION_DENIED);
    assertThat(e.description())
        .contains("no SELECT on table public.measures_low,")
        .doesNotContain("measures_high");
  }

  @Test
  void aTableWithoutReplicaIdentityInAPublicationOfUpdatesIsAWarningNamingItsFixes() {
    List<Preflight.Check> checks =
        Preflight.run(config(db, "no_key", "no_key_pub").build(), new MemoryStore("no_key"));
    Preflight.Check identity = check(checks, "replica identity");
    assertThat(identity.status()).isEqualTo(Preflight.Status.WARNING);
    assertThat(identity.summary())
        .isEqualTo(
            "1 table without a replica identity (copied, INSERT and TRUNCATE replicated;"
                + " PostgreSQL refuses UPDATE and DELETE on such a table at the source while"
                + " publication no_key_pub publishes it): table public.no_key has no primary key:"
                + " add one (ALTER TABLE public.no_key ADD PRIMARY KEY (...)), or run ALTER TABLE"
                + " public.no_key REPLICA IDENTITY FULL or ALTER TABLE public.no_key REPLICA"
                + " IDENTITY USING INDEX <a unique index>");
    // a warning does not stop a start
    assertThat(Preflight.failure(checks)).isEmpty();
    // a publication of inserts only needs no replica identity
    List<Preflight.Check> inserts =
        Preflight.run(config(db, "no_key", "no_key_inserts").build(), new MemoryStore("no_key"));
    assertThat(check(inserts, "replica identity").status()).isEqualTo(Preflight.Status.PASSED);
    assertThat(check(inserts, "replica identity").summary())
        .contains("publishes neither UPDATE nor DELETE");
  }

  @Test
  void everyFailureIsNamedInTheOneErrorTheFirstAsItsCauseTheOthersSuppressed() {
    EtlException e =
        failedStart(config(db, "several", "two_pub").source(as(role + "_norepl")).build());
    assertThat(e.kind()).isEqualTo(ErrorKind.PERMISSION_DENIED);
    assertThat(e.description())
        .startsWith("2 preflight checks failed: (1) replication privilege: ")
        .contains("neither REPLICATION nor SUPERUSER")
        .contains("; (2) SELECT privilege: ")
        .contains("no SELECT on table public.secret");
    assertThat(((EtlException) e.getCause()).description())
        .contains("neither REPLICATION nor SUPERUSER");
    assertThat(e.getSuppressed()).hasSize(1);
    assertThat(((EtlException) e.getSuppressed()[0]).description())
        .contains("no SELECT on table public.secret");
  }

  /**
   * A destination that cannot hold one table refuses it in its {@code checkTables}: the start fails
   * with that error before anything exists, and the destination saw every published table.
   */
  @Test
  void aTableTheDestinationCannotHoldFailsTheStartBeforeAnythingIsCreated() {
    Refusing refusing = new Refusing("secret");
    EtlException e = failedStart(config(db, "refused", "two_pub").build(), refusing);
    assertThat(e.kind()).isEqualTo(ErrorKind.DESTINATION_SCHEMA_ERROR);
    assertThat(e.description()).isEqualTo("cannot hold table public.secret");
    assertThat(refusing.seen).containsExactlyInAnyOrder("public.items", "public.secret");
    assertThat(refusing.started).isFalse();

    List<Preflight.Check> checks =
        Preflight.run(
            config(db, "refused", "two_pub").build(), new MemoryStore("refused"), refusing);
    assertThat(checks)
        .extracting(Preflight.Check::name)
        .containsSubsequence("replica identity", "destination", "state store");
    assertThat(check(checks, "destination").status()).isEqualTo(Preflight.Status.FAILED);

    List<Preflight.Check> held =
        Preflight.run(
            config(db, "held", "two_pub").build(), new MemoryStore("held"), new Refusing("none"));
    assertThat(check(held, "destination").summary())
        .isEqualTo("destination refusing: can hold 2 tables");
    assertThat(Preflight.run(config(db, "held", "two_pub").build(), new MemoryStore("held")))
        .extracting(Preflight.Check::name)
        .doesNotContain("destination");
  }

  /** A recording destination that refuses one table by name at the start's check. */
  private static final class Refusing extends ForwardingDestination {
    private final String refused;
    final List<String> seen = new java.util.concurrent.CopyOnWriteArrayList<>();
    volatile boolean started;

    Refusing(String refused) {
      super(RecordingDestination.create());
      this.refused = refused;
    }

    @Override
    public String name() {
      return "refusing";
    }

    @Override
    public void checkTables(List<ReplicatedTableSchema> tables) {
      seen.clear();
      for (ReplicatedTableSchema t : tables) {
        seen.add(t.name().toString());
        assertThat(t.identityColumnIndexes()).as("the key of %s", t.name()).hasSize(1);
      }
      for (ReplicatedTableSchema t : tables) {
        if (t.name().name().equals(refused)) {
          throw new EtlException(
              ErrorKind.DESTINATION_SCHEMA_ERROR, "cannot hold table " + t.name());
        }
      }
    }

    @Override
    public void startup(DestinationContext context) {
      started = true;
      super.startup(context);
    }
  }

  @Test
  void aRetiredDestinationIsCleanedUpEvenWithoutItsPublication() throws Exception {
    MemoryStore store = new MemoryStore("retired");
    RecordingDestination dest = RecordingDestination.create();
    store.setLifecycleAsOperator(dest.name(), "retired", "decommissioned", "operator");
    try (Pipeline p = Pipeline.create(config(db, "retired", "dropped_pub").build(), store, dest)) {
      p.start();
      await()
          .atMost(PipelineHarness.WAIT)
          .until(() -> p.status().phase() == PipelineStatus.Phase.RETIRED);
    }
  }

  @Test
  void walLevelReplicaIsNamedAndNothingIsCreated() throws Exception {
    try (EmbeddedPostgres pg = EmbeddedPostgres.builder().setting("wal_level", "replica").start()) {
      pg.createDatabase("app");
      TestDatabase app = new TestDatabase(pg, "app");
      app.execute(
          "CREATE TABLE items (id int PRIMARY KEY)",
          "CREATE PUBLICATION items_pub FOR TABLE items");
      MemoryStore store = new MemoryStore("replica");
      Pipeline p =
          Pipeline.create(
              config(app, "replica", "items_pub").build(), store, RecordingDestination.create());
      EtlException e = catchEtl(p);
      assertThat(e.kind()).isEqualTo(ErrorKind.SOURCE_WAL_LEVEL_NOT_LOGICAL);
      assertThat(e.description())
          .isEqualTo(
              "wal_level is 'replica' on postgresql://127.0.0.1:"
                  + pg.port()
                  + "/app: logical replication needs wal_level = logical");
      assertThat(e.hint()).contains("wal_level = logical").contains("restart the server");
      assertThat(e.getSuppressed()).isEmpty();
      assertThat(app.queryLong("SELECT count(*) FROM pg_replication_slots")).isZero();
      assertThat(store.loadTableStates()).isEmpty();
    }
  }

  @Test
  void oneFreeSlotForTwoNeededSaysHowManyAreFreeAndWhatToRaise() throws Exception {
    try (EmbeddedPostgres pg =
        EmbeddedPostgres.builder().setting("max_replication_slots", "1").start()) {
      pg.createDatabase("app");
      TestDatabase app = new TestDatabase(pg, "app");
      app.execute(
          "CREATE TABLE items (id int PRIMARY KEY)",
          "CREATE PUBLICATION items_pub FOR TABLE items");
      MemoryStore store = new MemoryStore("one_slot");
      Pipeline p =
          Pipeline.create(
              config(app, "one_slot", "items_pub").build(), store, RecordingDestination.create());
      EtlException e = catchEtl(p);
      assertThat(e.kind()).isEqualTo(ErrorKind.SOURCE_CONFIGURATION_LIMIT_EXCEEDED);
      assertThat(e.description())
          .isEqualTo(
              "the pipeline needs 2 replication slots (the apply slot and 1 table-sync worker),"
                  + " but only 1 of max_replication_slots = 1 is free (0 in use): raise"
                  + " max_replication_slots to at least 2 (a server restart)");
      assertThat(e.getSuppressed()).isEmpty();
      assertThat(app.queryLong("SELECT count(*) FROM pg_replication_slots")).isZero();
      assertThat(store.loadTableStates()).isEmpty();
    }
  }
}
