package org.pgetl.engine;

import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.function.Predicate;
import org.pgetl.PgConnectionConfig;
import org.pgetl.Pipeline;
import org.pgetl.PipelineConfig;
import org.pgetl.destination.Destination;
import org.pgetl.model.Lsn;
import org.pgetl.model.TableId;
import org.pgetl.model.TableName;
import org.pgetl.store.PipelineStore;
import org.pgetl.store.TableState;
import org.pgetl.testkit.TestDatabase;
import org.pgetl.testkit.destination.SourceTables;

/** Small helpers the engine ITs share: configuration, waiting for states, reading the source. */
final class PipelineHarness {
  static final Duration WAIT = Duration.ofSeconds(90);

  private PipelineHarness() {}

  static PgConnectionConfig source(TestDatabase db) {
    return PgConnectionConfig.builder()
        .host(db.host())
        .port(db.port())
        .database(db.name())
        .user(db.user())
        .password(db.password())
        .build();
  }

  /** A configuration for tests: short retry delays, short fill time, frequent status updates. */
  static PipelineConfig.Builder config(TestDatabase db, String pipelineId, String publication) {
    return PipelineConfig.builder()
        .pipelineId(pipelineId)
        .publication(publication)
        .source(source(db))
        .batchMaxFill(Duration.ofMillis(200))
        .retryDelay(Duration.ofMillis(300))
        .retryMaxDelay(Duration.ofSeconds(2))
        .statusInterval(Duration.ofSeconds(1))
        .shutdownTimeout(Duration.ofSeconds(5))
        .lifecyclePollInterval(Duration.ofMillis(200));
  }

  static Pipeline start(PipelineConfig config, PipelineStore store, Destination destination) {
    Pipeline p = Pipeline.create(config, store, destination);
    p.start();
    return p;
  }

  static TableId oid(TestDatabase db, String table) {
    return new TableId(db.queryLong("SELECT '" + table + "'::regclass::oid::bigint"));
  }

  static TableName name(String table) {
    return TableName.parse(table);
  }

  static void awaitStates(PipelineStore store, Predicate<Map<TableId, TableState>> until) {
    await()
        .atMost(WAIT)
        .pollInterval(Duration.ofMillis(50))
        .until(() -> until.test(store.tableStates()));
  }

  static void awaitAllReady(PipelineStore store, int tables) {
    awaitStates(
        store,
        s ->
            s.size() == tables
                && s.values().stream().allMatch(t -> t.type() == TableState.Type.READY));
  }

  static void awaitState(PipelineStore store, TableId table, TableState.Type type) {
    awaitStates(store, s -> s.get(table) != null && s.get(table).type() == type);
  }

  static List<List<Object>> sourceRows(TestDatabase db, String table) {
    return SourceTables.read(db, name(table));
  }

  static Lsn currentWal(TestDatabase db) {
    return Lsn.parse(db.queryString("SELECT pg_current_wal_lsn()::text"));
  }

  static Lsn confirmedFlush(TestDatabase db, String slot) {
    String s =
        db.queryString(
            "SELECT confirmed_flush_lsn::text FROM pg_replication_slots WHERE slot_name = ?", slot);
    return s == null ? null : Lsn.parse(s);
  }
}
