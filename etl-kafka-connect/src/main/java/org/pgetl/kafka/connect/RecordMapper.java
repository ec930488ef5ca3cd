package org.pgetl.kafka.connect;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.kafka.connect.data.Schema;
import org.apache.kafka.connect.data.Struct;
import org.jspecify.annotations.Nullable;
import org.pgetl.destination.StreamId;
import org.pgetl.destination.TableCopyWrite;
import org.pgetl.model.Event;
import org.pgetl.model.Lsn;
import org.pgetl.model.ReplicatedTableSchema;
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
      ColumnMapping.ArrayMode arrays) {
    Settings {
      Objects.requireNonNull(version, "version");
      Objects.requireNonNull(pipelineId, "pipelineId");
      Objects.requireNonNull(database, "database");
      Objects.requireNonNull(topics, "topics");
      Objects.requireNonNull(decimals, "decimals");
      Objects.requireNonNull(arrays, "arrays");
    }
  }

  /** The transaction a stream is inside: its xid and commit time, from its BEGIN. */
  private record Tx(Lsn commitLsn, long xid, long commitTimeMs) {}

  private final Settings settings;
  private final Map<ReplicatedTableSchema, TableRecords> tables = new ConcurrentHashMap<>();
  private final Map<StreamId, Tx> transactions = new ConcurrentHashMap<>();

  RecordMapper(Settings settings) {
    this.settings = settings;
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
                      settings.arrays()));
    }
    return t;
  }

  /** The records of a copy batch: one {@code r} record per row. */
  void copyBatch(ReplicatedTableSchema schema, TableCopyWrite.Batch batch, Sink sink) {
    TableRecords t = table(schema);
    long now = System.currentTimeMillis();
    Lsn snapshot = schema.tableSchema().snapshotLsn();
    Struct source = source(schema, now, "true", null, snapshot.isZero() ? null : snapshot, null);
    for (TableRow row : batch.rows()) {
      Struct after = t.row(row::get);
      sink.add(
          t.topic,
          t.keySchema,
          t.keyOfRow(row::get),
          t.envelopeSchema,
          t.envelope("r", null, after, source, null),
          now);
    }
  }

  /** The records of a batch of events; transaction markers and relations produce none. */
  void events(StreamId stream, List<Event> events, Sink sink) {
    for (Event e : events) {
      switch (e.kind()) {
        case BEGIN -> {
          Event.Begin b = (Event.Begin) e;
          transactions.put(stream, new Tx(b.commitLsn(), b.xid(), b.commitTime().toEpochMilli()));
        }
        case COMMIT -> transactions.remove(stream);
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
  }

  private void insert(StreamId stream, Event.Insert e, Sink sink) {
    TableRecords t = table(e.table());
    Tx tx = tx(stream, e);
    Struct after = t.row(e.row()::get);
    sink.add(
        t.topic,
        t.keySchema,
        t.keyOfRow(e.row()::get),
        t.envelopeSchema,
        t.envelope("c", null, after, source(e.table(), e, tx), null),
        tx.commitTimeMs);
  }

  private void update(StreamId stream, Event.Update e, Sink sink) {
    TableRecords t = table(e.table());
    Tx tx = tx(stream, e);
    Struct source = source(e.table(), e, tx);
    Struct after = t.row(e.row());
    Struct key = t.keyOfRow(i -> e.row().isPresent(i) ? e.row().get(i) : null);
    Struct before = t.before(e.oldRow());
    if (t.hasKey() && e.oldRow() != null) {
      Struct oldKey = t.keyOfOld(e.oldRow());
      if (oldKey != null && !oldKey.equals(key)) {
        // the key changed: the old key's row is gone, a row under the new key appears
        sink.add(
            t.topic,
            t.keySchema,
            oldKey,
            t.envelopeSchema,
            t.envelope("d", before, null, source, null),
            tx.commitTimeMs);
        if (settings.tombstonesOnDelete()) {
          sink.add(t.topic, t.keySchema, oldKey, null, null, tx.commitTimeMs);
        }
        sink.add(
            t.topic,
            t.keySchema,
            key,
            t.envelopeSchema,
            t.envelope("c", null, after, source, t.missing(e.row())),
            tx.commitTimeMs);
        return;
      }
    }
    sink.add(
        t.topic,
        t.keySchema,
        key,
        t.envelopeSchema,
        t.envelope("u", before, after, source, t.missing(e.row())),
        tx.commitTimeMs);
  }

  private void delete(StreamId stream, Event.Delete e, Sink sink) {
    TableRecords t = table(e.table());
    Tx tx = tx(stream, e);
    Struct key = t.keyOfOld(e.oldRow());
    sink.add(
        t.topic,
        t.keySchema,
        key,
        t.envelopeSchema,
        t.envelope("d", t.before(e.oldRow()), null, source(e.table(), e, tx), null),
        tx.commitTimeMs);
    if (settings.tombstonesOnDelete() && key != null) {
      sink.add(t.topic, t.keySchema, key, null, null, tx.commitTimeMs);
    }
  }

  private void truncate(StreamId stream, Event.Truncate e, Sink sink) {
    if (!settings.truncates()) {
      return;
    }
    Tx tx = tx(stream, e);
    for (ReplicatedTableSchema table : e.tables()) {
      TableRecords t = table(table);
      Struct source = source(table, tx.commitTimeMs, "false", tx.xid, e.startLsn(), e);
      sink.add(
          t.topic,
          null,
          null,
          t.envelopeSchema,
          t.envelope("t", null, null, source, null),
          tx.commitTimeMs);
    }
  }

  private Tx tx(StreamId stream, Event e) {
    Tx tx = transactions.get(stream);
    if (tx == null || !tx.commitLsn.equals(e.commitLsn())) {
      // a batch never starts a transaction's changes without its BEGIN on the same stream; if it
      // did, the commit time is unknown: use the time of reading
      return new Tx(e.commitLsn(), -1, System.currentTimeMillis());
    }
    return tx;
  }

  private Struct source(ReplicatedTableSchema table, Event e, Tx tx) {
    return source(table, tx.commitTimeMs, "false", tx.xid, e.startLsn(), e);
  }

  private Struct source(
      ReplicatedTableSchema table,
      long tsMs,
      String snapshot,
      @Nullable Long xid,
      @Nullable Lsn lsn,
      @Nullable Event e) {
    Struct s = new Struct(TableRecords.SOURCE_SCHEMA);
    s.put("version", settings.version());
    s.put("connector", "pgetl");
    s.put("name", settings.pipelineId());
    s.put("ts_ms", tsMs);
    s.put("snapshot", snapshot);
    s.put("db", settings.database());
    s.put("schema", table.name().schema());
    s.put("table", table.name().name());
    s.put("txId", xid == null || xid < 0 ? null : xid);
    s.put("lsn", lsn == null || lsn.isZero() ? null : lsn.value());
    s.put("commit_lsn", e == null ? null : e.commitLsn().value());
    s.put("tx_ordinal", e == null ? null : e.txOrdinal());
    return s;
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
