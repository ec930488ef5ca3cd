package org.pgetl.destination.duckdb;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import org.duckdb.DuckDBAppender;
import org.duckdb.DuckDBConnection;
import org.jspecify.annotations.Nullable;
import org.pgetl.destination.duckdb.DuckDbCatalog.Column;
import org.pgetl.destination.duckdb.DuckDbCatalog.Table;
import org.pgetl.destination.internal.RowKey;
import org.pgetl.error.ErrorKind;
import org.pgetl.error.EtlException;
import org.pgetl.model.OldRow;
import org.pgetl.model.ReplicatedTableSchema;
import org.pgetl.model.TableName;
import org.pgetl.model.TableRow;
import org.pgetl.model.UpdatedRow;

/**
 * Writes rows into DuckDB tables for {@link DuckDbDestination}: copy batches through the appender,
 * and single-row inserts, updates and deletes through cached prepared statements.
 *
 * <p>Every value is checked against its column type first; a column that cannot hold a value is
 * widened before the SQL is built (see {@link DuckDbType}).
 *
 * <p>How an UPDATE or DELETE finds its row: by the old key when PostgreSQL sent one ({@link
 * OldRow.Key}); else by the table's key columns (replica identity index or primary key) taken from
 * the old full row or, when there is no old row, from the new row; and for a table without any key
 * (REPLICA IDENTITY FULL, no primary key) by the whole old row, changing one matching row.
 */
final class DuckDbRows {
  private static final String STAGING = "temp.main._pgetl_staging";
  private static final int MAX_CACHED_STATEMENTS = 256;

  /** A column (by source attnum) and the value to write to it or match in it. */
  private record Cell(int attnum, @Nullable Object value) {}

  private final Connection conn;
  private final DuckDbCatalog catalog;
  private final Map<String, PreparedStatement> statements = new HashMap<>();
  private long statementsDdlVersion = -1;

  DuckDbRows(Connection conn, DuckDbCatalog catalog) {
    this.conn = conn;
    this.catalog = catalog;
  }

  // --- copy

  /**
   * Upserts a copy batch: the appender fills a temporary staging table, then one {@code INSERT OR
   * REPLACE ... SELECT} moves the rows, so the batch commits with the rest of the transaction. (The
   * appender cannot write INTERVAL columns, so temporal values are staged as text and cast.)
   */
  void copy(Table t, ReplicatedTableSchema schema, List<TableRow> rows) throws SQLException {
    if (schema.columnCount() == 0) { // rows of no values: one placeholder row each
      exec(
          "INSERT INTO "
              + t.quotedName()
              + " ("
              + TableName.quoteIdentifier(DuckDbCatalog.NO_COLUMNS)
              + ") SELECT NULL FROM range("
              + rows.size()
              + ")");
      return;
    }
    List<Column> columns = new ArrayList<>();
    List<String> staging = new ArrayList<>();
    for (int i = 0; i < schema.columnCount(); i++) {
      Column c = t.column(schema.columns().get(i).ordinalPosition());
      for (TableRow row : rows) {
        c = fitted(t, c, row.get(i));
      }
      columns.add(c);
      staging.add("c" + i + " " + DuckDbValues.stagingType(c.type()));
    }
    exec("CREATE OR REPLACE TEMP TABLE _pgetl_staging (" + String.join(", ", staging) + ")");
    DuckDBConnection duck = conn.unwrap(DuckDBConnection.class);
    try (DuckDBAppender appender = duck.createAppender("temp", "main", "_pgetl_staging")) {
      for (TableRow row : rows) {
        appender.beginRow();
        for (int i = 0; i < columns.size(); i++) {
          DuckDbValues.append(appender, columns.get(i).type(), row.get(i));
        }
        appender.endRow();
      }
    }
    List<String> names = new ArrayList<>();
    List<String> values = new ArrayList<>();
    for (int i = 0; i < columns.size(); i++) {
      Column c = columns.get(i);
      names.add(c.quoted());
      values.add(
          DuckDbValues.travelsAsText(c.type())
              ? "CAST(c" + i + " AS " + c.type().sql() + ")"
              : "c" + i);
    }
    exec(
        insertInto(t)
            + " ("
            + String.join(", ", names)
            + ") SELECT "
            + String.join(", ", values)
            + " FROM "
            + STAGING);
    exec("DROP TABLE " + STAGING);
  }

  // --- events

