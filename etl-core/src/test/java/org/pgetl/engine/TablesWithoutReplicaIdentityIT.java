package org.pgetl.engine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.pgetl.engine.PipelineHarness.WAIT;
import static org.pgetl.engine.PipelineHarness.awaitState;
import static org.pgetl.engine.PipelineHarness.config;
import static org.pgetl.engine.PipelineHarness.name;
import static org.pgetl.engine.PipelineHarness.oid;
import static org.pgetl.engine.PipelineHarness.sourceRows;

import java.sql.SQLException;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.pgetl.Pipeline;
import org.pgetl.PipelineConfig;
import org.pgetl.PipelineStatus;
import org.pgetl.Preflight;
import org.pgetl.error.ErrorKind;
import org.pgetl.model.IdentityKind;
import org.pgetl.model.ReplicatedTableSchema;
import org.pgetl.model.TableId;
import org.pgetl.store.MemoryStore;
import org.pgetl.store.TableState;
import org.pgetl.testkit.TestDatabase;
import org.pgetl.testkit.WithPostgres;
import org.pgetl.testkit.destination.RecordingDestination;

/**
 * Tables without a replica identity in a publication of UPDATE and DELETE are replicated as
 * PostgreSQL's own subscriber replicates them: copied, their INSERTs and TRUNCATEs streamed (the
 * source refuses their UPDATEs and DELETEs), with the other tables of the publication; {@code
 * requireReplicaIdentity} makes each an error of that table, never of the pipeline. An empty
 * publication starts too, and its tables are copied as they are added.
 */
@WithPostgres
@Timeout(value = 4, unit = TimeUnit.MINUTES)
class TablesWithoutReplicaIdentityIT {
  private TestDatabase db;

  @BeforeEach
  void schema(TestDatabase database) {
    db = database;
    db.execute(
        "DROP PUBLICATION IF EXISTS keyless_pub",
        "DROP PUBLICATION IF EXISTS empty_pub",
        "DROP TABLE IF EXISTS keyed, no_pk, nothing, no_col, lost_index, later",
        "CREATE TABLE keyed (id int PRIMARY KEY, v text)",
        "CREATE TABLE no_pk (a int, b text)",
        "CREATE TABLE nothing (id int PRIMARY KEY, v text)",
        "ALTER TABLE nothing REPLICA IDENTITY NOTHING",
        "CREATE TABLE no_col ()",
        "CREATE TABLE lost_index (a int NOT NULL, b text)",
        "CREATE UNIQUE INDEX lost_index_a ON lost_index (a)",
        "ALTER TABLE lost_index REPLICA IDENTITY USING INDEX lost_index_a",
        "DROP INDEX lost_index_a",
        "INSERT INTO keyed SELECT g, 'k' || g FROM generate_series(1, 50) g",
        "INSERT INTO no_pk SELECT g % 5, 'n' || g FROM generate_series(1, 50) g",
        "INSERT INTO nothing SELECT g, 'x' || g FROM generate_series(1, 20) g",
        "INSERT INTO no_col DEFAULT VALUES",
        "INSERT INTO no_col DEFAULT VALUES",
        "INSERT INTO lost_index VALUES (1, 'one'), (2, 'two')",
        "CREATE PUBLICATION keyless_pub FOR TABLE keyed, no_pk, nothing, no_col, lost_index",
        "CREATE TABLE later (id int PRIMARY KEY, v text)",
        "INSERT INTO later VALUES (1, 'before')",
        "CREATE PUBLICATION empty_pub");
  }

  private static Preflight.Check check(List<Preflight.Check> checks, String name) {
    return checks.stream().filter(c -> c.name().equals(name)).findFirst().orElseThrow();
  }

  @Test
  void tablesWithoutIdentityAreCopiedAndTheirInsertsAndTruncatesStreamed() {
    PipelineConfig cfg = config(db, "keyless", "keyless_pub").build();
    MemoryStore store = new MemoryStore("keyless");
    List<Preflight.Check> checks = Preflight.run(cfg, store);
    Preflight.Check identity = check(checks, "replica identity");
    assertThat(identity.status()).isEqualTo(Preflight.Status.WARNING);
    assertThat(identity.passed()).isTrue();
    assertThat(identity.summary())
        .startsWith("4 tables without a replica identity (copied, INSERT and TRUNCATE replicated;")
        .contains("table public.no_pk has no primary key")
        .contains("ALTER TABLE public.no_pk REPLICA IDENTITY FULL")
        .contains("table public.nothing has REPLICA IDENTITY NOTHING")
        .contains("table public.no_col has no primary key")
        .contains("the replica identity index of table public.lost_index is gone")
        .doesNotContain("public.keyed");
    assertThat(Preflight.failure(checks)).isEmpty();

    RecordingDestination dest = RecordingDestination.create();
    try (Pipeline p = PipelineHarness.start(cfg, store, dest)) {
      PipelineHarness.awaitAllReady(store, 5);
      for (String t : List.of("keyed", "no_pk", "nothing", "no_col", "lost_index")) {
        dest.awaitRowsEqual(name(t), sourceRows(db, t), WAIT);
      }
      ReplicatedTableSchema noPk = dest.schema(name("no_pk")).orElseThrow();
      assertThat(noPk.identity()).isEqualTo(IdentityKind.NOTHING);
      assertThat(noPk.identityColumnIndexes()).isEmpty();
      assertThat(dest.schema(name("no_col")).orElseThrow().columnCount()).isZero();

      // PostgreSQL itself refuses what cannot be replicated: nothing the source commits is lost
      assertThatThrownBy(() -> db.execute("UPDATE no_pk SET b = 'u' WHERE a = 1"))
          .hasRootCauseInstanceOf(SQLException.class)
          .rootCause()
          .hasMessageContaining("does not have a replica identity and publishes updates");
      assertThatThrownBy(() -> db.execute("DELETE FROM nothing WHERE id = 1"))
          .rootCause()
          .hasMessageContaining("publishes deletes");
      db.execute(
          "INSERT INTO no_pk VALUES (7, 'late'), (7, 'late')",
          "INSERT INTO nothing VALUES (100, 'late')",
          "INSERT INTO no_col DEFAULT VALUES",
          "INSERT INTO lost_index VALUES (3, 'three')",
          "UPDATE keyed SET v = 'changed' WHERE id <= 10",
          "DELETE FROM keyed WHERE id > 40",
          "TRUNCATE lost_index",
          "INSERT INTO lost_index VALUES (4, 'after truncate')");
      for (String t : List.of("keyed", "no_pk", "nothing", "no_col", "lost_index")) {
        dest.awaitRowsEqual(name(t), sourceRows(db, t), WAIT);
      }
      assertThat(dest.rowCount(name("no_col"))).isEqualTo(3);
      assertThat(p.status().phase()).isEqualTo(PipelineStatus.Phase.RUNNING);
      assertThat(dest.violations()).isEmpty();
    }
  }

