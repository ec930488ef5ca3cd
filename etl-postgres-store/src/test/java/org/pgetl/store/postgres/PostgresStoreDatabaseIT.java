package org.pgetl.store.postgres;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.pgetl.destination.DestinationTableMetadataStore.TableMetadata;
import org.pgetl.error.ErrorKind;
import org.pgetl.error.EtlException;
import org.pgetl.error.RetryDirective;
import org.pgetl.model.Lsn;
import org.pgetl.model.TableId;
import org.pgetl.store.PipelineStore.LifecycleRecord;
import org.pgetl.store.TableState;

/**
 * What the store's rows look like to an operator, what the database itself enforces, and how the
 * caches follow the database.
 */
@Timeout(value = 5, unit = TimeUnit.MINUTES)
class PostgresStoreDatabaseIT {
  private static final TableId T1 = new TableId(16_384);
  private static final TableId T2 = new TableId(16_390);
  private static final AtomicInteger PIPELINES = new AtomicInteger();

  private static TestPostgres.Database db;

  @BeforeAll
  static void createDatabase() {
    db = TestPostgres.newDatabase("database");
  }

  @AfterAll
  static void dropDatabase() {
    if (db != null) {
      db.close();
    }
  }

  private static String newPipeline() {
    return "db-it-" + PIPELINES.incrementAndGet();
  }

  private static SQLException sqlFailure(String statement) {
    try (Connection c = db.connect();
        Statement st = c.createStatement()) {
      st.execute(statement);
    } catch (SQLException e) {
      return e;
    }
    throw new AssertionError("statement succeeded: " + statement);
  }

  @Test
  void theCheckRejectsAnUnknownLifecycleStateFromAnyWriter() {
    try (PostgresStore store = db.storeBuilder(newPipeline()).build()) {
      SQLException e =
          sqlFailure(
              "INSERT INTO etl.destination_lifecycle (pipeline_id, destination_name, state)"
                  + " VALUES ('"
                  + store.pipelineId()
                  + "', 'lake', 'frobnicated')");
      assertThat(e.getSQLState()).isEqualTo("23514");
      assertThat(e.getMessage()).contains("destination_lifecycle_state_check");
      assertThat(store.readLifecycle("lake")).isEmpty();
    }
  }

  @Test
  void theCheckRejectsAnUnknownTableStateAndProgressKind() {
    assertThat(
            sqlFailure(
                    "INSERT INTO etl.replication_state (pipeline_id, table_id, state)"
                        + " VALUES ('x', 1, 'sync_wait')")
                .getSQLState())
        .isEqualTo("23514");
    assertThat(
            sqlFailure(
                    "INSERT INTO etl.replication_progress (pipeline_id, worker_kind, table_id,"
                        + " flush_lsn) VALUES ('x', 'apply', 1, '0/0')")
                .getSQLState())
        .isEqualTo("23514");
  }

  @Test
  void theChecksRejectAnUnknownChunkKindAndAHalfDoneChunk() {
    String insert =
        "INSERT INTO etl.table_chunks (pipeline_id, table_id, attempt_id, chunk_index, kind,"
            + " watermark_lsn, done_at)"
            + " VALUES ('x', 1, '00000000-0000-0000-0000-000000000001', 0, ";
    SQLException kind = sqlFailure(insert + "'ctid', NULL, NULL)");
    assertThat(kind.getSQLState()).isEqualTo("23514");
    assertThat(kind.getMessage()).contains("table_chunks_kind_check");
    SQLException halfDone = sqlFailure(insert + "'range', '0/10', NULL)");
    assertThat(halfDone.getSQLState()).isEqualTo("23514");
    assertThat(halfDone.getMessage()).contains("table_chunks_done_check");
  }

  @Test
  void updatesLinkEachRowToTheOneItReplaced() {
    try (PostgresStore store = db.storeBuilder(newPipeline()).build()) {
      Instant retryAt = Instant.parse("2030-01-02T03:04:05.000000006Z");
      store.updateTableState(T1, TableState.INIT);
      store.updateTableState(T1, new TableState.SyncDone(Lsn.parse("0/16B3748")));
      store.updateTableState(
          T1,
          new TableState.Errored(
              ErrorKind.DESTINATION_TIMEOUT, "slow", "wait", RetryDirective.TIMED, retryAt, 3));

      String where = " FROM etl.replication_state WHERE pipeline_id = '" + store.pipelineId() + "'";
      // One current row; each row's prev is the row before it.
      assertThat(db.queryColumn("SELECT state || ':' || is_current" + where + " ORDER BY id"))
          .containsExactly("init:false", "sync_done:false", "errored:true");
      assertThat(
              db.queryLong(
                  "SELECT count(*)"
                      + where
                      + " AND prev IS NOT DISTINCT FROM (SELECT max(id)"
                      + " FROM etl.replication_state p WHERE p.pipeline_id = replication_state"
                      + ".pipeline_id AND p.id < replication_state.id)"))
          .isEqualTo(3);
      // The state's fields, as an operator reads them.
      assertThat(db.queryColumn("SELECT metadata->>'lsn'" + where + " AND state = 'sync_done'"))
          .containsExactly("0/16B3748");
      assertThat(
              db.queryColumn(
                  "SELECT concat_ws(',', metadata->>'error_kind', metadata->>'reason',"
                      + " metadata->>'hint', metadata->'retry'->>'policy',"
                      + " metadata->'retry'->>'next_retry', metadata->'retry'->>'attempts')"
                      + where
                      + " AND is_current"))
          .containsExactly("DESTINATION_TIMEOUT,slow,wait,timed," + retryAt + ",3");
      assertThat(db.queryColumn("SELECT metadata::text" + where + " AND state = 'init'"))
          .containsExactly("{}");
    }
  }

