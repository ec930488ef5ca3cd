package org.pgetl.store.postgres;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import java.sql.Connection;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.flywaydb.core.Flyway;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.pgetl.error.ErrorKind;
import org.pgetl.error.EtlException;
import org.pgetl.model.ColumnSchema;
import org.pgetl.model.IdentityKind;
import org.pgetl.model.Lsn;
import org.pgetl.model.ReplicatedTableSchema;
import org.pgetl.model.TableId;
import org.pgetl.store.PipelineStore.ChunkKind;
import org.pgetl.store.PipelineStore.ChunkRecord;
import org.pgetl.store.TableState;

/** The store's schema: created on an empty database, never migrated twice, safe to race on. */
@Timeout(value = 5, unit = TimeUnit.MINUTES)
class PostgresStoreMigrationIT {
  private static final List<String> STORE_TABLES =
      List.of(
          "destination_lifecycle",
          "destination_tables_metadata",
          "pgetl_schema_history",
          "pipeline_leases",
          "replication_progress",
          "replication_state",
          "table_chunks",
          "table_columns",
          "table_copies",
          "table_requests",
          "table_schemas");

  private static final String[] ALL_VERSIONS = {"1:true", "2:true", "3:true", "4:true", "5:true"};

  private static List<String> tablesIn(TestPostgres.Database db, String schema) {
    return db.queryColumn(
        "SELECT table_name FROM information_schema.tables WHERE table_schema = '"
            + schema
            + "' ORDER BY table_name");
  }

  private static List<String> appliedVersions(TestPostgres.Database db, String quotedSchema) {
    return db.queryColumn(
        "SELECT version || ':' || success FROM "
            + quotedSchema
            + ".pgetl_schema_history WHERE version IS NOT NULL ORDER BY installed_rank");
  }

  @Test
  void anEmptyDatabaseGetsTheWholeSchema() {
    try (TestPostgres.Database db = TestPostgres.newDatabase("migrate");
        PostgresStore store = db.storeBuilder("p1").build()) {
      assertThat(tablesIn(db, "etl")).containsExactlyElementsOf(STORE_TABLES);
      assertThat(appliedVersions(db, "etl")).containsExactly(ALL_VERSIONS);
      // Nothing outside the store's schema.
      assertThat(
              db.queryColumn(
                  "SELECT table_schema || '.' || table_name FROM information_schema.tables"
                      + " WHERE table_schema NOT IN ('etl', 'pg_catalog', 'information_schema')"))
          .isEmpty();
      store.updateTableState(new TableId(1), TableState.INIT);
      assertThat(db.queryLong("SELECT count(*) FROM etl.replication_state")).isEqualTo(1);
    }
  }

  @Test
  void aRestartAppliesNoMigrationAgain() {
    try (TestPostgres.Database db = TestPostgres.newDatabase("restart")) {
      try (PostgresStore store = db.storeBuilder("p1").build()) {
        store.updateTableState(new TableId(7), TableState.DATA_SYNC);
      }
      List<String> historyBefore =
          db.queryColumn(
              "SELECT installed_rank || ':' || coalesce(version, '-') || ':' || installed_on"
                  + " FROM etl.pgetl_schema_history ORDER BY installed_rank");

      for (int i = 0; i < 3; i++) {
        try (PostgresStore store = db.storeBuilder("p1").build()) {
          assertThat(store.tableState(new TableId(7))).contains(TableState.DATA_SYNC);
        }
      }

      assertThat(
              db.queryColumn(
                  "SELECT installed_rank || ':' || coalesce(version, '-') || ':' || installed_on"
                      + " FROM etl.pgetl_schema_history ORDER BY installed_rank"))
          .isEqualTo(historyBefore);
      assertThat(appliedVersions(db, "etl")).containsExactly(ALL_VERSIONS);
    }
  }

  @Test
  void aStoreMissingTheNewestMigrationIsMigratedNotOpenedAsUpToDate() {
    try (TestPostgres.Database db = TestPostgres.newDatabase("behind")) {
      try (PostgresStore store = db.storeBuilder("p1").build()) {
        store.updateTableState(new TableId(7), TableState.DATA_SYNC);
      }
      // as if this store had been created by a release before the chunk table (V5)
      db.execute(
          "DROP TABLE etl.table_chunks",
          "DELETE FROM etl.pgetl_schema_history WHERE version = '5'");

      try (PostgresStore store = db.storeBuilder("p1").build()) {
        assertThat(store.tableState(new TableId(7))).contains(TableState.DATA_SYNC);
      }

      assertThat(tablesIn(db, "etl")).containsExactlyElementsOf(STORE_TABLES);
      assertThat(appliedVersions(db, "etl")).containsExactly(ALL_VERSIONS);
    }
  }

