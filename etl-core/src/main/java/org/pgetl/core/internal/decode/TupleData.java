package org.pgetl.core.internal.decode;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * The columns of one row in a pgoutput Insert, Update or Delete message ("TupleData"): for each
 * column a {@link Kind} and, for text and binary values, where the value's bytes lie in the message
 * buffer.
 *
 * <p>Values are not copied: {@link #buffer()} is the array the message arrived in, and {@link
 * #offset(int)} and {@link #length(int)} locate each value in it, so that a value codec can read it
 * in place. Nobody may write to that array while the tuple is in use (pgjdbc allocates a new one
 * per message). A text value is the type's output function's text, in the server encoding (UTF-8
 * for pgetl); a binary value is the type's send function's bytes.
 *
 * <p>Columns are in the order of the Relation message that describes the table. {@link #toString()}
 * shows the kinds only, never values.
 */
public final class TupleData {
  /** How one column of a tuple is sent. */
  public enum Kind {
    /** {@code 'n'}: the value is SQL NULL. */
    NULL('n'),
    /**
     * {@code 'u'}: an unchanged TOASTed value that the server did not send; the column keeps its
     * old value.
     */
    UNCHANGED_TOAST('u'),
    /** {@code 't'}: the value in text form. */
    TEXT('t'),
    /** {@code 'b'}: the value in binary form (pgoutput option {@code binary}). */
    BINARY('b');

    private final char code;

    Kind(char code) {
      this.code = code;
    }

    /**
     * Returns the byte that marks this kind on the wire.
     *
     * @return {@code 'n'}, {@code 'u'}, {@code 't'} or {@code 'b'}
     */
    public char code() {
      return code;
    }
  }

  private static final int NO_VALUE = -1;

  private final byte[] buffer;
  private final byte[] kinds;
  // offset of column i at [2i], length at [2i + 1]; both -1 for NULL and UNCHANGED_TOAST
  private final int[] ranges;

  TupleData(byte[] buffer, byte[] kinds, int[] ranges) {
    this.buffer = buffer;
    this.kinds = kinds;
    this.ranges = ranges;
  }

  /**
   * Returns the number of columns in this tuple.
   *
   * @return the column count, 0 or more
   */
  public int columnCount() {
    return kinds.length;
  }

  /**
   * Returns how a column is sent.
   *
   * @param column the column index, from 0
   * @return the kind
   * @throws IndexOutOfBoundsException when there is no such column
   */
  public Kind kind(int column) {
    return switch (kinds[column]) {
      case 'n' -> Kind.NULL;
      case 'u' -> Kind.UNCHANGED_TOAST;
      case 't' -> Kind.TEXT;
      default -> Kind.BINARY;
    };
  }

  /**
   * Returns true when a column is SQL NULL.
   *
   * @param column the column index, from 0
   * @return whether the column is {@link Kind#NULL}
   */
  public boolean isNull(int column) {
    return kinds[column] == 'n';
  }

  /**
   * Returns true when a column is an unchanged TOASTed value that was not sent.
   *
   * @param column the column index, from 0
   * @return whether the column is {@link Kind#UNCHANGED_TOAST}
   */
  public boolean isUnchangedToast(int column) {
    return kinds[column] == 'u';
  }

  /**
   * Returns true when a column carries a value (text or binary).
   *
   * @param column the column index, from 0
   * @return whether the column is {@link Kind#TEXT} or {@link Kind#BINARY}
   */
  public boolean hasValue(int column) {
    return ranges[2 * column] != NO_VALUE;
  }

  /**
   * Returns the array that holds the values of this tuple: the message buffer itself. Read it,
   * never write to it.
   *
   * @return the shared array
   */
  public byte[] buffer() {
    return buffer;
  }

  /**
   * Returns where a column's value starts in {@link #buffer()}.
   *
   * @param column the column index, from 0
   * @return the index of the value's first byte, or -1 when the column has no value
   */
  public int offset(int column) {
    return ranges[2 * column];
  }

  /**
   * Returns the length in bytes of a column's value.
   *
   * @param column the column index, from 0
   * @return the length, 0 or more, or -1 when the column has no value
   */
  public int length(int column) {
    return ranges[2 * column + 1];
  }

  /**
   * Returns a view of a column's value bytes, without copying them.
   *
   * @param column the column index, from 0
   * @return the value's bytes, or null when the column has no value
   */
  public @Nullable ByteSlice value(int column) {
    int offset = ranges[2 * column];
    return offset == NO_VALUE ? null : new ByteSlice(buffer, offset, ranges[2 * column + 1]);
  }

  /**
   * Returns a column's value bytes decoded as UTF-8: the text of a {@link Kind#TEXT} value.
   *
   * @param column the column index, from 0
   * @return the text, or null when the column has no value
   */
  public @Nullable String text(int column) {
    int offset = ranges[2 * column];
    return offset == NO_VALUE
        ? null
        : new String(buffer, offset, ranges[2 * column + 1], StandardCharsets.UTF_8);
  }

  /**
   * Returns true when the other object is a tuple with the same kinds and the same value bytes.
   *
   * @param other the other object
   * @return whether the tuples are equal
   */
  @Override
  public boolean equals(Object other) {
    if (this == other) {
      return true;
    }
    if (!(other instanceof TupleData that) || !Arrays.equals(kinds, that.kinds)) {
      return false;
    }
    for (int i = 0; i < kinds.length; i++) {
      int off = ranges[2 * i];
      int len = ranges[2 * i + 1];
      int thatOff = that.ranges[2 * i];
      int thatLen = that.ranges[2 * i + 1];
      if (off == NO_VALUE) {
        continue;
      }
      if (!Arrays.equals(buffer, off, off + len, that.buffer, thatOff, thatOff + thatLen)) {
        return false;
      }
    }
    return true;
  }

  /**
   * Returns a hash of the kinds and value bytes.
   *
   * @return the hash
   */
  @Override
  public int hashCode() {
    int h = Arrays.hashCode(kinds);
    for (int i = 0; i < kinds.length; i++) {
      h = 31 * h + Objects.hashCode(value(i));
    }
    return h;
  }

  /**
   * Returns the column kinds, never the values, like {@code TupleData[ttnu]}.
   *
   * @return the description
   */
  @Override
  public String toString() {
    return "TupleData[" + new String(kinds, StandardCharsets.US_ASCII) + "]";
  }
}
