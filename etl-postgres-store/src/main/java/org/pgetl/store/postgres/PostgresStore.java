package org.pgetl.store.postgres;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import java.sql.Array;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Types;
import java.time.Duration;
import java.time.OffsetDateTime;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.NavigableMap;
import java.util.Objects;
import java.util.Optional;
import java.util.TreeMap;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import javax.sql.DataSource;
import org.jspecify.annotations.Nullable;
import org.pgetl.PgConnectionConfig;
import org.pgetl.core.internal.pg.Secrets;
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
import org.pgetl.store.PipelineStore;
import org.pgetl.store.PipelineStore.ChunkKind;
import org.pgetl.store.PipelineStore.ChunkRecord;
import org.pgetl.store.PipelineStore.CopyRecord;
import org.pgetl.store.PipelineStore.LifecycleRecord;
import org.pgetl.store.PipelineStore.ProgressKey;
import org.pgetl.store.PipelineStore.TableRequest;
import org.pgetl.store.TableState;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A {@link PipelineStore} in PostgreSQL: the pipeline's table states (with history), progress,
 * schema versions, destination table metadata and destination lifecycle rows, in one schema
 * (default {@code etl}) of the source database or of any other database.
 *
 * <pre>{@code
 * try (PostgresStore store = PostgresStore.builder()
 *     .jdbcUrl("jdbc:postgresql://db.example.com:5432/app")
 *     .user("pgetl").password(secret)
 *     .pipelineId("orders-to-lake")
 *     .build()) {
 *   // hand it to the pipeline
 * }
 * }</pre>
 *
 * <p>{@link Builder#build()} brings the schema up to date with the Flyway migrations in this jar
 * (serialised across processes, so several processes may start at once against an empty database),
 * then opens a small HikariCP pool; {@link Builder#buildWithoutMigrating()} opens the pool alone
 * and leaves the migration to the pipeline's start, after its preflight checks. The pool's sessions
 * show as {@code pgetl:store:<pipeline>} in {@code pg_stat_activity}. Every statement filters by
 * the pipeline id: pipelines that share a database never see each other's rows.
 *
 * <p>Implementation notes. Table states, schema versions and destination metadata are cached;
 * {@code progress}, state history, chunks and lifecycle rows are always read from the database. A
 * write takes the locks of the tables it touches (see {@code TableLocks}), runs its statements in
 * one transaction, and updates the cache only after the commit, still under those locks; so the
 * cache follows the commit order and a failed write leaves it untouched. Writes to different tables
 * run in parallel; only the three pipeline-wide operations ({@link #loadTableStates()}, {@link
 * #resetAllTablesForResync()}, {@link #deletePipelineState()}) exclude all others. Schema versions
 * and metadata are loaded per table on the first read. Another process writing the same pipeline's
 * rows is seen after {@link #loadTableStates()}, which re-reads the states and drops the other
 * caches. The chunk methods, whose rows nothing caches, take none of these locks: each is one
 * transaction, and the database orders them.
 *
 * <p>Every failure of the database is an {@link EtlException} of kind {@code STATE_STORE_ERROR}
 * whose detail starts with the SQLSTATE.
 */
// its signatures carry @Nullable of org.jspecify, read at compile time only (requires static)
@SuppressWarnings("exports")
public final class PostgresStore implements PipelineStore {
  private static final Logger LOG = LoggerFactory.getLogger(PostgresStore.class);

  private final PostgresStoreConfig config;
  private final HikariDataSource pool;
  private final DataSource dataSource;
  private final Jdbc jdbc;
  private final StoreSql sql;
  private final String pipelineId;
  private final TableLocks locks = new TableLocks();
  private final AtomicBoolean closed = new AtomicBoolean();

  private final ConcurrentHashMap<TableId, TableState> states = new ConcurrentHashMap<>();
  // Values are immutable; a table absent from the map is not loaded yet.
  private final ConcurrentHashMap<TableId, NavigableMap<Lsn, ReplicatedTableSchema>> schemas =
      new ConcurrentHashMap<>();
  // Optional.empty() caches "no metadata"; a table absent from the map is not loaded yet.
  private final ConcurrentHashMap<TableId, Optional<TableMetadata>> metadata =
      new ConcurrentHashMap<>();

  private PostgresStore(PostgresStoreConfig config, HikariDataSource pool, DataSource dataSource) {
    this.config = config;
    this.pool = pool;
    this.dataSource = dataSource;
    this.pipelineId = config.pipelineId();
    this.jdbc = new Jdbc(pool, pipelineId);
    this.sql = new StoreSql(config.schema());
  }

  /**
   * Returns a builder with the defaults of {@link PostgresStoreConfig}.
   *
   * @return a new builder
   */
  public static Builder builder() {
    return new Builder();
  }

  /**
   * Opens a store: migrates its schema, opens its pool and loads the table states.
   *
   * @param config the settings
   * @return the open store; close it to release its connections
   * @throws EtlException of kind {@code STATE_STORE_ERROR} when the database cannot be reached or
   *     migrated
   */
  public static PostgresStore open(PostgresStoreConfig config) {
    Objects.requireNonNull(config, "config");
    DataSource dataSource = ConnectionSettings.dataSource(config);
    Migrations.migrate(config, dataSource);
    HikariDataSource pool = createPool(config, dataSource);
    try {
      PostgresStore store = new PostgresStore(config, pool, dataSource);
      store.loadTableStates();
      LOG.info(
          "state store open for pipeline {} in schema {} at {}",
          config.pipelineId(),
          config.schema(),
          config.connection().describe());
      return store;
    } catch (RuntimeException e) {
      pool.close();
      throw e;
    }
  }

  /**
   * Opens a store without reading or changing its schema: only its pool, whose first connection
   * checks the settings. {@link #setupNeeded()} then says, reading only, whether the schema must be
   * created or migrated, and {@link #setUp()} does it; {@link org.pgetl.Pipeline#start()} calls
   * that after its preflight checks passed, so a start that fails a check creates nothing and names
   * every failed check at once, and {@link org.pgetl.Preflight#run} with this store changes nothing
   * in any database. Any other method needs the schema to be up to date.
   *
   * @param config the settings
   * @return the open store; close it to release its connections
   * @throws EtlException of kind {@code STATE_STORE_ERROR} when the database cannot be reached
   */
  public static PostgresStore openWithoutMigrating(PostgresStoreConfig config) {
    Objects.requireNonNull(config, "config");
    DataSource dataSource = ConnectionSettings.dataSource(config);
    HikariDataSource pool = createPool(config, dataSource);
    LOG.info(
        "state store open without migrating for pipeline {} in schema {} at {}",
        config.pipelineId(),
        config.schema(),
        config.connection().describe());
    return new PostgresStore(config, pool, dataSource);
  }

  private static HikariDataSource createPool(PostgresStoreConfig config, DataSource dataSource) {
    HikariConfig hc = new HikariConfig();
    hc.setDataSource(dataSource);
    hc.setPoolName("pgetl-store-" + config.pipelineId());
    hc.setMaximumPoolSize(config.maxPoolSize());
    hc.setMinimumIdle(config.minIdle());
    hc.setIdleTimeout(config.idleTimeout().toMillis());
    hc.setConnectionTimeout(config.connectionTimeout().toMillis());
    if (!config.statementTimeout().isZero()) {
      hc.setConnectionInitSql("SET statement_timeout = " + config.statementTimeout().toMillis());
    }
    try {
      return new HikariDataSource(hc);
    } catch (RuntimeException e) {
      SQLException cause = Jdbc.findSqlException(e);
      throw new EtlException(
          ErrorKind.STATE_STORE_ERROR,
          "could not open the state store pool for pipeline " + config.pipelineId(),
          cause != null ? Jdbc.describe(cause) : String.valueOf(e.getMessage()),
          e);
    }
  }

  /**
   * Returns the settings this store was opened with.
   *
   * @return the settings
   */
  public PostgresStoreConfig config() {
    return config;
  }

  @Override
  public String pipelineId() {
    return pipelineId;
  }

  // ---------------------------------------------------------------- set-up

  /**
   * {@inheritDoc}
   *
   * <p>Reads the catalog of the store's database: when the schema does not exist, a start creates
   * it, which needs {@code CREATE} on the database; when it lacks migrations of this jar, a start
   * applies them, which needs {@code CREATE} on the schema. The role's privilege is checked with
   * {@code has_database_privilege} and {@code has_schema_privilege}.
   */
  @Override
  public Optional<String> setupNeeded() {
    return jdbc.autocommit(
        "reading the version of the store schema", c -> Migrations.setupNeeded(c, config.schema()));
  }

  /**
   * {@inheritDoc}
   *
   * <p>Runs the schema's migrations, as {@link #open} does.
   */
  @Override
  public void setUp() {
    Migrations.migrate(config, dataSource);
  }

  // ---------------------------------------------------------------- table states

  @Override
  public Map<TableId, TableState> loadTableStates() {
    TableLocks.Held held = locks.pipeline();
    try {
      Map<TableId, TableState> loaded =
          jdbc.autocommit(
              "loading table states",
              c -> {
                try (PreparedStatement ps = c.prepareStatement(sql.selectCurrentStates)) {
                  ps.setString(1, pipelineId);
                  try (ResultSet rs = ps.executeQuery()) {
                    Map<TableId, TableState> out = new HashMap<>();
                    while (rs.next()) {
                      out.put(new TableId(rs.getLong(1)), StateCodec.read(rs, 2));
                    }
                    return out;
                  }
                }
              });
      states.keySet().retainAll(loaded.keySet());
      states.putAll(loaded);
      schemas.clear();
      metadata.clear();
      return Map.copyOf(loaded);
    } finally {
      held.release();
    }
  }

  @Override
  public Map<TableId, TableState> tableStates() {
    return Map.copyOf(states);
  }

  @Override
  public Optional<TableState> tableState(TableId table) {
    return Optional.ofNullable(states.get(table));
  }

  @Override
  public void updateTableState(TableId table, TableState state) {
    updateTableStates(Map.of(table, state));
  }

  @Override
  public void updateTableStates(Map<TableId, TableState> newStates) {
    for (TableState s : newStates.values()) {
      if (!s.type().isPersisted()) {
        throw new IllegalArgumentException(s.type() + " is a memory-only state");
      }
    }
    if (newStates.isEmpty()) {
      return;
    }
    // Table-id order: the same order for the row locks in the database as for the locks here.
    TreeMap<TableId, TableState> ordered = new TreeMap<>(newStates);
    TableLocks.Held held = locks.tables(ordered.keySet());
    try {
      jdbc.transactionStep(
          "updating the state of tables " + ordered.keySet(),
          c -> {
            try (PreparedStatement ps = c.prepareStatement(sql.updateState)) {
              for (Map.Entry<TableId, TableState> e : ordered.entrySet()) {
                long oid = e.getKey().oid();
                ps.setString(1, pipelineId);
                ps.setLong(2, oid);
                ps.setString(3, pipelineId);
                ps.setLong(4, oid);
                ps.setString(5, StateCodec.dbValue(e.getValue().type()));
                StateCodec.bindMetadata(ps, 6, e.getValue());
                ps.addBatch();
              }
              ps.executeBatch();
            }
          });
      states.putAll(ordered);
    } finally {
      held.release();
    }
  }

  @Override
  public TableState rollbackTableState(TableId table) {
    TableLocks.Held held = locks.table(table);
    try {
      Optional<TableState> restored =
          jdbc.autocommit(
              "rolling back the state of table " + table,
              c -> {
                try (PreparedStatement ps = c.prepareStatement(sql.rollbackState)) {
                  ps.setString(1, pipelineId);
                  ps.setLong(2, table.oid());
                  try (ResultSet rs = ps.executeQuery()) {
                    return rs.next() ? Optional.of(StateCodec.read(rs, 1)) : Optional.empty();
                  }
                }
              });
      if (restored.isEmpty()) {
        throw new EtlException(
            ErrorKind.STATE_ROLLBACK_ERROR,
            "table " + table + " has no earlier state to roll back to",
            "pipeline " + pipelineId);
      }
      states.put(table, restored.get());
      return restored.get();
    } finally {
      held.release();
    }
  }

  @Override
  public void resetTableState(TableId table) {
    TableLocks.Held held = locks.table(table);
    try {
      jdbc.transactionStep(
          "resetting the state of table " + table,
          c -> {
            execute(c, sql.deleteTableStates, table);
            execute(c, sql.insertInitState, table);
          });
      states.put(table, TableState.INIT);
    } finally {
      held.release();
    }
  }

  @Override
  public List<TableState> tableStateHistory(TableId table) {
    return jdbc.autocommit(
        "reading the state history of table " + table,
        c -> {
          try (PreparedStatement ps = c.prepareStatement(sql.selectHistory)) {
            ps.setString(1, pipelineId);
            ps.setLong(2, table.oid());
            try (ResultSet rs = ps.executeQuery()) {
              List<TableState> out = new ArrayList<>();
              while (rs.next()) {
                out.add(StateCodec.read(rs, 1));
              }
              return List.copyOf(out);
            }
          }
        });
  }

  // ---------------------------------------------------------------- progress

  @Override
  public Optional<Lsn> progress(ProgressKey key) {
    Objects.requireNonNull(key, "key");
    return jdbc.autocommit(
        "reading the " + key + " progress",
        c -> {
          boolean apply = key.worker() == ProgressKey.WorkerKind.APPLY;
          try (PreparedStatement ps =
              c.prepareStatement(apply ? sql.selectApplyProgress : sql.selectTableSyncProgress)) {
            ps.setString(1, pipelineId);
            if (!apply) {
              ps.setLong(
                  2, Objects.requireNonNull(key.table(), "a table-sync key names its table").oid());
            }
            try (ResultSet rs = ps.executeQuery()) {
              return rs.next() ? Optional.of(Lsn.parse(rs.getString(1))) : Optional.empty();
            }
          }
        });
  }

  @Override
  public Lsn advanceProgress(ProgressKey key, Lsn lsn) {
    Objects.requireNonNull(key, "key");
    Objects.requireNonNull(lsn, "lsn");
    return jdbc.autocommit(
        "advancing the " + key + " progress to " + lsn,
        c -> {
          boolean apply = key.worker() == ProgressKey.WorkerKind.APPLY;
          try (PreparedStatement ps =
              c.prepareStatement(apply ? sql.upsertApplyProgress : sql.upsertTableSyncProgress)) {
            int i = 1;
            ps.setString(i++, pipelineId);
            if (!apply) {
              ps.setLong(
                  i++,
                  Objects.requireNonNull(key.table(), "a table-sync key names its table").oid());
            }
            ps.setString(i, lsn.toString());
            try (ResultSet rs = ps.executeQuery()) {
              rs.next();
              return Lsn.parse(rs.getString(1));
            }
          }
        });
  }

  @Override
  public void deleteProgress(ProgressKey key) {
    Objects.requireNonNull(key, "key");
    jdbc.autocommitStep(
        "deleting the " + key + " progress",
        c -> {
          deleteProgress(c, key);
        });
  }

  private void deleteProgress(Connection c, ProgressKey key) throws SQLException {
    if (key.worker() == ProgressKey.WorkerKind.APPLY) {
      execute(c, sql.deleteApplyProgress, null);
    } else {
      execute(c, sql.deleteTableSyncProgress, key.table());
    }
  }

  // ---------------------------------------------------------------- schemas

  @Override
  public Optional<ReplicatedTableSchema> tableSchema(TableId table, Lsn lsn) {
    Objects.requireNonNull(lsn, "lsn");
    Map.Entry<Lsn, ReplicatedTableSchema> e = versions(table).floorEntry(lsn);
    return e == null ? Optional.empty() : Optional.of(e.getValue());
  }

  @Override
  public List<ReplicatedTableSchema> tableSchemas(TableId table) {
    return List.copyOf(versions(table).values());
  }

  private NavigableMap<Lsn, ReplicatedTableSchema> versions(TableId table) {
    NavigableMap<Lsn, ReplicatedTableSchema> cached = schemas.get(table);
    if (cached != null) {
      return cached;
    }
    TableLocks.Held held = locks.table(table);
    try {
      cached = schemas.get(table);
      if (cached != null) {
        return cached;
      }
      NavigableMap<Lsn, ReplicatedTableSchema> loaded =
          jdbc.autocommit(
              "loading the schema versions of table " + table, c -> loadSchemas(c, table));
      schemas.put(table, loaded);
      return loaded;
    } finally {
      held.release();
    }
  }

  private NavigableMap<Lsn, ReplicatedTableSchema> loadSchemas(Connection c, TableId table)
      throws SQLException {
    TreeMap<Lsn, ReplicatedTableSchema> out = new TreeMap<>();
    try (PreparedStatement ps = c.prepareStatement(sql.selectSchemas)) {
      ps.setString(1, pipelineId);
      ps.setLong(2, table.oid());
      try (ResultSet rs = ps.executeQuery()) {
        long currentId = -1;
        @Nullable SchemaRows version = null;
        while (rs.next()) {
          long id = rs.getLong(1);
          if (id != currentId) {
            if (version != null) {
              out.put(version.snapshot, version.build());
            }
            currentId = id;
            version =
                new SchemaRows(
                    table,
                    new TableName(rs.getString(2), rs.getString(3)),
                    Lsn.parse(rs.getString(4)),
                    rs.getString(14));
          }
          rs.getInt(5);
          if (!rs.wasNull()) {
            Objects.requireNonNull(version, "the first row starts a version")
                .add(
                    new ColumnSchema(
                        rs.getString(6),
                        (int) rs.getLong(7),
                        rs.getInt(8),
                        rs.getString(9),
                        rs.getInt(10),
                        rs.getInt(11),
                        rs.getBoolean(12),
                        rs.getString(13)),
                    rs.getBoolean(15),
                    rs.getInt(16));
          }
        }
        if (version != null) {
          out.put(version.snapshot, version.build());
        }
      }
    }
    return Collections.unmodifiableNavigableMap(out);
  }

  @Override
  public void storeTableSchema(ReplicatedTableSchema schema) {
    Objects.requireNonNull(schema, "schema");
    TableId table = schema.id();
    TableSchema full = schema.tableSchema();
    int[] identityOrdinals = SchemaRows.identityOrdinals(schema);
    TableLocks.Held held = locks.table(table);
    try {
      jdbc.transactionStep(
          "storing the schema of table " + table + " at " + full.snapshotLsn(),
          c -> {
            long id;
            try (PreparedStatement ps = c.prepareStatement(sql.upsertSchema)) {
              ps.setString(1, pipelineId);
              ps.setLong(2, table.oid());
              ps.setString(3, schema.name().schema());
              ps.setString(4, schema.name().name());
              ps.setString(5, full.snapshotLsn().toString());
              ps.setString(6, SchemaRows.identityCode(schema.identity()));
              try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                id = rs.getLong(1);
              }
            }
            try (PreparedStatement ps = c.prepareStatement(sql.deleteColumns)) {
              ps.setLong(1, id);
              ps.executeUpdate();
            }
            if (!full.columns().isEmpty()) {
              try (PreparedStatement ps = c.prepareStatement(sql.insertColumn)) {
                int index = 0;
                for (ColumnSchema col : full.columns()) {
                  ps.setLong(1, id);
                  ps.setInt(2, index);
                  ps.setString(3, col.name());
                  ps.setLong(4, Integer.toUnsignedLong(col.typeOid()));
                  ps.setInt(5, col.typeModifier());
                  ps.setString(6, col.typeName());
                  ps.setInt(7, col.ordinalPosition());
                  ps.setInt(8, col.primaryKeyOrdinal());
                  ps.setBoolean(9, col.nullable());
                  ps.setString(10, col.defaultExpression());
                  ps.setBoolean(11, schema.isReplicated(index));
                  ps.setInt(12, identityOrdinals[index]);
                  ps.addBatch();
                  index++;
                }
                ps.executeBatch();
              }
            }
          });
      schemas.computeIfPresent(
          table,
          (k, v) -> {
            TreeMap<Lsn, ReplicatedTableSchema> next = new TreeMap<>(v);
            next.put(full.snapshotLsn(), schema);
            return Collections.unmodifiableNavigableMap(next);
          });
    } finally {
      held.release();
    }
  }

  @Override
  public int pruneTableSchemas(TableId table, Lsn durableLsn) {
    Objects.requireNonNull(durableLsn, "durableLsn");
    TableLocks.Held held = locks.table(table);
    try {
      int deleted =
          jdbc.autocommit(
              "pruning the schema versions of table " + table + " before " + durableLsn,
              c -> {
                try (PreparedStatement ps = c.prepareStatement(sql.pruneSchemas)) {
                  ps.setString(1, pipelineId);
                  ps.setLong(2, table.oid());
                  ps.setString(3, pipelineId);
                  ps.setLong(4, table.oid());
                  ps.setString(5, durableLsn.toString());
                  return ps.executeUpdate();
                }
              });
      schemas.computeIfPresent(
          table,
          (k, v) -> {
            Lsn keep = v.floorKey(durableLsn);
            if (keep == null) {
              return v;
            }
            return Collections.unmodifiableNavigableMap(new TreeMap<>(v.tailMap(keep, true)));
          });
      return deleted;
    } finally {
      held.release();
    }
  }

  // ---------------------------------------------------------------- destination table metadata

  @Override
  public Optional<TableMetadata> get(TableId table) {
    Optional<TableMetadata> cached = metadata.get(table);
    if (cached != null) {
      return cached;
    }
    TableLocks.Held held = locks.table(table);
    try {
      cached = metadata.get(table);
      if (cached != null) {
        return cached;
      }
      Optional<TableMetadata> loaded =
          jdbc.autocommit(
              "reading the destination metadata of table " + table,
              c -> {
                try (PreparedStatement ps = c.prepareStatement(sql.selectMetadata)) {
                  ps.setString(1, pipelineId);
                  ps.setLong(2, table.oid());
                  try (ResultSet rs = ps.executeQuery()) {
                    if (!rs.next()) {
                      return Optional.empty();
                    }
                    return Optional.of(
                        new TableMetadata(
                            rs.getString(1), Lsn.parse(rs.getString(2)), rs.getBoolean(3)));
                  }
                }
              });
      metadata.put(table, loaded);
      return loaded;
    } finally {
      held.release();
    }
  }

  @Override
  public void put(TableId table, TableMetadata value) {
    Objects.requireNonNull(table, "table");
    Objects.requireNonNull(value, "metadata");
    TableLocks.Held held = locks.table(table);
    try {
      jdbc.autocommit(
          "storing the destination metadata of table " + table,
          c -> {
            try (PreparedStatement ps = c.prepareStatement(sql.upsertMetadata)) {
              ps.setString(1, pipelineId);
              ps.setLong(2, table.oid());
              ps.setString(3, value.destinationTableId());
              ps.setString(4, value.snapshotLsn().toString());
              ps.setBoolean(5, value.applied());
              return ps.executeUpdate();
            }
          });
      metadata.put(table, Optional.of(value));
    } finally {
      held.release();
    }
  }

  // ---------------------------------------------------------------- table lifecycle

  @Override
  public void prepareTableForCopy(TableId table) {
    TableLocks.Held held = locks.table(table);
    try {
      jdbc.transactionStep(
          "preparing table " + table + " for a copy",
          c -> {
            execute(c, sql.deleteTableMetadata, table);
            execute(c, sql.deleteTableSchemas, table);
            execute(c, sql.deleteTableSyncProgress, table);
            execute(c, sql.deleteTableChunks, table);
          });
      metadata.put(table, Optional.empty());
      schemas.put(table, Collections.emptyNavigableMap());
    } finally {
      held.release();
    }
  }

  @Override
  public void resetAllTablesForResync() {
    TableLocks.Held held = locks.pipeline();
    try {
      List<TableId> reset =
          jdbc.transaction(
              "resetting every table for a resync",
              c -> {
                List<TableId> out = new ArrayList<>();
                try (PreparedStatement ps = c.prepareStatement(sql.resetAllStates)) {
                  ps.setString(1, pipelineId);
                  ps.setString(2, pipelineId);
                  try (ResultSet rs = ps.executeQuery()) {
                    while (rs.next()) {
                      out.add(new TableId(rs.getLong(1)));
                    }
                  }
                }
                execute(c, sql.deleteApplyProgress, null);
                execute(c, sql.deletePipelineChunks, null);
                return out;
              });
      for (TableId t : reset) {
        states.put(t, TableState.INIT);
      }
    } finally {
      held.release();
    }
  }

  @Override
  public void deleteTable(TableId table) {
    TableLocks.Held held = locks.table(table);
    try {
      jdbc.transactionStep(
          "deleting table " + table + " from the pipeline",
          c -> {
            execute(c, sql.deleteTableStates, table);
            execute(c, sql.deleteTableSchemas, table);
            execute(c, sql.deleteTableMetadata, table);
            execute(c, sql.deleteTableSyncProgress, table);
            execute(c, sql.deleteTableRequests, table);
            execute(c, sql.deleteTableCopy, table);
            execute(c, sql.deleteTableChunks, table);
          });
      states.remove(table);
      schemas.put(table, Collections.emptyNavigableMap());
      metadata.put(table, Optional.empty());
    } finally {
      held.release();
    }
  }

  @Override
  public void deletePipelineState() {
    TableLocks.Held held = locks.pipeline();
    try {
      jdbc.transactionStep(
          "deleting the pipeline's state",
          c -> {
            execute(c, sql.deletePipelineStates, null);
            execute(c, sql.deletePipelineSchemas, null);
            execute(c, sql.deletePipelineRequests, null);
            execute(c, sql.deletePipelineCopies, null);
            execute(c, sql.deletePipelineMetadata, null);
            execute(c, sql.deletePipelineProgress, null);
            execute(c, sql.deletePipelineChunks, null);
          });
      states.clear();
      schemas.clear();
      metadata.clear();
    } finally {
      held.release();
    }
  }

  // ---------------------------------------------------------------- operator requests, copies

  @Override
  public TableRequest requestTableAction(
      TableId table, TableRequest.Action action, String requestedBy) {
    Objects.requireNonNull(table, "table");
    Objects.requireNonNull(action, "action");
    return jdbc.autocommit(
        "recording a " + action + " request for table " + table,
        c -> {
          try (PreparedStatement ps = c.prepareStatement(sql.insertRequest)) {
            ps.setString(1, pipelineId);
            ps.setLong(2, table.oid());
            ps.setString(3, action.name().toLowerCase(java.util.Locale.ROOT));
            ps.setString(4, requestedBy);
            try (ResultSet rs = ps.executeQuery()) {
              rs.next();
              return new TableRequest(
                  rs.getLong(1),
                  table,
                  action,
                  requestedBy,
                  rs.getObject(2, OffsetDateTime.class).toInstant());
            }
          }
        });
  }

  @Override
  public List<TableRequest> tableRequests() {
    return jdbc.autocommit(
        "reading the table requests",
        c -> {
          List<TableRequest> out = new ArrayList<>();
          try (PreparedStatement ps = c.prepareStatement(sql.selectRequests)) {
            ps.setString(1, pipelineId);
            try (ResultSet rs = ps.executeQuery()) {
              while (rs.next()) {
                out.add(
                    new TableRequest(
                        rs.getLong(1),
                        new TableId(rs.getLong(2)),
                        TableRequest.Action.valueOf(
                            rs.getString(3).toUpperCase(java.util.Locale.ROOT)),
                        rs.getString(4),
                        rs.getObject(5, OffsetDateTime.class).toInstant()));
              }
            }
          }
          return out;
        });
  }

  @Override
  public void completeTableRequest(long requestId) {
    jdbc.autocommit(
        "deleting table request " + requestId,
        c -> {
          try (PreparedStatement ps = c.prepareStatement(sql.deleteRequest)) {
            ps.setString(1, pipelineId);
            ps.setLong(2, requestId);
            return ps.executeUpdate();
          }
        });
  }

  @Override
  public void recordCopy(TableId table, CopyRecord copy) {
    Objects.requireNonNull(copy, "copy");
    jdbc.autocommit(
        "recording the copy of table " + table,
        c -> {
          try (PreparedStatement ps = c.prepareStatement(sql.upsertCopy)) {
            ps.setString(1, pipelineId);
            ps.setLong(2, table.oid());
            ps.setString(3, copy.attemptId().toString());
            ps.setLong(4, copy.rows());
            ps.setLong(5, copy.batches());
            ps.setObject(6, OffsetDateTime.ofInstant(copy.finishedAt(), java.time.ZoneOffset.UTC));
            return ps.executeUpdate();
          }
        });
  }

  @Override
  public Map<TableId, CopyRecord> copies() {
    return jdbc.autocommit(
        "reading the table copies",
        c -> {
          Map<TableId, CopyRecord> out = new java.util.TreeMap<>();
          try (PreparedStatement ps = c.prepareStatement(sql.selectCopies)) {
            ps.setString(1, pipelineId);
            try (ResultSet rs = ps.executeQuery()) {
              while (rs.next()) {
                out.put(
                    new TableId(rs.getLong(1)),
                    new CopyRecord(
                        java.util.UUID.fromString(rs.getString(2)),
                        rs.getLong(3),
                        rs.getLong(4),
                        rs.getObject(5, OffsetDateTime.class).toInstant()));
              }
            }
          }
          return out;
        });
  }

  // ---------------------------------------------------------------- chunks

  @Override
  public List<ChunkRecord> chunks(TableId table) {
    return jdbc.autocommit(
        "reading the chunks of table " + table,
        c -> {
          List<ChunkRecord> out = new ArrayList<>();
          try (PreparedStatement ps = c.prepareStatement(sql.selectChunks)) {
            ps.setString(1, pipelineId);
            ps.setLong(2, table.oid());
            try (ResultSet rs = ps.executeQuery()) {
              while (rs.next()) {
                String watermark = rs.getString(7);
                OffsetDateTime doneAt = rs.getObject(10, OffsetDateTime.class);
                out.add(
                    new ChunkRecord(
                        UUID.fromString(rs.getString(1)),
                        rs.getInt(2),
                        chunkKind(rs.getString(3)),
                        bound(rs.getArray(4)),
                        bound(rs.getArray(5)),
                        rs.getInt(6),
                        watermark == null ? null : Lsn.parse(watermark),
                        rs.getLong(8),
                        rs.getLong(9),
                        doneAt == null ? null : doneAt.toInstant()));
              }
            }
          }
          return List.copyOf(out);
        });
  }

  @Override
  public void planChunks(TableId table, UUID attemptId, List<ChunkRecord> planned) {
    Objects.requireNonNull(attemptId, "attemptId");
    for (int i = 0; i < planned.size(); i++) {
      ChunkRecord ch = planned.get(i);
      if (ch.index() != i || !ch.attemptId().equals(attemptId)) {
        throw new IllegalArgumentException(
            "chunk " + i + " must have index " + i + " and attempt " + attemptId + ": " + ch);
      }
    }
    jdbc.transactionStep(
        "planning " + planned.size() + " chunks of table " + table,
        c -> {
          execute(c, sql.deleteTableChunks, table);
          if (planned.isEmpty()) {
            return;
          }
          try (PreparedStatement ps = c.prepareStatement(sql.insertChunk)) {
            for (ChunkRecord ch : planned) {
              ps.setString(1, pipelineId);
              ps.setLong(2, table.oid());
              ps.setString(3, attemptId.toString());
              ps.setInt(4, ch.index());
              ps.setString(5, chunkKind(ch.kind()));
              setBound(c, ps, 6, ch.from());
              setBound(c, ps, 7, ch.to());
              ps.addBatch();
            }
            ps.executeBatch();
          }
        });
  }

  @Override
  public ChunkRecord addKeyChunk(TableId table, UUID attemptId, List<String> key) {
    Objects.requireNonNull(attemptId, "attemptId");
    // validates the key before anything is written
    ChunkRecord probe = ChunkRecord.planned(attemptId, 0, ChunkKind.KEY, key, key);
    int index =
        jdbc.transaction(
            "adding a key chunk to table " + table,
            c -> {
              try (PreparedStatement ps = c.prepareStatement(sql.lockFirstChunk)) {
                ps.setString(1, pipelineId);
                ps.setLong(2, table.oid());
                ps.setString(3, attemptId.toString());
                try (ResultSet rs = ps.executeQuery()) {
                  if (!rs.next()) {
                    throw noChunks(table, attemptId);
                  }
                }
              }
              try (PreparedStatement ps = c.prepareStatement(sql.insertKeyChunk)) {
                ps.setString(1, pipelineId);
                ps.setLong(2, table.oid());
                ps.setString(3, attemptId.toString());
                setBound(c, ps, 4, probe.from());
                setBound(c, ps, 5, probe.to());
                ps.setString(6, pipelineId);
                ps.setLong(7, table.oid());
                ps.setString(8, attemptId.toString());
                try (ResultSet rs = ps.executeQuery()) {
                  if (!rs.next()) {
                    throw noChunks(table, attemptId);
                  }
                  return rs.getInt(1);
                }
              }
            });
    return ChunkRecord.planned(attemptId, index, ChunkKind.KEY, probe.from(), probe.to());
  }

  @Override
  public int startChunkRead(TableId table, UUID attemptId, int index) {
    Objects.requireNonNull(attemptId, "attemptId");
    Optional<Integer> reads =
        jdbc.autocommit(
            "starting a read of chunk " + index + " of table " + table,
            c -> {
              try (PreparedStatement ps = c.prepareStatement(sql.startChunkRead)) {
                ps.setString(1, pipelineId);
                ps.setLong(2, table.oid());
                ps.setString(3, attemptId.toString());
                ps.setInt(4, index);
                try (ResultSet rs = ps.executeQuery()) {
                  return rs.next() ? Optional.of(rs.getInt(1)) : Optional.empty();
                }
              }
            });
    return reads.orElseThrow(() -> noChunk(table, attemptId, index));
  }

  @Override
  public void completeChunk(
      TableId table, UUID attemptId, int index, Lsn watermark, long rows, long bytes) {
    Objects.requireNonNull(attemptId, "attemptId");
    Objects.requireNonNull(watermark, "watermark");
    if (rows < 0 || bytes < 0) {
      throw new IllegalArgumentException(
          "rows and bytes must be >= 0, were " + rows + " and " + bytes);
    }
    int updated =
        jdbc.autocommit(
            "completing chunk " + index + " of table " + table,
            c -> {
              try (PreparedStatement ps = c.prepareStatement(sql.completeChunk)) {
                ps.setString(1, pipelineId);
                ps.setLong(2, table.oid());
                ps.setString(3, attemptId.toString());
                ps.setInt(4, index);
                ps.setString(5, watermark.toString());
                ps.setLong(6, rows);
                ps.setLong(7, bytes);
                return ps.executeUpdate();
              }
            });
    if (updated == 0) {
      throw noChunk(table, attemptId, index);
    }
  }

  @Override
  public int reopenChunksAfter(TableId table, UUID attemptId, Lsn lsn) {
    Objects.requireNonNull(attemptId, "attemptId");
    Objects.requireNonNull(lsn, "lsn");
    return jdbc.autocommit(
        "reopening the chunks of table " + table + " done after " + lsn,
        c -> {
          try (PreparedStatement ps = c.prepareStatement(sql.reopenChunks)) {
            ps.setString(1, pipelineId);
            ps.setLong(2, table.oid());
            ps.setString(3, attemptId.toString());
            ps.setString(4, lsn.toString());
            return ps.executeUpdate();
          }
        });
  }

  @Override
  public void deleteChunks(TableId table) {
    jdbc.autocommitStep(
        "deleting the chunks of table " + table, c -> execute(c, sql.deleteTableChunks, table));
  }

  private static String chunkKind(ChunkKind kind) {
    return kind == ChunkKind.KEY ? "key" : "range";
  }

  private static ChunkKind chunkKind(String stored) {
    return "key".equals(stored) ? ChunkKind.KEY : ChunkKind.RANGE;
  }

  private static void setBound(
      Connection c, PreparedStatement ps, int index, @Nullable List<String> bound)
      throws SQLException {
    if (bound == null) {
      ps.setNull(index, Types.ARRAY);
    } else {
      ps.setArray(index, c.createArrayOf("text", bound.toArray(new String[0])));
    }
  }

  private static @Nullable List<String> bound(@Nullable Array array) throws SQLException {
    if (array == null) {
      return null;
    }
    try {
      return List.of((String[]) array.getArray());
    } finally {
      array.free();
    }
  }

  private EtlException noChunks(TableId table, UUID attemptId) {
    return new EtlException(
        ErrorKind.STATE_STORE_ERROR,
        "table " + table + " has no chunks of copy attempt " + attemptId,
        "its chunked copy was replaced or finished; pipeline " + pipelineId);
  }

  private EtlException noChunk(TableId table, UUID attemptId, int index) {
    return new EtlException(
        ErrorKind.STATE_STORE_ERROR,
        "table " + table + " has no chunk " + index + " of copy attempt " + attemptId,
        "its chunked copy was replaced or finished; pipeline " + pipelineId);
  }

  // ---------------------------------------------------------------- destination lifecycle

  @Override
  public Optional<LifecycleRecord> readLifecycle(String destinationName) {
    Objects.requireNonNull(destinationName, "destinationName");
    return jdbc.autocommit(
        "reading the lifecycle of destination " + destinationName,
        c -> {
          try (PreparedStatement ps = c.prepareStatement(sql.selectLifecycle)) {
            ps.setString(1, pipelineId);
            ps.setString(2, destinationName);
            try (ResultSet rs = ps.executeQuery()) {
              if (!rs.next()) {
                return Optional.empty();
              }
              return Optional.of(
                  new LifecycleRecord(
                      destinationName,
                      rs.getString(1),
                      rs.getString(2),
                      rs.getString(3),
                      rs.getObject(4, OffsetDateTime.class).toInstant()));
            }
          }
        });
  }

  @Override
  public void writeLifecycle(
      String destinationName,
      LifecycleState state,
      @Nullable String reason,
      @Nullable String updatedBy) {
    Objects.requireNonNull(destinationName, "destinationName");
    Objects.requireNonNull(state, "state");
    if (state == LifecycleState.RETIRED) {
      throw new EtlException(
          ErrorKind.CONFIG_ERROR,
          "pgetl never writes 'retired': an operator retires a destination with SQL",
          "destination " + destinationName);
    }
    jdbc.autocommit(
        "writing the lifecycle of destination " + destinationName,
        c -> {
          try (PreparedStatement ps = c.prepareStatement(sql.upsertLifecycle)) {
            ps.setString(1, pipelineId);
            ps.setString(2, destinationName);
            ps.setString(3, state.dbValue());
            ps.setString(4, reason);
            ps.setString(5, updatedBy);
            return ps.executeUpdate();
          }
        });
  }

  // ---------------------------------------------------------------- lease

  @Override
  public org.pgetl.store.PipelineStore.Lease lease(String holder) {
    Objects.requireNonNull(holder, "holder");
    return new PostgresLease(dataSource, config.schema(), pipelineId, holder);
  }

  // ---------------------------------------------------------------- misc

  /**
   * Closes the connection pool. Idempotent; every call after it fails with {@code
   * STATE_STORE_ERROR}.
   */
  @Override
  public void close() {
    if (closed.compareAndSet(false, true)) {
      pool.close();
    }
  }

  /**
   * Returns the pipeline, schema and (masked) URL of this store.
   *
   * @return a description safe to log
   */
  @Override
  public String toString() {
    return "PostgresStore[pipeline="
        + pipelineId
        + ", schema="
        + config.schema()
        + ", database="
        + config.connection().describe()
        + "]";
  }

  // Runs a statement whose parameters are the pipeline id and, when given, a table id.
  private void execute(Connection c, String statement, @Nullable TableId table)
      throws SQLException {
    try (PreparedStatement ps = c.prepareStatement(statement)) {
      ps.setString(1, pipelineId);
      if (table != null) {
        ps.setLong(2, table.oid());
      }
      ps.executeUpdate();
    }
  }

  /**
   * Builds a {@link PostgresStoreConfig} and opens the store. Only the database ({@link
   * #connection} or {@link #jdbcUrl}) and {@link #pipelineId} are required; every other setting has
   * the default named in {@link PostgresStoreConfig}.
   */
  public static final class Builder {
    private @Nullable PgConnectionConfig connection;
    private @Nullable String jdbcUrl;
    private @Nullable String user;
    private @Nullable String password;
    private String schema = PostgresStoreConfig.DEFAULT_SCHEMA;
    private @Nullable String pipelineId;
    private int maxPoolSize = PostgresStoreConfig.DEFAULT_MAX_POOL_SIZE;
    private int minIdle = PostgresStoreConfig.DEFAULT_MIN_IDLE;
    private Duration idleTimeout = PostgresStoreConfig.DEFAULT_IDLE_TIMEOUT;
    private Duration connectionTimeout = PostgresStoreConfig.DEFAULT_CONNECTION_TIMEOUT;
    private Duration statementTimeout = PostgresStoreConfig.DEFAULT_STATEMENT_TIMEOUT;
    private Duration migrationLockTimeout = PostgresStoreConfig.DEFAULT_MIGRATION_LOCK_TIMEOUT;

    Builder() {}

    Builder(PostgresStoreConfig c) {
      connection = c.connection();
      schema = c.schema();
      pipelineId = c.pipelineId();
      maxPoolSize = c.maxPoolSize();
      minIdle = c.minIdle();
      idleTimeout = c.idleTimeout();
      connectionTimeout = c.connectionTimeout();
      statementTimeout = c.statementTimeout();
      migrationLockTimeout = c.migrationLockTimeout();
    }

    /**
     * Sets the store's database and role from a connection configuration: the pipeline's source
     * (the usual choice, {@code config.source()}), or another database (needed when the source is a
     * read-only standby). Replaces an earlier {@link #jdbcUrl}.
     *
     * @param connection the connection settings (hosts, TLS and timeouts included)
     * @return this builder
     */
    public Builder connection(PgConnectionConfig connection) {
      this.connection = connection;
      this.jdbcUrl = null;
      return this;
    }

    /**
     * Sets the store's database as a URL, read by the parser of {@link
     * PgConnectionConfig#fromJdbcUrl(String)}: the JDBC form {@code
     * jdbc:postgresql://host:port/database?...} or the libpq form {@code postgresql://...}, with
     * the parameters that method lists; any other parameter is rejected. Replaces an earlier {@link
     * #connection}.
     *
     * @param jdbcUrl the URL
     * @return this builder
     */
    public Builder jdbcUrl(String jdbcUrl) {
      this.jdbcUrl = jdbcUrl;
      this.connection = null;
      return this;
    }

    /**
     * Sets the role to connect as; it wins over the user of the {@link #connection} or {@link
     * #jdbcUrl}.
     *
     * @param user the role name
     * @return this builder
     */
    public Builder user(String user) {
      this.user = user;
      return this;
    }

    /**
     * Sets the role's password; it wins over the password of the {@link #connection} or {@link
     * #jdbcUrl}. Never logged.
     *
     * @param password the password
     * @return this builder
     */
    public Builder password(String password) {
      this.password = password;
      return this;
    }

    // The connection the settings name: the given one or the URL's, with the role set here on top.
    private @Nullable PgConnectionConfig resolvedConnection() {
      if (connection == null && jdbcUrl == null) {
        return null;
      }
      String field = connection != null ? "connection" : "jdbcUrl";
      try {
        PgConnectionConfig.Builder b =
            connection != null
                ? connection.toBuilder()
                : PgConnectionConfig.builderFromJdbcUrl(
                    Objects.requireNonNull(jdbcUrl, "connection or jdbcUrl is set"));
        if (user != null) {
          b.user(user);
        }
        if (password != null) {
          b.password(password);
        }
        return b.build();
      } catch (EtlException e) {
        if (e.kind() != ErrorKind.CONFIG_ERROR) {
          throw e;
        }
        // the connection's own messages name the pipeline's source: name the store's setting
        String message = e.description();
        if (message.startsWith("source.")) {
          message = message.substring("source.".length());
        }
        throw PostgresStoreConfig.invalid(field + ": " + message);
      }
    }

    /**
     * Sets the schema of the store's tables; default {@code etl}. Letters, digits and underscores;
     * it is created when missing (which needs {@code CREATE} on the database).
     *
     * @param schema the schema name
     * @return this builder
     */
    public Builder schema(String schema) {
      this.schema = schema;
      return this;
    }

    /**
     * Sets the pipeline whose rows the store reads and writes. Required.
     *
     * @param pipelineId the pipeline id
     * @return this builder
     */
    public Builder pipelineId(String pipelineId) {
      this.pipelineId = pipelineId;
      return this;
    }

    /**
     * Sets the most connections the store opens at once; default 4.
     *
     * @param maxPoolSize at least 1
     * @return this builder
     */
    public Builder maxPoolSize(int maxPoolSize) {
      this.maxPoolSize = maxPoolSize;
      return this;
    }

    /**
     * Sets the connections kept open while idle; default 0.
     *
     * @param minIdle from 0 to the pool size
     * @return this builder
     */
    public Builder minIdle(int minIdle) {
      this.minIdle = minIdle;
      return this;
    }

    /**
     * Sets how long an idle connection above {@code minIdle} stays open; default 30 s.
     *
     * @param idleTimeout at least 10 s
     * @return this builder
     */
    public Builder idleTimeout(Duration idleTimeout) {
      this.idleTimeout = idleTimeout;
      return this;
    }

    /**
     * Sets how long a call waits for a free connection before it fails; default 10 s.
     *
     * @param connectionTimeout at least 250 ms
     * @return this builder
     */
    public Builder connectionTimeout(Duration connectionTimeout) {
      this.connectionTimeout = connectionTimeout;
      return this;
    }

    /**
     * Sets the {@code statement_timeout} of the store's sessions; default 30 s, {@link
     * Duration#ZERO} to keep the role's or database's own setting.
     *
     * @param statementTimeout zero or more
     * @return this builder
     */
    public Builder statementTimeout(Duration statementTimeout) {
      this.statementTimeout = statementTimeout;
      return this;
    }

    /**
     * Sets how long start-up waits for another process that is migrating the same schema; default
     * 60 s.
     *
     * @param migrationLockTimeout at least 1 ms
     * @return this builder
     */
    public Builder migrationLockTimeout(Duration migrationLockTimeout) {
      this.migrationLockTimeout = migrationLockTimeout;
      return this;
    }

    /**
     * Returns the validated settings, without connecting.
     *
     * @return the settings
     * @throws EtlException of kind {@code CONFIG_ERROR} naming the first invalid setting
     */
    // the config's constructor rejects a missing connection or pipeline id with CONFIG_ERROR
    @SuppressWarnings("NullAway")
    public PostgresStoreConfig config() {
      return new PostgresStoreConfig(
          resolvedConnection(),
          schema,
          pipelineId,
          maxPoolSize,
          minIdle,
          idleTimeout,
          connectionTimeout,
          statementTimeout,
          migrationLockTimeout);
    }

    /**
     * Validates the settings and opens the store: migrates its schema, opens its pool and loads the
     * table states (see {@link PostgresStore#open}).
     *
     * @return the open store
     * @throws EtlException of kind {@code CONFIG_ERROR} for an invalid setting, {@code
     *     STATE_STORE_ERROR} when the database cannot be reached or migrated
     */
    public PostgresStore build() {
      return open(config());
    }

    /**
     * Validates the settings and opens the store without reading or changing its schema (see {@link
     * PostgresStore#openWithoutMigrating}): a pipeline's start creates or migrates the schema after
     * its preflight checks passed, and a {@link org.pgetl.Preflight#run} with it is read-only.
     *
     * @return the open store
     * @throws EtlException of kind {@code CONFIG_ERROR} for an invalid setting, {@code
     *     STATE_STORE_ERROR} when the database cannot be reached
     */
    public PostgresStore buildWithoutMigrating() {
      return openWithoutMigrating(config());
    }

    /**
     * Describes the settings, with the password masked.
     *
     * @return a description safe to log
     */
    @Override
    public String toString() {
      return "PostgresStore.Builder[connection="
          + connection
          + ", jdbcUrl="
          + (jdbcUrl == null ? null : Secrets.redactUrl(jdbcUrl))
          + ", user="
          + user
          + ", password="
          + Secrets.show(password)
          + ", schema="
          + schema
          + ", pipelineId="
          + pipelineId
          + "]";
    }
  }
}
