package org.pgetl.examples.destination;

import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.sql.Types;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.pgetl.error.ErrorKind;
import org.pgetl.error.EtlException;
import org.pgetl.examples.destination.MirrorCatalog.Column;
import org.pgetl.examples.destination.MirrorCatalog.Table;
import org.pgetl.model.OldRow;
import org.pgetl.model.ReplicatedTableSchema;
import org.pgetl.model.TableRow;
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
 * <p>Every value travels as text: {@link org.pgetl.model.PgText#format} gives the form the server's
 * input function reads back to the same value, bound as an untyped parameter and cast to the
 * column's type ({@code ?::numeric(12,2)}).
 *
 * <p>Changes are grouped without reordering what must stay ordered: consecutive inserts and full
 * updates of one table become one multi-row {@code INSERT ... ON CONFLICT (key) DO UPDATE} (a key
 * seen twice in the run keeps its last row, which is what applying both in order gives), and
 * consecutive statements of the same shape (partial updates, deletes) run as one JDBC batch. Any
 * other change first flushes what is pending.
 *
 * <p>How an UPDATE or DELETE finds its row: by the target table's key, whose old values come from
 * the old key ({@link OldRow.Key}), the old full row, or — when PostgreSQL sent no old row because
 * the key did not change — the new row. A table without a key (REPLICA IDENTITY FULL, no primary
 * key) matches the whole old row, comparing text forms (so that {@code json} and other types
 * without an equality operator match too), and changes one matching row.
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
      return (SQLException) getCause();
    }
  }

  private final Connection conn;

  // the pending run of rows for one table: upserts by key, or plain inserts when it has no key
  private Table runTable;
  private List<Column> runColumns;
  private final Map<List<String>, String[]> runRows = new LinkedHashMap<>();
  private final List<String[]> runPlain = new ArrayList<>();

  // the pending JDBC batch of one statement
  private String batchSql;
  private PreparedStatement batch;
  private int batchSize;
  private String batchTable;

  MirrorRows(Connection conn) {
    this.conn = conn;
  }

  // --- copy

  /**
   * Writes a copy batch with {@code COPY ... FROM STDIN} (text format). A copy attempt writes each
   * row once into a table that {@code dropTableForCopy} emptied, so no upsert is needed; a batch
   * delivered again is skipped by its id before this is called.
   */
  static void copy(Connection conn, Table t, ReplicatedTableSchema schema, List<TableRow> rows)
      throws SQLException {
    List<Column> columns = columns(t, schema);
    List<String> names = columns.stream().map(Column::quoted).toList();
    String sql = "COPY " + t.quotedName() + " (" + String.join(", ", names) + ") FROM STDIN";
    try {
      copyIn(conn, t, columns, sql, rows);
    } catch (SQLException e) {
      throw new TableWriteFailure(t.quotedName(), e);
    }
  }

  private static void copyIn(
      Connection conn, Table t, List<Column> columns, String sql, List<TableRow> rows)
      throws SQLException {
    CopyIn in = conn.unwrap(PGConnection.class).getCopyAPI().copyIn(sql);
    try {
      StringBuilder sb = new StringBuilder(Math.min(COPY_CHUNK + 4096, rows.size() * 64));
      for (TableRow row : rows) {
        for (int i = 0; i < columns.size(); i++) {
          if (i > 0) {
            sb.append('\t');
          }
          Object v = row.get(i);
          if (v == null) {
            sb.append("\\N");
          } else {
            appendCopyEscaped(sb, text(t, columns.get(i), v));
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

  /** Escapes a value for COPY's text format: backslash, tab, newline and carriage return. */
  private static void appendCopyEscaped(StringBuilder sb, String s) {
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

  // --- changes

  /** Inserts a row; in a table with a key, replaces the row of that key if there is one. */
  void insert(Table t, ReplicatedTableSchema schema, TableRow row) throws SQLException {
    List<Column> columns = columns(t, schema);
    String[] values = new String[columns.size()];
    for (int i = 0; i < values.length; i++) {
      values[i] = text(t, columns.get(i), row.get(i));
    }
    addToRun(t, columns, values);
  }

  /**
   * Updates one row. A full row whose key did not change is upserted; one whose key changed
   * replaces the row of the old key; a partial row sets the columns it carries only, so that the
   * missing (unchanged TOAST) columns keep their current values.
   */
  void update(Table t, ReplicatedTableSchema schema, UpdatedRow row, OldRow old)
      throws SQLException {
    List<Column> columns = columns(t, schema);
    Match match = match(t, schema, old, row);
    if (row instanceof UpdatedRow.Full full && !match.wholeRow()) {
      Match newKey = keyOf(t, schema, row);
      if (!Arrays.equals(match.values(), newKey.values())) {
        delete(t, match);
      }
      insert(t, schema, full.row());
      return;
    }
    List<Column> set = new ArrayList<>();
    List<String> values = new ArrayList<>();
    for (int i = 0; i < columns.size(); i++) {
      if (row.isPresent(i)) {
        set.add(columns.get(i));
        values.add(text(t, columns.get(i), row.get(i)));
      }
    }
    List<String> assignments = new ArrayList<>();
    for (Column c : set) {
      assignments.add(c.quoted() + " = ?::" + c.targetType());
    }
    String sql =
        "UPDATE "
            + t.quotedName()
            + " SET "
            + String.join(", ", assignments)
            + where(t, match.columns(), match.wholeRow());
    values.addAll(Arrays.asList(match.values()));
    addToBatch(t, sql, values.toArray(new String[0]));
  }

  /** Deletes one row. */
  void delete(Table t, ReplicatedTableSchema schema, OldRow old) throws SQLException {
    delete(t, match(t, schema, old, null));
  }

  private void delete(Table t, Match match) throws SQLException {
    String sql = "DELETE FROM " + t.quotedName() + where(t, match.columns(), match.wholeRow());
    addToBatch(t, sql, match.values());
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
    flushRun();
    flushBatch();
  }

  // --- finding the row of an UPDATE or DELETE

  /** The columns and values that identify a row, and whether they are the whole row (no key). */
  private record Match(List<Column> columns, String[] values, boolean wholeRow) {}

  private static Match match(Table t, ReplicatedTableSchema schema, OldRow old, UpdatedRow row) {
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
    String all = String.join(" AND ", conditions);
    return wholeRow
        ? " WHERE ctid = (SELECT ctid FROM " + t.quotedName() + " WHERE " + all + " LIMIT 1)"
        : " WHERE " + all;
  }

  // --- runs and batches

  private void addToRun(Table t, List<Column> columns, String[] values) throws SQLException {
    flushBatch();
    if (runTable != null && (!runTable.id().equals(t.id()) || !runColumns.equals(columns))) {
      flushRun();
    }
    runTable = t;
    runColumns = columns;
    List<Column> key = t.key();
    if (key.isEmpty()) {
      runPlain.add(values);
    } else {
      List<String> k = new ArrayList<>(key.size());
      for (Column c : key) {
        k.add(values[columns.indexOf(c)]);
      }
      runRows.put(k, values);
    }
    if (runRows.size() + runPlain.size() >= rowsPerStatement(columns.size()) * 4) {
      flushRun();
    }
  }

  private void flushRun() throws SQLException {
    if (runTable == null) {
      return;
    }
    List<String[]> rows = runPlain.isEmpty() ? new ArrayList<>(runRows.values()) : runPlain;
    int perStatement = rowsPerStatement(runColumns.size());
    for (int from = 0; from < rows.size(); from += perStatement) {
      List<String[]> chunk = rows.subList(from, Math.min(rows.size(), from + perStatement));
      try (PreparedStatement ps = conn.prepareStatement(insertSql(runTable, runColumns, chunk))) {
        int p = 1;
        for (String[] row : chunk) {
          for (String v : row) {
            bind(ps, p++, v);
          }
        }
        ps.executeUpdate();
      } catch (SQLException e) {
        throw new TableWriteFailure(runTable.quotedName(), e);
      }
    }
    runRows.clear();
    runPlain.clear();
    runTable = null;
    runColumns = null;
  }

  private static int rowsPerStatement(int columns) {
    return Math.max(1, Math.min(MAX_ROWS_PER_STATEMENT, MAX_PARAMETERS / Math.max(1, columns)));
  }

  private static String insertSql(Table t, List<Column> columns, List<String[]> rows) {
    StringBuilder one = new StringBuilder("(");
    for (int i = 0; i < columns.size(); i++) {
      one.append(i == 0 ? "" : ", ").append("?::").append(columns.get(i).targetType());
    }
    one.append(')');
    StringBuilder sql = new StringBuilder("INSERT INTO ").append(t.quotedName()).append(" (");
    for (int i = 0; i < columns.size(); i++) {
      sql.append(i == 0 ? "" : ", ").append(columns.get(i).quoted());
    }
    sql.append(") VALUES ");
    for (int r = 0; r < rows.size(); r++) {
      sql.append(r == 0 ? "" : ", ").append(one);
    }
    List<Column> key = t.key();
    if (!key.isEmpty()) {
      sql.append(" ON CONFLICT (")
          .append(String.join(", ", key.stream().map(Column::quoted).toList()))
          .append(')');
      List<String> sets = new ArrayList<>();
      for (Column c : columns) {
        if (c.keyOrdinal() == 0) {
          sets.add(c.quoted() + " = EXCLUDED." + c.quoted());
        }
      }
      sql.append(sets.isEmpty() ? " DO NOTHING" : " DO UPDATE SET " + String.join(", ", sets));
    }
    return sql.toString();
  }

  private void addToBatch(Table t, String sql, String[] params) throws SQLException {
    flushRun();
    if (batch != null && !batchSql.equals(sql)) {
      flushBatch();
    }
    if (batch == null) {
      batch = conn.prepareStatement(sql);
      batchSql = sql;
      batchTable = t.quotedName();
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
      if (missing > 0) {
        // the target lacks rows the source changed: reported, never invented
        log.warn(
            "{} updates or deletes found no row in target table {}; they were skipped",
            missing,
            batchTable);
      }
    } catch (SQLException e) {
      throw new TableWriteFailure(batchTable, e);
    } finally {
      batch.close();
      batch = null;
      batchSql = null;
      batchSize = 0;
    }
  }

  // --- values

  /** The target columns of a schema's columns, in the schema's order. */
  private static List<Column> columns(Table t, ReplicatedTableSchema schema) {
    List<Column> columns = new ArrayList<>(schema.columnCount());
    for (int i = 0; i < schema.columnCount(); i++) {
      columns.add(t.column(schema.columns().get(i).ordinalPosition()));
    }
    return columns;
  }

  private static String text(Table t, Column c, Object value) {
    try {
      return org.pgetl.model.PgText.format(value);
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
