package org.pgetl.destination.iceberg;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.BitSet;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.UUID;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.iceberg.DataFile;
import org.apache.iceberg.DeleteFile;
import org.apache.iceberg.FileFormat;
import org.apache.iceberg.RowDelta;
import org.apache.iceberg.Schema;
import org.apache.iceberg.Table;
import org.apache.iceberg.TableProperties;
import org.apache.iceberg.Transaction;
import org.apache.iceberg.UpdateProperties;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.data.GenericRecord;
import org.apache.iceberg.data.IcebergGenerics;
import org.apache.iceberg.data.Record;
import org.apache.iceberg.data.parquet.GenericParquetWriter;
import org.apache.iceberg.data.parquet.InternalWriter;
import org.apache.iceberg.deletes.EqualityDeleteWriter;
import org.apache.iceberg.expressions.Expression;
import org.apache.iceberg.expressions.Expressions;
import org.apache.iceberg.io.CloseableIterable;
import org.apache.iceberg.io.DataWriter;
import org.apache.iceberg.io.OutputFileFactory;
import org.apache.iceberg.parquet.Parquet;
import org.apache.iceberg.types.Type;
import org.apache.iceberg.types.Types;
import org.jspecify.annotations.Nullable;
import org.pgetl.model.EventSequenceKey;
import org.pgetl.model.IdentityKind;
import org.pgetl.model.Lsn;
import org.pgetl.model.OldRow;
import org.pgetl.model.ReplicatedTableSchema;
import org.pgetl.model.TableId;
import org.pgetl.model.TableRow;
import org.pgetl.model.UpdatedRow;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One replicated table's Iceberg table, its committed bookkeeping and the changes buffered for its
 * next commit. Used by the destination's writer thread only.
 *
 * <h2>Bookkeeping</h2>
 *
 * Kept in the Iceberg table's properties, committed in the same Iceberg transaction as the data:
 * {@code pgetl.copy-attempt} (the copy attempt the last drop named), {@code pgetl.copy-batches}
 * (the batches of that attempt the table holds, as ranges), {@code pgetl.applied-through} (the
 * greatest event sequence key applied, {@code <commit lsn>/<tx ordinal>}), {@code pgetl.epoch} (the
 * greatest lease epoch that committed) and {@code pgetl.attnums}. Each snapshot pgetl commits also
 * carries {@code pgetl.applied-through} in its summary, so a reader can tell which source position
 * a snapshot reflects.
 *
 * <h2>Upserts</h2>
 *
 * Changes of a keyed table are folded per key until the commit: the commit writes, for every key
 * whose row may exist in an earlier snapshot, one equality delete of the key, and for every key
 * that has a row after the folded changes, that row, in one row delta. Equality deletes of a commit
 * apply only to data files of earlier commits, so the new rows survive them. A REPLICA IDENTITY
 * FULL table is folded by whole row with a count: a delete of one of several equal rows deletes all
 * of them by equality and adds back the ones that remain (counted with a scan). A table without
 * replica identity only ever gets inserts and truncates: its rows are appended.
 */
final class IcebergTable {
  private static final Logger log = LoggerFactory.getLogger(IcebergTable.class);

  static final String ATTEMPT = "pgetl.copy-attempt";
  static final String BATCHES = "pgetl.copy-batches";
  static final String THROUGH = "pgetl.applied-through";
  static final String EPOCH = "pgetl.epoch";

  final TableId id;
  final TableIdentifier ident;
  final boolean changelog;
  final long targetFileBytes;
  Table table;
  ReplicatedTableSchema schema;

  // where each source column sits in the Iceberg schema, and its type
  private int[] positions = new int[0];
  private Type[] types = new Type[0];
  private String[] columnNames = new String[0];
  private String tableName = "";
  private GenericRecord template = GenericRecord.create(new Schema());
  private int[] keyIndexes = new int[0];
  private Schema keySchema = new Schema();
  private int[] keyFieldIds = new int[0];

