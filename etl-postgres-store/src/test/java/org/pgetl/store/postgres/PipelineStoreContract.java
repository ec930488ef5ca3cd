package org.pgetl.store.postgres;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Random;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.pgetl.destination.DestinationTableMetadataStore.TableMetadata;
import org.pgetl.error.ErrorKind;
import org.pgetl.error.EtlException;
import org.pgetl.error.RetryDirective;
import org.pgetl.lifecycle.LifecycleState;
import org.pgetl.model.ColumnSchema;
import org.pgetl.model.IdentityKind;
import org.pgetl.model.Lsn;
import org.pgetl.model.ReplicatedTableSchema;
import org.pgetl.model.TableId;
import org.pgetl.model.TableName;
import org.pgetl.model.TableSchema;
import org.pgetl.store.PipelineStore;
import org.pgetl.store.PipelineStore.ChunkKind;
import org.pgetl.store.PipelineStore.ChunkRecord;
import org.pgetl.store.PipelineStore.LifecycleRecord;
import org.pgetl.store.PipelineStore.ProgressKey;
import org.pgetl.store.TableState;

/**
 * The behaviour every {@link PipelineStore} shares, written once and run against each
 * implementation ({@link org.pgetl.store.MemoryStore} is the reference).
 */
abstract class PipelineStoreContract {
  static final TableId T1 = new TableId(16_384);
  static final TableId T2 = new TableId(16_390);
  // The greatest oid: table ids are unsigned 32-bit numbers.
  static final TableId T_MAX_OID = new TableId(4_294_967_295L);

  private static final AtomicInteger PIPELINES = new AtomicInteger();

  private final List<PipelineStore> opened = new ArrayList<>();

  /**
   * Opens a store for a pipeline. Two calls with the same id see the same state where the store is
   * persistent.
   */
  protected abstract PipelineStore openStore(String pipelineId);

  /** Writes a lifecycle value as an operator would with SQL, bypassing the store's refusal. */
  protected abstract void writeLifecycleAsOperator(
      PipelineStore store, String destinationName, String rawState);

  /** Returns a store for a pipeline id no other test uses. */
  protected PipelineStore newStore() {
    return store("contract-" + getClass().getSimpleName() + "-" + PIPELINES.incrementAndGet());
  }

  protected PipelineStore store(String pipelineId) {
    PipelineStore s = openStore(pipelineId);
    opened.add(s);
    return s;
  }

  @AfterEach
  void closeStores() {
    opened.forEach(PipelineStore::close);
    opened.clear();
  }

  static Lsn lsn(String text) {
    return Lsn.parse(text);
  }

  static ReplicatedTableSchema schema(TableId id, String lsn, String... columnNames) {
    List<ColumnSchema> cols = new ArrayList<>();
    for (int i = 0; i < columnNames.length; i++) {
      cols.add(
          new ColumnSchema(columnNames[i], 23, -1, "integer", i + 1, i == 0 ? 1 : 0, i != 0, null));
    }
    return ReplicatedTableSchema.allColumns(
        new TableSchema(id, new TableName("public", "t" + id), cols, lsn(lsn)));
  }

  // ------------------------------------------------------------------ empty store

  @Test
  void aNewPipelineHasNoState() {
    PipelineStore store = newStore();

    assertThat(store.loadTableStates()).isEmpty();
    assertThat(store.tableStates()).isEmpty();
    assertThat(store.tableState(T1)).isEmpty();
    assertThat(store.tableStateHistory(T1)).isEmpty();
    assertThat(store.progress(ProgressKey.apply())).isEmpty();
    assertThat(store.progress(ProgressKey.tableSync(T1))).isEmpty();
    assertThat(store.tableSchemas(T1)).isEmpty();
    assertThat(store.tableSchema(T1, Lsn.MAX)).isEmpty();
    assertThat(store.get(T1)).isEmpty();
    assertThat(store.readLifecycle("lake")).isEmpty();
  }

  // ------------------------------------------------------------------ requests and copies

  @Test
  void tableRequestsAreKeptInOrderUntilCompletedAndScopedToTheirPipeline() {
    PipelineStore store = newStore();
    PipelineStore other = newStore();
    org.pgetl.store.PipelineStore.TableRequest first =
        store.requestTableAction(
            T1, org.pgetl.store.PipelineStore.TableRequest.Action.RESYNC, "ops");
    org.pgetl.store.PipelineStore.TableRequest second =
        store.requestTableAction(T2, org.pgetl.store.PipelineStore.TableRequest.Action.RETRY, null);
    other.requestTableAction(
        T1, org.pgetl.store.PipelineStore.TableRequest.Action.RETRY, "elsewhere");

    assertThat(store.tableRequests()).containsExactly(first, second);
    assertThat(first.requestedBy()).isEqualTo("ops");
    assertThat(second.id()).isGreaterThan(first.id());
    store.completeTableRequest(first.id());
    store.completeTableRequest(424242L); // unknown: ignored
    assertThat(store.tableRequests()).containsExactly(second);
    assertThat(other.tableRequests()).hasSize(1);
    store.deleteTable(T2);
    assertThat(store.tableRequests()).isEmpty();
  }

  @Test
  void theLastCopyOfATableReplacesTheOneBefore() {
    PipelineStore store = newStore();
    java.time.Instant at = java.time.Instant.parse("2026-01-02T03:04:05Z");
    org.pgetl.store.PipelineStore.CopyRecord a =
        new org.pgetl.store.PipelineStore.CopyRecord(java.util.UUID.randomUUID(), 10, 2, at);
    org.pgetl.store.PipelineStore.CopyRecord b =
        new org.pgetl.store.PipelineStore.CopyRecord(
            java.util.UUID.randomUUID(), 20, 3, at.plusSeconds(60));
    store.recordCopy(T1, a);
    store.recordCopy(T1, b);
    store.recordCopy(T2, a);

    assertThat(store.copies()).containsEntry(T1, b).containsEntry(T2, a).hasSize(2);
    store.deleteTable(T2);
    assertThat(store.copies()).containsOnlyKeys(T1);
    store.deletePipelineState();
    assertThat(store.copies()).isEmpty();
  }

  // ------------------------------------------------------------------ states

