package org.pgetl.destination.postgres;

import java.sql.Connection;
import java.sql.SQLException;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.UUID;
import org.jspecify.annotations.Nullable;
import org.pgetl.destination.StreamId;
import org.pgetl.destination.TableCopyWrite;
import org.pgetl.destination.internal.CopyFinish;
import org.pgetl.destination.postgres.MirrorCatalog.Staged;
import org.pgetl.destination.postgres.MirrorCatalog.Table;
import org.pgetl.model.Event;
import org.pgetl.model.EventSequenceKey;
import org.pgetl.model.ReplicatedTableSchema;
import org.pgetl.model.TableId;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One attempt of one mirror write: the target transaction on its connection, the catalog changes it
 * stages, and the row writer of its events. {@link PostgresMirrorDestination} borrows the
 * connection, creates one per attempt, hands it the write ({@link #dropForCopy}, {@link
 * #copyBatch}, {@link #chunkEnd}, {@link #finish}, {@link #applyEvents}), commits or rolls back,
 * and {@linkplain #publish publishes} the catalog changes after a commit; a retry gets a new one,
 * so nothing staged by a rolled-back attempt survives it.
 *
 * <p>Each write reads top to bottom here: fence first ({@link #fence}), then the copy attempt's
 * lock, then the catalog and the rows. Not thread-safe: used by one writer thread for one
 * transaction.
 */
final class MirrorTransaction {
  // the destination's logger: the mirror's writes log under one name, as they always did
  private static final Logger log = LoggerFactory.getLogger(PostgresMirrorDestination.class);

  private final Connection conn;
  private final MirrorCatalog catalog;
  private final Staged staged = new Staged();
  private final String target; // the target database, as error messages name it
  private @Nullable MirrorRows rows; // created by the first write of events

  /**
   * Starts an attempt on a connection that has nothing done in it yet.
   *
   * @param conn the transaction's connection, auto-commit off
   * @param catalog the mirror's catalog
   * @param target the target database as messages describe it
   */
  MirrorTransaction(Connection conn, MirrorCatalog catalog, String target) {
    this.conn = conn;
    this.catalog = catalog;
    this.target = target;
  }

  /**
   * Checks the write's epoch against the mirror's and raises the mirror's when the write's is
   * greater (see {@link MirrorCatalog#fence}). Call first: it orders the writes of two instances.
   *
   * @return the greatest epoch recorded: {@code epoch}, or a greater one when the write must be
   *     refused
   */
  long fence(long epoch) throws SQLException {
    return catalog.fence(conn, epoch);
  }

  /** Makes the staged catalog changes visible to all threads. Call after the commit. */
  void publish() {
    catalog.publish(staged);
  }

  // --- copy

  /**
   * Records {@code attemptId} as the table's current copy attempt, then drops the table and its
   * bookkeeping.
   */
  void dropForCopy(TableId id, UUID attemptId) throws SQLException {
    catalog.startAttempt(conn, staged, id, attemptId); // first: it waits for batches
    catalog.drop(conn, staged, id);
  }

  /**
   * Stores a copy batch, unless it belongs to an abandoned attempt or was stored before, creating
   * the table when needed.
   */
  void copyBatch(ReplicatedTableSchema schema, TableCopyWrite.Batch batch) throws SQLException {
    UUID current = catalog.lockAttempt(conn, schema.id(), false);
    if (CopyFinish.isAbandoned(current, batch.id().attemptId())) {
      log.debug(
          "copy batch {} of table {} belongs to an abandoned attempt (the current one is {}):"
              + " skipped",
          batch.id(),
          schema.name(),
          current);
      return;
    }
    if (!catalog.recordCopyBatch(conn, schema.id(), batch.id())) {
      log.debug("copy batch {} of table {} was stored before: skipped", batch.id(), schema.name());
      return;
    }
    // the table as it is when it has the batch's columns: changes may have applied a newer version
    Table t = catalog.ensureForCopy(conn, staged, schema);
    MirrorRows.copy(conn, catalog, t, schema, batch.rows());
  }

  /**
   * Ends the current copy attempt: creates the table if the copy had no rows, checks that every
   * batch the {@code Finish} counts is stored, and marks the attempt finished. A {@code Finish} of
   * an abandoned attempt changes nothing. An attempt copied in chunks numbers its batches by chunk
   * read, not {@code 0..batches-1}, and each of its {@link #chunkEnd}s checked the batches of its
   * read: its {@code Finish} checks nothing more.
   */
  void finish(ReplicatedTableSchema schema, TableCopyWrite.Finish finish) throws SQLException {
    UUID current = catalog.lockAttempt(conn, schema.id(), true);
    if (CopyFinish.isAbandoned(current, finish.attemptId())) {
      log.debug(
          "copy Finish of table {} ends abandoned attempt {} (the current one is {}): ignored",
          schema.name(),
          finish.attemptId(),
          current);
      return;
    }
    catalog.ensureForCopy(conn, staged, schema);
    if (current == null) {
      return; // no drop recorded (a mirror written before attempts were kept): nothing to check
    }
    boolean chunked = catalog.hasChunks(conn, schema.id(), current);
    long stored = catalog.finishAttempt(conn, staged, schema.id(), finish);
    if (!chunked) {
      CopyFinish.requireAllBatches(
          schema.name(), finish, stored, "the mirror in " + target, "mirror");
    }
  }

  /**
   * Ends one read of a chunk of the current attempt: checks that every batch of the read is stored
   * (each was committed before it was answered, so the read is durable then) and records the chunk.
   * A {@code ChunkEnd} of an abandoned attempt changes nothing.
   */
  void chunkEnd(ReplicatedTableSchema schema, TableCopyWrite.ChunkEnd end) throws SQLException {
    UUID current = catalog.lockAttempt(conn, schema.id(), false);
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
    long stored = catalog.storedBatchesOf(conn, schema.id(), end);
    CopyFinish.requireAllBatches(schema.name(), end, stored, "the mirror in " + target, "mirror");
    catalog.recordChunkEnd(conn, schema.id(), end);
  }

  // --- events

  /**
   * Applies a stream's events, skipping those applied before, and the whole write when it belongs
   * to a catch-up stream of an abandoned copy attempt.
   *
   * @param stream the stream the events belong to
   * @param events the events, in stream order
   * @param what the write, as logs name it
   */
  void applyEvents(StreamId stream, List<Event> events, String what) throws SQLException {
    if (stream.kind() == StreamId.Kind.TABLE_SYNC) {
      // shared lock: a drop naming a new attempt waits for this write, a write after it sees it
      UUID current =
          catalog.lockAttempt(
              conn,
              Objects.requireNonNull(stream.table(), "a table-sync stream names its table"),
              false);
      if (current != null && !current.equals(stream.copyAttempt())) {
        log.debug("{} of abandoned catch-up stream {}: skipped", what, stream);
        return;
      }
    }
    MirrorRows rows = rows();
    Map<TableId, EventSequenceKey> applied = new LinkedHashMap<>();
    for (Event e : events) {
      switch (e.kind()) {
        case BEGIN, COMMIT -> {} // transaction boundaries: nothing to store
        case MESSAGE -> catalog.recordMessage(conn, (Event.Message) e);
        case RELATION -> claim(((Event.Relation) e).table(), e, applied, false);
        case TRUNCATE -> {
          for (ReplicatedTableSchema schema : ((Event.Truncate) e).tables()) {
            Table t = claim(schema, e, applied, true);
            if (t != null) {
              rows.truncate(t);
            }
          }
        }
        case INSERT -> {
          Event.Insert i = (Event.Insert) e;
          Table t = claim(i.table(), e, applied, true);
          if (t != null) {
            rows.insert(t, i.table(), i.row());
          }
        }
        case UPDATE -> {
          Event.Update u = (Event.Update) e;
          Table t = claim(u.table(), e, applied, true);
          if (t != null) {
            rows.update(t, u.table(), u.row(), u.oldRow());
          }
        }
        case DELETE -> {
          Event.Delete d = (Event.Delete) e;
          Table t = claim(d.table(), e, applied, true);
          if (t != null) {
            rows.delete(t, d.table(), d.oldRow());
          }
        }
      }
    }
    rows.flush();
    for (Map.Entry<TableId, EventSequenceKey> a : applied.entrySet()) {
      Table t = Objects.requireNonNull(catalog.table(staged, a.getKey()), "an applied table");
      catalog.saveAppliedThrough(conn, staged, t.withAppliedThrough(a.getValue()));
    }
  }

  /**
   * Returns the table an event applies to, with its schema brought up to date, or null when the
   * event was applied before (its sequence key is not above the table's applied key).
   *
   * @param applied the greatest key applied per table in this write
   * @param advances whether the event moves the applied key (a Relation does not: it shares the key
   *     of the change it precedes)
   */
  private @Nullable Table claim(
      ReplicatedTableSchema schema,
      Event e,
      Map<TableId, EventSequenceKey> applied,
      boolean advances)
      throws SQLException {
    Table t = catalog.currentFor(conn, staged, schema);
    EventSequenceKey through =
        applied.containsKey(schema.id())
            ? applied.get(schema.id())
            : t == null ? null : t.appliedThrough();
    if (through != null && e.sequenceKey().compareTo(through) <= 0) {
      return null;
    }
    if (t == null || !t.matches(schema) || !t.named(schema.name())) {
      rows().flush(); // pending rows follow the old columns and name
      try {
        t = catalog.ensure(conn, staged, schema);
      } catch (SQLException ddl) {
        throw new MirrorRows.TableWriteFailure(schema.name().quoted(), ddl);
      }
    }
    if (advances) {
      applied.put(schema.id(), e.sequenceKey());
    }
    return t;
  }

  private MirrorRows rows() {
    MirrorRows r = rows;
    if (r == null) {
      r = new MirrorRows(conn, catalog::copyOpen);
      rows = r;
    }
    return r;
  }
}