  // bookkeeping, including what the next commit adds
  volatile @Nullable UUID attempt;
  final BatchSet batches = new BatchSet();
  // batches handed to the copy writers and not committed yet (writer thread only)
  private final java.util.Set<Long> inFlight = new java.util.HashSet<>();
  @Nullable EventSequenceKey through;
  private boolean dirty;
  // what the table's properties said at the last load or commit of this instance
  private @Nullable String seenAttempt;
  private @Nullable String seenThrough;
  private @Nullable String seenBatches;

  // buffered changes
  private boolean truncate;
  private final ArrayBlockingQueue<CopySlot> slots;
  private final int slotCount;
  private final AtomicLong copyBytes = new AtomicLong();
  private final LinkedHashMap<List<@Nullable Object>, Upsert> upserts = new LinkedHashMap<>();
  private final LinkedHashMap<List<@Nullable Object>, Multi> multi = new LinkedHashMap<>();
  private final List<Record> appends = new ArrayList<>();
  private long pendingBytes;
  private @Nullable OutputFileFactory files;

  /**
   * The row a key has after the buffered changes (null: none), and whether to delete older ones. An
   * update without its unchanged TOAST values, of a row this commit did not write, leaves {@code
   * missing} columns to take from the committed row of {@code baseKey} at the commit.
   */
  private static final class Upsert {
    @Nullable Record row;
    boolean deleteOld;
    @Nullable List<@Nullable Object> baseKey;
    @Nullable BitSet missing;

    Upsert(@Nullable Record row, boolean deleteOld) {
      this.row = row;
      this.deleteOld = deleteOld;
    }
  }

  /**
   * One copy writer: a data file being written and the files it closed, with the batches they hold.
   * Copy threads take a slot from the table's queue for a batch and put it back; a commit takes
   * every slot, so it waits for the batches being written and sees the others whole.
   */
  private static final class CopySlot {
    @Nullable DataWriter<Record> writer;
    // the writer takes a row's values as it writes it: one record per slot serves every row
    @Nullable Record row;
    final List<DataFile> done = new ArrayList<>();
    final BatchSet seqs = new BatchSet();
  }

  /** A whole row of a keyless table, how many copies the buffered changes add, and any delete. */
  private static final class Multi {
    final Record row;
    int delta;
    boolean deleted;

    Multi(Record row) {
      this.row = row;
    }
  }

  IcebergTable(
      TableIdentifier ident,
      Table table,
      ReplicatedTableSchema schema,
      boolean changelog,
      long targetFileBytes,
      int copyWriters) {
    this.slotCount = copyWriters;
    this.slots = new ArrayBlockingQueue<>(copyWriters);
    for (int i = 0; i < copyWriters; i++) {
      slots.add(new CopySlot());
    }
    this.id = schema.id();
    this.ident = ident;
    this.table = table;
    this.schema = schema;
    this.changelog = changelog;
    this.targetFileBytes = targetFileBytes;
    Map<String, String> p = table.properties();
    String a = p.get(ATTEMPT);
    attempt = a == null || a.isEmpty() ? null : UUID.fromString(a);
    batches.addAll(BatchSet.parse(p.getOrDefault(BATCHES, "")));
    through = parseKey(p.get(THROUGH));
    remember();
    bind(schema);
  }

  private void remember() {
    Map<String, String> p = table.properties();
    seenAttempt = p.getOrDefault(ATTEMPT, "");
    seenThrough = p.getOrDefault(THROUGH, "");
    seenBatches = p.getOrDefault(BATCHES, "");
  }

  /** Whether another writer changed pgetl's bookkeeping since this instance read or wrote it. */
  private boolean changedElsewhere() {
    Map<String, String> p = table.properties();
    return !p.getOrDefault(ATTEMPT, "").equals(seenAttempt)
        || !p.getOrDefault(THROUGH, "").equals(seenThrough)
        || !p.getOrDefault(BATCHES, "").equals(seenBatches);
  }