  @Test
  void updatesKeepTheHistoryNewestFirst() {
    PipelineStore store = newStore();
    TableState syncDone = new TableState.SyncDone(lsn("0/16B3748"));

    store.updateTableState(T1, TableState.INIT);
    store.updateTableState(T1, TableState.DATA_SYNC);
    store.updateTableState(T1, TableState.FINISHED_COPY);
    store.updateTableState(T1, syncDone);
    store.updateTableState(T1, TableState.READY);

    assertThat(store.tableState(T1)).contains(TableState.READY);
    assertThat(store.tableStates()).isEqualTo(Map.of(T1, TableState.READY));
    assertThat(store.loadTableStates()).isEqualTo(Map.of(T1, TableState.READY));
    assertThat(store.tableStateHistory(T1))
        .containsExactly(
            TableState.READY,
            syncDone,
            TableState.FINISHED_COPY,
            TableState.DATA_SYNC,
            TableState.INIT);
  }

  @Test
  void everyPersistedStateRoundTrips() {
    PipelineStore store = newStore();
    List<TableState> states =
        List.of(
            TableState.INIT,
            TableState.DATA_SYNC,
            TableState.FINISHED_COPY,
            new TableState.SyncDone(Lsn.ZERO),
            new TableState.SyncDone(Lsn.MAX),
            TableState.READY,
            new TableState.Errored(
                ErrorKind.SOURCE_QUERY_FAILED,
                "relation \"x\" does not exist",
                "fix it",
                RetryDirective.NONE),
            new TableState.Errored(
                ErrorKind.DESTINATION_ERROR,
                "quotes ' \" \\ backslash, newline\n, tab\t, unicode żółw 🐢, {\"json\": 1}",
                "roll the table back",
                RetryDirective.MANUAL),
            new TableState.Errored(
                ErrorKind.SOURCE_CONNECTION_FAILED,
                "",
                "",
                RetryDirective.TIMED,
                Instant.parse("2031-02-03T04:05:06.123456789Z"),
                7));

    for (TableState s : states) {
      store.updateTableState(T_MAX_OID, s);
      assertThat(store.tableState(T_MAX_OID)).contains(s);
      assertThat(store.loadTableStates()).containsEntry(T_MAX_OID, s);
    }
    assertThat(store.tableStateHistory(T_MAX_OID)).containsExactlyElementsOf(reversed(states));
  }

  @Test
  void memoryOnlyStatesAreRefused() {
    PipelineStore store = newStore();
    store.updateTableState(T1, TableState.INIT);

    assertThatThrownBy(() -> store.updateTableState(T1, new TableState.SyncWait(lsn("0/10"))))
        .isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(
            () ->
                store.updateTableStates(
                    Map.of(T1, TableState.READY, T2, new TableState.Catchup(lsn("0/10")))))
        .isInstanceOf(IllegalArgumentException.class);

    assertThat(store.loadTableStates()).isEqualTo(Map.of(T1, TableState.INIT));
    assertThat(store.tableStateHistory(T1)).containsExactly(TableState.INIT);
  }

  @Test
  void updateTableStatesStoresEveryTable() {
    PipelineStore store = newStore();
    store.updateTableStates(Map.of(T1, TableState.INIT, T2, TableState.INIT));
    store.updateTableStates(Map.of(T1, TableState.DATA_SYNC, T2, TableState.READY));
    store.updateTableStates(Map.of());

    Map<TableId, TableState> expected = Map.of(T1, TableState.DATA_SYNC, T2, TableState.READY);
    assertThat(store.tableStates()).isEqualTo(expected);
    assertThat(store.loadTableStates()).isEqualTo(expected);
    assertThat(store.tableStateHistory(T2)).containsExactly(TableState.READY, TableState.INIT);
  }

  @Test
  void rollbackMakesThePreviousStateCurrentOneStepAtATime() {
    PipelineStore store = newStore();
    TableState errored =
        new TableState.Errored(ErrorKind.DESTINATION_ERROR, "boom", "retry", RetryDirective.MANUAL);
    store.updateTableState(T1, TableState.INIT);
    store.updateTableState(T1, TableState.DATA_SYNC);
    store.updateTableState(T1, errored);

    assertThat(store.rollbackTableState(T1)).isEqualTo(TableState.DATA_SYNC);
    assertThat(store.tableState(T1)).contains(TableState.DATA_SYNC);
    assertThat(store.tableStateHistory(T1)).containsExactly(TableState.DATA_SYNC, TableState.INIT);

    store.updateTableState(T1, TableState.FINISHED_COPY);
    assertThat(store.tableStateHistory(T1))
        .containsExactly(TableState.FINISHED_COPY, TableState.DATA_SYNC, TableState.INIT);

    assertThat(store.rollbackTableState(T1)).isEqualTo(TableState.DATA_SYNC);
    assertThat(store.rollbackTableState(T1)).isEqualTo(TableState.INIT);
    assertThat(store.loadTableStates()).isEqualTo(Map.of(T1, TableState.INIT));
  }

  @Test
  void rollbackWithoutAnEarlierStateFails() {
    PipelineStore store = newStore();

    assertThatThrownBy(() -> store.rollbackTableState(T1))
        .isInstanceOfSatisfying(
            EtlException.class,
            e -> assertThat(e.kind()).isEqualTo(ErrorKind.STATE_ROLLBACK_ERROR));

    store.updateTableState(T1, TableState.DATA_SYNC);
    assertThatThrownBy(() -> store.rollbackTableState(T1))
        .isInstanceOfSatisfying(
            EtlException.class,
            e -> assertThat(e.kind()).isEqualTo(ErrorKind.STATE_ROLLBACK_ERROR));
    assertThat(store.tableState(T1)).contains(TableState.DATA_SYNC);
    assertThat(store.loadTableStates()).isEqualTo(Map.of(T1, TableState.DATA_SYNC));
  }

  @Test
  void resetReplacesTheHistoryWithInit() {
    PipelineStore store = newStore();
    store.updateTableState(T1, TableState.INIT);
    store.updateTableState(T1, TableState.DATA_SYNC);
    store.updateTableState(T1, TableState.READY);

    store.resetTableState(T1);
    store.resetTableState(T2);

    assertThat(store.tableStates()).isEqualTo(Map.of(T1, TableState.INIT, T2, TableState.INIT));
    assertThat(store.loadTableStates()).isEqualTo(Map.of(T1, TableState.INIT, T2, TableState.INIT));
    assertThat(store.tableStateHistory(T1)).containsExactly(TableState.INIT);
    assertThatThrownBy(() -> store.rollbackTableState(T1))
        .isInstanceOfSatisfying(
            EtlException.class,
            e -> assertThat(e.kind()).isEqualTo(ErrorKind.STATE_ROLLBACK_ERROR));
  }