  @Test
  void sessionsShowThePipelineInPgStatActivity() {
    try (PostgresStore store = db.storeBuilder(newPipeline()).build()) {
      store.progress(org.pgetl.store.PipelineStore.ProgressKey.apply());
      assertThat(
              db.queryLong(
                  "SELECT count(*) FROM pg_stat_activity WHERE application_name = 'pgetl:store:"
                      + store.pipelineId()
                      + "'"))
          .isBetween(1L, 4L);
    }
  }

  @Test
  void aDatabaseFailureIsAStateStoreErrorWithItsSqlStateAndLeavesTheCacheAlone() {
    try (PostgresStore store = db.storeBuilder(newPipeline()).schema("broken").build()) {
      store.updateTableState(T1, TableState.INIT);
      store.put(T1, new TableMetadata("lake.t", Lsn.ZERO, false));
      db.execute("ALTER TABLE broken.replication_state RENAME TO replication_state_moved");
      db.execute(
          "ALTER TABLE broken.destination_tables_metadata RENAME TO destination_tables_moved");
      try {
        assertThatThrownBy(() -> store.updateTableState(T1, TableState.DATA_SYNC))
            .isInstanceOfSatisfying(
                EtlException.class,
                e -> {
                  assertThat(e.kind()).isEqualTo(ErrorKind.STATE_STORE_ERROR);
                  assertThat(e.detail()).startsWith("SQLSTATE 42P01");
                  assertThat(e.getMessage()).contains(store.pipelineId()).contains("16384");
                });
        assertThatThrownBy(() -> store.put(T1, new TableMetadata("lake.t", Lsn.ZERO, true)))
            .isInstanceOf(EtlException.class);
        assertThatThrownBy(() -> store.resetAllTablesForResync()).isInstanceOf(EtlException.class);

        assertThat(store.tableState(T1)).contains(TableState.INIT);
        assertThat(store.get(T1)).contains(new TableMetadata("lake.t", Lsn.ZERO, false));
      } finally {
        db.execute("ALTER TABLE broken.replication_state_moved RENAME TO replication_state");
        db.execute(
            "ALTER TABLE broken.destination_tables_moved RENAME TO destination_tables_metadata");
      }
      assertThat(store.loadTableStates()).isEqualTo(Map.of(T1, TableState.INIT));
      assertThat(store.tableStateHistory(T1)).containsExactly(TableState.INIT);
    }
  }

  @Test
  void aSecondStoreInstanceWritingThePipelineIsSeenAfterLoad() {
    String pipeline = newPipeline();
    try (PostgresStore first = db.storeBuilder(pipeline).build();
        PostgresStore second = db.storeBuilder(pipeline).build()) {
      first.updateTableState(T1, TableState.INIT);
      assertThat(first.get(T1)).isEmpty();
      assertThat(first.tableSchemas(T1)).isEmpty();

      second.loadTableStates();
      second.updateTableState(T1, TableState.DATA_SYNC);
      second.updateTableState(T2, TableState.READY);
      second.put(T1, new TableMetadata("lake.t", Lsn.ZERO, true));
      second.storeTableSchema(PipelineStoreContract.schema(T1, "0/10", "id"));

      // Reads that go to the database see the other instance's writes at once.
      assertThat(first.tableStateHistory(T1))
          .containsExactly(TableState.DATA_SYNC, TableState.INIT);
      // The cached ones do after a load.
      assertThat(first.loadTableStates())
          .isEqualTo(Map.of(T1, TableState.DATA_SYNC, T2, TableState.READY));
      assertThat(first.tableStates())
          .isEqualTo(Map.of(T1, TableState.DATA_SYNC, T2, TableState.READY));
      assertThat(first.get(T1)).contains(new TableMetadata("lake.t", Lsn.ZERO, true));
      assertThat(first.tableSchemas(T1))
          .containsExactly(PipelineStoreContract.schema(T1, "0/10", "id"));

      // And a state the other instance no longer has disappears from the cache.
      second.deleteTable(T2);
      assertThat(first.loadTableStates()).isEqualTo(Map.of(T1, TableState.DATA_SYNC));
      assertThat(first.tableState(T2)).isEmpty();
    }
  }