  /** Points the column positions at the table's current Iceberg schema for {@code source}. */
  void bind(ReplicatedTableSchema source) {
    this.schema = source;
    Schema s = table.schema();
    int[] ids = TableLayout.fieldIds(table, source);
    positions = new int[ids.length];
    types = new Type[ids.length];
    columnNames = new String[ids.length];
    tableName = source.name().toString();
    template = GenericRecord.create(s);
    List<Types.NestedField> cols = s.columns();
    for (int i = 0; i < ids.length; i++) {
      positions[i] = -1;
      for (int p = 0; p < cols.size(); p++) {
        if (cols.get(p).fieldId() == ids[i]) {
          positions[i] = p;
          types[i] = cols.get(p).type();
        }
      }
      if (positions[i] < 0) {
        throw new IllegalStateException("column " + i + " of " + source.name() + " has no field");
      }
      columnNames[i] = source.columns().get(i).name();
    }
    if (!changelog && TableLayout.keyed(source)) {
      keyIndexes = source.identityColumnIndexes();
    } else if (!changelog && source.identity() == IdentityKind.FULL) {
      keyIndexes = new int[ids.length];
      for (int i = 0; i < ids.length; i++) {
        keyIndexes[i] = i;
      }
    } else {
      keyIndexes = new int[0];
    }
    keyFieldIds = new int[keyIndexes.length];
    for (int k = 0; k < keyIndexes.length; k++) {
      keyFieldIds[k] = ids[keyIndexes[k]];
    }
    List<Integer> keyIds = new ArrayList<>();
    for (int f : keyFieldIds) {
      keyIds.add(f);
    }
    keySchema = keyIds.isEmpty() ? new Schema() : s.select(names(s, keyIds));
  }

  private static List<String> names(Schema s, List<Integer> ids) {
    List<String> out = new ArrayList<>();
    for (int id : ids) {
      out.add(s.findField(id).name());
    }
    return out;
  }

  boolean hasPending() {
    return dirty
        || truncate
        || !inFlight.isEmpty()
        || copyBytes.get() > 0
        || !upserts.isEmpty()
        || !multi.isEmpty()
        || !appends.isEmpty();
  }

  /**
   * The buffered change data, held in memory until the commit. Copied rows are not counted: they go
   * to data files as they come, and a copy commits at its end (a copy stopped midway starts over
   * with a new attempt, so committing parts of it would not be kept).
   */
  long pendingBytes() {
    return pendingBytes;
  }

  // --- copy

  /** Starts a new copy attempt: everything buffered and stored goes at the next commit. */
  void startAttempt(UUID newAttempt) {
    discardPending();
    List<CopySlot> held = takeSlots();
    attempt = newAttempt; // while no copy thread holds a slot: a late batch then sees it
    putSlots(held);
    truncate = true;
    batches.clear();
    through = null;
    dirty = true;
  }

  boolean hasBatch(long seq) {
    return batches.contains(seq) || inFlight.contains(seq);
  }

  boolean isCommitted(long seq) {
    return batches.contains(seq);
  }

  /** Notes a batch handed to a copy thread (writer thread). */
  void copyStarted(long seq) {
    inFlight.add(seq);
  }

  /**
   * Writes a copy batch into one of the table's data files; runs on a copy thread, several at once.
   * Returns false, writing nothing, when the batch's attempt is no longer the table's.
   */
  boolean copyRows(UUID batchAttempt, long seq, List<TableRow> rows) throws InterruptedException {
    CopySlot slot = slots.take();
    try {
      if (!batchAttempt.equals(attempt)) {
        return false; // a drop named a new attempt meanwhile (it held every slot to do so)
      }
      DataWriter<Record> w = slot.writer;
      Record rec = slot.row;
      if (w == null || rec == null) {
        w = newDataWriter(true);
        slot.writer = w;
        rec = template.copy(); // fields without a source column stay null
        if (changelog) {
          rec.set(0, "INSERT");
          rec.set(1, 0L);
          rec.set(2, 0L);
        }
        slot.row = rec;
      }
      long bytes = 0;
      for (TableRow row : rows) {
        for (int i = 0; i < positions.length; i++) {
          rec.set(
              positions[i],
              IcebergTypes.toInternal(row.get(i), types[i], columnNames[i], tableName));
        }
        w.write(rec);
        bytes += row.sizeHintBytes();
      }
      slot.seqs.add(seq);
      copyBytes.addAndGet(bytes);
      if (w.length() >= targetFileBytes) {
        closeInto(slot);
      }
      return true;
    } catch (RuntimeException e) {
      discard(slot); // a half-written file: its batches are lost, and the copy's Finish says so
      throw e;
    } finally {
      slots.put(slot);
    }
  }