  // ------------------------------------------------------------------ progress

  @Test
  void progressOnlyMovesForward() {
    PipelineStore store = newStore();
    ProgressKey apply = ProgressKey.apply();
    ProgressKey sync = ProgressKey.tableSync(T1);

    assertThat(store.advanceProgress(apply, lsn("1/100"))).isEqualTo(lsn("1/100"));
    assertThat(store.advanceProgress(apply, lsn("0/FFFFFFFF"))).isEqualTo(lsn("1/100"));
    assertThat(store.advanceProgress(apply, lsn("1/100"))).isEqualTo(lsn("1/100"));
    assertThat(store.advanceProgress(apply, lsn("2/0"))).isEqualTo(lsn("2/0"));
    assertThat(store.progress(apply)).contains(lsn("2/0"));

    assertThat(store.progress(sync)).isEmpty();
    assertThat(store.advanceProgress(sync, lsn("0/5"))).isEqualTo(lsn("0/5"));
    assertThat(store.advanceProgress(ProgressKey.tableSync(T_MAX_OID), Lsn.MAX)).isEqualTo(Lsn.MAX);
    assertThat(store.progress(sync)).contains(lsn("0/5"));
    assertThat(store.progress(apply)).contains(lsn("2/0"));

    store.deleteProgress(apply);
    assertThat(store.progress(apply)).isEmpty();
    assertThat(store.progress(sync)).contains(lsn("0/5"));
    assertThat(store.advanceProgress(apply, lsn("0/1"))).isEqualTo(lsn("0/1"));

    store.deleteProgress(sync);
    assertThat(store.progress(sync)).isEmpty();
    assertThat(store.progress(ProgressKey.tableSync(T_MAX_OID))).contains(Lsn.MAX);
  }

  @Test
  void concurrentAdvancesKeepTheGreatestProgress() throws Exception {
    PipelineStore store = newStore();
    int threads = 8;
    int perThread = 40;
    long seed = System.nanoTime();
    System.out.println("concurrentAdvancesKeepTheGreatestProgress seed=" + seed);
    Random random = new Random(seed);
    List<List<Lsn>> plans = new ArrayList<>();
    Lsn max = Lsn.ZERO;
    for (int t = 0; t < threads; t++) {
      List<Lsn> plan = new ArrayList<>();
      for (int i = 0; i < perThread; i++) {
        // Spread over the whole unsigned range, high bit included.
        Lsn l = Lsn.of(random.nextLong());
        plan.add(l);
        max = Lsn.max(max, l);
      }
      plans.add(plan);
    }
    List<ProgressKey> keys = List.of(ProgressKey.apply(), ProgressKey.tableSync(T1));
    AtomicInteger threadNo = new AtomicInteger();
    ExecutorService pool =
        Executors.newFixedThreadPool(
            threads, r -> new Thread(r, "pgetl-test-progress-" + threadNo.incrementAndGet()));
    try {
      CountDownLatch start = new CountDownLatch(1);
      List<Future<List<String>>> results = new ArrayList<>();
      for (List<Lsn> plan : plans) {
        results.add(
            pool.submit(
                () -> {
                  start.await();
                  List<String> violations = new ArrayList<>();
                  for (Lsn l : plan) {
                    for (ProgressKey key : keys) {
                      Lsn stored = store.advanceProgress(key, l);
                      if (stored.isBefore(l)) {
                        violations.add(key + ": advanced to " + l + ", got " + stored);
                      }
                    }
                  }
                  return violations;
                }));
      }
      start.countDown();
      for (Future<List<String>> f : results) {
        assertThat(f.get(60, TimeUnit.SECONDS)).isEmpty();
      }
    } finally {
      pool.shutdownNow();
    }
    assertThat(store.progress(ProgressKey.apply())).contains(max);
    assertThat(store.progress(ProgressKey.tableSync(T1))).contains(max);
  }

  // ------------------------------------------------------------------ schemas

  @Test
  void schemaVersionsAreFoundByLsn() {
    PipelineStore store = newStore();
    ReplicatedTableSchema v0 = schema(T1, "0/0", "id");
    ReplicatedTableSchema v1 = schema(T1, "0/100", "id", "a");
    ReplicatedTableSchema v2 = schema(T1, "1/0", "id", "a", "b");
    store.storeTableSchema(v1);
    store.storeTableSchema(v2);
    store.storeTableSchema(v0);

    assertThat(store.tableSchemas(T1)).containsExactly(v0, v1, v2);
    assertThat(store.tableSchema(T1, Lsn.ZERO)).contains(v0);
    assertThat(store.tableSchema(T1, lsn("0/FF"))).contains(v0);
    assertThat(store.tableSchema(T1, lsn("0/100"))).contains(v1);
    assertThat(store.tableSchema(T1, lsn("0/FFFFFFFF"))).contains(v1);
    assertThat(store.tableSchema(T1, Lsn.MAX)).contains(v2);
    assertThat(store.tableSchemas(T2)).isEmpty();

    ReplicatedTableSchema late = schema(T2, "0/50", "id");
    store.storeTableSchema(late);
    assertThat(store.tableSchema(T2, lsn("0/4F"))).isEmpty();
    assertThat(store.tableSchema(T2, lsn("0/50"))).contains(late);
  }

  @Test
  void storingTheSameVersionAgainReplacesIt() {
    PipelineStore store = newStore();
    store.storeTableSchema(schema(T1, "0/100", "id", "a", "b"));
    ReplicatedTableSchema replacement =
        ReplicatedTableSchema.allColumns(
            new TableSchema(T1, new TableName("public", "renamed"), List.of(), lsn("0/100")));
    store.storeTableSchema(replacement);

    assertThat(store.tableSchemas(T1)).containsExactly(replacement);
    assertThat(store.tableSchema(T1, lsn("0/100"))).contains(replacement);
  }

