package org.pgetl.destination.postgres;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.sql.Savepoint;
import java.sql.Statement;
import java.sql.Types;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.function.Predicate;
import org.jspecify.annotations.Nullable;
import org.pgetl.destination.postgres.MirrorCatalog.Column;
import org.pgetl.destination.postgres.MirrorCatalog.Table;
import org.pgetl.error.ErrorKind;
import org.pgetl.error.EtlException;
import org.pgetl.model.OldRow;
import org.pgetl.model.PgText;
import org.pgetl.model.ReplicatedTableSchema;
import org.pgetl.model.TableId;
import org.pgetl.model.TableRow;
import org.pgetl.model.TableRow.WireFormat;
import org.pgetl.model.UpdatedRow;
import org.postgresql.PGConnection;
import org.postgresql.copy.CopyIn;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Writes rows into target tables for {@link PostgresMirrorDestination}, inside the caller's
 * transaction: copy batches through {@code COPY ... FROM STDIN}, and changes as few statements as
 * their order allows.
 *
 * <p>Every value of a change travels as text, bound as an untyped parameter and cast to the
 * column's type ({@code ?::numeric(12,2)}) or copied: outside the key, the text form pgoutput sent,
 * as it is; in the key, {@link PgText#format} of the decoded value, the form the server's input
 * function reads back to the same value (see {@code valueText}).
 *
 * <p>Changes of a table with a key are folded into their net effect per key before anything is
 * written, because changes of different keys (and of different tables: the mirror has no foreign
 * keys) commute within a transaction: a key ends up deleted, replaced by a full row, or changed in
 * some columns (several partial updates merged, or merged into the full row written before them in
 * the same write). A flush then writes each table with at most one multi-row {@code DELETE}, one
 * multi-row {@code INSERT ... ON CONFLICT (key) DO UPDATE} and one multi-row {@code UPDATE ... FROM
 * (VALUES ...)} per set of changed columns. From {@value #STAGE_MIN_ROWS} changes of one of these
 * kinds, the rows go with {@code COPY} into a temporary table of the transaction ({@code ON COMMIT
 * DROP}) instead, and one {@code INSERT ... SELECT ... ON CONFLICT}, {@code DELETE ... USING} or
 * {@code UPDATE ... FROM} merges them: no parameters to bind, one statement to plan. A table whose
 * changes in a write are all inserts (a bulk load, a large transaction) skips the fold: from
 * {@value #STAGE_MIN_ROWS} rows they are copied straight into the target table under a savepoint,
 * and only when a key is already there (the target holds rows the source does not, or one key came
 * twice) is the savepoint rolled back and the rows folded and upserted as above. A truncate, a
 * schema change and a partial update that moves its row to another key flush first. Changes of a
 * table without a key keep their order: consecutive inserts become one multi-row {@code INSERT},
 * consecutive statements of one shape run as one JDBC batch.
 *
 * <p>How an UPDATE or DELETE finds its row: by the target table's key, whose old values come from
 * the old key ({@link OldRow.Key}), the old full row, or — when PostgreSQL sent no old row because
 * the key did not change — the new row. A table without a key (REPLICA IDENTITY FULL, no primary
 * key) matches the whole old row, comparing text forms (so that {@code json} and other types
 * without an equality operator match too), and changes one matching row.
 *
 * <p>A table copied in chunks (its copy attempt is open while it gets changes) holds only some of
 * its rows until its copy is finished, so its changes follow the chunked copy's rules: a full
 * update that keeps its key sets the columns of a row that is there, like a partial one, instead of
 * upserting the row (its chunk, not copied yet, brings it); an update or delete that finds no row
 * is skipped without a warning; an update that moves a row to another key replaces the row of the
 * new key. Inserts and copied rows replace the row of their key, as always.
 *
 * <p>Not thread-safe: one instance per transaction.
 */
final class MirrorRows {
  private static final Logger log = LoggerFactory.getLogger(MirrorRows.class);

  /** pgjdbc sends at most 32767 parameters per statement. */
  private static final int MAX_PARAMETERS = 32_767;

  /** Rows per multi-row INSERT: past a few hundred, larger statements gain nothing. */
  private static final int MAX_ROWS_PER_STATEMENT = 500;

  /** Statements per JDBC batch. */
  private static final int MAX_BATCH = 1_000;

  /** COPY data is sent in chunks of about this many characters. */
  private static final int COPY_CHUNK = 1 << 20;

  /**
   * From this many net changes of one kind to one table, they go through a staging table: COPY into
   * a temporary table, then one set-based statement. Below it, multi-row statements with parameters
   * cost fewer round trips than creating the staging table.
   */
  static final int STAGE_MIN_ROWS = 256;

  private static final String UNIQUE_VIOLATION = "23505";

  /** A failed statement, with the target table it wrote. */
  static final class TableWriteFailure extends SQLException {
    private static final long serialVersionUID = 1L;

    /** The quoted target table. */
    final String table;

    TableWriteFailure(String table, SQLException cause) {
      super(cause.getMessage(), cause.getSQLState(), cause);
      this.table = table;
    }

    /** Returns the failure of the statement itself. */
    SQLException statementFailure() {
      return (SQLException) Objects.requireNonNull(getCause());
    }
  }

  private final Connection conn;

  // whether a table's copy attempt is open (it is copied in chunks): asked once per table
  private final Predicate<TableId> copyOpen;
  private final Map<TableId, Boolean> chunked = new HashMap<>();

  // keyed tables: the net effect of the pending changes, per table
  private final Map<TableId, NetChanges> net = new LinkedHashMap<>();

  // tables without a key, in order: a pending run of inserts, or a JDBC batch of one statement
  private @Nullable Table runTable;
  private @Nullable List<Column> runColumns;
  private final List<String[]> runRows = new ArrayList<>();
  private @Nullable String batchSql;
  private @Nullable PreparedStatement batch;
  private int batchSize;
  private @Nullable String batchTable;
  private boolean batchChunked; // the batch's table is copied in chunks: a miss is expected

  // how many staging tables this transaction created: each gets a name of its own
  private int stagingTables;

  // the columns of the last (table, schema) pair seen: consecutive changes mostly share them
  private @Nullable Table lastTable;
  private @Nullable ReplicatedTableSchema lastSchema;
  private List<Column> lastColumns = List.of();

  /**
   * Creates the row writer of one transaction.
   *
   * @param conn the transaction's connection
   * @param copyOpen tells whether a table's copy attempt is open, so that its changes follow the
   *     rules of a table copied in chunks
   */
  MirrorRows(Connection conn, Predicate<TableId> copyOpen) {
    this.conn = conn;
    this.copyOpen = copyOpen;
  }

  /**
   * Whether a table is being copied in chunks (its copy attempt is open while it gets changes):
   * then an update or delete of a key it does not hold changes nothing, without a warning, and a
   * full update does not insert the row it finds missing. Asked once per table and transaction, so
   * that all of a write's changes to a table follow the same rules.
   */
  private boolean chunked(Table t) {
    return chunked.computeIfAbsent(t.id(), copyOpen::test);
  }

  // --- copy

  /**
   * Writes a copy batch with {@code COPY ... FROM STDIN}: in binary format when every column's
   * values pass through in their binary wire form or have a binary encoder ({@link
   * MirrorBinaryCopy}), else in text format. A copy attempt writes each row once into a table that
   * {@code dropTableForCopy} emptied, so no upsert is needed; a batch delivered again is skipped by
   * its id before this is called. A table copied in chunks may hold a key of the batch already (a
   * change inserted it, or an earlier read of the chunk copied it): the batch of a table with a key
   * is copied under a savepoint, and a unique violation rolls it back and upserts the batch instead
   * (see {@link #upsertBatch}), so the copied row replaces the row of its key.
   */
  static void copy(
      Connection conn,
      MirrorCatalog catalog,
      Table t,
      ReplicatedTableSchema schema,
      List<TableRow> rows)
      throws SQLException {
    List<Column> columns = columns(t, schema);
    List<String> names = columns.stream().map(Column::quoted).toList();
    // a table without columns has rows of no values: COPY takes one empty line for each
    String list = names.isEmpty() ? "" : " (" + String.join(", ", names) + ")";
    boolean[] passThrough = new boolean[columns.size()];
    for (int i = 0; i < passThrough.length; i++) {
      passThrough[i] = catalog.passesBinaryThrough(conn, columns.get(i));
    }
    boolean binary =
        MirrorBinaryCopy.supports(columns, passThrough)
            && MirrorBinaryCopy.accepts(columns, passThrough, rows);
    String format = " FROM STDIN" + (binary ? " (FORMAT binary)" : "");
    try {
      // a table without a key holds no key to meet: no savepoint needed
      @Nullable Savepoint savepoint = t.keyed() ? conn.setSavepoint() : null;
      try {
        copyRows(
            conn, t, columns, passThrough, binary, "COPY " + t.quotedName() + list + format, rows);
      } catch (SQLException e) {
        if (savepoint == null || !UNIQUE_VIOLATION.equals(e.getSQLState())) {
          throw e;
        }
        conn.rollback(savepoint);
        log.debug(
            "copy batch meets rows already in target table {}: upserted instead", t.quotedName());
        upsertBatch(conn, t, columns, passThrough, binary, list + format, rows);
        return;
      }
      if (savepoint != null) {
        conn.releaseSavepoint(savepoint);
      }
    } catch (SQLException e) {
      throw new TableWriteFailure(t.quotedName(), e);
    }
  }

  private static void copyRows(
      Connection conn,
      Table t,
      List<Column> columns,
      boolean[] passThrough,
      boolean binary,
      String sql,
      List<TableRow> rows)
      throws SQLException {
    if (binary) {
      copyBinary(conn, t, columns, passThrough, sql, rows);
    } else {
      copyIn(conn, t, columns, sql, rows);
    }
  }

  /**
   * Upserts a copy batch: copies it, in the same format, into a temporary staging table whose
   * columns have the target columns' names and types, then merges it with one {@code INSERT ...
   * SELECT ... ON CONFLICT (key) DO UPDATE}. The staging table is dropped at once, so that another
   * batch of the transaction could stage too.
   */
  private static void upsertBatch(
      Connection conn,
      Table t,
      List<Column> columns,
      boolean[] passThrough,
      boolean binary,
      String listAndFormat,
      List<TableRow> rows)
      throws SQLException {
    String stage = "pg_temp.pgetl_copy_stage";
    List<String> defs = new ArrayList<>(columns.size());
    for (Column c : columns) {
      defs.add(c.quoted() + " " + c.targetType());
    }
    MirrorCatalog.exec(
        conn, "CREATE TEMP TABLE " + stage + " (" + String.join(", ", defs) + ") ON COMMIT DROP");
    copyRows(conn, t, columns, passThrough, binary, "COPY " + stage + listAndFormat, rows);
    String names = names(columns, "");
    MirrorCatalog.exec(
        conn,
        "INSERT INTO "
            + t.quotedName()
            + " ("
            + names
            + ") SELECT "
            + names
            + " FROM "
            + stage
            + onConflict(t, columns));
    MirrorCatalog.exec(conn, "DROP TABLE " + stage);
  }

  private static void copyBinary(
      Connection conn,
      Table t,
      List<Column> columns,
      boolean[] passThrough,
      String sql,
      List<TableRow> rows)
      throws SQLException {
    CopyIn in = conn.unwrap(PGConnection.class).getCopyAPI().copyIn(sql);
    try {
      MirrorBinaryCopy.write(
          in,
          columns,
          passThrough,
          (c, v) -> Objects.requireNonNull(text(t, c, v), "the text of a value"),
          rows);
      in.endCopy();
    } finally {
      if (in.isActive()) {
        in.cancelCopy();
      }
    }
  }

  private static void copyIn(
      Connection conn, Table t, List<Column> columns, String sql, List<TableRow> rows)
      throws SQLException {
    // each row's cells formatted as the row is written, not all of them first
    copyText(
        conn,
        sql,
        () ->
            rows.stream()
                .map(
                    row -> {
                      String[] cells = new String[columns.size()];
                      for (int i = 0; i < cells.length; i++) {
                        cells[i] = text(t, columns.get(i), row.get(i));
                      }
                      return cells;
                    })
                .iterator());
  }

  /** Escapes a value for COPY's text format: backslash, tab, newline and carriage return. */
  private static void appendCopyEscaped(StringBuilder sb, String s) {
    if (!needsEscape(s)) {
      sb.append(s); // the common case: one bulk copy instead of a char at a time
      return;
    }
    for (int i = 0; i < s.length(); i++) {
      char c = s.charAt(i);
      switch (c) {
        case '\\' -> sb.append("\\\\");
        case '\t' -> sb.append("\\t");
        case '\n' -> sb.append("\\n");
        case '\r' -> sb.append("\\r");
        default -> sb.append(c);
      }
    }
  }

  /**
   * Copies rows of text values (null for SQL NULL) with {@code COPY ... FROM STDIN} (text format).
   */
  private static void copyText(Connection conn, String sql, Iterable<String[]> rows)
      throws SQLException {
    CopyIn in = conn.unwrap(PGConnection.class).getCopyAPI().copyIn(sql);
    try {
      StringBuilder sb = new StringBuilder(64 * 1024);
      for (String[] row : rows) {
        for (int i = 0; i < row.length; i++) {
          if (i > 0) {
            sb.append('\t');
          }
          if (row[i] == null) {
            sb.append("\\N");
          } else {
            appendCopyEscaped(sb, row[i]);
          }
        }
        sb.append('\n');
        if (sb.length() >= COPY_CHUNK) {
          byte[] bytes = sb.toString().getBytes(StandardCharsets.UTF_8);
          in.writeToCopy(bytes, 0, bytes.length);
          sb.setLength(0);
        }
      }
      byte[] bytes = sb.toString().getBytes(StandardCharsets.UTF_8);
      in.writeToCopy(bytes, 0, bytes.length);
      in.endCopy();
    } finally {
      if (in.isActive()) {
        in.cancelCopy();
      }
    }
  }

  /**
   * Creates a temporary table with columns {@code c0, c1, ...} of the given columns' types, dropped
   * at commit, and copies the rows into it; returns its qualified name.
   */
  private String stage(List<Column> columns, Iterable<String[]> rows) throws SQLException {
    String name = "pg_temp.pgetl_stage_" + ++stagingTables;
    List<String> defs = new ArrayList<>(columns.size());
    for (int i = 0; i < columns.size(); i++) {
      defs.add("c" + i + " " + columns.get(i).targetType());
    }
    MirrorCatalog.exec(
        conn, "CREATE TEMP TABLE " + name + " (" + String.join(", ", defs) + ") ON COMMIT DROP");
    copyText(conn, "COPY " + name + " FROM STDIN", rows);
    return name;
  }

  private static boolean needsEscape(String s) {
    for (int i = 0; i < s.length(); i++) {
      char c = s.charAt(i);
      if (c == '\\' || c == '\t' || c == '\n' || c == '\r') {
        return true;
      }
    }
    return false;
  }

  // --- changes

  /** Inserts a row; in a table with a key, replaces the row of that key if there is one. */
  void insert(Table t, ReplicatedTableSchema schema, TableRow row) throws SQLException {
    List<Column> columns = columnsOf(t, schema);
    String[] values = new String[columns.size()];
    for (int i = 0; i < values.length; i++) {
      values[i] = valueText(t, columns.get(i), row, i);
    }
    if (!t.keyed()) {
      addToRun(t, columns, values);
    } else {
      net(t, columns).insert(values);
    }
  }

  /**
   * Updates one row. A full row replaces the row of its old key (the row of its own key when the
   * key did not change); a partial row sets the columns it carries only, so that the missing
   * (unchanged TOAST) columns keep their current values.
   */
  void update(Table t, ReplicatedTableSchema schema, UpdatedRow row, @Nullable OldRow old)
      throws SQLException {
    List<Column> columns = columnsOf(t, schema);
    Match match = match(t, schema, old, row);
    String[] values = new String[columns.size()];
    boolean[] present = new boolean[columns.size()];
    for (int i = 0; i < columns.size(); i++) {
      present[i] = row.isPresent(i);
      if (row instanceof UpdatedRow.Full full) {
        values[i] = valueText(t, columns.get(i), full.row(), i);
      } else {
        values[i] = present[i] ? text(t, columns.get(i), row.get(i)) : null;
      }
    }
    if (match.wholeRow()) {
      updateInPlace(t, columns, values, present, match);
      return;
    }
    NetChanges n = net(t, columns);
    List<String> oldKey = Arrays.asList(match.values());
    if (row instanceof UpdatedRow.Full) {
      List<String> newKey = n.keyOf(values);
      if (!newKey.equals(oldKey)) {
        n.delete(oldKey);
        n.upsert(newKey, values);
      } else if (chunked(t)) {
        // copied in chunks: a key not held yet is left to its chunk, so only a row there changes
        n.partial(oldKey, values, present);
      } else {
        n.upsert(newKey, values);
      }
    } else if (n.keyKept(values, present, oldKey)) {
      n.partial(oldKey, values, present);
    } else {
      // the row moves to another key while some of its values are unknown: only the row itself
      // knows them, so this change cannot be folded
      flush();
      if (chunked(t)) {
        // a chunk may have copied the row under its new key already: the moved row replaces it
        deleteNewKeyOfMovingRow(t, columns, values, present, match);
      }
      updateInPlace(t, columns, values, present, match);
    }
  }

  /**
   * Deletes the row of the key a row moves to, when the row to move is there: in a table copied in
   * chunks, a chunk read after the change may have copied the row under its new key already, and
   * moving the old row onto it would violate the key.
   */
  private void deleteNewKeyOfMovingRow(
      Table t, List<Column> columns, String[] values, boolean[] present, Match match)
      throws SQLException {
    List<Column> key = match.columns();
    List<String> params = new ArrayList<>(2 * key.size());
    for (int k = 0; k < key.size(); k++) {
      int i = columns.indexOf(key.get(k));
      params.add(i >= 0 && present[i] ? values[i] : match.values()[k]);
    }
    params.addAll(Arrays.asList(match.values()));
    String sql =
        "DELETE FROM "
            + t.quotedName()
            + where(t, key, false)
            + " AND EXISTS (SELECT FROM "
            + t.quotedName()
            + where(t, key, false)
            + ")";
    try (PreparedStatement ps = conn.prepareStatement(sql)) {
      for (int p = 0; p < params.size(); p++) {
        bind(ps, p + 1, params.get(p));
      }
      ps.executeUpdate();
    } catch (SQLException e) {
      throw new TableWriteFailure(t.quotedName(), e);
    }
  }

  /** Deletes one row. */
  void delete(Table t, ReplicatedTableSchema schema, OldRow old) throws SQLException {
    Match match = match(t, schema, old, null);
    if (match.wholeRow()) {
      flushNet();
      String sql = "DELETE FROM " + t.quotedName() + where(t, match.columns(), true);
      addToBatch(t, sql, match.values());
    } else {
      net(t, columnsOf(t, schema)).delete(Arrays.asList(match.values()));
    }
  }

  /** Deletes every row. */
  void truncate(Table t) throws SQLException {
    flush();
    try {
      MirrorCatalog.exec(conn, "TRUNCATE " + t.quotedName());
    } catch (SQLException e) {
      throw new TableWriteFailure(t.quotedName(), e);
    }
  }

  /** Writes everything pending. Call before the transaction commits and before DDL. */
  void flush() throws SQLException {
    flushNet();
    flushRun();
    flushBatch();
  }

  private void updateInPlace(
      Table t, List<Column> columns, String[] values, boolean[] present, Match match)
      throws SQLException {
    List<String> assignments = new ArrayList<>();
    List<String> params = new ArrayList<>();
    for (int i = 0; i < columns.size(); i++) {
      if (present[i]) {
        assignments.add(columns.get(i).quoted() + " = ?::" + columns.get(i).targetType());
        params.add(values[i]);
      }
    }
    if (assignments.isEmpty()) {
      return; // no value to change (a table without columns)
    }
    String sql =
        "UPDATE "
            + t.quotedName()
            + " SET "
            + String.join(", ", assignments)
            + where(t, match.columns(), match.wholeRow());
    params.addAll(Arrays.asList(match.values()));
    flushNet();
    addToBatch(t, sql, params.toArray(new String[0]));
  }

  // --- net changes of keyed tables

  private NetChanges net(Table t, List<Column> columns) throws SQLException {
    flushRun();
    flushBatch();
    NetChanges n = net.get(t.id());
    if (n != null && !n.columns.equals(columns)) {
      flushNet(); // another column list: write what follows the old one first
      n = null;
    }
    if (n == null) {
      n = new NetChanges(t, columns);
      net.put(t.id(), n);
    }
    return n;
  }

  private void flushNet() throws SQLException {
    for (NetChanges n : net.values()) {
      try {
        n.write();
      } catch (SQLException e) {
        throw new TableWriteFailure(n.table.quotedName(), e);
      }
    }
    net.clear();
  }

  /** The new values of some columns of a row, for a partial update not yet written. */
  @SuppressWarnings("ArrayRecordComponent") // a private holder, never compared or hashed
  private record PartialValues(String[] values, boolean[] present) {}

  /**
   * The net effect of one keyed table's pending changes: per key, exactly one of deleted, replaced
   * by a full row, or changed in some columns.
   */
  private final class NetChanges {
    final Table table;
    final List<Column> columns;
    final int[] keyPositions;
    final Set<List<String>> deletes = new LinkedHashSet<>();
    final Map<List<String>, String[]> upserts = new LinkedHashMap<>();
    final Map<List<String>, PartialValues> partials = new LinkedHashMap<>();

    // while every change is an insert: the rows in their order, not folded per key yet, because
    // the fold (a key list and a hash entry per row) is most of the writer's work for a bulk load
    private boolean insertOnly = true;
    private final List<String[]> inserted = new ArrayList<>();

    NetChanges(Table table, List<Column> columns) {
      this.table = table;
      this.columns = columns;
      List<Column> key = table.key();
      keyPositions = new int[key.size()];
      for (int k = 0; k < keyPositions.length; k++) {
        keyPositions[k] = columns.indexOf(key.get(k));
      }
    }

    List<String> keyOf(String[] values) {
      List<String> key = new ArrayList<>(keyPositions.length);
      for (int p : keyPositions) {
        key.add(values[p]);
      }
      return key;
    }

    /** Whether a partial row leaves its key as it was (key columns absent or equal). */
    boolean keyKept(String[] values, boolean[] present, List<String> oldKey) {
      for (int k = 0; k < keyPositions.length; k++) {
        int p = keyPositions[k];
        if (present[p] && !java.util.Objects.equals(values[p], oldKey.get(k))) {
          return false;
        }
      }
      return true;
    }

    /** Adds an inserted row: kept in order while all changes are inserts, else an upsert. */
    void insert(String[] values) {
      if (insertOnly) {
        inserted.add(values);
      } else {
        upsert(keyOf(values), values);
      }
    }

    /** Folds the inserts kept in order into the net changes per key; the last row of a key wins. */
    private void fold() {
      if (!insertOnly) {
        return;
      }
      insertOnly = false;
      for (String[] values : inserted) {
        upserts.put(keyOf(values), values);
      }
      inserted.clear();
    }

    void upsert(List<String> key, String[] values) {
      fold();
      deletes.remove(key);
      partials.remove(key);
      upserts.put(key, values);
    }

    void delete(List<String> key) {
      fold();
      upserts.remove(key);
      partials.remove(key);
      deletes.add(key);
    }

    void partial(List<String> key, String[] values, boolean[] present) {
      fold();
      String[] full = upserts.get(key);
      if (full != null) { // the full row is known: the change lands in it
        String[] merged = full.clone();
        for (int i = 0; i < merged.length; i++) {
          if (present[i]) {
            merged[i] = values[i];
          }
        }
        upserts.put(key, merged);
      } else if (!deletes.contains(key)) { // a deleted row is gone: the update finds nothing
        PartialValues before = partials.get(key);
        if (before == null) {
          partials.put(key, new PartialValues(values.clone(), present.clone()));
        } else {
          for (int i = 0; i < values.length; i++) {
            if (present[i]) {
              before.values()[i] = values[i];
              before.present()[i] = true;
            }
          }
        }
      }
    }

    void write() throws SQLException {
      if (insertOnly) {
        if (inserted.size() >= STAGE_MIN_ROWS && copyInserts()) {
          return;
        }
        fold();
      }
      if (deletes.size() >= STAGE_MIN_ROWS) {
        stagedDeletes();
      } else {
        writeDeletes();
      }
      if (upserts.size() >= STAGE_MIN_ROWS && !columns.isEmpty()) {
        stagedUpserts();
      } else if (!upserts.isEmpty()) {
        writeInserts(table, columns, new ArrayList<>(upserts.values()));
      }
      Map<String, List<PartialValues>> byColumns = new LinkedHashMap<>();
      for (PartialValues p : partials.values()) {
        byColumns.computeIfAbsent(Arrays.toString(p.present()), k -> new ArrayList<>()).add(p);
      }
      for (List<PartialValues> group : byColumns.values()) {
        writePartials(group);
      }
    }

    /**
     * Copies insert-only rows straight into the target table, under a savepoint, and returns
     * whether that worked. A key already there fails the COPY with a unique violation: the
     * savepoint is rolled back and the caller upserts the rows instead, so an insert still replaces
     * the row of its key. Replays never reach this (their events are skipped by the applied key),
     * so the target lacks the keys of new inserts unless it holds rows the source does not.
     */
    private boolean copyInserts() throws SQLException {
      Savepoint savepoint = conn.setSavepoint();
      try {
        copyText(
            conn,
            "COPY " + table.quotedName() + " (" + names(columns, "") + ") FROM STDIN",
            inserted);
      } catch (SQLException e) {
        if (!UNIQUE_VIOLATION.equals(e.getSQLState())) {
          throw e;
        }
        conn.rollback(savepoint);
        log.debug(
            "inserts into target table {} meet rows already there: upserted instead",
            table.quotedName());
        return false;
      }
      conn.releaseSavepoint(savepoint);
      return true;
    }

    /** Copies the new rows into a staging table, then upserts them all with one statement. */
    private void stagedUpserts() throws SQLException {
      String stage = stage(columns, upserts.values());
      List<String> picks = new ArrayList<>(columns.size());
      for (int i = 0; i < columns.size(); i++) {
        picks.add("c" + i);
      }
      MirrorCatalog.exec(
          conn,
          "INSERT INTO "
              + table.quotedName()
              + " ("
              + names(columns, "")
              + ") SELECT "
              + String.join(", ", picks)
              + " FROM "
              + stage
              + onConflict(table, columns));
    }

    /** Copies the deleted keys into a staging table, then deletes them all with one statement. */
    private void stagedDeletes() throws SQLException {
      List<Column> key = table.key();
      List<String[]> keys = new ArrayList<>(deletes.size());
      for (List<String> k : deletes) {
        keys.add(k.toArray(new String[0]));
      }
      String stage = stage(key, keys);
      List<String> conditions = new ArrayList<>();
      for (int k = 0; k < key.size(); k++) {
        conditions.add("t." + key.get(k).quoted() + " = s.c" + k);
      }
      MirrorCatalog.exec(
          conn,
          "DELETE FROM "
              + table.quotedName()
              + " AS t USING "
              + stage
              + " AS s WHERE "
              + String.join(" AND ", conditions));
    }

    private void writeDeletes() throws SQLException {
      List<List<String>> keys = new ArrayList<>(deletes);
      List<Column> key = table.key();
      int perStatement = rowsPerStatement(key.size());
      for (int from = 0; from < keys.size(); from += perStatement) {
        List<List<String>> chunk = keys.subList(from, Math.min(keys.size(), from + perStatement));
        String sql =
            "DELETE FROM "
                + table.quotedName()
                + " WHERE ("
                + names(key, "")
                + ") IN (VALUES "
                + tuples(key, chunk.size())
                + ")";
        try (PreparedStatement ps = conn.prepareStatement(sql)) {
          int p = 1;
          for (List<String> k : chunk) {
            for (String v : k) {
              bind(ps, p++, v);
            }
          }
          ps.executeUpdate();
        }
      }
    }

    /**
     * One multi-row {@code UPDATE ... FROM (VALUES ...)} per chunk of rows changing the same
     * columns.
     */
    private void writePartials(List<PartialValues> rows) throws SQLException {
      boolean[] present = rows.get(0).present();
      List<Column> key = table.key();
      List<Integer> set = new ArrayList<>();
      for (int i = 0; i < columns.size(); i++) {
        if (present[i] && columns.get(i).keyOrdinal() == 0) {
          set.add(i);
        }
      }
      if (set.isEmpty()) {
        return; // only key columns, unchanged: nothing to write
      }
      List<Column> carried = new ArrayList<>(key);
      set.forEach(i -> carried.add(columns.get(i)));
      List<String> aliases = new ArrayList<>();
      for (int i = 0; i < carried.size(); i++) {
        aliases.add("c" + i);
      }
      List<String> assignments = new ArrayList<>();
      for (int j = 0; j < set.size(); j++) {
        assignments.add(carried.get(key.size() + j).quoted() + " = v.c" + (key.size() + j));
      }
      List<String> conditions = new ArrayList<>();
      for (int k = 0; k < key.size(); k++) {
        conditions.add("t." + key.get(k).quoted() + " = v.c" + k);
      }
      if (rows.size() >= STAGE_MIN_ROWS) {
        List<String[]> staged = new ArrayList<>(rows.size());
        for (PartialValues row : rows) {
          String[] values = new String[carried.size()];
          int p = 0;
          for (int k : keyPositions) {
            values[p++] = row.values()[k];
          }
          for (int i : set) {
            values[p++] = row.values()[i];
          }
          staged.add(values);
        }
        String stage = stage(carried, staged);
        try (Statement st = conn.createStatement()) {
          int updated =
              st.executeUpdate(
                  "UPDATE "
                      + table.quotedName()
                      + " AS t SET "
                      + String.join(", ", assignments)
                      + " FROM "
                      + stage
                      + " AS v WHERE "
                      + String.join(" AND ", conditions));
          reportMissing(rows.size() - updated, chunked(table));
        }
        return;
      }
      int perStatement = rowsPerStatement(carried.size());
      int missing = 0;
      for (int from = 0; from < rows.size(); from += perStatement) {
        List<PartialValues> chunk = rows.subList(from, Math.min(rows.size(), from + perStatement));
        String sql =
            "UPDATE "
                + table.quotedName()
                + " AS t SET "
                + String.join(", ", assignments)
                + " FROM (VALUES "
                + tuples(carried, chunk.size())
                + ") AS v("
                + String.join(", ", aliases)
                + ") WHERE "
                + String.join(" AND ", conditions);
        try (PreparedStatement ps = conn.prepareStatement(sql)) {
          int p = 1;
          for (PartialValues row : chunk) {
            for (int k : keyPositions) {
              bind(ps, p++, row.values()[k]);
            }
            for (int i : set) {
              bind(ps, p++, row.values()[i]);
            }
          }
          missing += chunk.size() - ps.executeUpdate();
        }
      }
      reportMissing(missing, chunked(table));
    }

    private void reportMissing(int missing, boolean chunked) {
      if (missing > 0 && chunked) {
        // copied in chunks: the row's chunk is not copied yet, and brings the row as it is now
        log.debug(
            "{} updates found no row in target table {}, whose copy in chunks is not finished;"
                + " they were skipped",
            missing,
            table.quotedName());
      } else if (missing > 0) {
        // the target lacks rows the source changed: reported, never invented
        log.warn(
            "{} partial updates found no row in target table {}; they were skipped",
            missing,
            table.quotedName());
      }
    }
  }

  /** Returns {@code "a", "b"}, each name prefixed. */
  private static String names(List<Column> columns, String prefix) {
    return String.join(", ", columns.stream().map(c -> prefix + c.quoted()).toList());
  }

  /** Returns {@code (?::t1, ?::t2), (?::t1, ?::t2)} for {@code rows} rows of the columns. */
  private static String tuples(List<Column> columns, int rows) {
    StringBuilder one = new StringBuilder("(");
    for (int i = 0; i < columns.size(); i++) {
      one.append(i == 0 ? "" : ", ").append("?::").append(columns.get(i).targetType());
    }
    one.append(')');
    StringBuilder all = new StringBuilder();
    for (int r = 0; r < rows; r++) {
      all.append(r == 0 ? "" : ", ").append(one);
    }
    return all.toString();
  }

  // --- finding the row of an UPDATE or DELETE

  /** The columns and values that identify a row, and whether they are the whole row (no key). */
  @SuppressWarnings("ArrayRecordComponent") // a private holder, never compared or hashed
  private record Match(List<Column> columns, String[] values, boolean wholeRow) {}

  private static Match match(
      Table t, ReplicatedTableSchema schema, @Nullable OldRow old, @Nullable UpdatedRow row) {
    List<Column> key = t.key();
    if (old instanceof OldRow.Key oldKey) {
      int[] identity = schema.identityColumnIndexes();
      if (identity.length != oldKey.row().size() || key.isEmpty()) {
        throw MirrorCatalog.identityError(t, "an old key does not match the table's key");
      }
      String[] values = new String[key.size()];
      for (int k = 0; k < key.size(); k++) {
        int pos = indexOfAttnum(schema, identity, key.get(k).attnum());
        if (pos < 0) {
          throw MirrorCatalog.identityError(t, "the old key lacks a key column");
        }
        values[k] = text(t, key.get(k), oldKey.row().get(pos));
      }
      return new Match(key, values, false);
    }
    if (old instanceof OldRow.Full full) {
      if (key.isEmpty()) {
        List<Column> all = columns(t, schema);
        String[] values = new String[all.size()];
        for (int i = 0; i < values.length; i++) {
          values[i] = text(t, all.get(i), full.row().get(i));
        }
        return new Match(all, values, true);
      }
      return keyOf(t, schema, new UpdatedRow.Full(full.row()));
    }
    if (key.isEmpty() || row == null) {
      throw MirrorCatalog.identityError(t, "a change without an old row on a table without a key");
    }
    return keyOf(t, schema, row);
  }

  /** The key values of a new (or old full) row. */
  private static Match keyOf(Table t, ReplicatedTableSchema schema, UpdatedRow row) {
    List<Column> key = t.key();
    String[] values = new String[key.size()];
    for (int k = 0; k < key.size(); k++) {
      int i = schema.indexOf(key.get(k).name());
      if (i < 0 || !row.isPresent(i)) {
        throw MirrorCatalog.identityError(
            t, "a key column is missing from the new row and no old key was sent");
      }
      values[k] = text(t, key.get(k), row.get(i));
    }
    return new Match(key, values, false);
  }

  private static int indexOfAttnum(ReplicatedTableSchema schema, int[] indexes, int attnum) {
    for (int pos = 0; pos < indexes.length; pos++) {
      if (schema.columns().get(indexes[pos]).ordinalPosition() == attnum) {
        return pos;
      }
    }
    return -1;
  }

  private static String where(Table t, List<Column> columns, boolean wholeRow) {
    List<String> conditions = new ArrayList<>();
    for (Column c : columns) {
      conditions.add(
          wholeRow
              ? c.quoted() + "::text IS NOT DISTINCT FROM (?::" + c.targetType() + ")::text"
              : c.quoted() + " = ?::" + c.targetType());
    }
    String all = conditions.isEmpty() ? "TRUE" : String.join(" AND ", conditions);
    return wholeRow
        ? " WHERE ctid = (SELECT ctid FROM " + t.quotedName() + " WHERE " + all + " LIMIT 1)"
        : " WHERE " + all;
  }

  // --- tables without a key: runs and batches, in order

  private void addToRun(Table t, List<Column> columns, String[] values) throws SQLException {
    flushNet();
    flushBatch();
    if (runTable != null && (!runTable.id().equals(t.id()) || !columns.equals(runColumns))) {
      flushRun();
    }
    runTable = t;
    runColumns = columns;
    runRows.add(values);
    if (runRows.size() >= rowsPerStatement(columns.size()) * 4) {
      flushRun();
    }
  }

  private void flushRun() throws SQLException {
    if (runTable == null) {
      return;
    }
    try {
      writeInserts(runTable, Objects.requireNonNull(runColumns), runRows);
    } catch (SQLException e) {
      throw new TableWriteFailure(runTable.quotedName(), e);
    }
    runRows.clear();
    runTable = null;
    runColumns = null;
  }

  /** Inserts rows with multi-row statements; upserts by key when the table has one. */
  private void writeInserts(Table t, List<Column> columns, List<String[]> rows)
      throws SQLException {
    if (columns.isEmpty()) { // a table without columns: rows of no values
      try (PreparedStatement ps =
          conn.prepareStatement(
              "INSERT INTO " + t.quotedName() + " SELECT FROM generate_series(1, ?)")) {
        ps.setInt(1, rows.size());
        ps.executeUpdate();
      }
      return;
    }
    int perStatement = rowsPerStatement(columns.size());
    for (int from = 0; from < rows.size(); from += perStatement) {
      List<String[]> chunk = rows.subList(from, Math.min(rows.size(), from + perStatement));
      try (PreparedStatement ps = conn.prepareStatement(insertSql(t, columns, chunk.size()))) {
        int p = 1;
        for (String[] row : chunk) {
          for (String v : row) {
            bind(ps, p++, v);
          }
        }
        ps.executeUpdate();
      }
    }
  }

  private static int rowsPerStatement(int columns) {
    return Math.max(1, Math.min(MAX_ROWS_PER_STATEMENT, MAX_PARAMETERS / Math.max(1, columns)));
  }

  private static String insertSql(Table t, List<Column> columns, int rows) {
    StringBuilder sql =
        new StringBuilder("INSERT INTO ")
            .append(t.quotedName())
            .append(" (")
            .append(names(columns, ""))
            .append(") VALUES ")
            .append(tuples(columns, rows));
    return sql.append(onConflict(t, columns)).toString();
  }

  /** The upsert clause for a table with a key: the row of a key there is replaced. */
  private static String onConflict(Table t, List<Column> columns) {
    List<Column> key = t.key();
    if (key.isEmpty()) {
      return "";
    }
    List<String> sets = new ArrayList<>();
    for (Column c : columns) {
      if (c.keyOrdinal() == 0) {
        sets.add(c.quoted() + " = EXCLUDED." + c.quoted());
      }
    }
    return " ON CONFLICT ("
        + names(key, "")
        + ")"
        + (sets.isEmpty() ? " DO NOTHING" : " DO UPDATE SET " + String.join(", ", sets));
  }

  private void addToBatch(Table t, String sql, String[] params) throws SQLException {
    flushRun();
    if (batch != null && !sql.equals(batchSql)) {
      flushBatch();
    }
    if (batch == null) {
      batch = conn.prepareStatement(sql);
      batchSql = sql;
      batchTable = t.quotedName();
      batchChunked = t.keyed() && chunked(t);
    }
    for (int i = 0; i < params.length; i++) {
      bind(batch, i + 1, params[i]);
    }
    batch.addBatch();
    if (++batchSize >= MAX_BATCH) {
      flushBatch();
    }
  }

  private void flushBatch() throws SQLException {
    if (batch == null) {
      return;
    }
    try {
      int missing = 0;
      for (int count : batch.executeBatch()) {
        missing += count == 0 ? 1 : 0;
      }
      if (missing > 0 && batchChunked) {
        log.debug(
            "{} updates found no row in target table {}, whose copy in chunks is not finished;"
                + " they were skipped",
            missing,
            batchTable);
      } else if (missing > 0) {
        // the target lacks rows the source changed: reported, never invented
        log.warn(
            "{} updates or deletes found no row in target table {}; they were skipped",
            missing,
            batchTable);
      }
    } catch (SQLException e) {
      throw new TableWriteFailure(String.valueOf(batchTable), e);
    } finally {
      batch.close();
      batch = null;
      batchSql = null;
      batchSize = 0;
    }
  }

  // --- values

  /** {@link #columns(Table, ReplicatedTableSchema)}, remembered for the last pair asked for. */
  @SuppressWarnings("ReferenceEquality") // the same instances: a cheap check, not value equality
  private List<Column> columnsOf(Table t, ReplicatedTableSchema schema) {
    if (t != lastTable || schema != lastSchema) {
      lastColumns = columns(t, schema);
      lastTable = t;
      lastSchema = schema;
    }
    return lastColumns;
  }

  /** The target columns of a schema's columns, in the schema's order. */
  private static List<Column> columns(Table t, ReplicatedTableSchema schema) {
    List<Column> columns = new ArrayList<>(schema.columnCount());
    for (int i = 0; i < schema.columnCount(); i++) {
      columns.add(t.column(schema.columns().get(i).ordinalPosition()));
    }
    return columns;
  }

  /**
   * The text of a value written into a column: for a column outside the key, the text form
   * PostgreSQL sent ({@link TableRow#wireFormat} {@code TEXT}: a change's value) as it is, without
   * decoding it; else {@link #text} of the decoded value. Key values are always formatted from the
   * decoded value, because the fold compares them as text with the key values of old keys and
   * partial rows, which have no wire form.
   */
  private static @Nullable String valueText(Table t, Column c, TableRow row, int i) {
    if (c.keyOrdinal() == 0 && row.wireFormat(i) == WireFormat.TEXT) {
      ByteBuffer wire = Objects.requireNonNull(row.wireValue(i), "a value in wire form");
      byte[] bytes = new byte[wire.remaining()];
      wire.get(bytes);
      return new String(bytes, StandardCharsets.UTF_8);
    }
    return text(t, c, row.get(i));
  }

  private static @Nullable String text(Table t, Column c, @Nullable Object value) {
    try {
      return PgText.format(value);
    } catch (IllegalArgumentException e) {
      throw new EtlException(
          ErrorKind.UNSUPPORTED_VALUE_IN_DESTINATION,
          "column "
              + c.name()
              + " of target table "
              + t.quotedName()
              + " got a value it cannot write",
          e.getMessage());
    }
  }

  private static void bind(PreparedStatement ps, int index, String text) throws SQLException {
    if (text == null) {
      ps.setNull(index, Types.OTHER);
    } else {
      ps.setObject(index, text, Types.OTHER); // untyped: the cast in the SQL decides
    }
  }
}