  long storedBatches() {
    return batches.size();
  }

  /** Takes every copy slot: the copy threads' writes in progress end first. */
  private List<CopySlot> takeSlots() {
    List<CopySlot> held = new ArrayList<>(slotCount);
    boolean interrupted = false;
    while (held.size() < slotCount) {
      try {
        held.add(slots.take());
      } catch (InterruptedException e) {
        interrupted = true;
      }
    }
    if (interrupted) {
      Thread.currentThread().interrupt();
    }
    return held;
  }

  private void putSlots(List<CopySlot> held) {
    slots.addAll(held);
  }

  private void closeInto(CopySlot slot) {
    DataWriter<Record> w = slot.writer;
    if (w != null) {
      try {
        w.close();
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      }
      slot.done.add(w.toDataFile());
      slot.writer = null;
    }
  }

  private void discard(CopySlot slot) {
    DataWriter<Record> w = slot.writer;
    if (w != null) {
      try {
        w.close();
      } catch (IOException | RuntimeException e) {
        log.debug("closing an abandoned data file of {}: {}", ident, e.getMessage());
      }
    }
    slot.writer = null;
    slot.done.clear();
    slot.seqs.clear();
  }

  // --- changes

  void truncate() {
    discardChanges();
    truncate = true;
    dirty = true;
  }

  void insert(EventSequenceKey key, TableRow row) {
    Record rec = record(row);
    pendingBytes += row.sizeHintBytes();
    if (changelog) {
      appends.add(changelogRow(rec, "INSERT", key, null));
    } else if (keyIndexes.length == 0) {
      appends.add(rec);
    } else if (schema.identity() == IdentityKind.FULL) {
      multi.computeIfAbsent(wholeRow(rec), k -> new Multi(rec)).delta++;
    } else {
      List<@Nullable Object> k = keyOf(rec);
      Upsert u = upserts.get(k);
      upserts.put(k, new Upsert(rec, u != null && u.deleteOld));
    }
  }

  void update(EventSequenceKey key, UpdatedRow row, @Nullable OldRow old) {
    pendingBytes += 64;
    if (changelog) {
      if (old != null) {
        delete(key, old); // the row leaves its old key; the update below writes the new one
      }
      Record rec = GenericRecord.create(table.schema());
      List<String> unchanged = new ArrayList<>();
      for (int i = 0; i < positions.length; i++) {
        if (row.isPresent(i)) {
          rec.set(positions[i], convert(i, row.get(i)));
        } else {
          unchanged.add(schema.columns().get(i).name());
        }
      }
      appends.add(
          changelogRow(
              rec, "UPDATE", key, unchanged.isEmpty() ? null : String.join(",", unchanged)));
      return;
    }
    if (schema.identity() == IdentityKind.FULL && old instanceof OldRow.Full full) {
      Record before = record(full.row());
      Record after = merged(before, row);
      deleteWhole(before);
      multi.computeIfAbsent(wholeRow(after), k -> new Multi(after)).delta++;
      return;
    }
    if (keyIndexes.length == 0 || schema.identity() == IdentityKind.FULL) {
      log.warn(
          "update at {} of iceberg table {} without a usable old row: skipped (the table has no"
              + " replica identity key)",
          key,
          ident);
      return;
    }
    List<@Nullable Object> oldKey = old == null ? newKey(row) : oldKey(old);
    Upsert pending = upserts.get(oldKey);
    Upsert next;
    if (row instanceof UpdatedRow.Full f) {
      next = new Upsert(record(f.row()), true);
    } else if (pending != null && pending.row != null) {
      // the key's row of this commit, itself maybe waiting for values of the committed row
      next = new Upsert(merged(pending.row, row), true);
      next.baseKey = pending.baseKey;
      // a complete pending row leaves nothing to read from the committed one
      BitSet before = pending.missing;
      next.missing = before == null ? null : stillMissing(before, row);
    } else if (pending == null && old instanceof OldRow.Full full) {
      next = new Upsert(merged(record(full.row()), row), true);
    } else if (pending == null) {
      // unchanged TOAST values of a committed row: read once for all such rows, at the commit
      Record partial = template.copy();
      next = new Upsert(merged(partial, row), true);
      next.baseKey = oldKey;
      next.missing = absent(row);
    } else {
      log.warn(
          "update at {} of a row that iceberg table {} deleted earlier in the same commit has"
              + " unchanged TOAST values that were not sent; the row is skipped",
          key,
          ident);
      return;
    }
    List<@Nullable Object> newKey = keyOf(Objects.requireNonNull(next.row, "row"));
    if (!newKey.equals(oldKey)) {
      upserts.put(oldKey, new Upsert(null, true));
    }
    upserts.put(newKey, next);
  }