  @Test
  void aStoreWithAFailedMigrationInItsHistoryIsNotOpenedAsUpToDate() {
    try (TestPostgres.Database db = TestPostgres.newDatabase("failed")) {
      db.storeBuilder("p1").build().close();
      db.execute("UPDATE etl.pgetl_schema_history SET success = false WHERE version = '5'");

      assertThatThrownBy(() -> db.storeBuilder("p1").build().close())
          .isInstanceOfSatisfying(
              EtlException.class, e -> assertThat(e.kind()).isEqualTo(ErrorKind.STATE_STORE_ERROR));
    }
  }

  @Test
  void twoStoresStartingTogetherOnAnEmptyDatabaseBothSucceed() throws Exception {
    AtomicInteger threadNo = new AtomicInteger();
    ExecutorService pool =
        Executors.newFixedThreadPool(
            2, r -> new Thread(r, "pgetl-test-start-" + threadNo.incrementAndGet()));
    try {
      // A few rounds, each on a fresh database, to give the race a chance.
      for (int round = 0; round < 3; round++) {
        try (TestPostgres.Database db = TestPostgres.newDatabase("race")) {
          CountDownLatch go = new CountDownLatch(1);
          List<Future<PostgresStore>> starts = new ArrayList<>();
          for (String pipeline : List.of("a", "b")) {
            starts.add(
                pool.submit(
                    () -> {
                      go.await();
                      return db.storeBuilder(pipeline).build();
                    }));
          }
          go.countDown();
          List<PostgresStore> stores = new ArrayList<>();
          try {
            for (Future<PostgresStore> f : starts) {
              stores.add(f.get(2, TimeUnit.MINUTES));
            }
            for (PostgresStore s : stores) {
              s.updateTableState(new TableId(1), TableState.INIT);
            }
          } finally {
            stores.forEach(PostgresStore::close);
          }
          assertThat(appliedVersions(db, "etl")).containsExactly(ALL_VERSIONS);
          assertThat(db.queryLong("SELECT count(*) FROM etl.replication_state")).isEqualTo(2);
        }
      }
    } finally {
      pool.shutdownNow();
    }
  }

  @Test
  void aStartWaitsForAnotherProcessThatIsMigratingTheSameSchema() throws Exception {
    ExecutorService pool =
        Executors.newSingleThreadExecutor(r -> new Thread(r, "pgetl-test-waiting-start"));
    try (TestPostgres.Database db = TestPostgres.newDatabase("migrlock");
        Connection other = db.connect();
        Statement st = other.createStatement()) {
      // Another process is migrating: it holds the schema's migration lock.
      st.execute("SELECT pg_advisory_lock(" + Migrations.lockKey("etl") + ")");

      // A start with a short wait gives up with the lock timeout's SQLSTATE.
      assertThatThrownBy(
              () -> db.storeBuilder("p1").migrationLockTimeout(Duration.ofMillis(300)).build())
          .isInstanceOfSatisfying(
              EtlException.class,
              e -> {
                assertThat(e.kind()).isEqualTo(ErrorKind.STATE_STORE_ERROR);
                assertThat(e.detail()).startsWith("SQLSTATE 55P03");
                assertThat(e.getMessage()).contains("another process").contains("pg_locks");
              });

      // A start with the default wait blocks on the lock, and goes on once it is released.
      Future<PostgresStore> start = pool.submit(() -> db.storeBuilder("p1").build());
      await()
          .atMost(Duration.ofSeconds(30))
          .until(
              () ->
                  db.queryLong(
                          "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND NOT granted")
                      == 1);
      assertThat(start).isNotDone();
      assertThat(tablesIn(db, "etl")).isEmpty();

      st.execute("SELECT pg_advisory_unlock(" + Migrations.lockKey("etl") + ")");
      try (PostgresStore store = start.get(1, TimeUnit.MINUTES)) {
        assertThat(appliedVersions(db, "etl")).containsExactly(ALL_VERSIONS);
        assertThat(store.loadTableStates()).isEmpty();
      }
    } finally {
      pool.shutdownNow();
    }
  }