  @Test
  void everyColumnFieldRoundTrips() {
    PipelineStore store = newStore();
    List<ColumnSchema> columns =
        List.of(
            new ColumnSchema("id", 20, -1, "bigint", 1, 2, false, "nextval('s'::regclass)"),
            new ColumnSchema("Tenant \"Id\"", 23, -1, "integer", 3, 1, false, null),
            new ColumnSchema("amount", 1700, 655366, "numeric(10,2)", 4, 0, true, "0.00"),
            // A domain or extension type with an oid above 2^31.
            new ColumnSchema("ext", -5, 12, "my_type", 7, 0, true, null),
            new ColumnSchema("żółw", 1009, -1, "text[]", 8, 0, true, "'{}'::text[]"));
    ReplicatedTableSchema s =
        ReplicatedTableSchema.allColumns(
            new TableSchema(
                T_MAX_OID, new TableName("My Schema", "Order\"s"), columns, lsn("A/B")));
    store.storeTableSchema(s);

    assertThat(store.tableSchemas(T_MAX_OID)).containsExactly(s);
    assertThat(store.tableSchema(T_MAX_OID, Lsn.MAX)).contains(s);
  }

  @Test
  void theReplicaIdentityAndTheColumnListRoundTrip() {
    PipelineStore store = newStore();
    List<ColumnSchema> columns =
        List.of(
            new ColumnSchema("id", 23, -1, "integer", 1, 1, false, null),
            new ColumnSchema("secret", 25, -1, "text", 2, 0, true, null),
            new ColumnSchema("a", 23, -1, "integer", 4, 0, false, null),
            new ColumnSchema("b", 23, -1, "integer", 5, 0, false, null),
            new ColumnSchema("note", 25, -1, "text", 6, 0, true, null));
    TableSchema table = new TableSchema(T1, new TableName("public", "t"), columns, lsn("0/10"));
    boolean[] withoutSecret = {true, false, true, true, true};
    // USING INDEX on (b, a): key order differs from attnum order; "secret" is not published.
    ReplicatedTableSchema index =
        ReplicatedTableSchema.of(table, withoutSecret, IdentityKind.INDEX, new int[] {2, 1});
    ReplicatedTableSchema full =
        ReplicatedTableSchema.of(
            table.withSnapshotLsn(lsn("0/20")), withoutSecret, IdentityKind.FULL, new int[0]);
    ReplicatedTableSchema nothing =
        ReplicatedTableSchema.of(
            table.withSnapshotLsn(lsn("0/30")),
            new boolean[] {true, true, true, true, true},
            IdentityKind.NOTHING,
            new int[0]);
    ReplicatedTableSchema primaryKey =
        ReplicatedTableSchema.of(
            table.withSnapshotLsn(lsn("0/40")),
            withoutSecret,
            IdentityKind.PRIMARY_KEY,
            new int[] {0});
    for (ReplicatedTableSchema s : List.of(index, full, nothing, primaryKey)) {
      store.storeTableSchema(s);
    }

    assertThat(store.tableSchemas(T1)).containsExactly(index, full, nothing, primaryKey);
    ReplicatedTableSchema read = store.tableSchema(T1, lsn("0/10")).orElseThrow();
    assertThat(read.identity()).isEqualTo(IdentityKind.INDEX);
    assertThat(read.identityColumnIndexes()).containsExactly(2, 1);
    assertThat(read.replicationMask()).containsExactly(withoutSecret);
    assertThat(read.columns())
        .extracting(ColumnSchema::name)
        .containsExactly("id", "a", "b", "note");
    assertThat(store.tableSchema(T1, lsn("0/20")).orElseThrow().identity())
        .isEqualTo(IdentityKind.FULL);
  }

  @Test
  void pruneKeepsTheNewestVersionAtOrBeforeTheDurableLsnAndEveryNewerOne() {
    PipelineStore store = newStore();
    ReplicatedTableSchema v0 = schema(T1, "0/0", "id");
    ReplicatedTableSchema v1 = schema(T1, "0/100", "id", "a");
    ReplicatedTableSchema v2 = schema(T1, "0/200", "id", "a", "b");
    ReplicatedTableSchema v3 = schema(T1, "0/300", "id", "a", "b", "c");
    ReplicatedTableSchema other = schema(T2, "0/0", "id");
    for (ReplicatedTableSchema s : List.of(v0, v1, v2, v3, other)) {
      store.storeTableSchema(s);
    }

    assertThat(store.pruneTableSchemas(T1, lsn("0/250"))).isEqualTo(2);
    assertThat(store.tableSchemas(T1)).containsExactly(v2, v3);
    assertThat(store.pruneTableSchemas(T1, lsn("0/250"))).isZero();
    assertThat(store.pruneTableSchemas(T1, lsn("0/100"))).isZero();
    assertThat(store.tableSchemas(T1)).containsExactly(v2, v3);
    assertThat(store.pruneTableSchemas(T1, Lsn.MAX)).isEqualTo(1);
    assertThat(store.tableSchemas(T1)).containsExactly(v3);
    assertThat(store.pruneTableSchemas(T_MAX_OID, Lsn.MAX)).isZero();
    assertThat(store.tableSchemas(T2)).containsExactly(other);
  }

  // ------------------------------------------------------------------ destination metadata

  @Test
  void destinationMetadataIsStoredAndReplaced() {
    PipelineStore store = newStore();
    TableMetadata first = new TableMetadata("lake.orders", Lsn.ZERO, false);
    TableMetadata second = new TableMetadata("lake.\"orders_v2\"", lsn("5/AB"), true);

    store.put(T1, first);
    assertThat(store.get(T1)).contains(first);
    store.put(T1, second);
    assertThat(store.get(T1)).contains(second);
    assertThat(store.get(T2)).isEmpty();
  }

  // ------------------------------------------------------------------ table lifecycle

  /** Gives T1 and T2 a state, schema, metadata and table-sync progress; sets apply progress. */
  private static void fillTwoTables(PipelineStore store) {
    for (TableId t : List.of(T1, T2)) {
      store.updateTableState(t, TableState.INIT);
      store.updateTableState(t, TableState.DATA_SYNC);
      store.storeTableSchema(schema(t, "0/0", "id"));
      store.storeTableSchema(schema(t, "0/10", "id", "a"));
      store.put(t, new TableMetadata("d." + t, lsn("0/10"), true));
      store.advanceProgress(ProgressKey.tableSync(t), lsn("0/20"));
    }
    store.advanceProgress(ProgressKey.apply(), lsn("0/30"));
  }