  /** The columns a partial update does not carry, or null when it carries every one. */
  private @Nullable BitSet absent(UpdatedRow row) {
    BitSet out = new BitSet();
    for (int i = 0; i < positions.length; i++) {
      if (!row.isPresent(i)) {
        out.set(i);
      }
    }
    return out.isEmpty() ? null : out;
  }

  /**
   * The columns still missing after a partial update of a row that missed {@code before}: those it
   * does not carry either; null when none.
   */
  private @Nullable BitSet stillMissing(BitSet before, UpdatedRow row) {
    BitSet out = absent(row);
    if (out != null) {
      out.and(before);
    }
    return out == null || out.isEmpty() ? null : out;
  }

  void delete(EventSequenceKey key, OldRow old) {
    pendingBytes += 64;
    if (changelog) {
      Record rec = GenericRecord.create(table.schema());
      if (old instanceof OldRow.Full full) {
        fill(rec, full.row());
      } else {
        TableRow k = old.row();
        for (int j = 0; j < schema.identityColumnIndexes().length; j++) {
          int i = schema.identityColumnIndexes()[j];
          rec.set(positions[i], convert(i, k.get(j)));
        }
      }
      appends.add(changelogRow(rec, "DELETE", key, null));
      return;
    }
    if (schema.identity() == IdentityKind.FULL && old instanceof OldRow.Full full) {
      deleteWhole(record(full.row()));
      return;
    }
    if (keyIndexes.length == 0 || schema.identity() == IdentityKind.FULL) {
      log.warn("delete at {} of iceberg table {} without a usable old row: skipped", key, ident);
      return;
    }
    upserts.put(oldKey(old), new Upsert(null, true));
  }

  void truncateChangelog(EventSequenceKey key) {
    appends.add(changelogRow(GenericRecord.create(table.schema()), "TRUNCATE", key, null));
  }

  private void deleteWhole(Record before) {
    Multi m = multi.computeIfAbsent(wholeRow(before), k -> new Multi(before));
    m.delta--;
    m.deleted = true;
  }

  private Record changelogRow(
      Record rec, String op, EventSequenceKey key, @Nullable String unchanged) {
    rec.set(0, op);
    rec.set(1, key.commitLsn().value());
    rec.set(2, key.txOrdinal());
    rec.set(table.schema().columns().size() - 1, unchanged);
    return rec;
  }

  // --- commit

  /**
   * Commits everything buffered, with the bookkeeping, as one Iceberg transaction.
   *
   * @param epoch the lease epoch of this instance
   * @throws Fenced when an instance with a greater epoch committed to the table
   */
  void commit(long epoch) {
    table.refresh();
    long stored = parseLong(table.properties().get(EPOCH));
    if (stored > epoch) {
      throw new Fenced(ident, stored, epoch);
    }
    if (changedElsewhere()) {
      throw new ChangedElsewhere(ident);
    }
    List<CopySlot> held = takeSlots();
    try {
      commitHolding(epoch, stored, held);
    } finally {
      putSlots(held);
    }
  }