  @Test
  void concurrentWritesLeaveTheCacheEqualToTheDatabase() throws Exception {
    long seed = System.nanoTime();
    System.out.println("concurrentWritesLeaveTheCacheEqualToTheDatabase seed=" + seed);
    List<TableId> tables = List.of(T1, T2, new TableId(3), new TableId(4));
    List<TableState> states =
        List.of(
            TableState.INIT,
            TableState.DATA_SYNC,
            TableState.FINISHED_COPY,
            TableState.READY,
            new TableState.SyncDone(Lsn.parse("0/99")));
    int threads = 8;
    AtomicInteger threadNo = new AtomicInteger();
    ExecutorService pool =
        Executors.newFixedThreadPool(
            threads, r -> new Thread(r, "pgetl-test-writer-" + threadNo.incrementAndGet()));
    try (PostgresStore store = db.storeBuilder(newPipeline()).build()) {
      CountDownLatch go = new CountDownLatch(1);
      List<Future<?>> done = new ArrayList<>();
      for (int t = 0; t < threads; t++) {
        Random random = new Random(seed + t);
        done.add(
            pool.submit(
                () -> {
                  go.await();
                  for (int i = 0; i < 60; i++) {
                    TableId table = tables.get(random.nextInt(tables.size()));
                    TableState state = states.get(random.nextInt(states.size()));
                    switch (random.nextInt(6)) {
                      case 0 -> {
                        try {
                          store.rollbackTableState(table);
                        } catch (EtlException e) {
                          if (e.kind() != ErrorKind.STATE_ROLLBACK_ERROR) {
                            throw e;
                          }
                        }
                      }
                      case 1 -> store.resetTableState(table);
                      case 2 ->
                          store.updateTableStates(
                              Map.of(
                                  table,
                                  state,
                                  tables.get((tables.indexOf(table) + 1) % 4),
                                  state));
                      case 3 -> {
                        if (random.nextInt(10) == 0) {
                          store.resetAllTablesForResync();
                        } else {
                          store.deleteTable(table);
                        }
                      }
                      default -> store.updateTableState(table, state);
                    }
                  }
                  return null;
                }));
      }
      go.countDown();
      for (Future<?> f : done) {
        f.get(3, TimeUnit.MINUTES);
      }
      Map<TableId, TableState> cached = store.tableStates();
      assertThat(store.loadTableStates()).isEqualTo(cached);
      for (TableId t : tables) {
        List<TableState> history = store.tableStateHistory(t);
        assertThat(history.isEmpty() ? null : history.get(0)).isEqualTo(cached.get(t));
      }
    } finally {
      pool.shutdownNow();
    }
  }

  @Test
  void aCallStuckBehindALockFailsAfterTheStatementTimeout() throws SQLException {
    try (PostgresStore store =
            db.storeBuilder(newPipeline()).statementTimeout(Duration.ofMillis(300)).build();
        Connection operator = db.connect();
        Statement st = operator.createStatement()) {
      operator.setAutoCommit(false);
      st.execute("LOCK TABLE etl.destination_lifecycle IN ACCESS EXCLUSIVE MODE");
      try {
        assertThatThrownBy(() -> store.readLifecycle("lake"))
            .isInstanceOfSatisfying(
                EtlException.class,
                e -> {
                  assertThat(e.kind()).isEqualTo(ErrorKind.STATE_STORE_ERROR);
                  assertThat(e.detail()).startsWith("SQLSTATE 57014");
                });
      } finally {
        operator.rollback();
      }
      assertThat(store.readLifecycle("lake")).isEmpty();
    }
  }

  @Test
  void anOperatorsRowIsReadRawEvenForRetired() {
    try (PostgresStore store = db.storeBuilder(newPipeline()).build()) {
      db.execute(
          "INSERT INTO etl.destination_lifecycle"
              + " (pipeline_id, destination_name, state, reason, updated_by)"
              + " VALUES ('"
              + store.pipelineId()
              + "', 'lake', 'retired', 'moved to warehouse', 'jane')");
      LifecycleRecord row = store.readLifecycle("lake").orElseThrow();
      assertThat(row.rawState()).isEqualTo("retired");
      assertThat(row.reason()).isEqualTo("moved to warehouse");
      assertThat(row.updatedBy()).isEqualTo("jane");
    }
  }
}
