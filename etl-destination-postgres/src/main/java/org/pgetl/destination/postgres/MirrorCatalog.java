package org.pgetl.destination.postgres;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.sql.Types;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import org.jspecify.annotations.Nullable;
import org.pgetl.destination.DestinationTableMetadataStore;
import org.pgetl.destination.DestinationTableMetadataStore.TableMetadata;
import org.pgetl.destination.TableCopyBatchId;
import org.pgetl.destination.TableCopyWrite;
import org.pgetl.destination.internal.ErrorText;
import org.pgetl.destination.internal.RowKey;
import org.pgetl.destination.postgres.MirrorSource.GeneratedColumn;
import org.pgetl.error.ErrorKind;
import org.pgetl.error.EtlException;
import org.pgetl.model.ColumnSchema;
import org.pgetl.model.Event;
import org.pgetl.model.EventSequenceKey;
import org.pgetl.model.Lsn;
import org.pgetl.model.ReplicatedTableSchema;
import org.pgetl.model.TableId;
import org.pgetl.model.TableName;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What {@link PostgresMirrorDestination} knows about the tables it created in the target database,
 * kept in the target itself (schema {@code _pgetl}, rows scoped by pipeline id) so that it survives
 * restarts and commits in the same transaction as the rows it describes:
 *
 * <pre>
 * _pgetl.mirror_tables        one row per source table: its target name, the schema version
 *                             applied, and applied_commit_lsn/applied_tx_ordinal = the greatest
 *                             event sequence key applied to it
 * _pgetl.mirror_columns       one row per column: the source attnum it mirrors, its name, the
 *                             source type and the target type, its position in the key
 * _pgetl.mirror_copy_batches  the copy batch ids stored by the current copy attempt
 * _pgetl.mirror_copy_attempts one row per source table: its current copy attempt (the one the
 *                             last dropTableForCopy named), and once its Finish came, its batch
 *                             and row counts
 * _pgetl.mirror_copy_chunks   for a table copied in chunks: each chunk the current attempt ended
 *                             (ChunkEnd), with the batch range and counts of its last read
 * _pgetl.mirror_messages      the user logical messages received, keyed by sequence key
 * _pgetl.mirror_epochs        one row per pipeline: the greatest lease epoch that wrote to the
 *                             mirror, raised in the transaction of that epoch's first write
 * </pre>
 *
 * <p>It also creates a target table and brings it in line with a new source schema ({@link
 * #ensure}): columns are matched by {@code attnum} ({@link ColumnSchema#ordinalPosition()}), which
 * a rename keeps, so a column that disappears is dropped, one whose name changed is renamed, one
 * whose type changed is converted, and a new one is added — in the transaction of the rows that
 * follow.
 *
 * <h2>Threads</h2>
 *
 * Thread-safe. Committed knowledge is a map of immutable {@link Table} values. A transaction works
 * on a {@link Staged} copy of the entries it changes and {@linkplain #publish publishes} them only
 * after it commits, so a rolled-back transaction leaves nothing behind in memory. DDL on a table
 * runs under a transaction-scoped advisory lock on the table, so that two copy threads that both
 * see a table missing create it once: the second waits, then reads what the first committed. A
 * transaction that writes rows of a table first takes that lock shared and checks the table's
 * bookkeeping ({@link #current}): another thread may have renamed the target (to give its name to a
 * new table) and committed before memory shows it. A transaction that is going to change the table
 * takes the lock exclusively at once, never shared first: two that held it shared and both asked
 * for it exclusively would deadlock. A copy writes into the table as it is when it has the copy's
 * columns ({@link #ensureForCopy}), so the copy batches of a table copied in chunks do not change
 * it back and forth with the changes applied meanwhile. Taking or leaving a target name runs under
 * an advisory lock on the name.
 */
final class MirrorCatalog {
  private static final Logger log = LoggerFactory.getLogger(MirrorCatalog.class);

  /** The schema of the bookkeeping tables. A source schema of this name is not supported. */
  static final String META_SCHEMA = "_pgetl";

  /**
   * One column of a target table.
   *
   * @param attnum the source column's attnum
   * @param name the column name (the source name)
   * @param typeOid the source type oid the column was made for
   * @param typeModifier the source type modifier
   * @param sourceType the source type as {@code format_type} prints it
   * @param targetType the target column's type: {@code sourceType}, or {@code text} when the target
   *     database has no type of that name (enums, domains, composite types of the source)
   * @param keyOrdinal the 1-based position in the target's primary key, 0 when not in it
   */
  record Column(
      int attnum,
      String name,
      int typeOid,
      int typeModifier,
      String sourceType,
      String targetType,
      int keyOrdinal) {
    String quoted() {
      return TableName.quoteIdentifier(name);
    }
  }

  /**
   * One target table, immutable.
   *
   * @param id the source table
   * @param sourceName the source table's name in the newest schema applied ({@link
   *     TableName#toString()}): the name the target table has, unless it is parked
   * @param schema the target schema
   * @param name the target table name
   * @param columns the columns, by source attnum, ascending
   * @param schemaSnapshotLsn the snapshot LSN of the source schema version applied
   * @param appliedThrough the greatest event sequence key applied, or null before the first event
   */
  record Table(
      TableId id,
      String sourceName,
      String schema,
      String name,
      List<Column> columns,
      Lsn schemaSnapshotLsn,
      @Nullable EventSequenceKey appliedThrough) {
    Table {
      columns = List.copyOf(columns);
    }

    /** Returns the quoted, qualified target name. */
    String quotedName() {
      return TableName.quoteIdentifier(schema) + "." + TableName.quoteIdentifier(name);
    }

    /** Returns the column that mirrors a source attnum. */
    Column column(int attnum) {
      for (Column c : columns) {
        if (c.attnum() == attnum) {
          return c;
        }
      }
      throw new IllegalStateException("no column for attnum " + attnum + " in " + quotedName());
    }

    /** Returns the key columns in key order; empty for a table without a key. */
    List<Column> key() {
      // called per change: a loop, not a stream
      List<Column> key = new ArrayList<>(2);
      for (Column c : columns) {
        if (c.keyOrdinal() > 0) {
          key.add(c);
        }
      }
      if (key.size() > 1) {
        key.sort((a, b) -> a.keyOrdinal() - b.keyOrdinal());
      }
      return key;
    }

    /** Returns true when the table has a key. */
    boolean keyed() {
      for (Column c : columns) {
        if (c.keyOrdinal() > 0) {
          return true;
        }
      }
      return false;
    }

    Table withAppliedThrough(EventSequenceKey key) {
      return new Table(id, sourceName, schema, name, columns, schemaSnapshotLsn, key);
    }

    /**
     * Returns the same table under another target name, wanted for the source name {@code source}.
     */
    Table movedTo(String source, String toSchema, String toName) {
      return new Table(id, source, toSchema, toName, columns, schemaSnapshotLsn, appliedThrough);
    }

    /** Returns true when the target table is named {@code n}. */
    boolean named(TableName n) {
      return schema.equals(n.schema()) && name.equals(n.name());
    }

    /**
     * Returns true when this table already mirrors the columns and key of {@code s}, as of the
     * schema version of {@code s}.
     */
    boolean matches(ReplicatedTableSchema s) {
      return schemaSnapshotLsn.equals(snapshotLsn(s)) && holds(s);
    }

    /**
     * Returns true when this table has the columns and key of {@code s}, whatever schema version it
     * was last brought in line with: rows of {@code s} go into it as they are.
     */
    boolean holds(ReplicatedTableSchema s) {
      if (columns.size() != s.columnCount()) {
        return false;
      }
      int[] key = RowKey.columns(s);
      for (int i = 0; i < s.columnCount(); i++) {
        ColumnSchema cs = s.columns().get(i);
        Column c = columns.get(i); // both in attnum order
        if (c.attnum() != cs.ordinalPosition()
            || !c.name().equals(cs.name())
            || c.typeOid() != cs.typeOid()
            || c.typeModifier() != cs.typeModifier()
            || c.keyOrdinal() != keyOrdinal(key, i)) {
          return false;
        }
      }
      return true;
    }
  }

  /**
   * The catalog changes of one transaction, visible to that transaction at once and to others after
   * {@link #publish}. A null value marks a table dropped.
   */
  static final class Staged {
    private final Map<TableId, Table> tables = new HashMap<>();
    private final Map<TableId, Boolean> changedSchema = new LinkedHashMap<>();
    // tables whose bookkeeping this transaction read under a lock held until it ends
    private final Set<TableId> verified = new HashSet<>();
    private final Set<TableId> locked = new HashSet<>();
    // copy attempts this transaction opened (true) or finished (false)
    private final Map<TableId, Boolean> copyOpen = new HashMap<>();

    void put(Table t) {
      tables.put(t.id(), t);
    }
  }

  private final String pipelineId;
  private final DestinationTableMetadataStore metadata;
  private final @Nullable MirrorSource source; // null: generated columns are left out
  private final Map<TableId, Table> tables = new ConcurrentHashMap<>();
  private final Map<String, String> targetTypes = new ConcurrentHashMap<>();
  // "typeOid sourceType": whether a copied binary value of that column goes in as it is
  private final Map<String, Boolean> binaryPassThrough = new ConcurrentHashMap<>();
  // the tables whose current copy attempt is open: named by a drop, its Finish not committed yet
  private final Set<TableId> openCopies = ConcurrentHashMap.newKeySet();

  /**
   * Creates the catalog of one pipeline's mirror.
   *
   * @param pipelineId the pipeline
   * @param metadata where each table's metadata is announced
   * @param source the source database's catalog, for generated columns; null to leave them out
   */
  MirrorCatalog(
      String pipelineId, DestinationTableMetadataStore metadata, @Nullable MirrorSource source) {
    this.pipelineId = pipelineId;
    this.metadata = metadata;
    this.source = source;
  }

  // --- bookkeeping tables and loading

  /** Creates the bookkeeping tables when the database is new (under a lock: pipelines may race). */
  void createMetadataTables(Connection conn) throws SQLException {
    exec(conn, "SELECT pg_advisory_xact_lock(hashtext('pgetl mirror metadata'))");
    exec(conn, "CREATE SCHEMA IF NOT EXISTS " + META_SCHEMA);
    exec(
        conn,
        "CREATE TABLE IF NOT EXISTS _pgetl.mirror_tables (pipeline_id text, table_oid bigint,"
            + " source_name text NOT NULL, target_schema text NOT NULL, target_table text NOT NULL,"
            + " schema_snapshot_lsn pg_lsn NOT NULL, applied_commit_lsn pg_lsn,"
            + " applied_tx_ordinal bigint, PRIMARY KEY (pipeline_id, table_oid))");
    exec(
        conn,
        "CREATE TABLE IF NOT EXISTS _pgetl.mirror_columns (pipeline_id text, table_oid bigint,"
            + " attnum integer, column_name text NOT NULL, type_oid bigint NOT NULL,"
            + " type_modifier integer NOT NULL, source_type text NOT NULL,"
            + " target_type text NOT NULL, key_ordinal integer NOT NULL,"
            + " PRIMARY KEY (pipeline_id, table_oid, attnum))");
    exec(
        conn,
        "CREATE TABLE IF NOT EXISTS _pgetl.mirror_copy_batches (pipeline_id text,"
            + " table_oid bigint, attempt_id uuid, sequence bigint,"
            + " PRIMARY KEY (pipeline_id, table_oid, attempt_id, sequence))");
    exec(
        conn,
        "CREATE TABLE IF NOT EXISTS _pgetl.mirror_copy_attempts (pipeline_id text,"
            + " table_oid bigint, attempt_id uuid NOT NULL, finished boolean NOT NULL,"
            + " batch_count bigint, row_count bigint, PRIMARY KEY (pipeline_id, table_oid))");
    exec(
        conn,
        "CREATE TABLE IF NOT EXISTS _pgetl.mirror_copy_chunks (pipeline_id text,"
            + " table_oid bigint, attempt_id uuid, chunk integer, first_batch bigint NOT NULL,"
            + " batch_count bigint NOT NULL, row_count bigint NOT NULL,"
            + " PRIMARY KEY (pipeline_id, table_oid, attempt_id, chunk))");
    exec(
        conn,
        "CREATE TABLE IF NOT EXISTS _pgetl.mirror_messages (pipeline_id text, sequence_key text,"
            + " commit_lsn pg_lsn NOT NULL, start_lsn pg_lsn NOT NULL,"
            + " transactional boolean NOT NULL, prefix text NOT NULL, content bytea NOT NULL,"
            + " PRIMARY KEY (pipeline_id, sequence_key))");
    exec(
        conn,
        "CREATE TABLE IF NOT EXISTS _pgetl.mirror_epochs (pipeline_id text PRIMARY KEY,"
            + " epoch bigint NOT NULL, raised_at timestamptz NOT NULL)");
  }

  // --- fencing

  /**
   * Checks a write's lease epoch against the greatest epoch that wrote to the mirror, and records
   * it when it is greater: call first in every write transaction, and go on only when the result is
   * not greater than {@code epoch}.
   *
   * <p>The common case, an epoch already recorded, reads the row {@code FOR SHARE}: writes of one
   * instance do not wait for each other, and the lock is held until the write commits. A greater
   * epoch updates the row, which waits until every write holding it shared (the older instance's
   * writes in flight) has ended; a write of the older epoch that comes later reads the new epoch.
   * So every write of an older epoch commits before the first write of a newer one, or not at all.
   * The shared lock is given back (the transaction is still empty) before the row is updated, so
   * that two first writes of the new epoch never both hold it shared and wait for each other.
   *
   * @param conn the transaction's connection, with nothing done in it yet
   * @param epoch the lease epoch of the instance that sent the write
   * @return the greatest epoch recorded, locked until the transaction ends: {@code epoch}, or a
   *     greater one when the write must be refused
   * @throws SQLException when the bookkeeping fails
   */
  long fence(Connection conn, long epoch) throws SQLException {
    Long stored = lockEpoch(conn);
    if (stored != null && stored >= epoch) {
      return stored;
    }
    conn.rollback();
    try (PreparedStatement ps =
        conn.prepareStatement(
            "INSERT INTO _pgetl.mirror_epochs AS e VALUES (?, ?, now())"
                + " ON CONFLICT (pipeline_id) DO UPDATE SET epoch = EXCLUDED.epoch,"
                + " raised_at = EXCLUDED.raised_at WHERE e.epoch < EXCLUDED.epoch")) {
      ps.setString(1, pipelineId);
      ps.setLong(2, epoch);
      ps.executeUpdate();
    }
    return Objects.requireNonNull(lockEpoch(conn), "the epoch just written");
  }

  private @Nullable Long lockEpoch(Connection conn) throws SQLException {
    try (PreparedStatement ps =
        conn.prepareStatement(
            "SELECT epoch FROM _pgetl.mirror_epochs WHERE pipeline_id = ? FOR SHARE")) {
      ps.setString(1, pipelineId);
      try (ResultSet rs = ps.executeQuery()) {
        return rs.next() ? rs.getLong(1) : null;
      }
    }
  }

  /** Reads every table of this pipeline from the bookkeeping tables, replacing what memory held. */
  void load(Connection conn) throws SQLException {
    tables.clear();
    for (Table t : read(conn, null)) {
      tables.put(t.id(), t);
    }
    openCopies.clear();
    try (PreparedStatement ps =
        conn.prepareStatement(
            "SELECT table_oid FROM _pgetl.mirror_copy_attempts WHERE pipeline_id = ?"
                + " AND NOT finished")) {
      ps.setString(1, pipelineId);
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          openCopies.add(new TableId(rs.getLong(1)));
        }
      }
    }
  }

  /** Returns the committed tables, for announcing their metadata. */
  Collection<Table> tables() {
    return tables.values();
  }

  /** Returns a table as the transaction sees it: its staged version, else the committed one. */
  @Nullable Table table(Staged staged, TableId id) {
    return staged.tables.containsKey(id) ? staged.tables.get(id) : tables.get(id);
  }

  /**
   * Makes a transaction's changes visible to all threads and announces the schema versions it
   * applied. Call after the commit.
   */
  void publish(Staged staged) {
    staged.tables.forEach(
        (id, t) -> {
          if (t == null) {
            tables.remove(id);
          } else {
            tables.put(id, t);
          }
        });
    staged.changedSchema.forEach(
        (id, unused) -> {
          Table t = tables.get(id);
          if (t != null) {
            announce(t, true);
          }
        });
    staged.copyOpen.forEach(
        (id, open) -> {
          if (open) {
            openCopies.add(id);
          } else {
            openCopies.remove(id);
          }
        });
  }

  /**
   * Tells whether a table's current copy attempt is open, as committed: a drop named it and its
   * {@code Finish} is not committed yet. The engine sends a table's changes while its copy attempt
   * is open only when it copies the table in chunks, so these are the tables whose changes are
   * applied by the chunked copy's rules (see {@link MirrorRows}).
   *
   * @param id the source table
   * @return true while the table's copy attempt is open
   */
  boolean copyOpen(TableId id) {
    return openCopies.contains(id);
  }

  /**
   * Announces a table's {@link TableMetadata} to the pipeline's store.
   *
   * @param t the table
   * @param applied false while a schema change is not committed yet
   */
  void announce(Table t, boolean applied) {
    metadata.put(t.id(), new TableMetadata(t.quotedName(), t.schemaSnapshotLsn(), applied));
  }

  // --- creating and changing tables

  /**
   * Returns the target table of a source table as committed now, and keeps its name and columns
   * from changing until the transaction ends: call it before writing rows of a table. The first
   * call of a transaction takes a shared advisory lock on the table (DDL takes it exclusively) and
   * checks the bookkeeping in the database, which memory may not show yet: another thread may just
   * have committed a rename of the target, for example to give its name to a new table.
   *
   * <p>A transaction that is going to change the table ({@link #ensure}) asks for the lock
   * exclusively at once ({@code forDdl}): a transaction that holds the lock shared and then asks
   * for it exclusively deadlocks with any other one that does the same (each waits for the other's
   * shared lock), and transactions of the copy connections and of the events writer write rows of
   * one table at the same time when it is copied in chunks.
   *
   * @param conn the transaction's connection
   * @param staged the transaction's catalog changes
   * @param id the source table
   * @param forDdl true to take the lock exclusively, as {@link #ensure} does
   * @return the table, or null when none was created
   * @throws SQLException when a query fails
   */
  @Nullable Table current(Connection conn, Staged staged, TableId id, boolean forDdl)
      throws SQLException {
    if (staged.verified.contains(id)) {
      return table(staged, id);
    }
    if (forDdl) {
      lockForDdl(conn, staged, id);
    } else {
      try (PreparedStatement ps =
          conn.prepareStatement("SELECT pg_advisory_xact_lock_shared(hashtext(?), ?)")) {
        ps.setString(1, "pgetl mirror " + pipelineId);
        ps.setInt(2, (int) id.oid());
        ps.execute();
      }
      staged.verified.add(id);
    }
    Table known = table(staged, id);
    List<Table> committed = readTargets(conn, id);
    Table now = committed.isEmpty() ? null : committed.get(0);
    boolean same =
        known == null
            ? now == null
            : now != null
                && known.schema().equals(now.schema())
                && known.name().equals(now.name())
                && known.schemaSnapshotLsn().equals(now.schemaSnapshotLsn());
    if (same) {
      return known;
    }
    List<Table> full = read(conn, id);
    Table fresh = full.isEmpty() ? null : full.get(0);
    staged.tables.put(id, fresh);
    return fresh;
  }

  /**
   * Returns the target table of a source table as committed now, like {@link #current}, before rows
   * of {@code schema} are written: the lock is taken exclusively at once when the table as known
   * does not mirror {@code schema} yet (none was created, or {@link #ensure} is going to change
   * it), shared otherwise.
   *
   * @param conn the transaction's connection
   * @param staged the transaction's catalog changes
   * @param schema the schema of the rows to write
   * @return the table, or null when none was created
   * @throws SQLException when a query fails
   */
  @Nullable Table currentFor(Connection conn, Staged staged, ReplicatedTableSchema schema)
      throws SQLException {
    TableId id = schema.id();
    if (staged.verified.contains(id)) {
      return table(staged, id);
    }
    Table known = table(staged, id);
    boolean changes = known == null || !known.matches(schema) || !known.named(schema.name());
    return current(conn, staged, id, changes);
  }

  /**
   * Returns the target table of a source table as this transaction sees it, creating it, renaming
   * it, or bringing its columns and key in line with {@code schema} first. Targets follow the
   * source table's oid: a table renamed in the source (or moved to another schema) is renamed in
   * the target, and a name another table of this pipeline holds is taken over (see {@link
   * #claimName}).
   *
   * @param conn the transaction's connection
   * @param staged the transaction's catalog changes
   * @param schema the source table's schema from this point on
   * @return the table
   * @throws SQLException when DDL fails
   */
  Table ensure(Connection conn, Staged staged, ReplicatedTableSchema schema) throws SQLException {
    Table t = table(staged, schema.id());
    if (t != null && t.matches(schema) && t.named(schema.name())) {
      t = current(conn, staged, schema.id(), false);
      if (t != null && t.matches(schema) && t.named(schema.name())) {
        return t;
      }
    }
    lockForDdl(conn, staged, schema.id());
    // another thread or process may have changed the table before we got the lock
    List<Table> committed = read(conn, schema.id());
    t = committed.isEmpty() ? null : committed.get(0);
    if (t == null) {
      t = create(conn, staged, schema);
    } else {
      if (!t.named(schema.name())) {
        t = move(conn, staged, t, schema.name());
      }
      if (!t.matches(schema)) {
        t = reconcile(conn, t, schema);
      }
    }
    staged.put(t);
    staged.changedSchema.put(t.id(), Boolean.TRUE);
    return t;
  }

  /**
   * Returns the target table that rows of a copy go into: the table of the source table's oid, as
   * it is, when it has the copy's columns and key, whatever its schema version and name; else the
   * table that {@link #ensure} makes of it.
   *
   * <p>A copy reads all its rows with one schema version, while the changes of a table copied in
   * chunks are applied at the same time with the versions the apply stream resolves: after a
   * restart, its first change of the table comes with a Relation message, which makes a version of
   * its own (a newer snapshot LSN, the same columns), and a rename of the source table moves the
   * target. Bringing the table back in line with the copy's version would make every copy batch and
   * every write of changes that follows it change the table's bookkeeping under the table's
   * exclusive lock, back and forth, and two of them that both checked the table under the shared
   * lock first deadlock when they ask for it exclusively.
   *
   * @param conn the transaction's connection
   * @param staged the transaction's catalog changes
   * @param schema the schema the copy's rows follow
   * @return the table
   * @throws SQLException when a query or DDL fails
   */
  Table ensureForCopy(Connection conn, Staged staged, ReplicatedTableSchema schema)
      throws SQLException {
    Table t = table(staged, schema.id());
    if (t != null && t.holds(schema)) {
      t = current(conn, staged, schema.id(), false);
      if (t != null && t.holds(schema)) {
        return t;
      }
    }
    return ensure(conn, staged, schema);
  }

  /** Takes the table's advisory lock exclusively, for DDL, until the transaction ends. */
  private void lockForDdl(Connection conn, Staged staged, TableId id) throws SQLException {
    if (staged.locked.add(id)) {
      lockTable(conn, id);
    }
    staged.verified.add(id);
  }

  /**
   * Makes the target name {@code name} free for the source table {@code id}. A table of another
   * source oid of this pipeline that holds it is parked: renamed to {@code _pgetl_parked_<oid>} in
   * its schema, never dropped. That happens when a source table was renamed (or its schema was) and
   * a new table took its old name before the renamed table's next change arrived, or when a source
   * table was dropped and created again (a new oid). A parked table gets its name back with its
   * next change, or as soon as the table holding its name moves away; a table that no longer exists
   * in the source stays parked. A table of that name that this pipeline did not create is left
   * alone: creating or renaming into its name then fails with {@code DESTINATION_SCHEMA_ERROR}.
   */
  private void claimName(Connection conn, Staged staged, TableName name, TableId id)
      throws SQLException {
    // serializes the pgetl writers that take or leave this name, in every pipeline
    try (PreparedStatement ps =
        conn.prepareStatement("SELECT pg_advisory_xact_lock(hashtext(?), hashtext(?))")) {
      ps.setString(1, "pgetl mirror target name");
      ps.setString(2, name.quoted());
      ps.execute();
    }
    for (Table holder : readHolders(conn, name)) {
      if (holder.id().equals(id)) {
        continue;
      }
      lockForDdl(conn, staged, holder.id());
      List<Table> now = read(conn, holder.id());
      Table h = now.isEmpty() ? null : now.get(0);
      if (h == null || !h.named(name)) {
        continue; // it moved while we waited for its lock
      }
      String parked = "_pgetl_parked_" + h.id().oid();
      exec(
          conn,
          "ALTER TABLE " + h.quotedName() + " RENAME TO " + TableName.quoteIdentifier(parked));
      Table moved = h.movedTo(h.sourceName(), h.schema(), parked);
      saveTarget(conn, moved);
      staged.put(moved);
      staged.changedSchema.put(moved.id(), Boolean.TRUE);
      log.warn(
          "target table {} of source table {} moved to {}: source table {} is now named {}",
          h.quotedName(),
          h.id(),
          moved.quotedName(),
          id,
          name);
    }
  }

  /**
   * Renames a target table to the source table's new name (and schema), taking the name over from a
   * table that holds it; then gives the name it left to a parked table that wants it.
   */
  private Table move(Connection conn, Staged staged, Table t, TableName to) throws SQLException {
    claimName(conn, staged, to, t.id());
    if (relationExists(conn, to)) {
      throw new EtlException(
          ErrorKind.DESTINATION_SCHEMA_ERROR,
          "cannot rename target table "
              + t.quotedName()
              + " of source table "
              + t.id()
              + " to "
              + to.quoted()
              + ", the source table's new name: a table of that name exists that pgetl did not"
              + " create",
          "relation " + to.quoted() + " already exists (SQLSTATE 42P07); rename or drop it");
    }
    createSchema(conn, to.schema());
    String quotedTo = TableName.quoteIdentifier(to.name());
    if (t.schema().equals(to.schema())) {
      exec(conn, "ALTER TABLE " + t.quotedName() + " RENAME TO " + quotedTo);
    } else {
      // through a name of its own, so that the old name cannot collide in the new schema
      String moving = TableName.quoteIdentifier("_pgetl_moving_" + t.id().oid());
      String inOld = TableName.quoteIdentifier(t.schema()) + "." + moving;
      String inNew = TableName.quoteIdentifier(to.schema()) + "." + moving;
      exec(conn, "ALTER TABLE " + t.quotedName() + " RENAME TO " + moving);
      exec(conn, "ALTER TABLE " + inOld + " SET SCHEMA " + TableName.quoteIdentifier(to.schema()));
      exec(conn, "ALTER TABLE " + inNew + " RENAME TO " + quotedTo);
    }
    Table moved = t.movedTo(to.toString(), to.schema(), to.name());
    saveTarget(conn, moved);
    staged.put(moved);
    staged.changedSchema.put(moved.id(), Boolean.TRUE);
    log.info(
        "target table {} of source table {} renamed to {}",
        t.quotedName(),
        t.id(),
        moved.quotedName());
    TableName left = new TableName(t.schema(), t.name());
    for (Table waiting : readWanting(conn, left)) {
      if (waiting.id().equals(t.id()) || waiting.named(left)) {
        continue;
      }
      lockForDdl(conn, staged, waiting.id());
      List<Table> now = read(conn, waiting.id());
      Table w = now.isEmpty() ? null : now.get(0);
      if (w != null && w.sourceName().equals(left.toString()) && !w.named(left)) {
        move(conn, staged, w, left);
      }
    }
    return moved;
  }

  private static boolean relationExists(Connection conn, TableName name) throws SQLException {
    try (PreparedStatement ps = conn.prepareStatement("SELECT to_regclass(?) IS NOT NULL")) {
      ps.setString(1, name.quoted());
      try (ResultSet rs = ps.executeQuery()) {
        rs.next();
        return rs.getBoolean(1);
      }
    }
  }

  private void saveTarget(Connection conn, Table t) throws SQLException {
    update(
        conn,
        "UPDATE _pgetl.mirror_tables SET source_name = ?, target_schema = ?, target_table = ?"
            + " WHERE pipeline_id = ? AND table_oid = ?",
        t.sourceName(),
        t.schema(),
        t.name(),
        pipelineId,
        t.id().oid());
  }

  private Table create(Connection conn, Staged staged, ReplicatedTableSchema schema)
      throws SQLException {
    TableName name = schema.name();
    claimName(conn, staged, name, schema.id());
    int[] key = RowKey.columns(schema);
    List<Column> columns = new ArrayList<>();
    List<String> defs = new ArrayList<>();
    for (int i = 0; i < schema.columnCount(); i++) {
      Column c = columnFor(conn, schema.columns().get(i), keyOrdinal(key, i));
      columns.add(c);
      defs.add(c.quoted() + " " + c.targetType());
    }
    List<String> keyNames = new ArrayList<>();
    for (int k : key) {
      keyNames.add(TableName.quoteIdentifier(schema.columns().get(k).name()));
    }
    if (!keyNames.isEmpty()) {
      defs.add("PRIMARY KEY (" + String.join(", ", keyNames) + ")");
    }
    Table t =
        new Table(
            schema.id(),
            name.toString(),
            name.schema(),
            name.name(),
            columns,
            snapshotLsn(schema),
            null);
    createSchema(conn, t.schema());
    exec(conn, "CREATE TABLE " + t.quotedName() + " (" + String.join(", ", defs) + ")");
    for (GeneratedColumn g : sourceGenerated(schema)) {
      addGenerated(conn, t, g);
    }
    update(
        conn,
        "INSERT INTO _pgetl.mirror_tables (pipeline_id, table_oid, source_name, target_schema,"
            + " target_table, schema_snapshot_lsn) VALUES (?, ?, ?, ?, ?, ?::pg_lsn)",
        pipelineId,
        t.id().oid(),
        t.sourceName(),
        t.schema(),
        t.name(),
        t.schemaSnapshotLsn().toString());
    saveColumns(conn, t);
    announce(t, false);
    return t;
  }

  /**
   * Creates a target schema unless it exists, safely while other transactions create it too: the
   * first batches of several tables of a new schema are written at once, each in its own
   * transaction, and {@code CREATE SCHEMA IF NOT EXISTS} does not see a schema that another
   * transaction created but did not commit yet. It waits for that transaction, then fails with a
   * duplicate key in {@code pg_namespace} (23505) or {@code duplicate_schema} (42P06) once it
   * commits; the schema exists then, and only the statement is rolled back (to a savepoint).
   */
  static void createSchema(Connection conn, String schema) throws SQLException {
    try (PreparedStatement ps =
        conn.prepareStatement("SELECT 1 FROM pg_namespace WHERE nspname = ?")) {
      ps.setString(1, schema);
      try (ResultSet rs = ps.executeQuery()) {
        if (rs.next()) {
          return;
        }
      }
    }
    exec(conn, "SAVEPOINT pgetl_create_schema");
    try {
      exec(conn, "CREATE SCHEMA IF NOT EXISTS " + TableName.quoteIdentifier(schema));
    } catch (SQLException e) {
      if (!"23505".equals(e.getSQLState()) && !"42P06".equals(e.getSQLState())) {
        throw e;
      }
      exec(conn, "ROLLBACK TO SAVEPOINT pgetl_create_schema"); // created by the other transaction
    }
    exec(conn, "RELEASE SAVEPOINT pgetl_create_schema");
  }

  private Column columnFor(Connection conn, ColumnSchema cs, int keyOrdinal) throws SQLException {
    return new Column(
        cs.ordinalPosition(),
        cs.name(),
        cs.typeOid(),
        cs.typeModifier(),
        cs.typeName(),
        targetType(conn, cs.typeName()),
        keyOrdinal);
  }

  /**
   * Whether a column's values in their binary wire form (a copied row's {@link
   * org.pgetl.model.TableRow#wireValue}) go into the target column as they are, in a binary {@code
   * COPY}: the target column has the source column's type, and that type's binary form means the
   * same in both databases. That holds for a built-in type (an oid below {@value
   * #FIRST_NON_BUILTIN_OID}, fixed by PostgreSQL's own catalog in every database and release) that
   * the target resolves the same name to, that is a base type, range or multirange with a receive
   * function, and that is not an oid alias ({@code regclass} and the like: their binary form is the
   * oid of an object of the source database); its element, if any (arrays, and {@code point},
   * {@code name}, {@code oidvector} ...), must be such a type too, because an array's binary form
   * carries its element type's oid. Enums, composites, domains and every type created in the source
   * have oids of their own database, and composites (built-in row types too) carry their fields'
   * type oids: their values never pass through.
   */
  boolean passesBinaryThrough(Connection conn, Column c) throws SQLException {
    if (!c.targetType().equals(c.sourceType()) || !builtInValueType(c.typeOid())) {
      return false;
    }
    String key = c.typeOid() + " " + c.sourceType();
    Boolean known = binaryPassThrough.get(key);
    if (known != null) {
      return known;
    }
    boolean passes = false;
    try (PreparedStatement ps =
        conn.prepareStatement(
            "SELECT to_regtype(?)::oid = t.oid, t.typtype, t.typreceive <> 0, t.typelem,"
                + " e.typtype FROM pg_type t LEFT JOIN pg_type e ON e.oid = t.typelem"
                + " WHERE t.oid = ?")) {
      ps.setString(1, c.sourceType());
      ps.setInt(2, c.typeOid());
      try (ResultSet rs = ps.executeQuery()) {
        if (rs.next()) {
          int element = rs.getInt(4);
          passes =
              rs.getBoolean(1)
                  && rangeOrBase(rs.getString(2))
                  && rs.getBoolean(3)
                  && (element == 0 || (builtInValueType(element) && rangeOrBase(rs.getString(5))));
        }
      }
    }
    binaryPassThrough.put(key, passes);
    return passes;
  }

  /**
   * The first oid that is not fixed by PostgreSQL's own catalog ({@code FirstGenbkiObjectId}):
   * below it, an oid names the same type in every database of every release.
   */
  static final int FIRST_NON_BUILTIN_OID = 10_000;

  /**
   * The built-in oid aliases ({@code regproc}, {@code regprocedure}, {@code regoper}, {@code
   * regoperator}, {@code regclass}, {@code regtype}, {@code regconfig}, {@code regdictionary},
   * {@code regnamespace}, {@code regrole}, {@code regcollation}): their binary form is the oid of a
   * source object, their text form its name.
   */
  private static final Set<Integer> OID_ALIASES =
      Set.of(24, 2202, 2203, 2204, 2205, 2206, 3734, 3769, 4089, 4096, 4191);

  private static boolean builtInValueType(int oid) {
    return oid > 0 && oid < FIRST_NON_BUILTIN_OID && !OID_ALIASES.contains(oid);
  }

  // base type, range or multirange: not a composite, domain, enum or pseudo-type
  private static boolean rangeOrBase(@Nullable String typtype) {
    return "b".equals(typtype) || "r".equals(typtype) || "m".equals(typtype);
  }

  /**
   * Returns the source type name when the target database knows a type of that name, else {@code
   * text}: enums, domains and composite types exist in the source only, and their values arrive in
   * their text form.
   */
  private String targetType(Connection conn, String sourceType) throws SQLException {
    String known = targetTypes.get(sourceType);
    if (known != null) {
      return known;
    }
    String type;
    try (PreparedStatement ps = conn.prepareStatement("SELECT to_regtype(?) IS NOT NULL")) {
      ps.setString(1, sourceType);
      try (ResultSet rs = ps.executeQuery()) {
        rs.next();
        type = rs.getBoolean(1) ? sourceType : "text";
      }
    }
    targetTypes.put(sourceType, type);
    return type;
  }

  private Table reconcile(Connection conn, Table t, ReplicatedTableSchema schema)
      throws SQLException {
    announce(t, false); // "a schema change is being applied"
    Map<Integer, Column> now = new LinkedHashMap<>();
    t.columns().forEach(c -> now.put(c.attnum(), c));
    Map<Integer, ColumnSchema> wanted = new LinkedHashMap<>();
    schema.columns().forEach(cs -> wanted.put(cs.ordinalPosition(), cs));
    int[] key = RowKey.columns(schema);
    List<Column> oldKey = t.key();
    List<Integer> newKey = new ArrayList<>();
    for (int k : key) {
      newKey.add(schema.columns().get(k).ordinalPosition());
    }
    boolean keyChanges = !oldKey.stream().map(Column::attnum).toList().equals(newKey);
    if (keyChanges && !oldKey.isEmpty()) {
      dropPrimaryKey(conn, t);
    }
    // generated columns first: they may use the columns that change
    Map<String, GeneratedColumn> generated = new LinkedHashMap<>();
    if (source != null) {
      boolean retypes = false;
      for (ColumnSchema cs : schema.columns()) {
        Column c = now.get(cs.ordinalPosition());
        retypes |=
            c != null && (c.typeOid() != cs.typeOid() || c.typeModifier() != cs.typeModifier());
      }
      for (GeneratedColumn g : sourceGenerated(schema)) {
        generated.put(g.name(), g);
      }
      for (GeneratedColumn g : MirrorSource.read(conn, "?::regclass", t.quotedName())) {
        // PostgreSQL cannot retype a column that a generated column uses: recreated after it
        if (retypes || !g.same(generated.get(g.name()))) {
          exec(
              conn,
              "ALTER TABLE "
                  + t.quotedName()
                  + " DROP COLUMN "
                  + TableName.quoteIdentifier(g.name()));
        } else {
          generated.remove(g.name()); // there already
        }
      }
    }
    for (Column c : List.copyOf(now.values())) {
      if (!wanted.containsKey(c.attnum())) {
        exec(conn, "ALTER TABLE " + t.quotedName() + " DROP COLUMN " + c.quoted());
        now.remove(c.attnum());
      }
    }
    // renames go through temporary names first, so that swapped names never collide
    List<Column> renamed =
        now.values().stream()
            .filter(c -> !Objects.requireNonNull(wanted.get(c.attnum())).name().equals(c.name()))
            .toList();
    for (Column c : renamed) {
      exec(
          conn,
          "ALTER TABLE "
              + t.quotedName()
              + " RENAME COLUMN "
              + c.quoted()
              + " TO "
              + TableName.quoteIdentifier("_pgetl_rename_" + c.attnum()));
    }
    for (Column c : renamed) {
      String newName = Objects.requireNonNull(wanted.get(c.attnum())).name();
      exec(
          conn,
          "ALTER TABLE "
              + t.quotedName()
              + " RENAME COLUMN "
              + TableName.quoteIdentifier("_pgetl_rename_" + c.attnum())
              + " TO "
              + TableName.quoteIdentifier(newName));
    }
    List<Column> columns = new ArrayList<>();
    for (int i = 0; i < schema.columnCount(); i++) {
      ColumnSchema cs = schema.columns().get(i);
      Column before = now.get(cs.ordinalPosition());
      Column after = columnFor(conn, cs, keyOrdinal(key, i));
      if (before == null) {
        addColumn(conn, t, after, cs.defaultExpression());
      } else if (before.typeOid() != cs.typeOid() || before.typeModifier() != cs.typeModifier()) {
        after = retype(conn, t, after);
      } else {
        after = // the type stays: a column that fell back to text keeps text
            new Column(
                after.attnum(),
                after.name(),
                after.typeOid(),
                after.typeModifier(),
                after.sourceType(),
                before.targetType(),
                after.keyOrdinal());
      }
      columns.add(after);
    }
    for (GeneratedColumn g : generated.values()) {
      addGenerated(conn, t, g);
    }
    if (keyChanges && !newKey.isEmpty()) {
      List<String> names = new ArrayList<>();
      for (int k : key) {
        names.add(TableName.quoteIdentifier(schema.columns().get(k).name()));
      }
      exec(
          conn,
          "ALTER TABLE " + t.quotedName() + " ADD PRIMARY KEY (" + String.join(", ", names) + ")");
    }
    Table changed =
        new Table(
            t.id(),
            t.sourceName(),
            t.schema(),
            t.name(),
            columns,
            snapshotLsn(schema),
            t.appliedThrough());
    update(
        conn,
        "UPDATE _pgetl.mirror_tables SET schema_snapshot_lsn = ?::pg_lsn"
            + " WHERE pipeline_id = ? AND table_oid = ?",
        changed.schemaSnapshotLsn().toString(),
        pipelineId,
        t.id().oid());
    update(
        conn,
        "DELETE FROM _pgetl.mirror_columns WHERE pipeline_id = ? AND table_oid = ?",
        pipelineId,
        t.id().oid());
    saveColumns(conn, changed);
    return changed;
  }

  /**
   * Adds a column that the source table gained. A column added with a default gets the default's
   * value in the rows already there, as at the source, where {@code ADD COLUMN ... DEFAULT} stores
   * it for every existing row without writing a change to the WAL: the target evaluates the
   * source's default expression once ({@code ALTER TABLE ... ADD COLUMN ... DEFAULT}), then drops
   * the default, since mirror columns carry none. That takes when PostgreSQL stores the value
   * without rewriting the table, which it does for every default that is not volatile. A volatile
   * default ({@code random()}, {@code nextval(...)}: the source computed a value per row) or one
   * the target cannot evaluate (a function, sequence or type that exists in the source only) is
   * rolled back: the column is added with NULL in the existing rows, and a warning says so; the
   * source's values arrive with each row's next change.
   */
  private void addColumn(Connection conn, Table t, Column c, @Nullable String defaultExpression)
      throws SQLException {
    String add =
        "ALTER TABLE " + t.quotedName() + " ADD COLUMN " + c.quoted() + " " + c.targetType();
    if (defaultExpression == null) {
      exec(conn, add);
      return;
    }
    exec(conn, "SAVEPOINT pgetl_add_column");
    String why;
    try {
      exec(conn, add + " DEFAULT " + defaultExpression);
      if (storedWithoutRewrite(conn, t, c)) {
        exec(
            conn,
            "ALTER TABLE " + t.quotedName() + " ALTER COLUMN " + c.quoted() + " DROP DEFAULT");
        exec(conn, "RELEASE SAVEPOINT pgetl_add_column");
        return;
      }
      why = "it is volatile";
    } catch (SQLException e) {
      why =
          ErrorText.maskQuoted(ErrorText.firstLine(e.getMessage()))
              + " (SQLSTATE "
              + e.getSQLState()
              + ")";
    }
    exec(conn, "ROLLBACK TO SAVEPOINT pgetl_add_column");
    exec(conn, "RELEASE SAVEPOINT pgetl_add_column");
    exec(conn, add);
    if (hasRows(conn, t)) {
      log.warn(
          "column {} added to target table {} holds NULL in the rows already there, not the"
              + " source's default ({}): {}; each row gets the source's value with its next"
              + " change",
          c.quoted(),
          t.quotedName(),
          defaultExpression,
          why);
    }
  }

  /** Whether the column just added holds its default as a missing value (no table rewrite). */
  private static boolean storedWithoutRewrite(Connection conn, Table t, Column c)
      throws SQLException {
    try (PreparedStatement ps =
        conn.prepareStatement(
            "SELECT atthasmissing FROM pg_attribute WHERE attrelid = ?::regclass AND attname = ?")) {
      ps.setString(1, t.quotedName());
      ps.setString(2, c.name());
      try (ResultSet rs = ps.executeQuery()) {
        return rs.next() && rs.getBoolean(1);
      }
    }
  }

  private static boolean hasRows(Connection conn, Table t) throws SQLException {
    try (Statement s = conn.createStatement();
        ResultSet rs = s.executeQuery("SELECT EXISTS (SELECT FROM " + t.quotedName() + ")")) {
      return rs.next() && rs.getBoolean(1);
    }
  }

  /**
   * The generated columns of a source table that the mirror creates itself: all of them, except
   * those that the stream carries as values (PostgreSQL 18 with {@code publish_generated_columns}).
   * Empty when the mirror has no source connection.
   */
  private List<GeneratedColumn> sourceGenerated(ReplicatedTableSchema schema) {
    if (source == null) {
      return List.of();
    }
    Set<String> replicated = new HashSet<>();
    schema.columns().forEach(cs -> replicated.add(cs.name()));
    return source.generatedColumns(schema.id()).stream()
        .filter(g -> !replicated.contains(g.name()))
        .toList();
  }

  /**
   * Adds a generated column to a target table, with the source's type and expression, so that the
   * target computes it from the replicated columns of each row as the source does. A column that
   * the target cannot create (its expression uses a function or type that exists in the source
   * only, or a column that became {@code text} in the mirror) is left out with a warning; a {@code
   * VIRTUAL} column becomes {@code STORED} on a target older than PostgreSQL 18.
   */
  private void addGenerated(Connection conn, Table t, GeneratedColumn g) throws SQLException {
    List<String> kinds = g.virtual() ? List.of("VIRTUAL", "STORED") : List.of("STORED");
    String why = null;
    for (String kind : kinds) {
      exec(conn, "SAVEPOINT pgetl_generated");
      try {
        exec(
            conn,
            "ALTER TABLE "
                + t.quotedName()
                + " ADD COLUMN "
                + TableName.quoteIdentifier(g.name())
                + " "
                + g.type()
                + " GENERATED ALWAYS AS ("
                + g.expression()
                + ") "
                + kind);
        exec(conn, "RELEASE SAVEPOINT pgetl_generated");
        return;
      } catch (SQLException e) {
        exec(conn, "ROLLBACK TO SAVEPOINT pgetl_generated");
        exec(conn, "RELEASE SAVEPOINT pgetl_generated");
        why =
            ErrorText.maskQuoted(ErrorText.firstLine(e.getMessage()))
                + " (SQLSTATE "
                + e.getSQLState()
                + ")";
      }
    }
    log.warn(
        "generated column {} of source table {} is left out of target table {}: {}",
        TableName.quoteIdentifier(g.name()),
        t.id(),
        t.quotedName(),
        why);
  }

  /**
   * Converts a column whose source type changed: to the new type when every stored value converts
   * through its text form, else to text (nothing is silently turned into NULL).
   */
  private Column retype(Connection conn, Table t, Column c) throws SQLException {
    String alter = "ALTER TABLE " + t.quotedName() + " ALTER COLUMN " + c.quoted() + " TYPE ";
    exec(conn, "SAVEPOINT pgetl_retype");
    try {
      exec(conn, alter + c.targetType() + " USING " + c.quoted() + "::text::" + c.targetType());
      exec(conn, "RELEASE SAVEPOINT pgetl_retype");
      return c;
    } catch (SQLException e) {
      exec(conn, "ROLLBACK TO SAVEPOINT pgetl_retype");
      exec(conn, alter + "text USING " + c.quoted() + "::text");
      return new Column(
          c.attnum(),
          c.name(),
          c.typeOid(),
          c.typeModifier(),
          c.sourceType(),
          "text",
          c.keyOrdinal());
    }
  }

  private void dropPrimaryKey(Connection conn, Table t) throws SQLException {
    String name = null;
    try (PreparedStatement ps =
        conn.prepareStatement(
            "SELECT conname FROM pg_constraint WHERE conrelid = ?::regclass AND contype = 'p'")) {
      ps.setString(1, t.quotedName());
      try (ResultSet rs = ps.executeQuery()) {
        if (rs.next()) {
          name = rs.getString(1);
        }
      }
    }
    if (name != null) {
      exec(
          conn,
          "ALTER TABLE " + t.quotedName() + " DROP CONSTRAINT " + TableName.quoteIdentifier(name));
    }
  }

  /**
   * Drops a source table's target table, found by the source table's oid wherever it is named now,
   * and every bookkeeping row of it (for a new copy). Nothing is dropped by name: a table of
   * another oid that holds the name the new copy needs is parked when the copy creates its table
   * (see {@link #claimName}), and a table that pgetl did not create is left alone.
   *
   * @param conn the transaction's connection
   * @param staged the transaction's catalog changes
   * @param id the source table
   * @throws SQLException when the DDL fails
   */
  void drop(Connection conn, Staged staged, TableId id) throws SQLException {
    lockForDdl(conn, staged, id);
    for (Table t : read(conn, id)) {
      exec(conn, "DROP TABLE IF EXISTS " + t.quotedName());
    }
    forget(conn, id);
    staged.tables.put(id, null);
  }

  private void forget(Connection conn, TableId id) throws SQLException {
    for (String meta :
        List.of("mirror_tables", "mirror_columns", "mirror_copy_batches", "mirror_copy_chunks")) {
      update(
          conn,
          "DELETE FROM _pgetl." + meta + " WHERE pipeline_id = ? AND table_oid = ?",
          pipelineId,
          id.oid());
    }
  }

  // --- copy attempts

  /**
   * Makes {@code attempt} the table's current copy attempt. Call first in the drop's transaction:
   * the row lock it takes waits for the copy batches of the table that are being written (they hold
   * the row {@code FOR SHARE}, see {@link #lockAttempt}), and makes the batches that come later see
   * the new attempt.
   *
   * @param conn the transaction's connection
   * @param staged the transaction's catalog changes
   * @param id the source table
   * @param attempt the attempt the drop names
   * @throws SQLException when the bookkeeping fails
   */
  void startAttempt(Connection conn, Staged staged, TableId id, UUID attempt) throws SQLException {
    try (PreparedStatement ps =
        conn.prepareStatement(
            "INSERT INTO _pgetl.mirror_copy_attempts VALUES (?, ?, ?, false, NULL, NULL)"
                + " ON CONFLICT (pipeline_id, table_oid) DO UPDATE SET attempt_id ="
                + " EXCLUDED.attempt_id, finished = false, batch_count = NULL, row_count = NULL")) {
      ps.setString(1, pipelineId);
      ps.setLong(2, id.oid());
      ps.setObject(3, attempt);
      ps.executeUpdate();
    }
    staged.copyOpen.put(id, Boolean.TRUE);
  }

  /**
   * Returns the table's current copy attempt and keeps it from changing until the transaction ends:
   * a drop for a new attempt waits until a batch of the old one is committed, and a batch that
   * comes after the drop's commit sees the new attempt.
   *
   * @param conn the transaction's connection
   * @param id the source table
   * @param forUpdate true to lock the row exclusively (for the {@code Finish} that updates it)
   * @return the attempt the last drop named, or null when no drop was recorded
   * @throws SQLException when the query fails
   */
  @Nullable UUID lockAttempt(Connection conn, TableId id, boolean forUpdate) throws SQLException {
    try (PreparedStatement ps =
        conn.prepareStatement(
            "SELECT attempt_id FROM _pgetl.mirror_copy_attempts WHERE pipeline_id = ?"
                + " AND table_oid = ? FOR "
                + (forUpdate ? "UPDATE" : "SHARE"))) {
      ps.setString(1, pipelineId);
      ps.setLong(2, id.oid());
      try (ResultSet rs = ps.executeQuery()) {
        return rs.next() ? rs.getObject(1, UUID.class) : null;
      }
    }
  }

  /**
   * Marks the current copy attempt of a table finished with the counts of its {@code Finish}, and
   * returns how many batches of it were stored.
   *
   * @param conn the transaction's connection
   * @param staged the transaction's catalog changes
   * @param id the source table
   * @param finish the barrier of the current attempt
   * @return the number of batches of the attempt stored
   * @throws SQLException when the bookkeeping fails
   */
  long finishAttempt(Connection conn, Staged staged, TableId id, TableCopyWrite.Finish finish)
      throws SQLException {
    long stored;
    try (PreparedStatement ps =
        conn.prepareStatement(
            "SELECT count(*) FROM _pgetl.mirror_copy_batches WHERE pipeline_id = ?"
                + " AND table_oid = ? AND attempt_id = ?")) {
      ps.setString(1, pipelineId);
      ps.setLong(2, id.oid());
      ps.setObject(3, finish.attemptId());
      try (ResultSet rs = ps.executeQuery()) {
        rs.next();
        stored = rs.getLong(1);
      }
    }
    update(
        conn,
        "UPDATE _pgetl.mirror_copy_attempts SET finished = true, batch_count = ?, row_count = ?"
            + " WHERE pipeline_id = ? AND table_oid = ?",
        finish.batches(),
        finish.rows(),
        pipelineId,
        id.oid());
    staged.copyOpen.put(id, Boolean.FALSE);
    return stored;
  }

  /**
   * Returns how many batches of a chunk read of the current attempt are stored: those numbered
   * {@code firstBatch .. firstBatch+batches-1}.
   *
   * @param conn the transaction's connection
   * @param id the source table
   * @param end the barrier that ends the chunk read
   * @return the number of the read's batches stored
   * @throws SQLException when the query fails
   */
  long storedBatchesOf(Connection conn, TableId id, TableCopyWrite.ChunkEnd end)
      throws SQLException {
    try (PreparedStatement ps =
        conn.prepareStatement(
            "SELECT count(*) FROM _pgetl.mirror_copy_batches WHERE pipeline_id = ?"
                + " AND table_oid = ? AND attempt_id = ? AND sequence >= ? AND sequence < ?")) {
      ps.setString(1, pipelineId);
      ps.setLong(2, id.oid());
      ps.setObject(3, end.attemptId());
      ps.setLong(4, end.firstBatch());
      ps.setLong(5, end.firstBatch() + end.batches());
      try (ResultSet rs = ps.executeQuery()) {
        rs.next();
        return rs.getLong(1);
      }
    }
  }

  /**
   * Records a chunk of the current attempt as ended by a read, replacing what an earlier read of
   * the same chunk recorded.
   *
   * @param conn the transaction's connection
   * @param id the source table
   * @param end the barrier that ends the chunk read
   * @throws SQLException when the bookkeeping fails
   */
  void recordChunkEnd(Connection conn, TableId id, TableCopyWrite.ChunkEnd end)
      throws SQLException {
    try (PreparedStatement ps =
        conn.prepareStatement(
            "INSERT INTO _pgetl.mirror_copy_chunks VALUES (?, ?, ?, ?, ?, ?, ?)"
                + " ON CONFLICT (pipeline_id, table_oid, attempt_id, chunk) DO UPDATE SET"
                + " first_batch = EXCLUDED.first_batch, batch_count = EXCLUDED.batch_count,"
                + " row_count = EXCLUDED.row_count")) {
      ps.setString(1, pipelineId);
      ps.setLong(2, id.oid());
      ps.setObject(3, end.attemptId());
      ps.setInt(4, end.chunk());
      ps.setLong(5, end.firstBatch());
      ps.setLong(6, end.batches());
      ps.setLong(7, end.rows());
      ps.executeUpdate();
    }
  }

  /**
   * Tells whether an attempt ended chunks: then it was copied in chunks, and its batch numbers are
   * the ranges its chunk reads named.
   *
   * @param conn the transaction's connection
   * @param id the source table
   * @param attempt the attempt
   * @return true when a {@code ChunkEnd} of the attempt is recorded
   * @throws SQLException when the query fails
   */
  boolean hasChunks(Connection conn, TableId id, UUID attempt) throws SQLException {
    try (PreparedStatement ps =
        conn.prepareStatement(
            "SELECT EXISTS (SELECT FROM _pgetl.mirror_copy_chunks WHERE pipeline_id = ?"
                + " AND table_oid = ? AND attempt_id = ?)")) {
      ps.setString(1, pipelineId);
      ps.setLong(2, id.oid());
      ps.setObject(3, attempt);
      try (ResultSet rs = ps.executeQuery()) {
        rs.next();
        return rs.getBoolean(1);
      }
    }
  }

  // --- idempotency bookkeeping

  /**
   * Records a copy batch as stored, unless it was stored before.
   *
   * @return true when the batch is new and its rows must be written
   */
  boolean recordCopyBatch(Connection conn, TableId id, TableCopyBatchId batch) throws SQLException {
    try (PreparedStatement ps =
        conn.prepareStatement(
            "INSERT INTO _pgetl.mirror_copy_batches VALUES (?, ?, ?, ?) ON CONFLICT DO NOTHING")) {
      ps.setString(1, pipelineId);
      ps.setLong(2, id.oid());
      ps.setObject(3, batch.attemptId());
      ps.setLong(4, batch.sequence());
      return ps.executeUpdate() == 1;
    }
  }

  /**
   * Stores the greatest sequence key applied to a table.
   *
   * @param conn the transaction's connection
   * @param staged the transaction's catalog changes
   * @param t the table, with its new {@link Table#appliedThrough()}
   */
  void saveAppliedThrough(Connection conn, Staged staged, Table t) throws SQLException {
    update(
        conn,
        "UPDATE _pgetl.mirror_tables SET applied_commit_lsn = ?::pg_lsn, applied_tx_ordinal = ?"
            + " WHERE pipeline_id = ? AND table_oid = ?",
        Objects.requireNonNull(t.appliedThrough()).commitLsn().toString(),
        Objects.requireNonNull(t.appliedThrough()).txOrdinal(),
        pipelineId,
        t.id().oid());
    staged.put(t);
  }

  /** Stores a user logical message; a message stored before (same sequence key) is ignored. */
  void recordMessage(Connection conn, Event.Message m) throws SQLException {
    try (PreparedStatement ps =
        conn.prepareStatement(
            "INSERT INTO _pgetl.mirror_messages VALUES (?, ?, ?::pg_lsn, ?::pg_lsn, ?, ?, ?)"
                + " ON CONFLICT DO NOTHING")) {
      ps.setString(1, pipelineId);
      ps.setString(2, m.sequenceKey().toString());
      ps.setString(3, m.commitLsn().toString());
      ps.setString(4, m.startLsn().toString());
      ps.setBoolean(5, m.transactional());
      ps.setString(6, m.prefix());
      ps.setBytes(7, m.content());
      ps.executeUpdate();
    }
  }

  // --- helpers

  private static int keyOrdinal(int[] key, int columnIndex) {
    for (int k = 0; k < key.length; k++) {
      if (key[k] == columnIndex) {
        return k + 1;
      }
    }
    return 0;
  }

  private static Lsn snapshotLsn(ReplicatedTableSchema s) {
    return s.tableSchema().snapshotLsn();
  }

  private void lockTable(Connection conn, TableId id) throws SQLException {
    try (PreparedStatement ps =
        conn.prepareStatement("SELECT pg_advisory_xact_lock(hashtext(?), ?)")) {
      ps.setString(1, "pgetl mirror " + pipelineId);
      ps.setInt(2, (int) id.oid());
      ps.execute();
    }
  }

  /** Reads the target name and schema version of one table (columns left out). */
  private List<Table> readTargets(Connection conn, TableId id) throws SQLException {
    List<Table> out = new ArrayList<>();
    try (PreparedStatement ps =
        conn.prepareStatement(
            "SELECT source_name, target_schema, target_table, schema_snapshot_lsn"
                + " FROM _pgetl.mirror_tables WHERE pipeline_id = ? AND table_oid = ?")) {
      ps.setString(1, pipelineId);
      ps.setLong(2, id.oid());
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          out.add(
              new Table(
                  id,
                  rs.getString(1),
                  rs.getString(2),
                  rs.getString(3),
                  List.of(),
                  Lsn.parse(rs.getString(4)),
                  null));
        }
      }
    }
    return out;
  }

  /** The tables of this pipeline whose target is named {@code name} (columns left out). */
  private List<Table> readHolders(Connection conn, TableName name) throws SQLException {
    return readWhere(conn, "target_schema = ? AND target_table = ?", name.schema(), name.name());
  }

  /** The tables of this pipeline whose source is named {@code name} (columns left out). */
  private List<Table> readWanting(Connection conn, TableName name) throws SQLException {
    return readWhere(conn, "source_name = ?", name.toString());
  }

  private List<Table> readWhere(Connection conn, String where, String... params)
      throws SQLException {
    List<Table> out = new ArrayList<>();
    try (PreparedStatement ps =
        conn.prepareStatement(
            "SELECT table_oid, source_name, target_schema, target_table, schema_snapshot_lsn"
                + " FROM _pgetl.mirror_tables WHERE pipeline_id = ? AND "
                + where)) {
      ps.setString(1, pipelineId);
      for (int i = 0; i < params.length; i++) {
        ps.setString(i + 2, params[i]);
      }
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          out.add(
              new Table(
                  new TableId(rs.getLong(1)),
                  rs.getString(2),
                  rs.getString(3),
                  rs.getString(4),
                  List.of(),
                  Lsn.parse(rs.getString(5)),
                  null));
        }
      }
    }
    return out;
  }

  /** Reads one table (or all when {@code only} is null) of this pipeline from the bookkeeping. */
  private List<Table> read(Connection conn, @Nullable TableId only) throws SQLException {
    Map<Long, List<Column>> columns = new HashMap<>();
    String filter = only == null ? "" : " AND table_oid = " + only.oid();
    try (PreparedStatement ps =
        conn.prepareStatement(
            "SELECT table_oid, attnum, column_name, type_oid, type_modifier, source_type,"
                + " target_type, key_ordinal FROM _pgetl.mirror_columns WHERE pipeline_id = ?"
                + filter
                + " ORDER BY table_oid, attnum")) {
      ps.setString(1, pipelineId);
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          columns
              .computeIfAbsent(rs.getLong(1), k -> new ArrayList<>())
              .add(
                  new Column(
                      rs.getInt(2),
                      rs.getString(3),
                      (int) rs.getLong(4),
                      rs.getInt(5),
                      rs.getString(6),
                      rs.getString(7),
                      rs.getInt(8)));
        }
      }
    }
    List<Table> out = new ArrayList<>();
    try (PreparedStatement ps =
        conn.prepareStatement(
            "SELECT table_oid, source_name, target_schema, target_table, schema_snapshot_lsn,"
                + " applied_commit_lsn, applied_tx_ordinal FROM _pgetl.mirror_tables"
                + " WHERE pipeline_id = ?"
                + filter)) {
      ps.setString(1, pipelineId);
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          String applied = rs.getString(6);
          out.add(
              new Table(
                  new TableId(rs.getLong(1)),
                  rs.getString(2),
                  rs.getString(3),
                  rs.getString(4),
                  columns.getOrDefault(rs.getLong(1), List.of()),
                  Lsn.parse(rs.getString(5)),
                  applied == null
                      ? null
                      : new EventSequenceKey(Lsn.parse(applied), rs.getLong(7))));
        }
      }
    }
    return out;
  }

  private void saveColumns(Connection conn, Table t) throws SQLException {
    try (PreparedStatement ps =
        conn.prepareStatement(
            "INSERT INTO _pgetl.mirror_columns VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)")) {
      for (Column c : t.columns()) {
        ps.setString(1, pipelineId);
        ps.setLong(2, t.id().oid());
        ps.setInt(3, c.attnum());
        ps.setString(4, c.name());
        ps.setLong(5, Integer.toUnsignedLong(c.typeOid()));
        ps.setInt(6, c.typeModifier());
        ps.setString(7, c.sourceType());
        ps.setString(8, c.targetType());
        ps.setInt(9, c.keyOrdinal());
        ps.addBatch();
      }
      ps.executeBatch();
    }
  }

  static void exec(Connection conn, String sql) throws SQLException {
    try (Statement s = conn.createStatement()) {
      s.execute(sql);
    }
  }

  private static void update(Connection conn, String sql, Object... params) throws SQLException {
    try (PreparedStatement ps = conn.prepareStatement(sql)) {
      for (int i = 0; i < params.length; i++) {
        if (params[i] == null) {
          ps.setNull(i + 1, Types.VARCHAR);
        } else {
          ps.setObject(i + 1, params[i]);
        }
      }
      ps.executeUpdate();
    }
  }

  /** Fails for a source table whose rows cannot be matched in the target. */
  static EtlException identityError(Table t, String what) {
    return new EtlException(
        ErrorKind.SOURCE_REPLICA_IDENTITY_ERROR,
        "cannot find the row to change in target table " + t.quotedName() + ": " + what,
        "give the source table a primary key or REPLICA IDENTITY FULL, then reset the table");
  }
}