  private void commitHolding(long epoch, long stored, List<CopySlot> held) {
    List<DataFile> data = new ArrayList<>();
    BatchSet copied = new BatchSet();
    for (CopySlot slot : held) {
      closeInto(slot);
      data.addAll(slot.done);
      copied.addAll(slot.seqs);
    }
    List<Record> rows = new ArrayList<>(appends);
    List<Record> deletes = new ArrayList<>();
    resolveMissing();
    for (Map.Entry<List<@Nullable Object>, Upsert> e : upserts.entrySet()) {
      Upsert u = e.getValue();
      if (u.deleteOld) {
        deletes.add(keyRecord(e.getKey()));
      }
      if (u.row != null) {
        rows.add(u.row);
      }
    }
    if (!multi.isEmpty()) {
      Map<List<@Nullable Object>, Long> counts = countDeleted();
      for (Map.Entry<List<@Nullable Object>, Multi> e : multi.entrySet()) {
        Multi m = e.getValue();
        long keep = m.delta;
        if (m.deleted) {
          deletes.add(keyRecord(e.getKey()));
          keep += counts.getOrDefault(e.getKey(), 0L);
        }
        for (long n = 0; n < keep; n++) {
          rows.add(m.row.copy());
        }
      }
    }
    if (!rows.isEmpty()) {
      DataWriter<Record> w = newDataWriter(false);
      try (w) {
        for (Record r : rows) {
          w.write(r);
        }
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      }
      data.add(w.toDataFile());
    }
    DeleteFile eq = deletes.isEmpty() ? null : writeDeletes(deletes);
    Transaction tx = table.newTransaction();
    if (truncate) {
      tx.newDelete().deleteFromRowFilter(Expressions.alwaysTrue()).commit();
    }
    if (!data.isEmpty() || eq != null) {
      RowDelta delta = tx.newRowDelta();
      data.forEach(delta::addRows);
      if (eq != null) {
        delta.addDeletes(eq);
      }
      delta.set(THROUGH, through == null ? "" : formatKey(through));
      delta.commit();
    }
    BatchSet after = batches.copy();
    after.addAll(copied);
    UpdateProperties props = tx.updateProperties();
    props.set(ATTEMPT, attempt == null ? "" : attempt.toString());
    props.set(BATCHES, after.toString());
    props.set(THROUGH, through == null ? "" : formatKey(through));
    if (epoch > stored) {
      props.set(EPOCH, Long.toString(epoch));
    }
    props.commit();
    tx.commitTransaction();
    if (log.isDebugEnabled()) {
      log.debug(
          "iceberg table {}: committed {} data files ({} changed rows), {} key deletes{}, through {}",
          ident,
          data.size(),
          rows.size(),
          deletes.size(),
          truncate ? ", a truncate" : "",
          through == null ? "-" : formatKey(through));
    }
    batches.addAll(copied);
    for (CopySlot slot : held) {
      slot.done.clear();
      slot.seqs.clear();
    }
    table.refresh();
    remember();
    clearPending();
  }

  /** Forgets everything buffered (a failed commit or a new attempt). */
  void discardPending() {
    discardChanges();
    List<CopySlot> held = takeSlots();
    for (CopySlot slot : held) {
      discard(slot);
    }
    putSlots(held);
    inFlight.clear();
    copyBytes.set(0);
    truncate = false;
    dirty = false;
  }

  private void discardChanges() {
    upserts.clear();
    multi.clear();
    appends.clear();
    pendingBytes = 0;
  }

  private void clearPending() {
    inFlight.clear();
    copyBytes.set(0);
    discardChanges();
    truncate = false;
    dirty = false;
  }

  // --- rows and files

  private Record record(TableRow row) {
    Record rec = template.copy();
    fill(rec, row);
    return rec;
  }

  private void fill(Record rec, TableRow row) {
    for (int i = 0; i < positions.length; i++) {
      rec.set(positions[i], convert(i, row.get(i)));
    }
  }

  private Record merged(Record base, UpdatedRow row) {
    Record rec = base.copy();
    for (int i = 0; i < positions.length; i++) {
      if (row.isPresent(i)) {
        rec.set(positions[i], convert(i, row.get(i)));
      }
    }
    return rec;
  }

  private @Nullable Object convert(int column, @Nullable Object value) {
    return IcebergTypes.toIceberg(value, types[column], columnNames[column], tableName);
  }

