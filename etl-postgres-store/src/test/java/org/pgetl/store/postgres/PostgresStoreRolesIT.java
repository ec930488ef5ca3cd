package org.pgetl.store.postgres;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.pgetl.destination.DestinationTableMetadataStore.TableMetadata;
import org.pgetl.error.ErrorKind;
import org.pgetl.error.EtlException;
import org.pgetl.lifecycle.LifecycleState;
import org.pgetl.model.ColumnSchema;
import org.pgetl.model.Lsn;
import org.pgetl.model.ReplicatedTableSchema;
import org.pgetl.model.TableId;
import org.pgetl.model.TableName;
import org.pgetl.model.TableSchema;
import org.pgetl.store.PipelineStore.ChunkKind;
import org.pgetl.store.PipelineStore.ChunkRecord;
import org.pgetl.store.PipelineStore.LifecycleRecord;
import org.pgetl.store.PipelineStore.ProgressKey;
import org.pgetl.store.TableState;

/**
 * The store runs as a plain login role, with one of two minimal grants: CONNECT and CREATE on the
 * database (the store creates its schema), or CONNECT plus a schema the role owns.
 */
@Timeout(value = 5, unit = TimeUnit.MINUTES)
class PostgresStoreRolesIT {
  private static final String PASSWORD = "store-role-secret";
  private static final TableId T = new TableId(16_384);

  /** Runs every kind of store call once. */
  private static void exercise(PostgresStore store) {
    store.updateTableState(T, TableState.INIT);
    store.updateTableStates(Map.of(T, TableState.DATA_SYNC));
    assertThat(store.rollbackTableState(T)).isEqualTo(TableState.INIT);
    store.resetTableState(T);
    assertThat(store.advanceProgress(ProgressKey.apply(), Lsn.parse("1/0")))
        .isEqualTo(Lsn.parse("1/0"));
    store.advanceProgress(ProgressKey.tableSync(T), Lsn.parse("0/5"));
    ReplicatedTableSchema schema =
        ReplicatedTableSchema.allColumns(
            new TableSchema(
                T,
                new TableName("public", "orders"),
                List.of(new ColumnSchema("id", 20, -1, "bigint", 1, 1, false, null)),
                Lsn.ZERO));
    store.storeTableSchema(schema);
    assertThat(store.pruneTableSchemas(T, Lsn.MAX)).isZero();
    store.put(T, new TableMetadata("lake.orders", Lsn.ZERO, true));
    store.writeLifecycle("lake", LifecycleState.PAUSED, "maintenance", "ops");
    assertThat(store.readLifecycle("lake")).map(LifecycleRecord::rawState).contains("paused");
    UUID attempt = UUID.randomUUID();
    store.planChunks(
        T, attempt, List.of(ChunkRecord.planned(attempt, 0, ChunkKind.RANGE, null, null)));
    assertThat(store.addKeyChunk(T, attempt, List.of("7")).index()).isEqualTo(1);
    assertThat(store.startChunkRead(T, attempt, 0)).isEqualTo(1);
    store.completeChunk(T, attempt, 0, Lsn.parse("0/9"), 1, 1);
    assertThat(store.reopenChunksAfter(T, attempt, Lsn.ZERO)).isEqualTo(1);
    assertThat(store.chunks(T)).hasSize(2);
    store.deleteChunks(T);
    store.prepareTableForCopy(T);
    store.resetAllTablesForResync();
    store.deleteTable(T);
    store.deletePipelineState();
    assertThat(store.loadTableStates()).isEmpty();
  }

  private static String lockedDownRole(TestPostgres.Database db) {
    String role = db.createLoginRole("pgetl_store_role", PASSWORD);
    // Only what is granted below counts: PUBLIC gets nothing on this database.
    db.execute("REVOKE ALL ON DATABASE " + db.name() + " FROM PUBLIC");
    assertThat(
            db.queryColumn(
                "SELECT rolsuper || ',' || rolcreatedb || ',' || rolcreaterole"
                    + " FROM pg_roles WHERE rolname = '"
                    + role
                    + "'"))
        .containsExactly("false,false,false");
    return role;
  }

  @Test
  void aRoleWithConnectAndCreateOnTheDatabaseCreatesAndUsesTheSchema() {
    try (TestPostgres.Database db = TestPostgres.newDatabase("roles")) {
      String role = lockedDownRole(db);
      db.execute("GRANT CONNECT, CREATE ON DATABASE " + db.name() + " TO " + role);

      try (PostgresStore store =
          PostgresStore.builder()
              .jdbcUrl(db.jdbcUrl())
              .user(role)
              .password(PASSWORD)
              .pipelineId("p1")
              .build()) {
        exercise(store);
      }
      assertThat(
              db.queryColumn(
                  "SELECT nspowner::regrole::text FROM pg_namespace WHERE nspname = 'etl'"))
          .containsExactly(role);
    }
  }

  @Test
  void aRoleThatOwnsAPrecreatedSchemaNeedsOnlyConnect() {
    try (TestPostgres.Database db = TestPostgres.newDatabase("roles")) {
      String role = lockedDownRole(db);
      db.execute(
          "GRANT CONNECT ON DATABASE " + db.name() + " TO " + role,
          "CREATE SCHEMA pgetl_state AUTHORIZATION " + role);

      try (PostgresStore store =
          PostgresStore.builder()
              .jdbcUrl(db.jdbcUrl())
              .user(role)
              .password(PASSWORD)
              .schema("pgetl_state")
              .pipelineId("p1")
              .build()) {
        exercise(store);
      }
    }
  }

  @Test
  void aRoleWithoutEitherGrantFailsToStartWithTheSqlState() {
    try (TestPostgres.Database db = TestPostgres.newDatabase("roles")) {
      String role = lockedDownRole(db);
      db.execute("GRANT CONNECT ON DATABASE " + db.name() + " TO " + role);

      assertThatThrownBy(
              () ->
                  PostgresStore.builder()
                      .jdbcUrl(db.jdbcUrl())
                      .user(role)
                      .password(PASSWORD)
                      .pipelineId("p1")
                      .build())
          .isInstanceOfSatisfying(
              EtlException.class,
              e -> {
                assertThat(e.kind()).isEqualTo(ErrorKind.STATE_STORE_ERROR);
                assertThat(e.getMessage())
                    .contains("'etl'")
                    .contains("p1")
                    .contains("CREATE on the database");
                assertThat(e.detail()).contains("42501");
                assertThat(e.getMessage() + e.detail()).doesNotContain(PASSWORD);
              });
    }
  }
}
