package org.pgetl.kafka.connect;

import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.locks.ReentrantLock;
import org.apache.kafka.connect.data.Schema;
import org.jspecify.annotations.Nullable;
import org.pgetl.destination.StreamId;
import org.pgetl.destination.TableCopyWrite;
import org.pgetl.model.Event;
import org.pgetl.model.Lsn;
import org.pgetl.model.ReplicatedTableSchema;
import org.pgetl.model.TableId;
import org.pgetl.model.TableRow;

/**
 * Turns copy batches and change events into Connect records: one record per row change (plus a
 * tombstone after a delete, when configured), keyed by the replica-identity columns, valued by a
 * Debezium-compatible envelope.
 *
 * <p>Called by the pipeline's threads (copy threads and streams concurrently, one call at a time
 * per stream); the schema cache and the per-stream transaction state are concurrent maps.
 */
final class RecordMapper {
  /** How the records of one destination call are collected. */
  interface Sink {
    void add(
        String topic,
        @Nullable Schema keySchema,
        @Nullable Object key,
        @Nullable Schema valueSchema,
        @Nullable Object value,
        long ts);
  }

  /** What the records need from the configuration. */
  record Settings(
      String version,
      String pipelineId,
      String database,
      TopicNamer topics,
      boolean tombstonesOnDelete,
      boolean truncates,
      ColumnMapping.DecimalMode decimals,
      ColumnMapping.ArrayMode arrays,
      boolean transactionMetadata,
      @Nullable String unavailableValuePlaceholder,
      CopyPositions copyPositions) {
    Settings {
      Objects.requireNonNull(version, "version");
      Objects.requireNonNull(pipelineId, "pipelineId");
      Objects.requireNonNull(database, "database");
      Objects.requireNonNull(topics, "topics");
      Objects.requireNonNull(decimals, "decimals");
      Objects.requireNonNull(arrays, "arrays");
      Objects.requireNonNull(copyPositions, "copyPositions");
      if (unavailableValuePlaceholder != null && unavailableValuePlaceholder.isEmpty()) {
        unavailableValuePlaceholder = null;
      }
    }

    /** Settings without transaction blocks, placeholder or copy positions. */
    Settings(
        String version,
        String pipelineId,
        String database,
        TopicNamer topics,
        boolean tombstonesOnDelete,
        boolean truncates,
        ColumnMapping.DecimalMode decimals,
        ColumnMapping.ArrayMode arrays) {
      this(
          version,
          pipelineId,
          database,
          topics,
          tombstonesOnDelete,
          truncates,
          decimals,
          arrays,
          false,
          null,
          CopyPositions.NONE);
    }
  }

  /**
   * Where a table's copy snapshot stands, as its copy slot shows it: the slot's consistent point
   * (the snapshot's LSN) and its catalog xmin.
   */
  record CopyPosition(Lsn lsn, @Nullable Long xmin) {}

  /** Finds the position of a table's current copy; null when it cannot be read. */
  @FunctionalInterface
  interface CopyPositions {
    /** Positions that are never known. */
    CopyPositions NONE = table -> null;

    @Nullable CopyPosition of(ReplicatedTableSchema table);
  }

  /**
   * The transaction a stream is inside, from its BEGIN: its xid, commit time, the commit LSN of the
   * stream's transaction before it, and the counts of the records it produced (the {@code
   * transaction} block's orders). Touched by the stream's one thread only.
   */
  private static final class Tx {
    final Lsn commitLsn;
    final long xid;
    final Instant commitTime;
    final @Nullable Lsn previousCommit;
    long totalOrder;
    final Map<TableId, Long> tableOrders = new HashMap<>();

    Tx(Lsn commitLsn, long xid, Instant commitTime, @Nullable Lsn previousCommit) {
      this.commitLsn = commitLsn;
      this.xid = xid;
      this.commitTime = commitTime;
      this.previousCommit = previousCommit;
    }
  }

  /** The copy attempt of a table the records were last made for, and whether it had a record. */
  private record Copy(UUID attemptId, @Nullable CopyPosition position, AtomicBoolean started) {}

  /** Debezium's {@code source.snapshot} values that pgetl writes. */
  static final String SNAPSHOT_FIRST_IN_TABLE = "first_in_data_collection";

  static final String SNAPSHOT_TRUE = "true";
  static final String SNAPSHOT_FALSE = "false";

