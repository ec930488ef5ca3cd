package org.pgetl.core.internal.codec;

import java.util.List;
import org.jspecify.annotations.Nullable;
import org.pgetl.error.ErrorKind;
import org.pgetl.error.EtlException;
import org.pgetl.model.TableRow;

/**
 * Parses the rows of a {@code COPY ... TO STDOUT}, one CopyData message at a time, as pgjdbc's
 * {@code CopyOut.readFromCopy()} hands them out: the server sends one message per row, in the
 * binary format the file header comes with the first row and the trailer alone in the last message.
 * A parser belongs to one COPY and one thread.
 *
 * <p>When a parse fails, the caller must end the COPY ({@code CopyOut.cancelCopy()}) before it uses
 * the connection again: pgjdbc keeps the connection locked while a COPY is active, and the next
 * statement would wait forever.
 */
public abstract sealed class CopyRowParser permits CopyTextParser, CopyBinaryParser {
  final ValueCodec[] codecs;
  long lastRowSizeHint;

  CopyRowParser(List<ValueCodec> codecs) {
    this.codecs = codecs.toArray(new ValueCodec[0]);
  }

  /**
   * Returns a parser for a COPY format.
   *
   * @param binary true for {@code FORMAT binary}, false for the text format
   * @param codecs the codecs of the copied columns, in COPY order
   * @return the parser
   */
  public static CopyRowParser create(boolean binary, List<ValueCodec> codecs) {
    return binary ? new CopyBinaryParser(codecs) : new CopyTextParser(codecs);
  }

  /**
   * Parses one CopyData message.
   *
   * @param message the message's bytes
   * @param off where the message starts
   * @param len the message's length
   * @return the row's values in column order (nulls for SQL NULL), or null when the message holds
   *     no row (the binary header or trailer alone)
   * @throws EtlException of kind {@link ErrorKind#INVALID_DATA} when the message is malformed or a
   *     value is invalid
   */
  public abstract @Nullable Object @Nullable [] parseRow(byte[] message, int off, int len);

  /**
   * Parses one CopyData message into a row.
   *
   * @param message the message's bytes
   * @return the row, or null when the message holds no row
   * @throws EtlException when the message is malformed or a value is invalid
   */
  public final @Nullable TableRow parse(byte[] message) {
    @Nullable Object[] values = parseRow(message, 0, message.length);
    return values == null ? null : TableRow.wrap(values, lastRowSizeHint);
  }

  /**
   * Returns an estimate of the heap the last parsed row takes once decoded (its values, their
   * objects and the row itself), for {@link TableRow#wrap}.
   *
   * @return the estimate in bytes
   */
  public final long lastRowSizeHint() {
    return lastRowSizeHint;
  }

  /**
   * Checks that the COPY ended properly (the binary format's trailer was seen); call it once {@code
   * readFromCopy()} returned null.
   *
   * @throws EtlException of kind {@link ErrorKind#INVALID_DATA} when the data ended early
   */
  public abstract void finish();

  /**
   * Returns the number of columns each row must have.
   *
   * @return the column count
   */
  public final int columnCount() {
    return codecs.length;
  }

  static EtlException malformed(String format, String reason) {
    return new EtlException(
        ErrorKind.INVALID_DATA,
        "malformed COPY " + format + " data",
        reason + "; the COPY must be read again");
  }

  /** Adds the column to a value's failure. */
  final EtlException inColumn(int col, EtlException e) {
    return new EtlException(
        e.kind(), "column " + (col + 1) + ": " + e.description(), e.detail(), e);
  }

  /**
   * The heap of a row without its values: the TableRow, its Object[] and the batch's reference to
   * it. Added to the values' {@link ValueCodec#heapEstimate}, it bounds copy batches by the memory
   * their rows take once decoded, not by their wire bytes.
   */
  static long rowOverhead(int columns) {
    return 56 + 8L * columns;
  }
}
