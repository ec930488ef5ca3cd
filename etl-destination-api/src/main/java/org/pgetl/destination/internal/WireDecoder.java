package org.pgetl.destination.internal;

import org.jspecify.annotations.Nullable;
import org.pgetl.model.TableRow.WireFormat;

/**
 * Turns the wire bytes of one column of a row into its Java value: what a row made by {@link
 * WireRows} calls when a value is first read. One decoder serves every row of a table's copy or of
 * one relation's changes; it must be thread-safe and keep no reference to the bytes it is given.
 */
public interface WireDecoder {
  /**
   * Returns the form in which a column's values arrive.
   *
   * @param column the column's index in the row
   * @return the form
   */
  WireFormat format(int column);

  /**
   * Decodes one value.
   *
   * @param column the column's index in the row
   * @param buf the bytes
   * @param off where the value starts
   * @param len the value's length
   * @return the value (never null: SQL NULL has no bytes and is not decoded)
   * @throws org.pgetl.error.EtlException of kind {@code INVALID_DATA} when the bytes are not a
   *     value of the column's type; the message names the column
   */
  @Nullable Object decode(int column, byte[] buf, int off, int len);
}