  /** Inserts (or, in a keyed table, replaces) one row. */
  void insert(Table t, ReplicatedTableSchema schema, TableRow row) throws SQLException {
    if (schema.columnCount() == 0) {
      exec("INSERT INTO " + t.quotedName() + " DEFAULT VALUES");
      return;
    }
    List<Cell> cells = new ArrayList<>();
    for (int i = 0; i < schema.columnCount(); i++) {
      cells.add(new Cell(schema.columns().get(i).ordinalPosition(), row.get(i)));
    }
    List<Column> columns = fitted(t, cells);
    List<String> names = new ArrayList<>();
    List<String> placeholders = new ArrayList<>();
    for (Column c : columns) {
      names.add(c.quoted());
      placeholders.add(DuckDbValues.placeholder(c.type()));
    }
    String sql =
        insertInto(t)
            + " ("
            + String.join(", ", names)
            + ") VALUES ("
            + String.join(", ", placeholders)
            + ")";
    execute(sql, columns, cells);
  }

  /**
   * Updates one row, setting only the columns the new row carries: the missing (unchanged TOAST)
   * columns of a partial row keep their current values.
   *
   * @return the number of rows changed (0 when the destination does not hold the row)
   */
  int update(Table t, ReplicatedTableSchema schema, UpdatedRow row, @Nullable OldRow old)
      throws SQLException {
    List<Cell> set = new ArrayList<>();
    for (int i = 0; i < row.columnCount(); i++) {
      if (row.isPresent(i)) {
        set.add(new Cell(schema.columns().get(i).ordinalPosition(), row.get(i)));
      }
    }
    Match match = match(t, schema, old, row);
    if (set.isEmpty()) {
      return 1; // no value to change (a table without columns)
    }
    List<Cell> cells = new ArrayList<>(set);
    cells.addAll(match.cells);
    List<Column> columns = fitted(t, cells);
    List<String> assignments = new ArrayList<>();
    for (int i = 0; i < set.size(); i++) {
      Column c = columns.get(i);
      assignments.add(c.quoted() + " = " + DuckDbValues.placeholder(c.type()));
    }
    String where = match.where(t, columns.subList(set.size(), columns.size()));
    String sql = "UPDATE " + t.quotedName() + " SET " + String.join(", ", assignments) + where;
    return execute(sql, columns, cells);
  }

  /**
   * Tells whether an update moves its row to another key: a key column the new row carries differs
   * from the old key's value. False when no old row came (the key did not change).
   */
  static boolean movesKey(ReplicatedTableSchema schema, UpdatedRow row, @Nullable OldRow old) {
    if (old instanceof OldRow.Key key) {
      int[] identity = schema.identityColumnIndexes();
      for (int k = 0; k < identity.length && k < key.row().size(); k++) {
        if (row.isPresent(identity[k])
            && !Objects.deepEquals(row.get(identity[k]), key.row().get(k))) {
          return true;
        }
      }
    } else if (old instanceof OldRow.Full full) {
      for (int i : RowKey.columns(schema)) {
        if (row.isPresent(i) && !Objects.deepEquals(row.get(i), full.row().get(i))) {
          return true;
        }
      }
    }
    return false;
  }

  /**
   * Deletes the row of the key an update moves a row to, when the row to move is there: in a table
   * copied in chunks, a chunk read after the change may have copied the row under its new key
   * already, and moving the old row onto it would violate the key.
   *
   * @return the number of rows deleted
   */
  int deleteMoveTarget(Table t, ReplicatedTableSchema schema, UpdatedRow row, OldRow old)
      throws SQLException {
    Match from = match(t, schema, old, row);
    List<Cell> to = new ArrayList<>(from.cells.size());
    for (Cell c : from.cells) {
      int i = indexOfAttnum(schema, c.attnum());
      to.add(i >= 0 && row.isPresent(i) ? new Cell(c.attnum(), row.get(i)) : c);
    }
    List<Cell> cells = new ArrayList<>(to);
    cells.addAll(from.cells);
    List<Column> columns = fitted(t, cells);
    Match target = new Match(to, false);
    String sql =
        "DELETE FROM "
            + t.quotedName()
            + target.where(t, columns.subList(0, to.size()))
            + " AND EXISTS (SELECT 1 FROM "
            + t.quotedName()
            + from.where(t, columns.subList(to.size(), columns.size()))
            + ")";
    return execute(sql, columns, cells);
  }

  private static int indexOfAttnum(ReplicatedTableSchema schema, int attnum) {
    for (int i = 0; i < schema.columnCount(); i++) {
      if (schema.columns().get(i).ordinalPosition() == attnum) {
        return i;
      }
    }
    return -1;
  }

  /**
   * Deletes one row.
   *
   * @return the number of rows deleted
   */
  int delete(Table t, ReplicatedTableSchema schema, OldRow old) throws SQLException {
    Match match = match(t, schema, old, null);
    List<Column> columns = fitted(t, match.cells);
    return execute("DELETE FROM " + t.quotedName() + match.where(t, columns), columns, match.cells);
  }

  /** Deletes every row. */
  void truncate(Table t) throws SQLException {
    exec("DELETE FROM " + t.quotedName());
  }

