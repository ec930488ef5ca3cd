package org.pgetl.store.postgres;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.pgetl.destination.DestinationTableMetadataStore.TableMetadata;
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

/** Pipelines that share a database, and a store kept apart from the source database. */
@Timeout(value = 5, unit = TimeUnit.MINUTES)
class PostgresStoreIsolationIT {
  private static final TableId T = new TableId(16_384);
  private static final TableId U = new TableId(16_390);
  // the same attempt in both pipelines: only the pipeline id keeps their chunks apart
  private static final UUID ATTEMPT = UUID.fromString("5d2c1b0a-9f8e-4d7c-b6a5-443322110099");

  private static List<ChunkRecord> chunks(String tag) {
    return List.of(
        ChunkRecord.planned(ATTEMPT, 0, ChunkKind.RANGE, null, List.of(tag)),
        ChunkRecord.planned(ATTEMPT, 1, ChunkKind.RANGE, List.of(tag), null));
  }

  private static ReplicatedTableSchema schema(TableId id, String table, String lsn) {
    return ReplicatedTableSchema.allColumns(
        new TableSchema(
            id,
            new TableName("public", table),
            List.of(new ColumnSchema("id", 23, -1, "integer", 1, 1, false, null)),
            Lsn.parse(lsn)));
  }

  /** Writes one of everything for T and U; {@code tag} makes the values differ per pipeline. */
  private static void fill(PostgresStore s, String tag, TableState state, String lsn) {
    for (TableId t : List.of(T, U)) {
      s.updateTableState(t, TableState.INIT);
      s.updateTableState(t, state);
      s.advanceProgress(ProgressKey.tableSync(t), Lsn.parse(lsn));
      s.storeTableSchema(schema(t, tag + "_table", "0/0"));
      s.put(t, new TableMetadata("lake." + tag, Lsn.ZERO, true));
      s.planChunks(t, ATTEMPT, chunks(tag));
      s.startChunkRead(t, ATTEMPT, 0);
      s.completeChunk(t, ATTEMPT, 0, Lsn.parse(lsn), 1, 1);
    }
    s.advanceProgress(ProgressKey.apply(), Lsn.parse(lsn));
    s.writeLifecycle("lake", LifecycleState.PAUSED, tag, "ops");
  }

  /** Asserts that B's rows, seen through a fresh store, are exactly what {@link #fill} wrote. */
  private static void assertPipelineB(TestPostgres.Database db) {
    try (PostgresStore b = db.storeBuilder("pipeline-b").build()) {
      assertThat(b.tableStates())
          .isEqualTo(Map.of(T, TableState.DATA_SYNC, U, TableState.DATA_SYNC));
      assertThat(b.progress(ProgressKey.apply())).contains(Lsn.parse("1/0"));
      for (TableId t : List.of(T, U)) {
        assertThat(b.tableStateHistory(t)).containsExactly(TableState.DATA_SYNC, TableState.INIT);
        assertThat(b.progress(ProgressKey.tableSync(t))).contains(Lsn.parse("1/0"));
        assertThat(b.tableSchemas(t)).containsExactly(schema(t, "b_table", "0/0"));
        List<ChunkRecord> chunks = b.chunks(t);
        assertThat(chunks).extracting(ChunkRecord::to).containsExactly(List.of("b"), null);
        assertThat(chunks).extracting(ChunkRecord::reads).containsExactly(1, 0);
        assertThat(chunks.get(0).watermark()).isEqualTo(Lsn.parse("1/0"));
        assertThat(chunks.get(1).done()).isFalse();
        assertThat(b.get(t)).contains(new TableMetadata("lake.b", Lsn.ZERO, true));
      }
      assertThat(b.readLifecycle("lake")).map(LifecycleRecord::reason).contains("b");
    }
  }