  private final Settings settings;
  private final Map<ReplicatedTableSchema, TableRecords> tables = new ConcurrentHashMap<>();
  private final Map<StreamId, Tx> transactions = new ConcurrentHashMap<>();
  private final Map<StreamId, Lsn> lastCommits = new ConcurrentHashMap<>();
  private final Map<TableId, Copy> copies = new ConcurrentHashMap<>();
  private final ReentrantLock copyStartLock = new ReentrantLock();
  private final @Nullable JsonRecordEncoder encoder;

  RecordMapper(Settings settings) {
    this(settings, null);
  }

  /**
   * Creates a mapper.
   *
   * @param encoder serializes each record's key and value on the thread that makes it ({@code
   *     record.encoding}), or null for Connect structs
   */
  RecordMapper(Settings settings, @Nullable JsonRecordEncoder encoder) {
    this.settings = settings;
    this.encoder = encoder;
  }

  /** The serializer of records made on the pipeline's threads, or null for Connect structs. */
  @Nullable JsonRecordEncoder encoder() {
    return encoder;
  }

  /** The schemas of a table version (cached). */
  TableRecords table(ReplicatedTableSchema table) {
    TableRecords t = tables.get(table);
    if (t == null) {
      t =
          tables.computeIfAbsent(
              table,
              s ->
                  new TableRecords(
                      s,
                      settings.topics().topic(s.name()),
                      settings.decimals(),
                      settings.arrays(),
                      settings.unavailableValuePlaceholder(),
                      encoder != null));
    }
    return t;
  }

  /**
   * The records of a copy batch, for tests: {@link #copyBatch(ReplicatedTableSchema,
   * TableCopyWrite.Batch, Sink, Runnable)} with nothing to submit.
   */
  void copyBatch(ReplicatedTableSchema schema, TableCopyWrite.Batch batch, Sink sink) {
    copyBatch(schema, batch, sink, () -> {});
  }

  /**
   * Makes the records of a copy batch, one {@code r} record per row, and runs {@code submit}, which
   * hands them on. The first record of the task's copies is marked {@code first}, the first of each
   * table's copy attempt {@code first_in_data_collection}, every other {@code true}; the last row
   * of a copy is not known before its batch is acknowledged (see docs/kafka-connect.md).
   *
   * <p>A table's ranges are copied in parallel: the batch that makes a table's first record is made
   * and submitted under {@link #copyStartLock}, and the table counts as started only once it was
   * submitted, so that no other batch of the table (and, for {@code first}, of any table) is
   * submitted before it.
   */
  void copyBatch(
      ReplicatedTableSchema schema, TableCopyWrite.Batch batch, Sink sink, Runnable submit) {
    Copy copy = copy(schema, batch.id().attemptId());
    if (copy.started().get()) {
      copyRecords(schema, batch, sink, copy, SNAPSHOT_TRUE);
      submit.run();
      return;
    }
    copyStartLock.lock();
    try {
      String marker = copy.started().get() ? SNAPSHOT_TRUE : SNAPSHOT_FIRST_IN_TABLE;
      copyRecords(schema, batch, sink, copy, marker);
      submit.run();
      copy.started().set(true);
    } finally {
      copyStartLock.unlock();
    }
  }

  private void copyRecords(
      ReplicatedTableSchema schema,
      TableCopyWrite.Batch batch,
      Sink sink,
      Copy copy,
      String firstMarker) {
    TableRecords t = table(schema);
    Instant now = Instant.now();
    CopyPosition position = copy.position();
    Lsn lsn = position != null ? position.lsn() : schema.tableSchema().snapshotLsn();
    Long xmin = position == null ? null : position.xmin();
    @Nullable Object rest = null;
    boolean first = true;
    for (TableRow row : batch.rows()) {
      Object source;
      if (first && !firstMarker.equals(SNAPSHOT_TRUE)) {
        source = copySource(schema, now, firstMarker, lsn, xmin);
      } else {
        if (rest == null) {
          rest = copySource(schema, now, SNAPSHOT_TRUE, lsn, xmin);
        }
        source = rest;
      }
      first = false;
      Object after = t.row(row::get);
      sink.add(
          t.topic,
          t.keySchema,
          t.keyOfRow(row::get),
          t.envelopeSchema,
          t.envelope("r", null, after, source, null, null),
          now.toEpochMilli());
    }
  }

  private Object copySource(
      ReplicatedTableSchema schema, Instant now, String marker, Lsn lsn, @Nullable Long xmin) {
    Object s = source(schema, now, marker, null, lsn.isZero() ? null : lsn, null, null);
    UncheckedStruct.put(s, "xmin", xmin);
    return s;
  }