  // --- finding the row of an UPDATE or DELETE

  /** The cells that identify a row, and whether they are the whole row (no key). */
  private record Match(List<Cell> cells, boolean wholeRow) {
    String where(Table t, List<Column> columns) {
      List<String> conditions = new ArrayList<>();
      for (Column c : columns) {
        String op = wholeRow ? " IS NOT DISTINCT FROM " : " = ";
        conditions.add(c.quoted() + op + DuckDbValues.placeholder(c.type()));
      }
      String all = conditions.isEmpty() ? "TRUE" : String.join(" AND ", conditions);
      return wholeRow
          ? " WHERE rowid = (SELECT rowid FROM " + t.quotedName() + " WHERE " + all + " LIMIT 1)"
          : " WHERE " + all;
    }
  }

  private static Match match(
      Table t, ReplicatedTableSchema schema, @Nullable OldRow old, @Nullable UpdatedRow row) {
    List<Cell> cells = new ArrayList<>();
    if (old instanceof OldRow.Key key) {
      int[] identity = schema.identityColumnIndexes();
      if (identity.length != key.row().size()) {
        throw identityError(t, "an old key does not match the table's replica identity");
      }
      for (int k = 0; k < identity.length; k++) {
        cells.add(new Cell(schema.columns().get(identity[k]).ordinalPosition(), key.row().get(k)));
      }
      return new Match(cells, false);
    }
    int[] key = RowKey.columns(schema);
    if (old instanceof OldRow.Full full) {
      boolean wholeRow = key.length == 0;
      for (int i : wholeRow ? allColumns(schema) : key) {
        cells.add(new Cell(schema.columns().get(i).ordinalPosition(), full.row().get(i)));
      }
      return new Match(cells, wholeRow);
    }
    if (key.length == 0 || row == null) {
      throw identityError(t, "a change without an old row on a table without a key");
    }
    for (int i : key) {
      if (!row.isPresent(i)) {
        throw identityError(t, "a key column is missing from the new row and no old key was sent");
      }
      cells.add(new Cell(schema.columns().get(i).ordinalPosition(), row.get(i)));
    }
    return new Match(cells, false);
  }

  private static int[] allColumns(ReplicatedTableSchema schema) {
    return java.util.stream.IntStream.range(0, schema.columnCount()).toArray();
  }

  private static EtlException identityError(Table t, String what) {
    return new EtlException(
        ErrorKind.SOURCE_REPLICA_IDENTITY_ERROR,
        "cannot find the row to change in DuckDB table " + t.quotedName() + ": " + what,
        "give the source table a primary key or REPLICA IDENTITY FULL, then reset the table");
  }

  // --- helpers

  private String insertInto(Table t) {
    return (t.keyed() ? "INSERT OR REPLACE INTO " : "INSERT INTO ") + t.quotedName();
  }

  /** Returns the column of each cell, widening any whose type cannot hold the cell's value. */
  private List<Column> fitted(Table t, List<Cell> cells) throws SQLException {
    List<Column> columns = new ArrayList<>(cells.size());
    for (Cell cell : cells) {
      columns.add(fitted(t, t.column(cell.attnum()), cell.value()));
    }
    // a column widened for a later cell must be VARCHAR for an earlier cell too
    columns.replaceAll(c -> t.column(c.attnum()));
    return columns;
  }

  private Column fitted(Table t, Column c, @Nullable Object value) throws SQLException {
    return value == null || c.type().fits(value) ? c : catalog.widen(t, c);
  }

  private int execute(String sql, List<Column> columns, List<Cell> cells) throws SQLException {
    PreparedStatement ps = prepare(sql);
    for (int i = 0; i < cells.size(); i++) {
      DuckDbValues.bind(ps, i + 1, columns.get(i).type(), cells.get(i).value());
    }
    return ps.executeUpdate();
  }

  private PreparedStatement prepare(String sql) throws SQLException {
    if (statementsDdlVersion != catalog.ddlVersion()
        || statements.size() >= MAX_CACHED_STATEMENTS) {
      closeStatements(); // a schema change may leave cached plans stale
      statementsDdlVersion = catalog.ddlVersion();
    }
    PreparedStatement ps = statements.get(sql);
    if (ps == null) {
      ps = conn.prepareStatement(sql);
      statements.put(sql, ps);
    }
    return ps;
  }

  /** Closes the cached prepared statements. */
  void closeStatements() {
    for (PreparedStatement ps : statements.values()) {
      try {
        ps.close();
      } catch (SQLException e) {
        // closing a statement of a connection that is going away: nothing to do
      }
    }
    statements.clear();
  }

  private void exec(String sql) throws SQLException {
    try (Statement s = conn.createStatement()) {
      s.execute(sql);
    }
  }
}
