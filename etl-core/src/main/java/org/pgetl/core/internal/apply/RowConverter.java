package org.pgetl.core.internal.apply;

import java.util.Objects;
import org.jspecify.annotations.Nullable;
import org.pgetl.core.internal.codec.ColumnDecoder;
import org.pgetl.core.internal.codec.ValueCodec;
import org.pgetl.core.internal.decode.TupleData;
import org.pgetl.destination.internal.WireRows;
import org.pgetl.error.ErrorKind;
import org.pgetl.error.EtlException;
import org.pgetl.model.OldRow;
import org.pgetl.model.TableRow;
import org.pgetl.model.TableRow.WireFormat;
import org.pgetl.model.UpdatedRow;

/**
 * Turns pgoutput tuple data into the model's rows. A row keeps the message's bytes and each value's
 * place in them, and decodes a value with its column's codec when the destination first reads it
 * ({@link WireRows}), when its values are all in one form (text, or binary with {@code
 * pgoutputBinary}). A row of mixed forms and a partial UPDATE row (an unchanged TOAST value the old
 * tuple does not hold) are decoded at once.
 */
final class RowConverter {
  private static final long ROW_OVERHEAD = 16;
  private static final long VALUE_OVERHEAD = 16;
  // per value of a row over its message: its span, and its slot for the decoded value
  private static final long SPAN_BYTES = 16;

  private RowConverter() {}

  /**
   * Converts a full tuple (INSERT's new tuple, an old FULL tuple).
   *
   * @param e the relation
   * @param t the tuple
   * @param what the message, for errors
   * @return the row
   */
  static TableRow full(RelationCache.Entry e, TupleData t, String what) {
    checkWidth(e, t, what);
    int n = t.columnCount();
    for (int i = 0; i < n; i++) {
      if (t.isUnchangedToast(i)) {
        throw new EtlException(
            ErrorKind.INVALID_DATA,
            what + " of " + e.schema.name() + " carries an unchanged TOAST value in a full row",
            "column " + e.schema.columns().get(i).name());
      }
    }
    Spans spans = new Spans(n);
    for (int i = 0; i < n && spans.add(t, i); i++) {}
    return spans.complete() ? spans.row(t.buffer(), e.rowDecoder(spans.format)) : eagerFull(e, t);
  }

  private static TableRow eagerFull(RelationCache.Entry e, TupleData t) {
    int n = t.columnCount();
    Object[] values = new Object[n];
    long size = ROW_OVERHEAD;
    for (int i = 0; i < n; i++) {
      values[i] = value(e, t, i);
      size += VALUE_OVERHEAD + Math.max(0, t.length(i));
    }
    return TableRow.wrap(values, size);
  }

  /**
   * Converts an UPDATE's new tuple; unchanged TOAST values are taken from the old tuple when it has
   * them, else reported missing.
   *
   * @param e the relation
   * @param newTuple the new tuple
   * @param oldTuple the old tuple (full or key), or null
   * @return the full or partial row
   */
  static UpdatedRow updated(
      RelationCache.Entry e, TupleData newTuple, @Nullable TupleData oldTuple) {
    checkWidth(e, newTuple, "Update");
    int n = newTuple.columnCount();
    int missingCount = 0;
    for (int i = 0; i < n; i++) {
      if (newTuple.isUnchangedToast(i) && !(oldTuple != null && oldTuple.hasValue(i))) {
        missingCount++;
      }
    }
    if (missingCount == 0) {
      TableRow lazy = lazyUpdated(e, newTuple, oldTuple);
      if (lazy != null) {
        return new UpdatedRow.Full(lazy);
      }
    }
    int[] missing = new int[missingCount];
    Object[] values = new Object[n - missingCount];
    long size = ROW_OVERHEAD;
    int m = 0;
    int v = 0;
    for (int i = 0; i < n; i++) {
      if (newTuple.isUnchangedToast(i)) {
        if (oldTuple != null && oldTuple.hasValue(i)) {
          values[v++] = value(e, oldTuple, i);
          size += VALUE_OVERHEAD + oldTuple.length(i);
        } else {
          missing[m++] = i;
        }
      } else {
        values[v++] = value(e, newTuple, i);
        size += VALUE_OVERHEAD + Math.max(0, newTuple.length(i));
      }
    }
    TableRow row = TableRow.wrap(values, size);
    return missingCount == 0 ? new UpdatedRow.Full(row) : new UpdatedRow.Partial(n, row, missing);
  }

  /**
   * Returns an UPDATE's whole new row over the message's bytes, its unchanged TOAST values taken
   * from the old tuple; null when a value is not in text form.
   */
  private static @Nullable TableRow lazyUpdated(
      RelationCache.Entry e, TupleData newTuple, @Nullable TupleData oldTuple) {
    int n = newTuple.columnCount();
    Spans spans = new Spans(n);
    for (int i = 0; i < n; i++) {
      TupleData t = newTuple.isUnchangedToast(i) ? oldTuple : newTuple;
      // both tuples of one message share its bytes
      if (t == null || t.buffer() != newTuple.buffer() || !spans.add(t, i)) {
        return null;
      }
    }
    return spans.row(newTuple.buffer(), e.rowDecoder(spans.format));
  }

