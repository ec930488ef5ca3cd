package org.pgetl.testkit.destination;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import org.jspecify.annotations.Nullable;
import org.pgetl.destination.TableCopyBatchId;
import org.pgetl.model.ColumnSchema;
import org.pgetl.model.EventSequenceKey;
import org.pgetl.model.IdentityKind;
import org.pgetl.model.ReplicatedTableSchema;
import org.pgetl.model.TableId;

/**
 * The materialised contents of one table in a {@link RecordingDestination}, with its deduplication
 * state. Not thread-safe: the recording guards it with its lock.
 *
 * <p>Rows are stored by key: the identity columns' values for a table with a primary key or a
 * replica identity index; every value for a table without one (FULL or NOTHING), where the same row
 * may then occur several times (a count per distinct row).
 */
final class TableContents {
  /** One stored row and how many times it occurs (always 1 for a keyed table). */
  static final class Entry {
    final Object[] values;
    int count;

    Entry(Object[] values, int count) {
      this.values = values;
      this.count = count;
    }
  }

  final TableId id;

  /** The layout of the stored rows; null until the table's first write. */
  @Nullable ReplicatedTableSchema schema;

  /** The sequence key of the event that set {@link #schema}, or null when a copy or drop did. */
  @Nullable EventSequenceKey schemaKey;

  /**
   * The greatest sequence key of an event applied to the table since its last drop; null when none
   * was.
   */
  @Nullable EventSequenceKey appliedKey;

  /** The copy attempt the last drop named; null before the first drop. */
  @Nullable UUID currentAttempt;

  /** Whether dropTableForCopy was called at least once. */
  boolean dropped;

  /** The batch ids of the current copy attempt. */
  final Set<TableCopyBatchId> attemptBatches = new HashSet<>();

  int drops;
  int finishes;

  /** Whether the current copy attempt is open: dropped, its Finish not received yet. */
  boolean attemptOpen;

  /** Whether the current copy attempt is a chunked one (a ChunkEnd arrived). */
  boolean chunked;

  private final Map<List<@Nullable Object>, Entry> rows = new LinkedHashMap<>();

  TableContents(TableId id) {
    this.id = id;
  }

  boolean keyed() {
    ReplicatedTableSchema s = schema;
    return s != null && keyed(s);
  }

  private static boolean keyed(ReplicatedTableSchema s) {
    return (s.identity() == IdentityKind.PRIMARY_KEY || s.identity() == IdentityKind.INDEX)
        && s.identityColumnIndexes().length > 0;
  }

  /** Returns the key of a full row under the current layout. */
  List<@Nullable Object> keyOf(Object[] values) {
    ReplicatedTableSchema s = schema;
    if (s == null || !keyed(s)) {
      return Rows.row(values);
    }
    int[] idx = s.identityColumnIndexes();
    Object[] key = new Object[idx.length];
    for (int i = 0; i < idx.length; i++) {
      key[i] = values[idx[i]];
    }
    return Rows.row(key);
  }

  /**
   * Makes {@code s} the layout of the table, reshaping stored rows by column attnum ({@link
   * ColumnSchema#ordinalPosition()}, as the destination contract asks) when the columns or the
   * identity change: a column keeps its values across a rename or a type change, a new attnum reads
   * null, the values of an attnum that is gone go away. An attnum of 0 or less identifies nothing.
   *
   * @return true when the stored rows were reshaped
   */
  boolean adopt(ReplicatedTableSchema s) {
    if (schema == null || rows.isEmpty()) {
      schema = s;
      return false;
    }
    if (s.equals(schema)) {
      return false;
    }
    ReplicatedTableSchema old = schema;
    schema = s;
    if (attnums(old).equals(attnums(s))
        && !attnums(s).contains(0)
        && old.identity() == s.identity()
        && Arrays.equals(old.identityColumnIndexes(), s.identityColumnIndexes())) {
      return false;
    }
    List<Integer> oldAttnums = attnums(old);
    int[] from = new int[s.columnCount()];
    for (int i = 0; i < from.length; i++) {
      int attnum = s.columns().get(i).ordinalPosition();
      from[i] = attnum > 0 ? oldAttnums.indexOf(attnum) : -1;
    }
    List<Entry> entries = new ArrayList<>(rows.values());
    rows.clear();
    for (Entry e : entries) {
      Object[] values = new Object[from.length];
      for (int i = 0; i < from.length; i++) {
        values[i] = from[i] < 0 ? null : e.values[from[i]];
      }
      for (int c = 0; c < e.count; c++) {
        insert(values);
      }
    }
    return true;
  }

  /** Returns the attnums of the columns, in order; an unknown attnum (0 or less) reads 0. */
  static List<Integer> attnums(ReplicatedTableSchema s) {
    List<Integer> out = new ArrayList<>(s.columnCount());
    for (ColumnSchema c : s.columns()) {
      out.add(Math.max(0, c.ordinalPosition()));
    }
    return out;
  }

  /** Inserts a row: replaces the row of the same key (keyed), or adds one occurrence. */
  void insert(Object[] values) {
    List<@Nullable Object> key = keyOf(values);
    if (keyed()) {
      rows.put(key, new Entry(values, 1));
    } else {
      Entry e = rows.get(key);
      if (e == null) {
        rows.put(key, new Entry(values, 1));
      } else {
        e.count++;
      }
    }
  }

  @Nullable Entry find(List<@Nullable Object> key) {
    return rows.get(key);
  }

  /** Removes one occurrence of the row with this key; false when there is none. */
  boolean removeOne(List<@Nullable Object> key) {
    Entry e = rows.get(key);
    if (e == null) {
      return false;
    }
    if (--e.count == 0) {
      rows.remove(key);
    }
    return true;
  }

  void clearRows() {
    rows.clear();
  }

  int rowCount() {
    int n = 0;
    for (Entry e : rows.values()) {
      n += e.count;
    }
    return n;
  }

  /** Returns every row (occurrences repeated), sorted by {@link Rows#order()}. */
  List<List<@Nullable Object>> sortedRows() {
    List<List<@Nullable Object>> out = new ArrayList<>(rows.size());
    for (Entry e : rows.values()) {
      List<@Nullable Object> row = Rows.row(e.values);
      for (int c = 0; c < e.count; c++) {
        out.add(row);
      }
    }
    return Rows.sorted(out);
  }
}