  @Test
  void requireReplicaIdentityErrorsEachSuchTableAndTheOthersReplicate() {
    PipelineConfig cfg = config(db, "strict", "keyless_pub").requireReplicaIdentity(true).build();
    MemoryStore store = new MemoryStore("strict");
    assertThat(check(Preflight.run(cfg, store), "replica identity").summary())
        .contains("requireReplicaIdentity is on: such a table goes to its error state");
    RecordingDestination dest = RecordingDestination.create();
    try (Pipeline p = PipelineHarness.start(cfg, store, dest)) {
      for (String t : List.of("no_pk", "nothing", "no_col", "lost_index")) {
        awaitState(store, oid(db, t), TableState.Type.ERRORED);
      }
      awaitState(store, oid(db, "keyed"), TableState.Type.READY);
      Map<TableId, TableState> states = store.tableStates();
      TableState.Errored noPk = (TableState.Errored) states.get(oid(db, "no_pk"));
      assertThat(noPk.kind()).isEqualTo(ErrorKind.SOURCE_REPLICA_IDENTITY_ERROR);
      assertThat(noPk.reason())
          .contains("table public.no_pk has no primary key, and requireReplicaIdentity is on");
      assertThat(noPk.reason()).contains("ALTER TABLE \"public\".\"no_pk\" REPLICA IDENTITY FULL");
      assertThat(noPk.hint()).contains("REPLICA IDENTITY (FULL or USING INDEX)");
      assertThat(((TableState.Errored) states.get(oid(db, "nothing"))).reason())
          .contains("has REPLICA IDENTITY NOTHING");
      assertThat(((TableState.Errored) states.get(oid(db, "lost_index"))).reason())
          .contains("lost its replica identity index");
      // nothing of an errored table reached the destination; the keyed table streams on
      assertThat(dest.tableNames()).containsExactly(name("public.keyed"));
      db.execute("UPDATE keyed SET v = 'strict' WHERE id = 1");
      dest.awaitRowsEqual(name("keyed"), sourceRows(db, "keyed"), WAIT);
      assertThat(p.status().phase()).isEqualTo(PipelineStatus.Phase.RUNNING);

      // fixed at the source, the table is retried and copied
      db.execute("ALTER TABLE no_pk REPLICA IDENTITY FULL");
      p.retryTable(name("public.no_pk"));
      awaitState(store, oid(db, "no_pk"), TableState.Type.READY);
      dest.awaitRowsEqual(name("no_pk"), sourceRows(db, "no_pk"), WAIT);
    }
  }

  @Test
  void anEmptyPublicationStartsAndCopiesTheTablesAddedToIt() {
    PipelineConfig cfg =
        config(db, "empty", "empty_pub").publicationRefreshInterval(Duration.ofMillis(500)).build();
    MemoryStore store = new MemoryStore("empty");
    Preflight.Check publication = check(Preflight.run(cfg, store), "publication");
    assertThat(publication.status()).isEqualTo(Preflight.Status.WARNING);
    assertThat(publication.summary())
        .startsWith("publication empty_pub publishes no table")
        .contains("ALTER PUBLICATION empty_pub ADD TABLE");
    RecordingDestination dest = RecordingDestination.create();
    try (Pipeline p = PipelineHarness.start(cfg, store, dest)) {
      assertThat(p.status().phase())
          .isIn(PipelineStatus.Phase.RUNNING, PipelineStatus.Phase.STARTING);
      assertThat(store.tableStates()).isEmpty();
      db.execute(
          "ALTER PUBLICATION empty_pub ADD TABLE later", "INSERT INTO later VALUES (2, 'x')");
      awaitState(store, oid(db, "later"), TableState.Type.READY);
      db.execute("UPDATE later SET v = 'after' WHERE id = 1");
      dest.awaitRowsEqual(name("later"), sourceRows(db, "later"), WAIT);
    }
  }
}