  /**
   * Converts an old tuple of UPDATE or DELETE.
   *
   * @param e the relation
   * @param kind the old tuple's kind
   * @param t the old tuple
   * @param what the message, for errors
   * @return the old row, or null when there is none
   */
  static @Nullable OldRow old(
      RelationCache.Entry e,
      org.pgetl.core.internal.decode.PgOutputMessage.OldTupleKind kind,
      @Nullable TupleData t,
      String what) {
    if (kind == org.pgetl.core.internal.decode.PgOutputMessage.OldTupleKind.NONE) {
      return null;
    }
    TupleData old = Objects.requireNonNull(t, "a message with an old tuple kind carries the tuple");
    switch (kind) {
      case FULL -> {
        return new OldRow.Full(full(e, old, what));
      }
      case KEY -> {
        checkWidth(e, old, what);
        int[] idx = e.identity;
        if (idx.length == 0) {
          // no key columns known: keep every column the server sent
          return new OldRow.Key(full(e, old, what));
        }
        return new OldRow.Key(key(e, old, idx));
      }
      default -> throw new IllegalStateException("unknown old tuple kind " + kind);
    }
  }

  private static TableRow key(RelationCache.Entry e, TupleData old, int[] idx) {
    Spans spans = new Spans(idx.length);
    for (int k = 0; k < idx.length && spans.add(old, idx[k]); k++) {}
    if (spans.complete()) {
      // a key row keeps the whole message, which for a key-changing UPDATE holds the new tuple's
      // values too: count the message whole (a row of the message's own tuple counts its values)
      return spans.row(old.buffer(), e.keyDecoder(spans.format), old.buffer().length);
    }
    Object[] key = new Object[idx.length];
    long size = ROW_OVERHEAD;
    for (int k = 0; k < idx.length; k++) {
      key[k] = value(e, old, idx[k]);
      size += VALUE_OVERHEAD + Math.max(0, old.length(idx[k]));
    }
    return TableRow.wrap(key, size);
  }

  /**
   * The spans of a row's values in their message, collected value by value while they are all in
   * one form (text, or binary with {@code pgoutputBinary}); a NULL fits either.
   */
  private static final class Spans {
    final long[] spans;
    int count;
    long size;
    @Nullable WireFormat format;

    Spans(int n) {
      spans = new long[n];
      size = ROW_OVERHEAD + SPAN_BYTES * n;
    }

    /** Adds the tuple's value of a column; false when it cannot be kept in the row's form. */
    boolean add(TupleData t, int column) {
      WireFormat f;
      switch (t.kind(column)) {
        case NULL -> {
          spans[count++] = WireRows.NULL;
          return true;
        }
        case TEXT -> f = WireFormat.TEXT;
        case BINARY -> f = WireFormat.BINARY;
        default -> {
          return false;
        }
      }
      if (format != null && format != f) {
        return false;
      }
      format = f;
      spans[count++] = WireRows.span(t.offset(column), t.length(column));
      size += VALUE_OVERHEAD + t.length(column);
      return true;
    }

    boolean complete() {
      return count == spans.length;
    }

    TableRow row(byte[] buffer, ColumnDecoder decoder) {
      return row(buffer, decoder, 0);
    }

    TableRow row(byte[] buffer, ColumnDecoder decoder, long keptBytes) {
      return WireRows.row(buffer, spans, decoder, size + keptBytes);
    }
  }

  private static @Nullable Object value(RelationCache.Entry e, TupleData t, int i) {
    ValueCodec codec = e.codecs[i];
    switch (t.kind(i)) {
      case NULL:
        return null;
      case TEXT:
        return codec.decodeText(t.buffer(), t.offset(i), t.length(i));
      case BINARY:
        return codec.decodeBinary(t.buffer(), t.offset(i), t.length(i));
      case UNCHANGED_TOAST:
      default:
        throw new EtlException(
            ErrorKind.INVALID_DATA,
            "unexpected unchanged TOAST value in " + e.schema.name(),
            "column " + e.schema.columns().get(i).name());
    }
  }

  private static void checkWidth(RelationCache.Entry e, TupleData t, String what) {
    if (t.columnCount() != e.codecs.length) {
      throw new EtlException(
          ErrorKind.REPLICATION_PROTOCOL_ERROR,
          what
              + " of "
              + e.schema.name()
              + " has "
              + t.columnCount()
              + " columns but its RELATION has "
              + e.codecs.length,
          "table oid " + e.table);
    }
  }
}
