package org.pgetl.destination.duckdb;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
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
import org.jspecify.annotations.Nullable;
import org.pgetl.destination.DestinationTableMetadataStore;
import org.pgetl.destination.DestinationTableMetadataStore.TableMetadata;
import org.pgetl.destination.TableCopyBatchId;
import org.pgetl.destination.TableCopyWrite;
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
 * What {@link DuckDbDestination} knows about the tables in its DuckDB file, kept in the file itself
 * (schema {@code _pgetl}) so that it survives restarts and commits together with the rows:
 *
 * <pre>
 * _pgetl.tables        one row per source table: its DuckDB name, the schema version applied,
 *                      applied_through = the greatest event sequence key applied
 * _pgetl.columns       one row per column: the source attnum it mirrors, its name and types
 * _pgetl.copy_batches  the copy batch ids stored by the current copy attempt
 * _pgetl.copy_attempts one row per source table: its current copy attempt (the one the last
 *                      dropTableForCopy named), and once its Finish came, its batch and row counts
 * _pgetl.copy_chunks   for a table copied in chunks: each chunk the current attempt ended
 *                      (ChunkEnd), with the batch range and counts of its last read
 * _pgetl.messages      the user logical messages received, keyed by sequence key
 * </pre>
 *
 * <p>It also brings a DuckDB table in line with a new source schema ({@link #ensure}): columns are
 * matched by {@code attnum} ({@link ColumnSchema#ordinalPosition()}), which a rename keeps, so a
 * column that disappears is dropped, one whose name changed is renamed, one whose type changed is
 * converted, and a new one is added — in that order, before the next row is written.
 *
 * <p>Not thread-safe: only the destination's writer thread uses it, inside a transaction. After a
 * rollback, {@link #load()} reads the committed state back.
 */
final class DuckDbCatalog {
  private static final Logger log = LoggerFactory.getLogger(DuckDbCatalog.class);

  /** The schema of the bookkeeping tables. A source schema of this name is not supported. */
  static final String META_SCHEMA = "_pgetl";

  /**
   * The column a table without source columns has ({@code CREATE TABLE t ()}): DuckDB has no table
   * without columns, nor drops a table's last column. It is always NULL, exists only while the
   * source table has no column, and is not listed in {@code _pgetl.columns}.
   */
  static final String NO_COLUMNS = "_pgetl_no_columns";

  /**
   * One column of a destination table.
   *
   * @param attnum the source column's attnum
   * @param name the column name (the source name)
   * @param typeOid the source type oid the column was made for
   * @param typeModifier the source type modifier
   * @param type the DuckDB type now (VARCHAR once widened)
   * @param key whether the column is part of the DuckDB primary key
   */
  record Column(
      int attnum, String name, int typeOid, int typeModifier, DuckDbType type, boolean key) {
    String quoted() {
      return TableName.quoteIdentifier(name);
    }
  }

  /** One destination table and its bookkeeping. */
  static final class Table {
    final String database;
    final TableId id;
    String schema; // the DuckDB name: the source's, unless parked (see claimName)
    String name;
    @Nullable String sourceName; // the source table's name in the newest schema applied
    final Map<Integer, Column> columns = new LinkedHashMap<>();
    Lsn schemaSnapshotLsn; // of the newest schema applied
    @Nullable EventSequenceKey appliedThrough;
    @Nullable ReplicatedTableSchema
        lastSchema; // memory only: skips the column diff for a known schema

    Table(String database, TableId id, String schema, String name, Lsn schemaSnapshotLsn) {
      this.database = database;
      this.id = id;
      this.schema = schema;
      this.name = name;
      this.schemaSnapshotLsn = schemaSnapshotLsn;
    }

    /**
     * Returns the quoted name qualified by the database too: {@code "shop"."orders"} alone would be
     * ambiguous in a file named {@code shop.duckdb}, whose catalog is also called {@code shop}.
     */
    String quotedName() {
      return TableName.quoteIdentifier(database) + "." + displayName();
    }

    /** Returns true when the DuckDB table is named {@code n}. */
    boolean named(TableName n) {
      return schema.equals(n.schema()) && name.equals(n.name());
    }

    /** Returns the quoted {@code "schema"."table"}, for metadata and messages. */
    String displayName() {
      return TableName.quoteIdentifier(schema) + "." + TableName.quoteIdentifier(name);
    }

    /** Returns true when the DuckDB table has a primary key. */
    boolean keyed() {
      return columns.values().stream().anyMatch(Column::key);
    }

    /** Returns the column that mirrors a source attnum. */
    Column column(int attnum) {
      Column c = columns.get(attnum);
      if (c == null) {
        throw new IllegalStateException("no column for attnum " + attnum + " in " + quotedName());
      }
      return c;
    }
  }

  private final Connection conn;
  private final String database;
  private final Map<TableId, Table> tables = new HashMap<>();
  private final Map<TableId, UUID> attempts = new HashMap<>();
  // the tables whose current copy attempt is open: named by a drop, not finished yet
  private final Set<TableId> openCopies = new HashSet<>();
  private final Set<TableId> changed = new HashSet<>();
  private long ddlVersion;

  DuckDbCatalog(Connection conn) throws SQLException {
    this.conn = conn;
    try (Statement s = conn.createStatement();
        ResultSet rs = s.executeQuery("SELECT current_database()")) {
      rs.next();
      this.database = rs.getString(1);
    }
  }

  /** Creates the bookkeeping tables when the file is new. */
  void createMetadataTables() throws SQLException {
    exec("CREATE SCHEMA IF NOT EXISTS " + META_SCHEMA);
    exec(
        "CREATE TABLE IF NOT EXISTS _pgetl.tables (table_oid BIGINT PRIMARY KEY,"
            + " source_name VARCHAR NOT NULL, duckdb_schema VARCHAR NOT NULL,"
            + " duckdb_table VARCHAR NOT NULL, schema_snapshot_lsn VARCHAR NOT NULL,"
            + " applied_through VARCHAR)");
    exec(
        "CREATE TABLE IF NOT EXISTS _pgetl.columns (table_oid BIGINT, attnum INTEGER,"
            + " column_name VARCHAR NOT NULL, type_oid INTEGER NOT NULL,"
            + " type_modifier INTEGER NOT NULL, duckdb_type VARCHAR NOT NULL,"
            + " primary_key BOOLEAN NOT NULL, PRIMARY KEY (table_oid, attnum))");
    exec(
        "CREATE TABLE IF NOT EXISTS _pgetl.copy_batches (table_oid BIGINT, attempt_id UUID,"
            + " sequence BIGINT, PRIMARY KEY (table_oid, attempt_id, sequence))");
    exec(
        "CREATE TABLE IF NOT EXISTS _pgetl.copy_attempts (table_oid BIGINT NOT NULL,"
            + " attempt_id UUID NOT NULL, finished BOOLEAN NOT NULL, batch_count BIGINT,"
            + " row_count BIGINT)");
    exec(
        "CREATE TABLE IF NOT EXISTS _pgetl.copy_chunks (table_oid BIGINT, attempt_id UUID,"
            + " chunk INTEGER, first_batch BIGINT NOT NULL, batch_count BIGINT NOT NULL,"
            + " row_count BIGINT NOT NULL, PRIMARY KEY (table_oid, attempt_id, chunk))");
    exec(
        "CREATE TABLE IF NOT EXISTS _pgetl.messages (sequence_key VARCHAR PRIMARY KEY,"
            + " commit_lsn VARCHAR NOT NULL, start_lsn VARCHAR NOT NULL,"
            + " transactional BOOLEAN NOT NULL, prefix VARCHAR NOT NULL, content BLOB NOT NULL)");
  }

  /** (Re)reads every table from the bookkeeping tables, dropping what memory held. */
  void load() throws SQLException {
    tables.clear();
    attempts.clear();
    openCopies.clear();
    changed.clear();
    ddlVersion++;
    try (Statement s = conn.createStatement();
        ResultSet rs =
            s.executeQuery("SELECT table_oid, attempt_id, finished FROM _pgetl.copy_attempts")) {
      while (rs.next()) {
        TableId id = new TableId(rs.getLong(1));
        attempts.put(id, rs.getObject(2, UUID.class));
        if (!rs.getBoolean(3)) {
          openCopies.add(id);
        }
      }
    }
    try (Statement s = conn.createStatement();
        ResultSet rs =
            s.executeQuery(
                "SELECT table_oid, duckdb_schema, duckdb_table, schema_snapshot_lsn,"
                    + " applied_through, source_name FROM _pgetl.tables")) {
      while (rs.next()) {
        Table t =
            new Table(
                database,
                new TableId(rs.getLong(1)),
                rs.getString(2),
                rs.getString(3),
                Lsn.parse(rs.getString(4)));
        t.appliedThrough = parseKey(rs.getString(5));
        t.sourceName = rs.getString(6);
        tables.put(t.id, t);
      }
    }
    try (Statement s = conn.createStatement();
        ResultSet rs =
            s.executeQuery(
                "SELECT table_oid, attnum, column_name, type_oid, type_modifier, duckdb_type,"
                    + " primary_key FROM _pgetl.columns ORDER BY table_oid, attnum")) {
      while (rs.next()) {
        Column c =
            new Column(
                rs.getInt(2),
                rs.getString(3),
                rs.getInt(4),
                rs.getInt(5),
                DuckDbType.parse(rs.getString(6)),
                rs.getBoolean(7));
        Objects.requireNonNull(tables.get(new TableId(rs.getLong(1))), "the column's table")
            .columns
            .put(c.attnum(), c);
      }
    }
  }

  /** Returns the tables known, for publishing their metadata. */
  Collection<Table> tables() {
    return tables.values();
  }

  /** Returns the table of a source table, or null when none was created. */
  @Nullable Table find(TableId id) {
    return tables.get(id);
  }

  /**
   * Returns a counter that grows with every schema change, so that cached prepared statements can
   * be dropped.
   */
  long ddlVersion() {
    return ddlVersion;
  }

  /**
   * Returns true when the table exists and already follows {@code schema}, so that {@link #ensure}
   * would change nothing.
   */
  boolean isCurrent(ReplicatedTableSchema schema) {
    Table t = tables.get(schema.id());
    return t != null && schema.equals(t.lastSchema);
  }

  /**
   * Returns the destination table of a source table, creating it, renaming it, or bringing its
   * columns in line with {@code schema} first. Tables follow the source table's oid: a table
   * renamed in the source (or moved to another schema) is renamed in DuckDB, and a name another
   * table holds is taken over (see {@link #claimName}).
   *
   * @param schema the source table's schema from this point of the stream on
   * @param store where the table's metadata is announced
   * @return the table
   * @throws SQLException when DDL fails
   */
  Table ensure(ReplicatedTableSchema schema, DestinationTableMetadataStore store)
      throws SQLException {
    Table t = tables.get(schema.id());
    if (t == null) {
      return create(schema, store);
    }
    if (!schema.equals(t.lastSchema)) {
      if (!t.named(schema.name())) {
        move(t, schema.name(), store);
      }
      reconcile(t, schema, store);
      t.lastSchema = schema;
    }
    return t;
  }

  /**
   * Makes the name {@code name} free for the source table {@code id}: a table of another source oid
   * that holds it is parked, renamed to {@code _pgetl_parked_<oid>} in its schema, never dropped.
   * That happens when a source table was renamed (or its schema was) and a new table took its old
   * name before the renamed table's next change arrived, or when a source table was dropped and
   * created again (a new oid). A parked table gets its name back with its next change, or as soon
   * as the table holding its name moves away; a table that no longer exists in the source stays
   * parked.
   *
   * @throws EtlException ({@code DESTINATION_SCHEMA_ERROR}) when a table of that name exists that
   *     pgetl did not create
   */
  private void claimName(TableName name, TableId id, DestinationTableMetadataStore store)
      throws SQLException {
    for (Table holder : List.copyOf(tables.values())) {
      if (!holder.id.equals(id) && holder.named(name)) {
        String before = holder.displayName();
        renameInSchema(holder, "_pgetl_parked_" + holder.id.oid());
        saveTarget(holder);
        announce(holder, false, store);
        log.warn(
            "duckdb table {} of source table {} moved to {}: source table {} is now named {}",
            before,
            holder.id,
            holder.displayName(),
            id,
            name);
      }
    }
    if (relationExists(name)) {
      throw new EtlException(
          ErrorKind.DESTINATION_SCHEMA_ERROR,
          "DuckDB table "
              + name.quoted()
              + " exists and pgetl did not create it: source table "
              + id
              + " cannot take its name",
          "rename or drop the DuckDB table, then roll the table back");
    }
  }

  /**
   * Renames a table to the source table's new name; then gives the name it left to a parked table
   * that wants it. DuckDB cannot move a table to another schema, so a move across schemas creates
   * the table under its new name and moves its rows.
   */
  private void move(Table t, TableName to, DestinationTableMetadataStore store)
      throws SQLException {
    claimName(to, t.id, store);
    TableName left = new TableName(t.schema, t.name);
    String before = t.displayName();
    if (t.schema.equals(to.schema())) {
      renameInSchema(t, to.name());
    } else {
      createSchema(to.schema());
      String from = t.quotedName();
      List<String> names = new ArrayList<>();
      for (Column c : t.columns.values()) {
        names.add(c.quoted());
      }
      if (names.isEmpty()) {
        names.add(TableName.quoteIdentifier(NO_COLUMNS)); // one row for each row of no values
      }
      t.schema = to.schema();
      t.name = to.name();
      exec("CREATE TABLE " + t.quotedName() + " (" + String.join(", ", definitions(t)) + ")");
      String list = String.join(", ", names);
      exec("INSERT INTO " + t.quotedName() + " (" + list + ") SELECT " + list + " FROM " + from);
      exec("DROP TABLE " + from);
    }
    t.sourceName = to.toString();
    saveTarget(t);
    announce(t, false, store);
    log.info("duckdb table {} of source table {} renamed to {}", before, t.id, t.displayName());
    for (Table waiting : List.copyOf(tables.values())) {
      if (waiting != t && left.toString().equals(waiting.sourceName) && !waiting.named(left)) {
        move(waiting, left, store);
      }
    }
  }

  private void renameInSchema(Table t, String newName) throws SQLException {
    exec("ALTER TABLE " + t.quotedName() + " RENAME TO " + TableName.quoteIdentifier(newName));
    t.name = newName;
  }

  private void saveTarget(Table t) throws SQLException {
    update(
        "UPDATE _pgetl.tables SET source_name = ?, duckdb_schema = ?, duckdb_table = ?"
            + " WHERE table_oid = ?",
        t.sourceName,
        t.schema,
        t.name,
        t.id.oid());
  }

  private boolean relationExists(TableName name) throws SQLException {
    try (PreparedStatement ps =
        conn.prepareStatement(
            "SELECT count(*) FROM duckdb_tables() WHERE database_name = ? AND schema_name = ?"
                + " AND table_name = ?")) {
      ps.setString(1, database);
      ps.setString(2, name.schema());
      ps.setString(3, name.name());
      try (ResultSet rs = ps.executeQuery()) {
        rs.next();
        return rs.getLong(1) > 0;
      }
    }
  }

  private void createSchema(String schema) throws SQLException {
    exec(
        "CREATE SCHEMA IF NOT EXISTS "
            + TableName.quoteIdentifier(database)
            + "."
            + TableName.quoteIdentifier(schema));
  }

  private boolean hasNoColumnsPlaceholder(Table t) throws SQLException {
    try (PreparedStatement ps =
        conn.prepareStatement(
            "SELECT count(*) FROM duckdb_columns() WHERE database_name = ? AND schema_name = ?"
                + " AND table_name = ? AND column_name = ?")) {
      ps.setString(1, database);
      ps.setString(2, t.schema);
      ps.setString(3, t.name);
      ps.setString(4, NO_COLUMNS);
      try (ResultSet rs = ps.executeQuery()) {
        rs.next();
        return rs.getLong(1) > 0;
      }
    }
  }

  /** The column and key definitions of a table, as its bookkeeping describes it. */
  private static List<String> definitions(Table t) {
    List<String> defs = new ArrayList<>();
    List<String> keys = new ArrayList<>();
    for (Column c : t.columns.values()) {
      defs.add(c.quoted() + " " + c.type().sql());
      if (c.key()) {
        keys.add(c.quoted());
      }
    }
    if (defs.isEmpty()) {
      defs.add(TableName.quoteIdentifier(NO_COLUMNS) + " BOOLEAN");
    }
    if (!keys.isEmpty()) {
      defs.add("PRIMARY KEY (" + String.join(", ", keys) + ")");
    }
    return defs;
  }

  private Table create(ReplicatedTableSchema schema, DestinationTableMetadataStore store)
      throws SQLException {
    claimName(schema.name(), schema.id(), store);
    Table t =
        new Table(
            database,
            schema.id(),
            schema.name().schema(),
            schema.name().name(),
            schema.tableSchema().snapshotLsn());
    t.sourceName = schema.name().toString();
    List<String> defs = new ArrayList<>();
    List<String> keys = new ArrayList<>();
    for (ColumnSchema cs : schema.columns()) {
      Column c = columnFor(cs, cs.isPrimaryKey());
      t.columns.put(c.attnum(), c);
      defs.add(c.quoted() + " " + c.type().sql());
    }
    if (defs.isEmpty()) {
      defs.add(TableName.quoteIdentifier(NO_COLUMNS) + " BOOLEAN");
    }
    schema.columns().stream()
        .filter(ColumnSchema::isPrimaryKey)
        .sorted((a, b) -> a.primaryKeyOrdinal() - b.primaryKeyOrdinal())
        .forEach(cs -> keys.add(TableName.quoteIdentifier(cs.name())));
    if (!keys.isEmpty()) {
      defs.add("PRIMARY KEY (" + String.join(", ", keys) + ")");
    }
    createSchema(t.schema);
    exec("CREATE TABLE " + t.quotedName() + " (" + String.join(", ", defs) + ")");
    update(
        "INSERT INTO _pgetl.tables VALUES (?, ?, ?, ?, ?, NULL)",
        t.id.oid(),
        schema.name().toString(),
        t.schema,
        t.name,
        t.schemaSnapshotLsn.toString());
    for (Column c : t.columns.values()) {
      insertColumn(t, c);
    }
    t.lastSchema = schema;
    tables.put(t.id, t);
    announce(t, false, store);
    return t;
  }

  private static Column columnFor(ColumnSchema cs, boolean key) {
    return new Column(
        cs.ordinalPosition(),
        cs.name(),
        cs.typeOid(),
        cs.typeModifier(),
        DuckDbType.forColumn(cs),
        key);
  }

  private void reconcile(Table t, ReplicatedTableSchema schema, DestinationTableMetadataStore store)
      throws SQLException {
    Map<Integer, ColumnSchema> wanted = new LinkedHashMap<>();
    schema.columns().forEach(cs -> wanted.put(cs.ordinalPosition(), cs));
    List<Column> dropped =
        t.columns.values().stream().filter(c -> !wanted.containsKey(c.attnum())).toList();
    List<Column> renamed =
        t.columns.values().stream()
            .filter(
                c -> {
                  ColumnSchema w = wanted.get(c.attnum());
                  return w != null && !w.name().equals(c.name());
                })
            .toList();
    List<ColumnSchema> retyped =
        wanted.values().stream()
            .filter(
                cs -> {
                  Column old = t.columns.get(cs.ordinalPosition());
                  return old != null && typeChanged(old, cs);
                })
            .toList();
    List<ColumnSchema> added =
        wanted.values().stream()
            .filter(cs -> !t.columns.containsKey(cs.ordinalPosition()))
            .toList();
    boolean columnsChange =
        !dropped.isEmpty() || !renamed.isEmpty() || !retyped.isEmpty() || !added.isEmpty();
    if (columnsChange) {
      store.put(t.id, metadata(t, false)); // "a schema change is being applied"
    }
    if (!dropped.isEmpty() && dropped.size() == t.columns.size()) {
      // DuckDB does not drop a table's last column: keep the table alive with the placeholder
      exec(
          "ALTER TABLE "
              + t.quotedName()
              + " ADD COLUMN "
              + TableName.quoteIdentifier(NO_COLUMNS)
              + " BOOLEAN");
    }
    boolean hadNoColumns = t.columns.isEmpty();
    for (Column c : dropped) {
      drop(t, c);
    }
    renameAll(t, renamed, wanted);
    for (ColumnSchema cs : retyped) {
      retype(t, Objects.requireNonNull(t.columns.get(cs.ordinalPosition())), cs);
    }
    for (ColumnSchema cs : added) {
      add(t, cs);
    }
    if ((hadNoColumns || !dropped.isEmpty())
        && !t.columns.isEmpty()
        && hasNoColumnsPlaceholder(t)) {
      exec(
          "ALTER TABLE "
              + t.quotedName()
              + " DROP COLUMN "
              + TableName.quoteIdentifier(NO_COLUMNS));
    }
    if (columnsChange || !schema.tableSchema().snapshotLsn().equals(t.schemaSnapshotLsn)) {
      t.schemaSnapshotLsn = schema.tableSchema().snapshotLsn();
      update(
          "UPDATE _pgetl.tables SET schema_snapshot_lsn = ? WHERE table_oid = ?",
          t.schemaSnapshotLsn.toString(),
          t.id.oid());
      changed.add(t.id);
    }
  }

  private static boolean typeChanged(Column c, ColumnSchema cs) {
    return c.typeOid() != cs.typeOid() || c.typeModifier() != cs.typeModifier();
  }

  private void drop(Table t, Column c) throws SQLException {
    refuseKeyChange(t, c, "dropped");
    exec("ALTER TABLE " + t.quotedName() + " DROP COLUMN " + c.quoted());
    update("DELETE FROM _pgetl.columns WHERE table_oid = ? AND attnum = ?", t.id.oid(), c.attnum());
    t.columns.remove(c.attnum());
  }

  /** Renames through temporary names first, so that swapped names never collide. */
  private void renameAll(Table t, List<Column> renamed, Map<Integer, ColumnSchema> wanted)
      throws SQLException {
    for (Column c : renamed) {
      String temporary = TableName.quoteIdentifier("_pgetl_rename_" + c.attnum());
      exec("ALTER TABLE " + t.quotedName() + " RENAME COLUMN " + c.quoted() + " TO " + temporary);
    }
    for (Column c : renamed) {
      String temporary = TableName.quoteIdentifier("_pgetl_rename_" + c.attnum());
      Column now = withName(c, Objects.requireNonNull(wanted.get(c.attnum())).name());
      exec("ALTER TABLE " + t.quotedName() + " RENAME COLUMN " + temporary + " TO " + now.quoted());
      saveColumn(t, now);
    }
  }

  private static Column withName(Column c, String name) {
    return new Column(c.attnum(), name, c.typeOid(), c.typeModifier(), c.type(), c.key());
  }

  /**
   * Converts a column whose source type changed: to the new type when every stored value casts to
   * it, else to VARCHAR in PostgreSQL's text form (nothing is silently turned into NULL).
   */
  private void retype(Table t, Column c, ColumnSchema cs) throws SQLException {
    refuseKeyChange(t, c, "given a new type");
    DuckDbType target = DuckDbType.forColumn(cs);
    String sql;
    if (countFailedCasts(t, c, target) == 0) {
      sql = target.sql();
    } else {
      target = DuckDbType.VARCHAR;
      sql = "VARCHAR USING " + c.type().widenUsing(c.quoted());
    }
    exec("ALTER TABLE " + t.quotedName() + " ALTER COLUMN " + c.quoted() + " SET DATA TYPE " + sql);
    saveColumn(t, new Column(c.attnum(), c.name(), cs.typeOid(), cs.typeModifier(), target, false));
  }

  private long countFailedCasts(Table t, Column c, DuckDbType target) throws SQLException {
    String sql =
        "SELECT count(*) FROM %s WHERE %s IS NOT NULL AND TRY_CAST(%s AS %s) IS NULL"
            .formatted(t.quotedName(), c.quoted(), c.quoted(), target.sql());
    try (Statement s = conn.createStatement();
        ResultSet rs = s.executeQuery(sql)) {
      rs.next();
      return rs.getLong(1);
    }
  }

  private void add(Table t, ColumnSchema cs) throws SQLException {
    Column c = columnFor(cs, false); // DuckDB cannot add a column to an existing primary key
    exec("ALTER TABLE " + t.quotedName() + " ADD COLUMN " + c.quoted() + " " + c.type().sql());
    insertColumn(t, c);
    t.columns.put(c.attnum(), c);
  }

  /**
   * Changes a column to VARCHAR, converting its stored values to PostgreSQL's text form, because a
   * value is about to arrive that its type cannot hold (see {@link DuckDbType}).
   *
   * @param t the table
   * @param c the column
   * @return the widened column
   * @throws SQLException when the DDL fails
   */
  Column widen(Table t, Column c) throws SQLException {
    refuseKeyChange(t, c, "widened to VARCHAR");
    exec(
        "ALTER TABLE "
            + t.quotedName()
            + " ALTER COLUMN "
            + c.quoted()
            + " SET DATA TYPE VARCHAR USING "
            + c.type().widenUsing(c.quoted()));
    Column widened =
        new Column(c.attnum(), c.name(), c.typeOid(), c.typeModifier(), DuckDbType.VARCHAR, false);
    saveColumn(t, widened);
    return widened;
  }

  private static void refuseKeyChange(Table t, Column c, String what) {
    if (c.key()) {
      throw new EtlException(
          ErrorKind.DESTINATION_SCHEMA_ERROR,
          "primary key column "
              + c.name()
              + " of DuckDB table "
              + t.quotedName()
              + " would have to be "
              + what
              + ", which DuckDB does not allow",
          "reset the table so that it is copied again with its current schema");
    }
  }

  /**
   * Drops a source table's DuckDB table, found by the source table's oid wherever it is named now,
   * and every bookkeeping row of it (for a new copy). Nothing is dropped by name: a table of
   * another oid that holds the name the new copy needs is parked when the copy creates its table
   * (see {@link #claimName}), and a table that pgetl did not create is left alone.
   *
   * @param id the source table
   * @throws SQLException when the DDL fails
   */
  void drop(TableId id) throws SQLException {
    Table t = tables.remove(id);
    if (t != null) {
      exec("DROP TABLE IF EXISTS " + t.quotedName());
    }
    forget(id);
  }

  private void forget(TableId id) throws SQLException {
    for (String meta : List.of("tables", "columns", "copy_batches", "copy_chunks")) {
      update("DELETE FROM _pgetl." + meta + " WHERE table_oid = ?", id.oid());
    }
  }

  /**
   * Stores the greatest sequence key applied to a table.
   *
   * @param t the table, with {@link Table#appliedThrough} set
   * @throws SQLException when the update fails
   */
  void saveAppliedThrough(Table t) throws SQLException {
    update(
        "UPDATE _pgetl.tables SET applied_through = ? WHERE table_oid = ?",
        Objects.requireNonNull(t.appliedThrough, "appliedThrough").toString(),
        t.id.oid());
  }

  /**
   * Makes {@code attempt} the table's current copy attempt, in the transaction of the drop.
   *
   * @param id the source table
   * @param attempt the attempt the drop names
   * @throws SQLException when the bookkeeping fails
   */
  void startAttempt(TableId id, UUID attempt) throws SQLException {
    update("DELETE FROM _pgetl.copy_attempts WHERE table_oid = ?", id.oid());
    update("INSERT INTO _pgetl.copy_attempts VALUES (?, ?, false, NULL, NULL)", id.oid(), attempt);
    attempts.put(id, attempt);
    openCopies.add(id);
  }

  /**
   * Tells whether a table's current copy attempt is open: a drop named it and its {@code Finish}
   * did not come yet. The engine sends a table's changes while its copy attempt is open only when
   * it copies the table in chunks, so these are the tables whose changes follow the chunked copy's
   * rules.
   *
   * @param id the source table
   * @return true while the table's copy attempt is open
   */
  boolean copyOpen(TableId id) {
    return openCopies.contains(id);
  }

  /**
   * Returns the table's current copy attempt.
   *
   * @param id the source table
   * @return the attempt the last drop named, or null when no drop was recorded
   */
  @Nullable UUID currentAttempt(TableId id) {
    return attempts.get(id);
  }

  /**
   * Marks the current copy attempt of a table complete, after checking that every batch the {@code
   * Finish} counts was stored.
   *
   * @param id the source table
   * @param finish the barrier of the current attempt
   * @return the number of batches of the attempt stored
   * @throws SQLException when the bookkeeping fails
   */
  long finishAttempt(TableId id, TableCopyWrite.Finish finish) throws SQLException {
    long stored;
    try (PreparedStatement ps =
        conn.prepareStatement(
            "SELECT count(*) FROM _pgetl.copy_batches WHERE table_oid = ? AND attempt_id = ?")) {
      ps.setLong(1, id.oid());
      ps.setObject(2, finish.attemptId());
      try (ResultSet rs = ps.executeQuery()) {
        rs.next();
        stored = rs.getLong(1);
      }
    }
    update(
        "UPDATE _pgetl.copy_attempts SET finished = true, batch_count = ?, row_count = ?"
            + " WHERE table_oid = ?",
        finish.batches(),
        finish.rows(),
        id.oid());
    openCopies.remove(id);
    return stored;
  }

  /**
   * Returns how many batches of a chunk read of the current attempt are stored: those numbered
   * {@code firstBatch .. firstBatch+batches-1}.
   *
   * @param id the source table
   * @param end the barrier that ends the chunk read
   * @return the number of the read's batches stored
   * @throws SQLException when the query fails
   */
  long storedBatchesOf(TableId id, TableCopyWrite.ChunkEnd end) throws SQLException {
    try (PreparedStatement ps =
        conn.prepareStatement(
            "SELECT count(*) FROM _pgetl.copy_batches WHERE table_oid = ? AND attempt_id = ?"
                + " AND sequence >= ? AND sequence < ?")) {
      ps.setLong(1, id.oid());
      ps.setObject(2, end.attemptId());
      ps.setLong(3, end.firstBatch());
      ps.setLong(4, end.firstBatch() + end.batches());
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
   * @param id the source table
   * @param end the barrier that ends the chunk read
   * @throws SQLException when the bookkeeping fails
   */
  void recordChunkEnd(TableId id, TableCopyWrite.ChunkEnd end) throws SQLException {
    update(
        "INSERT OR REPLACE INTO _pgetl.copy_chunks VALUES (?, ?, ?, ?, ?, ?)",
        id.oid(),
        end.attemptId(),
        end.chunk(),
        end.firstBatch(),
        end.batches(),
        end.rows());
  }

  /**
   * Tells whether an attempt ended chunks: then it was copied in chunks, and its batch numbers are
   * the ranges its chunk reads named.
   *
   * @param id the source table
   * @param attempt the attempt
   * @return true when a {@code ChunkEnd} of the attempt is recorded
   * @throws SQLException when the query fails
   */
  boolean hasChunks(TableId id, UUID attempt) throws SQLException {
    try (PreparedStatement ps =
        conn.prepareStatement(
            "SELECT 1 FROM _pgetl.copy_chunks WHERE table_oid = ? AND attempt_id = ? LIMIT 1")) {
      ps.setLong(1, id.oid());
      ps.setObject(2, attempt);
      try (ResultSet rs = ps.executeQuery()) {
        return rs.next();
      }
    }
  }

  /** Returns true when this copy batch was stored already. */
  boolean hasCopyBatch(TableId id, TableCopyBatchId batch) throws SQLException {
    try (PreparedStatement ps =
        conn.prepareStatement(
            "SELECT 1 FROM _pgetl.copy_batches WHERE table_oid = ? AND attempt_id = ?"
                + " AND sequence = ?")) {
      ps.setLong(1, id.oid());
      ps.setObject(2, batch.attemptId());
      ps.setLong(3, batch.sequence());
      try (ResultSet rs = ps.executeQuery()) {
        return rs.next();
      }
    }
  }

  /** Records a copy batch as stored. */
  void recordCopyBatch(TableId id, TableCopyBatchId batch) throws SQLException {
    update(
        "INSERT INTO _pgetl.copy_batches VALUES (?, ?, ?)",
        id.oid(),
        batch.attemptId(),
        batch.sequence());
  }

  /** Stores a user logical message; a message stored before (same sequence key) is ignored. */
  void recordMessage(Event.Message m) throws SQLException {
    update(
        "INSERT OR IGNORE INTO _pgetl.messages VALUES (?, ?, ?, ?, ?, ?)",
        m.sequenceKey().toString(),
        m.commitLsn().toString(),
        m.startLsn().toString(),
        m.transactional(),
        m.prefix(),
        m.content());
  }

  /**
   * Announces the metadata of every table whose schema changed in the transaction just committed.
   *
   * @param store the pipeline's metadata store
   */
  void announceChanged(DestinationTableMetadataStore store) {
    for (TableId id : changed) {
      Table t = tables.get(id);
      if (t != null) {
        store.put(id, metadata(t, true));
      }
    }
    changed.clear();
  }

  /**
   * Announces a table's metadata now.
   *
   * @param t the table
   * @param applied false while a schema change is not committed yet
   * @param store the pipeline's metadata store
   */
  void announce(Table t, boolean applied, DestinationTableMetadataStore store) {
    store.put(t.id, metadata(t, applied));
    if (!applied) {
      changed.add(t.id);
    }
  }

  private static TableMetadata metadata(Table t, boolean applied) {
    return new TableMetadata(t.displayName(), t.schemaSnapshotLsn, applied);
  }

  // --- helpers

  private void insertColumn(Table t, Column c) throws SQLException {
    update(
        "INSERT INTO _pgetl.columns VALUES (?, ?, ?, ?, ?, ?, ?)",
        t.id.oid(),
        c.attnum(),
        c.name(),
        c.typeOid(),
        c.typeModifier(),
        c.type().sql(),
        c.key());
    ddlVersion++;
  }

  private void saveColumn(Table t, Column c) throws SQLException {
    update(
        "UPDATE _pgetl.columns SET column_name = ?, type_oid = ?, type_modifier = ?,"
            + " duckdb_type = ?, primary_key = ? WHERE table_oid = ? AND attnum = ?",
        c.name(),
        c.typeOid(),
        c.typeModifier(),
        c.type().sql(),
        c.key(),
        t.id.oid(),
        c.attnum());
    t.columns.put(c.attnum(), c);
    ddlVersion++;
  }

  private void exec(String sql) throws SQLException {
    try (Statement s = conn.createStatement()) {
      s.execute(sql);
    }
    ddlVersion++;
  }

  private void update(String sql, @Nullable Object... params) throws SQLException {
    try (PreparedStatement ps = conn.prepareStatement(sql)) {
      for (int i = 0; i < params.length; i++) {
        ps.setObject(i + 1, params[i]);
      }
      ps.executeUpdate();
    }
  }

  private static @Nullable EventSequenceKey parseKey(@Nullable String text) {
    if (text == null) {
      return null;
    }
    int slash = text.indexOf('/');
    return new EventSequenceKey(
        Lsn.of(Long.parseUnsignedLong(text.substring(0, slash), 16)),
        Long.parseUnsignedLong(text.substring(slash + 1), 16));
  }
}