  private List<@Nullable Object> keyOf(Record rec) {
    List<@Nullable Object> k = new ArrayList<>(keyIndexes.length);
    for (int i : keyIndexes) {
      k.add(rec.get(positions[i]));
    }
    return k;
  }

  private List<@Nullable Object> wholeRow(Record rec) {
    return keyOf(rec);
  }

  private List<@Nullable Object> oldKey(OldRow old) {
    List<@Nullable Object> k = new ArrayList<>(keyIndexes.length);
    TableRow r = old.row();
    for (int j = 0; j < keyIndexes.length; j++) {
      int i = keyIndexes[j];
      k.add(convert(i, old instanceof OldRow.Full ? r.get(i) : r.get(j)));
    }
    return k;
  }

  private List<@Nullable Object> newKey(UpdatedRow row) {
    List<@Nullable Object> k = new ArrayList<>(keyIndexes.length);
    for (int i : keyIndexes) {
      k.add(convert(i, row.get(i)));
    }
    return k;
  }

  private Record keyRecord(List<@Nullable Object> key) {
    Record rec = GenericRecord.create(keySchema);
    for (int j = 0; j < key.size(); j++) {
      rec.set(j, key.get(j));
    }
    return rec;
  }

  /**
   * Fills the values that updates left unchanged (TOASTed, not sent) from the committed rows, read
   * in one scan for the whole commit; an update of a row the table does not hold is dropped.
   */
  private void resolveMissing() {
    List<List<@Nullable Object>> wanted = new ArrayList<>();
    for (Upsert u : upserts.values()) {
      if (u.row != null && u.missing != null && u.baseKey != null) {
        wanted.add(u.baseKey);
      }
    }
    if (wanted.isEmpty()) {
      return;
    }
    Map<List<@Nullable Object>, Record> committed = new HashMap<>();
    forEachCommitted(wanted, committed::put);
    for (Upsert u : upserts.values()) {
      BitSet missing = u.missing;
      Record row = u.row;
      if (row == null || missing == null || u.baseKey == null) {
        continue;
      }
      Record base = committed.get(u.baseKey);
      if (base == null) {
        log.warn(
            "an update of a row that iceberg table {} does not hold has unchanged TOAST values that"
                + " were not sent; the row is skipped",
            ident);
        u.row = null;
        continue;
      }
      for (int i = missing.nextSetBit(0); i >= 0; i = missing.nextSetBit(i + 1)) {
        row.set(positions[i], base.get(positions[i]));
      }
      u.missing = null;
    }
  }

  /** How many committed copies each deleted whole row has. */
  private Map<List<@Nullable Object>, Long> countDeleted() {
    Map<List<@Nullable Object>, Long> counts = new HashMap<>();
    List<List<@Nullable Object>> wanted = new ArrayList<>();
    for (Map.Entry<List<@Nullable Object>, Multi> e : multi.entrySet()) {
      if (e.getValue().deleted) {
        wanted.add(e.getKey());
      }
    }
    if (!wanted.isEmpty()) {
      forEachCommitted(wanted, (k, r) -> counts.merge(k, 1L, Long::sum));
    }
    return counts;
  }

