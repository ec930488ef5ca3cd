package org.pgetl.core.internal.codec;

import java.util.List;
import org.pgetl.destination.internal.WireDecoder;
import org.pgetl.error.EtlException;
import org.pgetl.model.TableRow.WireFormat;

/**
 * Decodes the values of rows that keep their wire bytes ({@link
 * org.pgetl.destination.internal.WireRows}): per column of the row, its codec and the form its
 * values arrive in. Immutable and thread-safe; one serves every row of a COPY or of a relation's
 * changes. A value that fails names its column and table.
 */
public final class ColumnDecoder implements WireDecoder {
  private final ValueCodec[] codecs;
  private final WireFormat[] formats;
  private final String[] names;
  private final String table;

  /**
   * Creates a decoder.
   *
   * @param codecs per column of the row, its codec
   * @param formats per column, the form of its values
   * @param names per column, its name (for errors)
   * @param table the table's name (for errors)
   */
  public ColumnDecoder(
      List<ValueCodec> codecs, List<WireFormat> formats, List<String> names, String table) {
    if (codecs.size() != formats.size() || codecs.size() != names.size()) {
      throw new IllegalArgumentException("one codec, format and name per column");
    }
    this.codecs = codecs.toArray(new ValueCodec[0]);
    this.formats = formats.toArray(new WireFormat[0]);
    this.names = names.toArray(new String[0]);
    this.table = table;
  }

  /**
   * Returns the number of columns.
   *
   * @return the column count
   */
  public int columnCount() {
    return codecs.length;
  }

  /**
   * Returns the heap a value of a column takes once decoded, for batch sizing.
   *
   * @param column the column
   * @param len the value's wire length
   * @return the estimate in bytes
   */
  public long heapEstimate(int column, int len) {
    return codecs[column].heapEstimate(len);
  }

  @Override
  public WireFormat format(int column) {
    return formats[column];
  }

  @Override
  public Object decode(int column, byte[] buf, int off, int len) {
    try {
      return formats[column] == WireFormat.BINARY
          ? codecs[column].decodeBinary(buf, off, len)
          : codecs[column].decodeText(buf, off, len);
    } catch (EtlException e) {
      throw new EtlException(
          e.kind(),
          "column " + names[column] + " of " + table + ": " + e.description(),
          e.detail(),
          e);
    }
  }
}