  private static void assertUntouched(PipelineStore store, TableId t) {
    assertThat(store.tableState(t)).contains(TableState.DATA_SYNC);
    assertThat(store.tableSchemas(t)).hasSize(2);
    assertThat(store.get(t)).isPresent();
    assertThat(store.progress(ProgressKey.tableSync(t))).contains(lsn("0/20"));
  }

  @Test
  void prepareForCopyDropsMetadataSchemasAndTableSyncProgressButKeepsTheState() {
    PipelineStore store = newStore();
    fillTwoTables(store);

    store.prepareTableForCopy(T1);

    assertThat(store.tableState(T1)).contains(TableState.DATA_SYNC);
    assertThat(store.tableStateHistory(T1)).containsExactly(TableState.DATA_SYNC, TableState.INIT);
    assertThat(store.get(T1)).isEmpty();
    assertThat(store.tableSchemas(T1)).isEmpty();
    assertThat(store.tableSchema(T1, Lsn.MAX)).isEmpty();
    assertThat(store.progress(ProgressKey.tableSync(T1))).isEmpty();
    assertThat(store.progress(ProgressKey.apply())).contains(lsn("0/30"));
    assertUntouched(store, T2);

    // The same after re-reading everything.
    store.loadTableStates();
    assertThat(store.get(T1)).isEmpty();
    assertThat(store.tableSchemas(T1)).isEmpty();
    assertUntouched(store, T2);
  }

  @Test
  void resetForResyncMakesEveryTableInitAndDropsOnlyTheApplyProgress() {
    PipelineStore store = newStore();
    fillTwoTables(store);
    store.updateTableState(T2, TableState.READY);

    store.resetAllTablesForResync();

    Map<TableId, TableState> init = Map.of(T1, TableState.INIT, T2, TableState.INIT);
    assertThat(store.tableStates()).isEqualTo(init);
    assertThat(store.loadTableStates()).isEqualTo(init);
    assertThat(store.progress(ProgressKey.apply())).isEmpty();
    for (TableId t : List.of(T1, T2)) {
      assertThat(store.tableSchemas(t)).hasSize(2);
      assertThat(store.get(t)).isPresent();
      assertThat(store.progress(ProgressKey.tableSync(t))).contains(lsn("0/20"));
    }
    // The history is kept: the reset can be rolled back.
    assertThat(store.tableStateHistory(T2))
        .containsExactly(TableState.INIT, TableState.READY, TableState.DATA_SYNC, TableState.INIT);
    assertThat(store.rollbackTableState(T2)).isEqualTo(TableState.READY);
  }

  @Test
  void deleteTableRemovesEverythingOfThatTableOnly() {
    PipelineStore store = newStore();
    fillTwoTables(store);

    store.deleteTable(T1);

    assertThat(store.tableState(T1)).isEmpty();
    assertThat(store.tableStateHistory(T1)).isEmpty();
    assertThat(store.tableSchemas(T1)).isEmpty();
    assertThat(store.get(T1)).isEmpty();
    assertThat(store.progress(ProgressKey.tableSync(T1))).isEmpty();
    assertThat(store.progress(ProgressKey.apply())).contains(lsn("0/30"));
    assertThat(store.loadTableStates()).isEqualTo(Map.of(T2, TableState.DATA_SYNC));
    assertUntouched(store, T2);
  }

  @Test
  void deletePipelineStateRemovesEverythingButTheLifecycleRows() {
    PipelineStore store = newStore();
    fillTwoTables(store);
    store.writeLifecycle("lake", LifecycleState.DRAINING, "retiring", "ops");

    store.deletePipelineState();

    assertThat(store.tableStates()).isEmpty();
    assertThat(store.loadTableStates()).isEmpty();
    for (TableId t : List.of(T1, T2)) {
      assertThat(store.tableStateHistory(t)).isEmpty();
      assertThat(store.tableSchemas(t)).isEmpty();
      assertThat(store.get(t)).isEmpty();
      assertThat(store.progress(ProgressKey.tableSync(t))).isEmpty();
    }
    assertThat(store.progress(ProgressKey.apply())).isEmpty();
    assertThat(store.readLifecycle("lake")).map(LifecycleRecord::rawState).contains("draining");
  }

  // ------------------------------------------------------------------ chunks

  private static final java.util.UUID ATTEMPT =
      java.util.UUID.fromString("0b6a4f3e-2c1d-4e5f-8a9b-0c1d2e3f4a5b");
  private static final java.util.UUID OTHER_ATTEMPT =
      java.util.UUID.fromString("7f3e2d1c-0b9a-4876-9543-210fedcba987");

  /** Three ranges over an integer key: (open, 100), [100, 200), [200, open). */
  private static List<ChunkRecord> threeRanges(java.util.UUID attempt) {
    return List.of(
        ChunkRecord.planned(attempt, 0, ChunkKind.RANGE, null, List.of("100")),
        ChunkRecord.planned(attempt, 1, ChunkKind.RANGE, List.of("100"), List.of("200")),
        ChunkRecord.planned(attempt, 2, ChunkKind.RANGE, List.of("200"), null));
  }

  private static void assertStateStoreError(
      org.assertj.core.api.ThrowableAssert.ThrowingCallable call) {
    assertThatThrownBy(call)
        .isInstanceOfSatisfying(
            EtlException.class, e -> assertThat(e.kind()).isEqualTo(ErrorKind.STATE_STORE_ERROR));
  }

  @Test
  void plannedChunksAreReadInIndexOrderNotDoneAndNeverRead() {
    PipelineStore store = newStore();
    assertThat(store.chunks(T1)).isEmpty();

    store.planChunks(T1, ATTEMPT, threeRanges(ATTEMPT));

    assertThat(store.chunks(T1)).isEqualTo(threeRanges(ATTEMPT));
    assertThat(store.chunks(T1))
        .allSatisfy(
            c -> {
              assertThat(c.done()).isFalse();
              assertThat(c.reads()).isZero();
              assertThat(c.watermark()).isNull();
              assertThat(c.doneAt()).isNull();
              assertThat(c.rows()).isZero();
              assertThat(c.bytes()).isZero();
            });
    assertThat(store.chunks(T1).get(0).from()).isNull();
    assertThat(store.chunks(T1).get(2).to()).isNull();
    assertThat(store.chunks(T2)).isEmpty();
  }