  /** The copy attempt of a batch; a new attempt reads its position once. */
  private Copy copy(ReplicatedTableSchema schema, UUID attemptId) {
    Copy c = copies.get(schema.id());
    if (c != null && c.attemptId().equals(attemptId)) {
      return c;
    }
    Copy fresh = new Copy(attemptId, settings.copyPositions().of(schema), new AtomicBoolean());
    Copy raced =
        copies.compute(
            schema.id(),
            (id, old) -> old != null && old.attemptId().equals(attemptId) ? old : fresh);
    return raced;
  }

  /** The records of a batch of events; transaction markers and relations produce none. */
  void events(StreamId stream, List<Event> events, Sink sink) {
    for (Event e : events) {
      switch (e.kind()) {
        case BEGIN -> {
          Event.Begin b = (Event.Begin) e;
          transactions.put(
              stream, new Tx(b.commitLsn(), b.xid(), b.commitTime(), lastCommits.get(stream)));
        }
        case COMMIT -> {
          transactions.remove(stream);
          // Debezium's last commit LSN: where the commit record ends (pgoutput's commit message)
          lastCommits.put(stream, ((Event.Commit) e).endLsn());
        }
        case INSERT -> insert(stream, (Event.Insert) e, sink);
        case UPDATE -> update(stream, (Event.Update) e, sink);
        case DELETE -> delete(stream, (Event.Delete) e, sink);
        case TRUNCATE -> truncate(stream, (Event.Truncate) e, sink);
        case RELATION, MESSAGE -> {
          // a relation's schema reaches the records through the rows that follow it; logical
          // messages have no table topic
        }
        default -> throw new IllegalArgumentException("unknown event kind " + e.kind());
      }
    }
  }

  /** Forgets a stream's open transaction (its stream ended). */
  void forget(StreamId stream) {
    transactions.remove(stream);
    lastCommits.remove(stream);
  }

  private void insert(StreamId stream, Event.Insert e, Sink sink) {
    TableRecords t = table(e.table());
    Tx tx = tx(stream, e);
    Object after = t.row(e.row()::get);
    sink.add(
        t.topic,
        t.keySchema,
        t.keyOfRow(e.row()::get),
        t.envelopeSchema,
        t.envelope("c", null, after, source(e.table(), e, tx), null, transaction(tx, e.table(), e)),
        tx.commitTime.toEpochMilli());
  }

  private void update(StreamId stream, Event.Update e, Sink sink) {
    TableRecords t = table(e.table());
    Tx tx = tx(stream, e);
    long ts = tx.commitTime.toEpochMilli();
    Object source = source(e.table(), e, tx);
    Object after = t.row(e.row());
    Object key = t.keyOfRow(i -> e.row().isPresent(i) ? e.row().get(i) : null);
    Object before = t.before(e.oldRow());
    if (t.hasKey() && e.oldRow() != null) {
      Object oldKey = t.keyOfOld(e.oldRow());
      if (oldKey != null && !oldKey.equals(key)) {
        // the key changed: the old key's row is gone, a row under the new key appears
        sink.add(
            t.topic,
            t.keySchema,
            oldKey,
            t.envelopeSchema,
            t.envelope("d", before, null, source, null, transaction(tx, e.table(), e)),
            ts);
        if (settings.tombstonesOnDelete()) {
          sink.add(t.topic, t.keySchema, oldKey, null, null, ts);
        }
        sink.add(
            t.topic,
            t.keySchema,
            key,
            t.envelopeSchema,
            t.envelope("c", null, after, source, t.missing(e.row()), transaction(tx, e.table(), e)),
            ts);
        return;
      }
    }
    sink.add(
        t.topic,
        t.keySchema,
        key,
        t.envelopeSchema,
        t.envelope("u", before, after, source, t.missing(e.row()), transaction(tx, e.table(), e)),
        ts);
  }

  private void delete(StreamId stream, Event.Delete e, Sink sink) {
    TableRecords t = table(e.table());
    Tx tx = tx(stream, e);
    long ts = tx.commitTime.toEpochMilli();
    Object key = t.keyOfOld(e.oldRow());
    sink.add(
        t.topic,
        t.keySchema,
        key,
        t.envelopeSchema,
        t.envelope(
            "d",
            t.before(e.oldRow()),
            null,
            source(e.table(), e, tx),
            null,
            transaction(tx, e.table(), e)),
        ts);
    if (settings.tombstonesOnDelete() && key != null) {
      sink.add(t.topic, t.keySchema, key, null, null, ts);
    }
  }

  private void truncate(StreamId stream, Event.Truncate e, Sink sink) {
    if (!settings.truncates()) {
      return;
    }
    Tx tx = tx(stream, e);
    for (ReplicatedTableSchema table : e.tables()) {
      TableRecords t = table(table);
      sink.add(
          t.topic,
          null,
          null,
          t.envelopeSchema,
          t.envelope("t", null, null, source(table, e, tx), null, transaction(tx, table, e)),
          tx.commitTime.toEpochMilli());
    }
  }

