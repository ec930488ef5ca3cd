package org.pgetl.destination.duckdb;

import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.UUID;
import org.jspecify.annotations.Nullable;
import org.pgetl.destination.AsyncResult;
import org.pgetl.destination.Destination;
import org.pgetl.destination.DestinationContext;
import org.pgetl.destination.DestinationTableMetadataStore;
import org.pgetl.destination.StreamId;
import org.pgetl.destination.TableCopyWrite;
import org.pgetl.destination.WriteDurability;
import org.pgetl.destination.duckdb.DuckDbCatalog.Table;
import org.pgetl.destination.internal.CopyFinish;
import org.pgetl.destination.internal.ErrorText;
import org.pgetl.destination.internal.SerialWriter;
import org.pgetl.error.ErrorKind;
import org.pgetl.error.EtlException;
import org.pgetl.model.Event;
import org.pgetl.model.OldRow;
import org.pgetl.model.ReplicatedTableSchema;
import org.pgetl.model.TableRow;
import org.pgetl.model.UpdatedRow;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A destination that mirrors every replicated table into a DuckDB database file, exactly once
 * across restarts.
 *
 * <h2>Tables</h2>
 *
 * Each source table {@code s.t} becomes the DuckDB table {@code "s"."t"} (a DuckDB schema per
 * source schema), with the source's primary key as its primary key. Column types: integers, floats,
 * bool, text types, date, time, timetz, timestamp, timestamptz, interval and uuid map to their
 * DuckDB counterparts, bytea to BLOB, json and jsonb to JSON, {@code numeric(p,s)} with {@code p <=
 * 38} to {@code DECIMAL(p,s)}, one-dimensional arrays of scalar types to LISTs, and everything else
 * (unconstrained numeric, other arrays, geometric and user types) to VARCHAR holding PostgreSQL's
 * text form. A value the column type cannot hold exactly ({@code NaN} in a {@code numeric(10,2)}
 * column, a timestamp after DuckDB's year 294247, a two-dimensional array in a LIST column) is
 * never rounded or dropped: its column becomes VARCHAR in PostgreSQL's text form, old values
 * included (the details are in {@code DuckDbType}). Tables follow the source table's oid, never its
 * name: a table renamed in the source ({@code ALTER TABLE ... RENAME}, {@code SET SCHEMA}, {@code
 * ALTER SCHEMA ... RENAME}) is renamed in DuckDB with the next event that carries its new name, and
 * a new table that takes a name another table still holds parks that table as {@code
 * _pgetl_parked_<oid>} (see {@code DuckDbCatalog}). A source table without columns ({@code CREATE
 * TABLE t ()}) keeps its rows of no values in a table with one always-NULL column, {@code
 * _pgetl_no_columns}, since DuckDB has no table without columns. Schema changes ({@code Relation}
 * events, or any event that carries a new schema) are applied before the next row: columns are
 * matched by attnum, so dropped, renamed, retyped and added columns are followed. Bookkeeping lives
 * in the schema {@code _pgetl} of the same file (see {@link DuckDbCatalog}); user logical messages
 * are kept in {@code _pgetl.messages}.
 *
 * <h2>Idempotency</h2>
 *
 * Delivery is at-least-once, so every write is made safe to repeat, and each write call is one
 * DuckDB transaction that commits the rows together with the bookkeeping that says they are there
 * (a write that changes the schema of an existing table commits what comes before the change first,
 * with its bookkeeping; see {@code commitSoFar}):
 *
 * <ul>
 *   <li>Copy: {@code _pgetl.copy_attempts} holds each table's current copy attempt, written in the
 *       transaction of the drop that names it; a batch of another attempt (a late batch of an
 *       abandoned attempt) is answered {@code durable()} and skipped. {@code _pgetl.copy_batches}
 *       holds the id of every batch stored by the current attempt; a batch delivered again is
 *       skipped. Rows are upserted by primary key. The {@code Finish} barrier of the current
 *       attempt checks that every batch it counts is stored and marks the attempt finished (with
 *       its batch and row counts); a {@code Finish} of another attempt changes nothing, and a write
 *       of another attempt's catch-up stream is answered {@code durable()} and skipped.
 *   <li>Events: {@code _pgetl.tables.applied_through} holds, per table, the greatest {@link
 *       org.pgetl.model.EventSequenceKey} applied. The engine preserves each table's event order,
 *       so an event at or below it was applied before a restart and is skipped. A {@code Relation}
 *       event shares the key of the change it precedes: it is applied when that change is new, and
 *       does not move {@code applied_through} itself.
 *   <li>{@link #dropTableForCopy}: drops the table, forgets its batch ids and {@code
 *       applied_through}, and records the new attempt, so that it starts clean.
 * </ul>
 *
 * <h2>Tables copied in chunks</h2>
 *
 * The destination supports the chunked copy of large tables ({@link #supportsChunkedCopy()}): the
 * table's changes are applied while its chunks are copied. A table whose copy attempt is open
 * (named by a drop, its {@code Finish} not come yet) and gets changes is such a table, and until
 * its {@code Finish} its changes follow the chunked copy's rules: inserts and copied rows replace
 * the row of their key (as always: both are upserts); an update or delete of a key the table does
 * not hold changes nothing (a later chunk or change brings the row), except that an update that
 * moves a row to another key and carries every value writes the row under its new key; a row moving
 * onto a key a chunk already copied replaces that row. Each {@code ChunkEnd} checks that the
 * batches of its read are stored and is recorded in {@code _pgetl.copy_chunks}; the {@code Finish}
 * of an attempt with chunks relies on those checks instead of counting batches {@code
 * 0..batches-1}. The open attempt is kept in the file, so a restarted pipeline continues it. After
 * the {@code Finish}, an update of a missing row is handled as for any table again.
 *
 * <h2>Threads and answers</h2>
 *
 * DuckDB allows one writer, so every call is queued to one writer thread ({@code
 * pgetl-duckdb-<pipeline>}) that owns the connection; the methods return at once. Creating schemas
 * and tables is serialized with everything else, so tables copied at once never race to create
 * their schema. The thread answers {@code durable()} after the transaction commits (a write is
 * never left merely "accepted"), and {@code fail(EtlException)} with a {@code DESTINATION_*} kind
 * when it rolls back. An empty {@code REQUIRE_DURABLE} barrier is answered once the writes queued
 * before it are committed. Since every answer is {@code durable()}, nothing is deferred and nothing
 * is kept per {@code StreamId}. {@link #shutdown()} lets the running write commit, answers the
 * writes still queued with {@code shutdown()} (they are delivered again at the next start), then
 * closes the connection.
 *
 * <p>Every table is named with the file's catalog ({@code "shop"."public"."orders"} in {@code
 * shop.duckdb}): a source schema named like the file would otherwise be ambiguous.
 */
public final class DuckDbDestination implements Destination {
  private static final Logger log = LoggerFactory.getLogger(DuckDbDestination.class);

  /** How long {@link #shutdown()} waits for the running write; a DuckDB commit is quick. */
  private static final Duration SHUTDOWN_WAIT = Duration.ofSeconds(60);

  /** A unit of work on the connection. */
  private interface SqlWork {
    void run() throws SQLException;
  }

  private final Path file;
  private Connection conn;
  private DuckDbCatalog catalog;
  private DuckDbRows rows;
  private DestinationTableMetadataStore metadata;
  private volatile SerialWriter writer;

  /**
   * Creates a destination that writes into a DuckDB file, created when missing. Nothing is opened
   * before {@link #startup}.
   *
   * @param file the database file
   */
  public DuckDbDestination(Path file) {
    this.file = Objects.requireNonNull(file, "file").toAbsolutePath();
  }

  /**
   * Returns {@code duckdb}.
   *
   * @return the name
   */
  @Override
  public String name() {
    return "duckdb";
  }

  /**
   * Opens the file, creates the bookkeeping tables if needed, reads what earlier runs stored, and
   * records each existing table's {@link
   * org.pgetl.destination.DestinationTableMetadataStore.TableMetadata}.
   *
   * @param context the pipeline's context
   * @throws EtlException ({@code DESTINATION_CONNECTION_FAILED}) when the file cannot be opened
   */
  @Override
  public void startup(DestinationContext context) {
    metadata = context.tableMetadata();
    try {
      conn = DriverManager.getConnection("jdbc:duckdb:" + file);
      try (Statement s = conn.createStatement()) {
        s.execute("SET TimeZone = 'UTC'"); // timestamptz as text is always UTC
      }
      catalog = new DuckDbCatalog(conn);
      catalog.createMetadataTables();
      catalog.load();
    } catch (SQLException e) {
      throw new EtlException(
          ErrorKind.DESTINATION_CONNECTION_FAILED,
          "cannot open DuckDB file " + file,
          firstLine(e),
          e);
    }
    rows = new DuckDbRows(conn, catalog);
    for (Table t : catalog.tables()) {
      catalog.announce(t, true, metadata);
    }
    writer = new SerialWriter("pgetl-duckdb-" + context.pipelineId(), this::unexpected);
  }

  /**
   * Drops the table and its bookkeeping (batch ids, applied sequence key) and records {@code
   * attemptId} as the table's current copy attempt, in one transaction.
   *
   * @param table the table to drop
   * @param attemptId the copy attempt that follows
   * @param result answered {@code durable()} after the commit
   */
  @Override
  public void dropTableForCopy(ReplicatedTableSchema table, UUID attemptId, AsyncResult result) {
    Objects.requireNonNull(attemptId, "attemptId");
    submit(
        result,
        "drop table " + table.name() + " for a new copy",
        () -> {
          catalog.drop(table.id());
          catalog.startAttempt(table.id(), attemptId);
        });
  }

  /**
   * Stores a copy batch (skipped when its id was stored before, or when it belongs to an attempt
   * that a later drop abandoned), or ends the current attempt at its {@code Finish} barrier:
   * creates the table if the copy had no rows, checks that every batch it counts is stored, and
   * marks the attempt complete.
   *
   * @param table the table's schema
   * @param write the batch or the barrier
   * @param result answered {@code durable()} after the commit
   */
  @Override
  public void writeTableRows(
      ReplicatedTableSchema table, TableCopyWrite write, AsyncResult result) {
    if (write instanceof TableCopyWrite.Batch batch) {
      submit(
          result,
          "copy batch " + batch.id() + " of table " + table.name(),
          () -> copyBatch(table, batch));
    } else if (write instanceof TableCopyWrite.ChunkEnd end) {
      submit(
          result,
          "end chunk " + end.chunk() + " of the copy of table " + table.name(),
          () -> chunkEnd(table, end));
    } else {
      TableCopyWrite.Finish finish = (TableCopyWrite.Finish) write;
      submit(result, "finish the copy of table " + table.name(), () -> finish(table, finish));
    }
  }

  /**
   * Returns true: a large table may be copied in chunks while its changes are applied (see "Tables
   * copied in chunks" above).
   *
   * @return true
   */
  @Override
  public boolean supportsChunkedCopy() {
    return true;
  }

  /**
   * Applies a batch of events in one transaction, skipping those applied before.
   *
   * @param events the events, in stream order
   * @param durability ignored: every answer is {@code durable()}
   * @param result answered {@code durable()} after the commit
   */
  @Override
  public void writeEvents(
      StreamId stream, List<Event> events, WriteDurability durability, AsyncResult result) {
    if (events.isEmpty()) {
      submit(result, "durability barrier", () -> {}); // answered after the writes before it
      return;
    }
    String what =
        "events "
            + events.get(0).sequenceKey()
            + " to "
            + events.get(events.size() - 1).sequenceKey();
    submit(
        result,
        what,
        () -> {
          if (isStale(stream)) {
            log.debug("{} of abandoned catch-up stream {}: skipped", what, stream);
            return; // its copy attempt was abandoned by a later drop: nothing of it is applied
          }
          applyEvents(events);
        });
  }

  /**
   * Lets the running write commit, answers queued writes {@code shutdown()}, and closes the
   * connection.
   */
  @Override
  public void shutdown() {
    if (writer == null) {
      return; // never started
    }
    if (!writer.close(SHUTDOWN_WAIT)) {
      log.warn("duckdb file {} left open: a write did not finish in {}", file, SHUTDOWN_WAIT);
      return;
    }
    rows.closeStatements();
    try {
      conn.close();
    } catch (SQLException e) {
      throw new EtlException(
          ErrorKind.DESTINATION_ERROR, "closing DuckDB file " + file + " failed", firstLine(e), e);
    }
  }

  // --- the writes, each run on the writer thread inside one transaction

  private void copyBatch(ReplicatedTableSchema schema, TableCopyWrite.Batch batch)
      throws SQLException {
    UUID current = catalog.currentAttempt(schema.id());
    if (CopyFinish.isAbandoned(current, batch.id().attemptId())) {
      log.debug(
          "copy batch {} of table {} belongs to an abandoned attempt (the current one is {}):"
              + " skipped",
          batch.id(),
          schema.name(),
          current);
      return;
    }
    if (catalog.hasCopyBatch(schema.id(), batch.id())) {
      log.debug("copy batch {} of table {} was stored before: skipped", batch.id(), schema.name());
      return;
    }
    Table t = catalog.ensure(schema, metadata);
    rows.copy(t, schema, batch.rows());
    catalog.recordCopyBatch(schema.id(), batch.id());
  }

  private void finish(ReplicatedTableSchema schema, TableCopyWrite.Finish finish)
      throws SQLException {
    UUID current = catalog.currentAttempt(schema.id());
    if (CopyFinish.isAbandoned(current, finish.attemptId())) {
      log.debug(
          "copy Finish of table {} ends abandoned attempt {} (the current one is {}): ignored",
          schema.name(),
          finish.attemptId(),
          current);
      return;
    }
    catalog.ensure(schema, metadata);
    if (current == null) {
      return; // no drop recorded (a file written before attempts were kept): nothing to check
    }
    // a copy in chunks numbers its batches by chunk read, and each ChunkEnd checked its read's
    boolean chunked = catalog.hasChunks(schema.id(), current);
    long stored = catalog.finishAttempt(schema.id(), finish);
    if (!chunked) {
      CopyFinish.requireAllBatches(schema.name(), finish, stored, "DuckDB file " + file, "file");
    }
  }

  private void chunkEnd(ReplicatedTableSchema schema, TableCopyWrite.ChunkEnd end)
      throws SQLException {
    UUID current = catalog.currentAttempt(schema.id());
    if (CopyFinish.isAbandoned(current, end.attemptId())) {
      log.debug(
          "copy ChunkEnd {} of table {} belongs to abandoned attempt {} (the current one is {}):"
              + " ignored",
          end.chunk(),
          schema.name(),
          end.attemptId(),
          current);
      return;
    }
    long stored = catalog.storedBatchesOf(schema.id(), end);
    CopyFinish.requireAllBatches(schema.name(), end, stored, "DuckDB file " + file, "file");
    catalog.recordChunkEnd(schema.id(), end);
  }

  /** Tells whether a write comes from the catch-up stream of an attempt a later drop abandoned. */
  private boolean isStale(StreamId stream) {
    if (stream.kind() != StreamId.Kind.TABLE_SYNC) {
      return false;
    }
    UUID current =
        catalog.currentAttempt(
            Objects.requireNonNull(stream.table(), "a table-sync stream names its table"));
    return current != null && !current.equals(stream.copyAttempt());
  }

  private void applyEvents(List<Event> events) throws SQLException {
    Set<Table> touched = new LinkedHashSet<>();
    InsertRun inserts = new InsertRun();
    for (Event e : events) {
      if (!inserts.continuedBy(e)) {
        inserts.flush(); // keeps the order of changes: the run is written before anything else
      }
      switch (e.kind()) {
        case BEGIN, COMMIT -> {} // transaction boundaries: nothing to store
        case MESSAGE -> catalog.recordMessage((Event.Message) e);
        case TRUNCATE -> {
          for (ReplicatedTableSchema schema : ((Event.Truncate) e).tables()) {
            Table t = claim(schema, e, touched, inserts, true);
            if (t != null) {
              rows.truncate(t);
            }
          }
        }
        case RELATION -> // claim() applies the schema
            claim(((Event.Relation) e).table(), e, touched, inserts, false);
        case INSERT -> {
          Event.Insert insert = (Event.Insert) e;
          Table t = claim(insert.table(), e, touched, inserts, true);
          if (t != null) {
            inserts.add(t, insert);
          }
        }
        case UPDATE, DELETE -> {
          ReplicatedTableSchema schema =
              Objects.requireNonNull(e.table(), "an update or a delete names its table");
          Table t = claim(schema, e, touched, inserts, true);
          if (t != null) {
            applyRowEvent(t, e);
          }
        }
      }
    }
    inserts.flush();
    for (Table t : touched) {
      catalog.saveAppliedThrough(t);
    }
  }

  /**
   * Commits what the write applied so far, with its {@code applied_through} keys, and opens a new
   * transaction. Used before a schema change of an existing table: DuckDB (1.5) can fail a later
   * update with a false "Duplicate key" when one transaction both alters a table and updates a row
   * of it twice. Committing in two steps is safe: the keys committed with the first step make a
   * replay after a failure of the second skip the first.
   */
  private void commitSoFar(Set<Table> touched, InsertRun inserts) throws SQLException {
    inserts.flush();
    for (Table done : touched) {
      catalog.saveAppliedThrough(done);
    }
    exec("COMMIT");
    catalog.announceChanged(metadata);
    exec("BEGIN TRANSACTION");
  }

  /**
   * Consecutive inserts into one table with one schema (across transaction boundaries), written
   * together the way a copy batch is: DuckDB spends about a millisecond on each single-row insert
   * into a table with a primary key, and far less per row on one INSERT of many rows.
   */
  private final class InsertRun {
    private @Nullable Table table;
    private @Nullable ReplicatedTableSchema schema;
    private final List<TableRow> pending = new ArrayList<>();

    /** Whether the run may stay pending over this event: it changes no table row, or extends it. */
    boolean continuedBy(Event e) {
      return switch (e.kind()) {
        case BEGIN, COMMIT, MESSAGE -> true;
        case INSERT -> schema == null || ((Event.Insert) e).table().equals(schema);
        default -> false;
      };
    }

    void add(Table t, Event.Insert insert) {
      table = t;
      schema = insert.table();
      pending.add(insert.row());
    }

    void flush() throws SQLException {
      if (!pending.isEmpty()) {
        // add() sets both before the first row
        Table t = Objects.requireNonNull(table, "table");
        ReplicatedTableSchema s = Objects.requireNonNull(schema, "schema");
        if (pending.size() == 1) {
          rows.insert(t, s, pending.get(0));
        } else {
          rows.copy(t, s, pending);
        }
      }
      pending.clear();
      schema = null;
    }
  }

  /**
   * Returns the table an event applies to, with its schema brought up to date, or null when the
   * event was applied before (its sequence key is not above the table's {@code applied_through}).
   *
   * @param advances whether the event moves {@code applied_through}: a Relation does not, because
   *     it shares the sequence key of the change it precedes, which must still be applied
   */
  private @Nullable Table claim(
      ReplicatedTableSchema schema,
      Event e,
      Set<Table> touched,
      InsertRun inserts,
      boolean advances)
      throws SQLException {
    Table known = catalog.find(schema.id());
    if (known != null
        && known.appliedThrough != null
        && e.sequenceKey().compareTo(known.appliedThrough) <= 0) {
      return null;
    }
    if (known != null && !catalog.isCurrent(schema)) {
      commitSoFar(touched, inserts); // the schema change starts a transaction of its own
    }
    Table t = catalog.ensure(schema, metadata);
    if (advances) {
      t.appliedThrough = e.sequenceKey();
      touched.add(t);
    }
    return t;
  }

  private void applyRowEvent(Table t, Event e) throws SQLException {
    if (e instanceof Event.Update u) {
      if (t.keyed() && catalog.copyOpen(t.id)) {
        applyUpdateWhileCopied(t, u);
      } else if (rows.update(t, u.table(), u.row(), u.oldRow()) == 0) {
        updateOfMissingRow(t, u);
      }
    } else if (e instanceof Event.Delete d) {
      rows.delete(t, d.table(), d.oldRow());
    }
  }

  /**
   * Applies an update to a table copied in chunks, which holds only some of its rows until its copy
   * is finished: an update of a key the table does not hold is skipped (the key's chunk, not copied
   * yet, brings the row as it is now), except that a full row moving to another key is written
   * under it; a row moving onto a key a chunk already copied replaces that row.
   */
  private void applyUpdateWhileCopied(Table t, Event.Update u) throws SQLException {
    OldRow old = u.oldRow();
    if (old == null || !DuckDbRows.movesKey(u.table(), u.row(), old)) {
      if (rows.update(t, u.table(), u.row(), old) == 0) {
        log.debug(
            "update at {} of a row that duckdb table {}, copied in chunks, does not hold yet:"
                + " skipped",
            u.sequenceKey(),
            t.quotedName());
      }
    } else if (u.row() instanceof UpdatedRow.Full full) {
      rows.delete(t, u.table(), old);
      rows.insert(t, u.table(), full.row());
    } else {
      rows.deleteMoveTarget(t, u.table(), u.row(), old);
      rows.update(t, u.table(), u.row(), old);
    }
  }

  /** The destination lacks the updated row: a full row is inserted, a partial one cannot be. */
  private void updateOfMissingRow(Table t, Event.Update u) throws SQLException {
    if (u.row() instanceof UpdatedRow.Full full) {
      rows.insert(t, u.table(), full.row());
    } else {
      log.warn(
          "update at {} of a row that duckdb table {} does not hold has unchanged TOAST values"
              + " that were not sent; the row is skipped",
          u.sequenceKey(),
          t.quotedName());
    }
  }

  // --- transactions and answers

  private void submit(AsyncResult result, String what, SqlWork work) {
    if (writer == null) {
      throw new EtlException(
          ErrorKind.DESTINATION_CONTRACT_VIOLATION, "DuckDbDestination used before startup()");
    }
    writer.submit(result, () -> inTransaction(what, work));
  }

  private void inTransaction(String what, SqlWork work) {
    try {
      exec("BEGIN TRANSACTION");
      work.run();
      exec("COMMIT");
    } catch (SQLException | RuntimeException e) {
      rollback();
      if (e instanceof EtlException etl) {
        throw etl;
      }
      if (e instanceof SQLException sql) {
        // no cause: DuckDB's full message may hold row values
        throw new EtlException(
            ErrorKind.DESTINATION_QUERY_FAILED,
            "DuckDB write failed (" + what + ") in " + file,
            firstLine(sql) + " (SQLSTATE " + sql.getSQLState() + ")",
            null);
      }
      throw new EtlException(
          ErrorKind.DESTINATION_ERROR, "DuckDB write failed (" + what + ") in " + file, null, e);
    }
    catalog.announceChanged(metadata);
  }

  private void rollback() {
    try {
      exec("ROLLBACK");
    } catch (SQLException e) {
      log.debug("rollback after a failed write: {}", e.getMessage());
    }
    try {
      catalog.load(); // forget what the rolled-back transaction changed in memory
    } catch (SQLException e) {
      log.warn("re-reading the duckdb bookkeeping of {} failed: {}", file, e.getMessage());
    }
  }

  private EtlException unexpected(Exception e) {
    return new EtlException(
        ErrorKind.DESTINATION_ERROR, "DuckDB write failed in " + file, String.valueOf(e), e);
  }

  private void exec(String sql) throws SQLException {
    try (Statement s = conn.createStatement()) {
      s.execute(sql);
    }
  }

  /**
   * The first line of a DuckDB error (its kind and message, without the echoed SQL), with quoted
   * parts masked: DuckDB quotes the values it complains about ({@code Duplicate key "id: 5"}), and
   * row values must not reach logs.
   */
  private static String firstLine(SQLException e) {
    return ErrorText.maskQuoted(ErrorText.firstLine(e.getMessage()));
  }
}