  @Test
  void planningForgetsWhatThePlannedRecordsSayOfReadsAndDoneness() {
    PipelineStore store = newStore();
    ChunkRecord doneOne =
        new ChunkRecord(
            ATTEMPT, 0, ChunkKind.RANGE, null, null, 3, lsn("0/10"), 5, 50, Instant.now());

    store.planChunks(T1, ATTEMPT, List.of(doneOne));

    assertThat(store.chunks(T1))
        .containsExactly(ChunkRecord.planned(ATTEMPT, 0, ChunkKind.RANGE, null, null));
  }

  @Test
  void aPlanWithWrongIndexesOrAttemptIsRefused() {
    PipelineStore store = newStore();
    store.planChunks(T1, ATTEMPT, threeRanges(ATTEMPT));
    List<ChunkRecord> gap =
        List.of(
            ChunkRecord.planned(ATTEMPT, 0, ChunkKind.RANGE, null, List.of("1")),
            ChunkRecord.planned(ATTEMPT, 2, ChunkKind.RANGE, List.of("1"), null));

    assertThatThrownBy(() -> store.planChunks(T1, ATTEMPT, gap))
        .isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> store.planChunks(T1, OTHER_ATTEMPT, threeRanges(ATTEMPT)))
        .isInstanceOf(IllegalArgumentException.class);
    // nothing was replaced
    assertThat(store.chunks(T1)).isEqualTo(threeRanges(ATTEMPT));
  }

  @Test
  void eachReadOfAChunkIsCounted() {
    PipelineStore store = newStore();
    store.planChunks(T1, ATTEMPT, threeRanges(ATTEMPT));

    assertThat(store.startChunkRead(T1, ATTEMPT, 1)).isEqualTo(1);
    assertThat(store.startChunkRead(T1, ATTEMPT, 1)).isEqualTo(2);
    assertThat(store.startChunkRead(T1, ATTEMPT, 2)).isEqualTo(1);

    assertThat(store.chunks(T1)).extracting(ChunkRecord::reads).containsExactly(0, 2, 1);
    assertThat(store.chunks(T1)).noneMatch(ChunkRecord::done);
  }

  @Test
  void aCompletedChunkIsDoneWithItsWatermarkRowsAndBytes() {
    PipelineStore store = newStore();
    store.planChunks(T1, ATTEMPT, threeRanges(ATTEMPT));
    store.startChunkRead(T1, ATTEMPT, 1);
    Instant before = Instant.now().minusSeconds(60);

    store.completeChunk(T1, ATTEMPT, 1, lsn("16/B374D848"), 1_000, 65_536);

    List<ChunkRecord> chunks = store.chunks(T1);
    ChunkRecord done = chunks.get(1);
    assertThat(done.done()).isTrue();
    assertThat(done.watermark()).isEqualTo(lsn("16/B374D848"));
    assertThat(done.rows()).isEqualTo(1_000);
    assertThat(done.bytes()).isEqualTo(65_536);
    assertThat(done.doneAt()).isNotNull().isAfter(before).isBefore(Instant.now().plusSeconds(60));
    // the rest of the chunk is as it was
    assertThat(done.reads()).isEqualTo(1);
    assertThat(done.kind()).isEqualTo(ChunkKind.RANGE);
    assertThat(done.from()).containsExactly("100");
    assertThat(done.to()).containsExactly("200");
    assertThat(chunks.get(0).done()).isFalse();
    assertThat(chunks.get(2).done()).isFalse();
  }

  @Test
  void aKeyChunkGetsTheNextIndex() {
    PipelineStore store = newStore();
    store.planChunks(T1, ATTEMPT, threeRanges(ATTEMPT));

    ChunkRecord first = store.addKeyChunk(T1, ATTEMPT, List.of("150"));
    ChunkRecord second = store.addKeyChunk(T1, ATTEMPT, List.of("250"));

    assertThat(first)
        .isEqualTo(ChunkRecord.planned(ATTEMPT, 3, ChunkKind.KEY, List.of("150"), List.of("150")));
    assertThat(second.index()).isEqualTo(4);
    assertThat(second.kind()).isEqualTo(ChunkKind.KEY);
    assertThat(second.from()).isEqualTo(second.to()).containsExactly("250");
    assertThat(store.chunks(T1)).hasSize(5).endsWith(first, second);
    assertThat(store.startChunkRead(T1, ATTEMPT, 4)).isEqualTo(1);
  }

  @Test
  void concurrentKeyChunksGetDistinctIndexes() throws Exception {
    PipelineStore store = newStore();
    store.planChunks(T1, ATTEMPT, threeRanges(ATTEMPT));
    int threads = 4;
    int perThread = 10;
    AtomicInteger threadNo = new AtomicInteger();
    ExecutorService pool =
        Executors.newFixedThreadPool(
            threads, r -> new Thread(r, "pgetl-test-chunks-" + threadNo.incrementAndGet()));
    List<ChunkRecord> added = new ArrayList<>();
    try {
      CountDownLatch start = new CountDownLatch(1);
      List<Future<List<ChunkRecord>>> results = new ArrayList<>();
      for (int t = 0; t < threads; t++) {
        int thread = t;
        results.add(
            pool.submit(
                () -> {
                  start.await();
                  List<ChunkRecord> mine = new ArrayList<>();
                  for (int i = 0; i < perThread; i++) {
                    mine.add(store.addKeyChunk(T1, ATTEMPT, List.of(thread + ":" + i)));
                    // reads of the first chunk contend with the adds for its row
                    store.startChunkRead(T1, ATTEMPT, 0);
                  }
                  return mine;
                }));
      }
      start.countDown();
      for (Future<List<ChunkRecord>> f : results) {
        added.addAll(f.get(60, TimeUnit.SECONDS));
      }
    } finally {
      pool.shutdownNow();
    }

    int n = threads * perThread;
    assertThat(added)
        .extracting(ChunkRecord::index)
        .containsExactlyInAnyOrderElementsOf(
            java.util.stream.IntStream.range(3, 3 + n).boxed().toList());
    List<ChunkRecord> chunks = store.chunks(T1);
    assertThat(chunks).hasSize(3 + n);
    for (ChunkRecord c : added) {
      assertThat(chunks.get(c.index())).isEqualTo(c);
    }
    assertThat(chunks.get(0).reads()).isEqualTo(n);
  }

  @Test
  void aKeyChunkNeedsChunksOfItsAttempt() {
    PipelineStore store = newStore();
    assertStateStoreError(() -> store.addKeyChunk(T1, ATTEMPT, List.of("1")));

    store.planChunks(T1, ATTEMPT, threeRanges(ATTEMPT));
    assertStateStoreError(() -> store.addKeyChunk(T1, OTHER_ATTEMPT, List.of("1")));
    assertStateStoreError(() -> store.addKeyChunk(T2, ATTEMPT, List.of("1")));

    assertThat(store.chunks(T1)).isEqualTo(threeRanges(ATTEMPT));
    assertThat(store.chunks(T2)).isEmpty();
  }

  @Test
  void aMissingChunkOrAnotherAttemptIsAnError() {
    PipelineStore store = newStore();
    assertStateStoreError(() -> store.startChunkRead(T1, ATTEMPT, 0));
    assertStateStoreError(() -> store.completeChunk(T1, ATTEMPT, 0, lsn("0/10"), 1, 1));

    store.planChunks(T1, ATTEMPT, threeRanges(ATTEMPT));
    assertStateStoreError(() -> store.startChunkRead(T1, ATTEMPT, 3));
    assertStateStoreError(() -> store.startChunkRead(T1, ATTEMPT, -1));
    assertStateStoreError(() -> store.startChunkRead(T1, OTHER_ATTEMPT, 0));
    assertStateStoreError(() -> store.startChunkRead(T2, ATTEMPT, 0));
    assertStateStoreError(() -> store.completeChunk(T1, ATTEMPT, 3, lsn("0/10"), 1, 1));
    assertStateStoreError(() -> store.completeChunk(T1, OTHER_ATTEMPT, 0, lsn("0/10"), 1, 1));

    assertThat(store.chunks(T1)).isEqualTo(threeRanges(ATTEMPT));
  }

  @Test
  void reopenMarksNotDoneOnlyTheChunksDoneAfterTheLsn() {
    PipelineStore store = newStore();
    store.planChunks(T1, ATTEMPT, threeRanges(ATTEMPT));
    store.addKeyChunk(T1, ATTEMPT, List.of("150"));
    for (int i = 0; i < 4; i++) {
      store.startChunkRead(T1, ATTEMPT, i);
    }
    store.completeChunk(T1, ATTEMPT, 0, lsn("0/100"), 10, 100);
    store.completeChunk(T1, ATTEMPT, 1, lsn("0/200"), 20, 200);
    store.completeChunk(T1, ATTEMPT, 3, lsn("1/0"), 1, 10);
    // chunk 2 is not done

    assertThat(store.reopenChunksAfter(T1, OTHER_ATTEMPT, lsn("0/0"))).isZero();
    assertThat(store.reopenChunksAfter(T1, ATTEMPT, lsn("1/0"))).isZero(); // not after itself
    assertThat(store.reopenChunksAfter(T1, ATTEMPT, lsn("0/150"))).isEqualTo(2);

    List<ChunkRecord> chunks = store.chunks(T1);
    assertThat(chunks).extracting(ChunkRecord::done).containsExactly(true, false, false, false);
    assertThat(chunks.get(0).watermark()).isEqualTo(lsn("0/100"));
    assertThat(chunks.get(0).rows()).isEqualTo(10);
    for (int i : new int[] {1, 3}) {
      ChunkRecord c = chunks.get(i);
      assertThat(c.watermark()).isNull();
      assertThat(c.doneAt()).isNull();
      assertThat(c.rows()).isZero();
      assertThat(c.bytes()).isZero();
      assertThat(c.reads()).as("reads stay counted").isEqualTo(1);
    }
    assertThat(chunks.get(3).kind()).isEqualTo(ChunkKind.KEY);
    assertThat(store.reopenChunksAfter(T1, ATTEMPT, lsn("0/0"))).isEqualTo(1);
    assertThat(store.reopenChunksAfter(T2, ATTEMPT, lsn("0/0"))).isZero();
  }

  @Test
  void planningAgainReplacesTheChunks() {
    PipelineStore store = newStore();
    store.planChunks(T1, ATTEMPT, threeRanges(ATTEMPT));
    store.addKeyChunk(T1, ATTEMPT, List.of("150"));
    store.startChunkRead(T1, ATTEMPT, 0);
    store.completeChunk(T1, ATTEMPT, 0, lsn("0/100"), 10, 100);
    List<ChunkRecord> two =
        List.of(
            ChunkRecord.planned(OTHER_ATTEMPT, 0, ChunkKind.RANGE, null, List.of("5")),
            ChunkRecord.planned(OTHER_ATTEMPT, 1, ChunkKind.RANGE, List.of("5"), null));

    store.planChunks(T1, OTHER_ATTEMPT, two);

    assertThat(store.chunks(T1)).isEqualTo(two);
    assertStateStoreError(() -> store.startChunkRead(T1, ATTEMPT, 0));
    assertThat(store.addKeyChunk(T1, OTHER_ATTEMPT, List.of("7")).index()).isEqualTo(2);

    store.planChunks(T1, OTHER_ATTEMPT, List.of());
    assertThat(store.chunks(T1)).isEmpty();
  }

  @Test
  void theChunksOfTwoTablesAreIndependent() {
    PipelineStore store = newStore();
    List<ChunkRecord> t2Chunks =
        List.of(ChunkRecord.planned(OTHER_ATTEMPT, 0, ChunkKind.RANGE, null, null));
    store.planChunks(T1, ATTEMPT, threeRanges(ATTEMPT));
    store.planChunks(T2, OTHER_ATTEMPT, t2Chunks);

    store.startChunkRead(T2, OTHER_ATTEMPT, 0);
    store.completeChunk(T2, OTHER_ATTEMPT, 0, lsn("0/10"), 1, 1);
    store.addKeyChunk(T1, ATTEMPT, List.of("150"));
    store.planChunks(T_MAX_OID, ATTEMPT, threeRanges(ATTEMPT));

    assertThat(store.chunks(T1)).hasSize(4).noneMatch(ChunkRecord::done);
    assertThat(store.chunks(T2)).hasSize(1).allMatch(ChunkRecord::done);
    assertThat(store.chunks(T_MAX_OID)).isEqualTo(threeRanges(ATTEMPT));

    store.deleteChunks(T1);
    assertThat(store.chunks(T1)).isEmpty();
    assertThat(store.chunks(T2)).hasSize(1);
    assertThat(store.chunks(T_MAX_OID)).hasSize(3);
    store.deleteChunks(T1); // nothing left: no error
  }

  @Test
  void theChunksOfAPipelineAreItsOwn() {
    PipelineStore store = newStore();
    PipelineStore other = newStore();
    store.planChunks(T1, ATTEMPT, threeRanges(ATTEMPT));

    assertThat(other.chunks(T1)).isEmpty();
    assertStateStoreError(() -> other.startChunkRead(T1, ATTEMPT, 0));
    other.planChunks(T1, OTHER_ATTEMPT, threeRanges(OTHER_ATTEMPT));
    other.deletePipelineState();

    assertThat(store.chunks(T1)).isEqualTo(threeRanges(ATTEMPT));
  }

  @Test
  void boundsRoundTripExactly() {
    PipelineStore store = newStore();
    List<String> awkward =
        List.of(
            "a,b",
            "say \"hi\"",
            "back\\slash\\",
            "",
            "NULL",
            "null",
            "{1,2}",
            " padded ",
            "tab\tnew\nline",
            "zürich, 東京 🐘",
            "'single'");
    List<String> composite = List.of("2026-01-02 03:04:05+00", "", "x");
    List<ChunkRecord> planned =
        List.of(
            ChunkRecord.planned(ATTEMPT, 0, ChunkKind.RANGE, null, awkward),
            ChunkRecord.planned(ATTEMPT, 1, ChunkKind.RANGE, awkward, composite),
            ChunkRecord.planned(ATTEMPT, 2, ChunkKind.RANGE, composite, List.of("")),
            ChunkRecord.planned(ATTEMPT, 3, ChunkKind.RANGE, List.of(""), null),
            ChunkRecord.planned(ATTEMPT, 4, ChunkKind.KEY, awkward, awkward));

    store.planChunks(T1, ATTEMPT, planned);
    ChunkRecord key = store.addKeyChunk(T1, ATTEMPT, composite);

    List<ChunkRecord> read = store.chunks(T1);
    assertThat(read.subList(0, 5)).isEqualTo(planned);
    assertThat(read.get(5)).isEqualTo(key);
    assertThat(read.get(5).from()).isEqualTo(composite);
    assertThat(read.get(4).from()).containsExactlyElementsOf(awkward);
    assertThat(read.get(3).from()).containsExactly("");
  }

  @Test
  void prepareForCopyDeletesTheTablesChunks() {
    PipelineStore store = newStore();
    store.planChunks(T1, ATTEMPT, threeRanges(ATTEMPT));
    store.planChunks(T2, ATTEMPT, threeRanges(ATTEMPT));

    store.prepareTableForCopy(T1);

    assertThat(store.chunks(T1)).isEmpty();
    assertThat(store.chunks(T2)).hasSize(3);
  }

  @Test
  void deleteTableDeletesTheTablesChunks() {
    PipelineStore store = newStore();
    store.planChunks(T1, ATTEMPT, threeRanges(ATTEMPT));
    store.planChunks(T2, ATTEMPT, threeRanges(ATTEMPT));

    store.deleteTable(T1);

    assertThat(store.chunks(T1)).isEmpty();
    assertThat(store.chunks(T2)).hasSize(3);
  }

  @Test
  void resetForResyncAndDeletePipelineStateDeleteEveryTablesChunks() {
    PipelineStore store = newStore();
    fillTwoTables(store);
    store.planChunks(T1, ATTEMPT, threeRanges(ATTEMPT));
    store.planChunks(T2, OTHER_ATTEMPT, threeRanges(OTHER_ATTEMPT));

    store.resetAllTablesForResync();

    assertThat(store.chunks(T1)).isEmpty();
    assertThat(store.chunks(T2)).isEmpty();

    store.planChunks(T1, ATTEMPT, threeRanges(ATTEMPT));
    store.deletePipelineState();
    assertThat(store.chunks(T1)).isEmpty();
  }

  // ------------------------------------------------------------------ destination lifecycle

  @Test
  void lifecycleRowsAreWrittenAndRead() {
    PipelineStore store = newStore();
    Instant before = Instant.now().minusSeconds(60);

    store.writeLifecycle("lake", LifecycleState.PAUSED, "maintenance", "jane");
    Optional<LifecycleRecord> paused = store.readLifecycle("lake");
    assertThat(paused).isPresent();
    assertThat(paused.get().destinationName()).isEqualTo("lake");
    assertThat(paused.get().rawState()).isEqualTo("paused");
    assertThat(paused.get().reason()).isEqualTo("maintenance");
    assertThat(paused.get().updatedBy()).isEqualTo("jane");
    assertThat(paused.get().updatedAt()).isAfter(before);

    store.writeLifecycle("lake", LifecycleState.ACTIVE, null, null);
    LifecycleRecord active = store.readLifecycle("lake").orElseThrow();
    assertThat(active.rawState()).isEqualTo("active");
    assertThat(active.reason()).isNull();
    assertThat(active.updatedBy()).isNull();

    store.writeLifecycle("warehouse", LifecycleState.DRAINING, "moving", "ops");
    assertThat(store.readLifecycle("warehouse"))
        .map(LifecycleRecord::rawState)
        .contains("draining");
    assertThat(store.readLifecycle("lake")).map(LifecycleRecord::rawState).contains("active");
    assertThat(store.readLifecycle("other")).isEmpty();
  }

  @Test
  void theStoreRefusesToWriteRetired() {
    PipelineStore store = newStore();
    store.writeLifecycle("lake", LifecycleState.DRAINING, "about to retire", "ops");

    assertThatThrownBy(() -> store.writeLifecycle("lake", LifecycleState.RETIRED, "done", "ops"))
        .isInstanceOfSatisfying(
            EtlException.class, e -> assertThat(e.kind()).isEqualTo(ErrorKind.CONFIG_ERROR));
    assertThat(store.readLifecycle("lake")).map(LifecycleRecord::rawState).contains("draining");
  }

  @Test
  void anOperatorsRetiredRowReadsAsStored() {
    PipelineStore store = newStore();
    writeLifecycleAsOperator(store, "lake", "retired");

    LifecycleRecord row = store.readLifecycle("lake").orElseThrow();
    assertThat(row.rawState()).isEqualTo("retired");
    assertThat(LifecycleState.fromDbValue(row.rawState())).contains(LifecycleState.RETIRED);
  }

  private static <T> List<T> reversed(List<T> list) {
    List<T> out = new ArrayList<>(list);
    java.util.Collections.reverse(out);
    return out;
  }
}