  private Tx tx(StreamId stream, Event e) {
    Tx tx = transactions.get(stream);
    if (tx == null || !tx.commitLsn.equals(e.commitLsn())) {
      // a batch never starts a transaction's changes without its BEGIN on the same stream; if it
      // did, the xid and commit time are unknown: use the time of reading
      tx = new Tx(e.commitLsn(), -1, Instant.now(), null);
      transactions.put(stream, tx);
    }
    return tx;
  }

  /**
   * The {@code transaction} block of the next record of a transaction (null unless {@code
   * provide.transaction.metadata}): its id {@code <xid>:<commit LSN>}, the record's position in the
   * transaction and among the transaction's records of its table, both from 1.
   */
  private @Nullable Object transaction(Tx tx, ReplicatedTableSchema table, Event e) {
    if (!settings.transactionMetadata()) {
      return null;
    }
    tx.totalOrder++;
    long tableOrder = tx.tableOrders.merge(table.id(), 1L, Long::sum);
    Object s = UncheckedStruct.of(TableRecords.TRANSACTION_SCHEMA, encoder != null);
    UncheckedStruct.put(
        s, "id", (tx.xid < 0 ? "" : Long.toString(tx.xid)) + ":" + e.startLsn().value());
    UncheckedStruct.put(s, "total_order", tx.totalOrder);
    UncheckedStruct.put(s, "data_collection_order", tableOrder);
    return s;
  }

  private Object source(ReplicatedTableSchema table, Event e, Tx tx) {
    return source(table, tx.commitTime, SNAPSHOT_FALSE, tx.xid, e.startLsn(), tx.previousCommit, e);
  }

  private Object source(
      ReplicatedTableSchema table,
      Instant ts,
      String snapshot,
      @Nullable Long xid,
      @Nullable Lsn lsn,
      @Nullable Lsn previousCommit,
      @Nullable Event e) {
    Object s = UncheckedStruct.of(TableRecords.SOURCE_SCHEMA, encoder != null);
    UncheckedStruct.put(s, "version", settings.version());
    UncheckedStruct.put(s, "connector", "pgetl");
    UncheckedStruct.put(s, "name", settings.pipelineId());
    UncheckedStruct.put(s, "ts_ms", ts.toEpochMilli());
    UncheckedStruct.put(s, "snapshot", snapshot);
    UncheckedStruct.put(s, "db", settings.database());
    UncheckedStruct.put(s, "sequence", sequence(previousCommit, lsn));
    UncheckedStruct.put(s, "ts_us", TableRecords.micros(ts));
    UncheckedStruct.put(s, "ts_ns", TableRecords.nanos(ts));
    UncheckedStruct.put(s, "schema", table.name().schema());
    UncheckedStruct.put(s, "table", table.name().name());
    UncheckedStruct.put(s, "txId", xid == null || xid < 0 ? null : xid);
    UncheckedStruct.put(s, "lsn", lsn == null || lsn.isZero() ? null : lsn.value());
    UncheckedStruct.put(s, "commit_lsn", e == null ? null : e.commitLsn().value());
    UncheckedStruct.put(s, "tx_ordinal", e == null ? null : e.txOrdinal());
    return s;
  }

  /**
   * Debezium's {@code source.sequence}: {@code ["<last commit LSN>","<LSN>"]}, null for unknown.
   */
  static String sequence(@Nullable Lsn lastCommit, @Nullable Lsn lsn) {
    return "["
        + (lastCommit == null || lastCommit.isZero() ? "null" : "\"" + lastCommit.value() + "\"")
        + ","
        + (lsn == null || lsn.isZero() ? "null" : "\"" + lsn.value() + "\"")
        + "]";
  }

  /** The number of table versions with cached schemas (for tests). */
  int cachedTables() {
    return tables.size();
  }

  /** Collects records into a list, for tests. */
  static final class ListSink implements Sink {
    /** One collected record. */
    record Rec(
        String topic,
        @Nullable Schema keySchema,
        @Nullable Object key,
        @Nullable Schema valueSchema,
        @Nullable Object value) {}

    final List<Rec> records = new ArrayList<>();

    @Override
    public void add(
        String topic,
        @Nullable Schema keySchema,
        @Nullable Object key,
        @Nullable Schema valueSchema,
        @Nullable Object value,
        long ts) {
      records.add(new Rec(topic, keySchema, key, valueSchema, value));
    }
  }
}