  /**
   * Reads the committed rows whose key ({@link #keyOf}: the identifier fields, or the whole row of
   * a table without them) is one of {@code keys}, in one scan, with a filter on the values that
   * have a literal; each stored row that matches is passed (equal rows once per copy held).
   */
  private void forEachCommitted(
      List<List<@Nullable Object>> keys,
      java.util.function.BiConsumer<List<@Nullable Object>, Record> row) {
    if (table.currentSnapshot() == null) {
      return;
    }
    java.util.Set<List<@Nullable Object>> set = new java.util.HashSet<>(keys);
    try (CloseableIterable<Record> rs = IcebergGenerics.read(table).where(filter(keys)).build()) {
      for (Record r : rs) {
        List<@Nullable Object> k = keyOf(r);
        if (set.contains(k)) {
          row.accept(k, r);
        }
      }
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** A scan filter for rows with one of these keys; always true when a value has no literal. */
  private Expression filter(List<List<@Nullable Object>> keys) {
    if (keys.size() > 256) {
      return Expressions.alwaysTrue();
    }
    Expression any = Expressions.alwaysFalse();
    for (List<@Nullable Object> key : keys) {
      Expression all = Expressions.alwaysTrue();
      for (int j = 0; j < key.size(); j++) {
        String name = keySchema.columns().get(j).name();
        Object v = key.get(j);
        if (v == null) {
          all = Expressions.and(all, Expressions.isNull(name));
        } else if (v instanceof Integer
            || v instanceof Long
            || v instanceof String
            || v instanceof Boolean
            || v instanceof UUID) {
          all = Expressions.and(all, Expressions.equal(name, v));
        } // other values: not filtered (the rows are matched after the read)
      }
      any = Expressions.or(any, all);
    }
    return any;
  }

  private synchronized OutputFileFactory files() {
    OutputFileFactory f = files;
    if (f == null) {
      f =
          OutputFileFactory.builderFor(table, 1, System.currentTimeMillis())
              .format(FileFormat.PARQUET)
              .operationId(UUID.randomUUID().toString())
              .build();
      files = f;
    }
    return f;
  }

  /**
   * A data file writer: of records in Iceberg's internal representation (epoch days and
   * microseconds, see {@link IcebergTypes#toInternal}) for the copy, which skips building a {@code
   * java.time} object per value only to have it converted back; of generic records otherwise.
   */
  private DataWriter<Record> newDataWriter(boolean internal) {
    try {
      return Parquet.writeData(files().newOutputFile())
          .schema(table.schema())
          .createWriterFunc(internal ? InternalWriter::createWriter : GenericParquetWriter::create)
          .withSpec(table.spec())
          // row groups of 32 MiB: each copy writer buffers one in memory
          .set(TableProperties.PARQUET_ROW_GROUP_SIZE_BYTES, Long.toString(32L << 20))
          .overwrite()
          .build();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  private DeleteFile writeDeletes(List<Record> keys) {
    try {
      EqualityDeleteWriter<Record> w =
          Parquet.writeDeletes(files().newOutputFile())
              .forTable(table)
              .rowSchema(keySchema)
              .equalityFieldIds(keyFieldIds)
              .createWriterFunc(GenericParquetWriter::create)
              .overwrite()
              .buildEqualityWriter();
      try (w) {
        for (Record k : keys) {
          w.write(k);
        }
      }
      return w.toDeleteFile();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** When the schema changes, buffered rows must go first: they follow the old fields. */
  synchronized void rebindAfterCommit(ReplicatedTableSchema source) {
    files = null;
    bind(source);
  }

  // --- bookkeeping text

  static String formatKey(EventSequenceKey key) {
    return key.commitLsn() + "/" + key.txOrdinal();
  }

  static @Nullable EventSequenceKey parseKey(@Nullable String text) {
    if (text == null || text.isEmpty()) {
      return null;
    }
    int last = text.lastIndexOf('/');
    return new EventSequenceKey(
        Lsn.parse(text.substring(0, last)), Long.parseLong(text.substring(last + 1)));
  }

  private static long parseLong(@Nullable String text) {
    return text == null || text.isEmpty() ? 0 : Long.parseLong(text);
  }

  /** A commit refused: an instance with a greater lease epoch committed to the table. */
  static final class Fenced extends RuntimeException {
    private static final long serialVersionUID = 1L;

    Fenced(TableIdentifier ident, long stored, long mine) {
      super(
          "iceberg table "
              + ident
              + " was committed by an instance with lease epoch "
              + stored
              + "; this instance holds epoch "
              + mine,
          null,
          false,
          false);
    }
  }

  /**
   * A commit refused: another instance of the pipeline (with an epoch not greater than this one's)
   * committed to the table since this instance read it; the table's state must be read again.
   */
  static final class ChangedElsewhere extends RuntimeException {
    private static final long serialVersionUID = 1L;

    ChangedElsewhere(TableIdentifier ident) {
      super(
          "iceberg table "
              + ident
              + " was committed by another pgetl instance since this one read its progress",
          null,
          false,
          false);
    }
  }

  @Override
  public String toString() {
    return ident + " " + Arrays.toString(positions) + " " + Objects.toString(attempt);
  }
}