  @Test
  void aSchemaVersionStoredBeforeVersion2ReadsAsItsPrimaryKeyAndEveryColumn() throws Exception {
    try (TestPostgres.Database db = TestPostgres.newDatabase("v1schema")) {
      // A store of version 1, with one schema version written as version 1 wrote them.
      Flyway.configure(Migrations.class.getClassLoader())
          .dataSource(db.jdbcUrl(), db.adminUser(), db.adminPassword())
          .locations(Migrations.LOCATION)
          .schemas("etl")
          .defaultSchema("etl")
          .createSchemas(true)
          .table(Migrations.HISTORY_TABLE)
          .placeholders(Map.of(Migrations.SCHEMA_PLACEHOLDER, "etl"))
          .target("1")
          .load()
          .migrate();
      assertThat(appliedVersions(db, "etl")).containsExactly("1:true");
      db.execute(
          "INSERT INTO etl.table_schemas (pipeline_id, table_id, schema_name, table_name,"
              + " snapshot_lsn) VALUES ('p1', 7, 'public', 'orders', '0/0')",
          "INSERT INTO etl.table_columns (table_schema_id, column_index, name, type_oid,"
              + " type_modifier, type_name, ordinal_position, primary_key_ordinal, nullable)"
              + " SELECT id, 0, 'note', 25, -1, 'text', 1, 0, true FROM etl.table_schemas UNION ALL"
              + " SELECT id, 1, 'id', 23, -1, 'integer', 2, 1, false FROM etl.table_schemas");

      try (PostgresStore store = db.storeBuilder("p1").build()) {
        assertThat(appliedVersions(db, "etl")).containsExactly(ALL_VERSIONS);
        ReplicatedTableSchema read = store.tableSchema(new TableId(7), Lsn.MAX).orElseThrow();
        assertThat(read.identity()).isEqualTo(IdentityKind.PRIMARY_KEY);
        assertThat(read.identityColumnIndexes()).containsExactly(1);
        assertThat(read.columns()).extracting(ColumnSchema::name).containsExactly("note", "id");
        assertThat(read).isEqualTo(ReplicatedTableSchema.allColumns(read.tableSchema()));
      }
    }
  }

  @Test
  void aVersion4StoreKeepsItsRowsAndGetsTheChunkTable() {
    try (TestPostgres.Database db = TestPostgres.newDatabase("v4chunks")) {
      // A store of version 4 (before chunks), with a state and a copy written as it wrote them.
      Flyway.configure(Migrations.class.getClassLoader())
          .dataSource(db.jdbcUrl(), db.adminUser(), db.adminPassword())
          .locations(Migrations.LOCATION)
          .schemas("etl")
          .defaultSchema("etl")
          .createSchemas(true)
          .table(Migrations.HISTORY_TABLE)
          .placeholders(Map.of(Migrations.SCHEMA_PLACEHOLDER, "etl"))
          .target("4")
          .load()
          .migrate();
      assertThat(appliedVersions(db, "etl"))
          .containsExactly("1:true", "2:true", "3:true", "4:true");
      assertThat(tablesIn(db, "etl")).doesNotContain("table_chunks");
      UUID attempt = UUID.fromString("3f1e0d2c-4b5a-4697-8877-665544332211");
      db.execute(
          "INSERT INTO etl.replication_state (pipeline_id, table_id, state)"
              + " VALUES ('p1', 7, 'data_sync')",
          "INSERT INTO etl.table_copies (pipeline_id, table_id, attempt_id, rows_copied, batches,"
              + " finished_at) VALUES ('p1', 8, '"
              + attempt
              + "', 10, 1, now())");

      try (PostgresStore store = db.storeBuilder("p1").build()) {
        assertThat(appliedVersions(db, "etl")).containsExactly(ALL_VERSIONS);
        assertThat(tablesIn(db, "etl")).containsExactlyElementsOf(STORE_TABLES);
        assertThat(store.tableState(new TableId(7))).contains(TableState.DATA_SYNC);
        assertThat(store.copies()).containsOnlyKeys(new TableId(8));

        store.planChunks(
            new TableId(7),
            attempt,
            List.of(ChunkRecord.planned(attempt, 0, ChunkKind.RANGE, null, null)));
        assertThat(store.startChunkRead(new TableId(7), attempt, 0)).isEqualTo(1);
        store.completeChunk(new TableId(7), attempt, 0, Lsn.parse("0/10"), 1, 2);
        assertThat(store.chunks(new TableId(7))).singleElement().matches(ChunkRecord::done);
      }
    }
  }

  @Test
  void aConfiguredSchemaIsQuotedAndHoldsItsOwnHistory() {
    try (TestPostgres.Database db = TestPostgres.newDatabase("schema");
        PostgresStore mixed = db.storeBuilder("p1").schema("Pgetl_Store").build();
        PostgresStore plain = db.storeBuilder("p1").build()) {
      mixed.updateTableState(new TableId(1), TableState.READY);

      assertThat(tablesIn(db, "Pgetl_Store")).containsExactlyElementsOf(STORE_TABLES);
      assertThat(appliedVersions(db, "\"Pgetl_Store\"")).containsExactly(ALL_VERSIONS);
      assertThat(tablesIn(db, "pgetl_store")).isEmpty();
      // Two schemas are two stores, even for the same pipeline id.
      assertThat(plain.tableState(new TableId(1))).isEmpty();
      assertThat(mixed.tableState(new TableId(1))).contains(TableState.READY);
    }
  }
}