  @Test
  void twoPipelinesInOneDatabaseNeverSeeOrChangeEachOthersRows() {
    try (TestPostgres.Database db = TestPostgres.newDatabase("isolation")) {
      try (PostgresStore a = db.storeBuilder("pipeline-a").build();
          PostgresStore b = db.storeBuilder("pipeline-b").build()) {
        // Same table ids and destination name in both pipelines, different values.
        fill(a, "a", TableState.READY, "5/0");
        fill(b, "b", TableState.DATA_SYNC, "1/0");

        assertThat(a.tableStates()).isEqualTo(Map.of(T, TableState.READY, U, TableState.READY));
        assertThat(a.progress(ProgressKey.apply())).contains(Lsn.parse("5/0"));
        assertThat(a.tableSchemas(T)).containsExactly(schema(T, "a_table", "0/0"));
        assertThat(a.readLifecycle("lake")).map(LifecycleRecord::reason).contains("a");
        assertPipelineB(db);

        // Every write of A, per table and pipeline-wide, leaves B's rows alone.
        a.updateTableState(T, TableState.FINISHED_COPY);
        a.rollbackTableState(T);
        a.resetTableState(T);
        a.advanceProgress(ProgressKey.apply(), Lsn.parse("9/0"));
        a.deleteProgress(ProgressKey.tableSync(U));
        a.storeTableSchema(schema(T, "a_table", "0/0"));
        a.pruneTableSchemas(T, Lsn.MAX);
        a.writeLifecycle("lake", LifecycleState.ACTIVE, "a2", "ops");
        a.planChunks(T, ATTEMPT, chunks("a2"));
        a.addKeyChunk(T, ATTEMPT, List.of("a"));
        a.startChunkRead(T, ATTEMPT, 1);
        a.completeChunk(T, ATTEMPT, 1, Lsn.parse("6/0"), 2, 2);
        a.reopenChunksAfter(T, ATTEMPT, Lsn.ZERO);
        a.reopenChunksAfter(U, ATTEMPT, Lsn.ZERO);
        a.deleteChunks(U);
        a.prepareTableForCopy(T);
        a.resetAllTablesForResync();
        a.deleteTable(U);
        assertPipelineB(db);

        a.deletePipelineState();
        assertThat(a.loadTableStates()).isEmpty();
        assertPipelineB(db);
      }
      // Row counts per pipeline, straight from the tables.
      assertThat(
              db.queryColumn(
                  "SELECT DISTINCT pipeline_id FROM etl.replication_state"
                      + " UNION SELECT DISTINCT pipeline_id FROM etl.replication_progress"
                      + " UNION SELECT DISTINCT pipeline_id FROM etl.table_schemas"
                      + " UNION SELECT DISTINCT pipeline_id FROM etl.destination_tables_metadata"
                      + " UNION SELECT DISTINCT pipeline_id FROM etl.table_chunks"))
          .containsExactly("pipeline-b");
      assertThat(db.queryColumn("SELECT pipeline_id FROM etl.destination_lifecycle ORDER BY 1"))
          .containsExactly("pipeline-a", "pipeline-b");
    }
  }

  @Test
  void theStoreCanLiveInADatabaseOtherThanTheSource() {
    try (TestPostgres.Database source = TestPostgres.newDatabase("source");
        TestPostgres.Database storeDb = TestPostgres.newDatabase("storedb")) {
      source.execute("CREATE TABLE orders (id bigint PRIMARY KEY)");
      long ordersOid = source.queryLong("SELECT 'orders'::regclass::oid");

      try (PostgresStore store = storeDb.storeBuilder("p1").build()) {
        store.updateTableState(new TableId(ordersOid), TableState.READY);
      }

      assertThat(source.queryColumn("SELECT nspname FROM pg_namespace WHERE nspname = 'etl'"))
          .isEmpty();
      assertThat(
              storeDb.queryColumn(
                  "SELECT table_id::bigint || ':' || state FROM etl.replication_state"))
          .containsExactly(ordersOid + ":ready");
    }
  }
}
