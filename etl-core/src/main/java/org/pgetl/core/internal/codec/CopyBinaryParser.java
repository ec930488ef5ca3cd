package org.pgetl.core.internal.codec;

import java.util.ArrayList;
import java.util.List;
import org.jspecify.annotations.Nullable;
import org.pgetl.destination.internal.WireRows;
import org.pgetl.error.EtlException;
import org.pgetl.model.TableRow;
import org.pgetl.model.TableRow.WireFormat;

/**
 * Parses rows of {@code COPY ... TO STDOUT (FORMAT binary)}: an 11-byte signature, int32 flags and
 * an int32-sized header extension before the first row; each row an int16 field count and per field
 * an int32 length (-1 for NULL) and the value's binary form; an int16 -1 trailer.
 *
 * <p>A column whose codec cannot decode binary ({@link ValueCodec#canDecodeBinary()} is false) must
 * be copied as text, {@code SELECT col::text}: the parser then decodes its bytes, which are its
 * text form, with {@link ValueCodec#decodeText}. That way every table can be copied in binary.
 */
public final class CopyBinaryParser extends CopyRowParser {
  private static final byte[] SIGNATURE = {
    'P', 'G', 'C', 'O', 'P', 'Y', '\n', (byte) 0xFF, '\r', '\n', 0
  };

  private final boolean[] asText;
  // rows per shared span array of parseWire: 8 KiB of spans for a table of 8 columns
  private static final int SPAN_CHUNK_ROWS = 128;

  private boolean headerSeen;
  private final long[] estimateBase;
  private final long[] estimatePerByte;
  private long[] spanChunk = new long[0];
  private int spanNext;
  private boolean trailerSeen;

  /**
   * Creates a parser.
   *
   * @param codecs the codecs of the copied columns, in COPY order; columns whose codec cannot
   *     decode binary must be selected cast to {@code text}
   */
  public CopyBinaryParser(List<ValueCodec> codecs) {
    super(codecs);
    asText = new boolean[this.codecs.length];
    estimateBase = new long[this.codecs.length];
    estimatePerByte = new long[this.codecs.length];
    for (int i = 0; i < asText.length; i++) {
      asText[i] = !this.codecs[i].canDecodeBinary();
      // most codecs' estimates are linear in the value's length: read those once, not per value
      long base = this.codecs[i].heapEstimate(0);
      long perByte = this.codecs[i].heapEstimate(1) - base;
      boolean linear = this.codecs[i].heapEstimate(1 << 20) == base + perByte * (1 << 20);
      estimateBase[i] = linear ? base : -1;
      estimatePerByte[i] = perByte;
    }
  }

  /**
   * Returns true when a column of this codec must be selected as {@code col::text} in a binary
   * COPY.
   *
   * @param codec the column's codec
   * @return whether the column needs a cast to text
   */
  public static boolean needsTextCast(ValueCodec codec) {
    return !codec.canDecodeBinary();
  }

  @Override
  public @Nullable Object @Nullable [] parseRow(byte[] m, int off, int len) {
    if (m == null || off < 0 || len < 0 || off > m.length - len) {
      throw malformed("binary", "message bounds outside the buffer");
    }
    int p = off;
    int end = off + len;
    p = rowStart(m, p, end);
    if (p < 0) {
      return null;
    }
    int n = codecs.length;
    @Nullable Object[] values = new Object[n];
    long size = rowOverhead(n);
    for (int col = 0; col < n; col++) {
      if (end - p < 4) {
        throw malformed("binary", "truncated field length in column " + (col + 1));
      }
      int flen = Bytes.int32(m, p);
      p += 4;
      if (flen == -1) {
        continue;
      }
      if (flen < 0 || flen > end - p) {
        throw malformed("binary", "field length out of range in column " + (col + 1));
      }
      try {
        values[col] =
            asText[col] ? codecs[col].decodeText(m, p, flen) : codecs[col].decodeBinary(m, p, flen);
      } catch (EtlException e) {
        throw inColumn(col, e);
      }
      size += estimate(col, flen);
      p += flen;
    }
    if (p != end) {
      throw malformed("binary", "a CopyData message holds more than one row");
    }
    lastRowSizeHint = size;
    return values;
  }

  /**
   * Returns the decoder of this COPY's columns for {@link #parseWire}: binary, except the columns
   * selected as text.
   *
   * @param names the columns' names, in COPY order (for errors)
   * @param table the table's name (for errors)
   * @return the decoder
   */
  public ColumnDecoder decoder(List<String> names, String table) {
    List<WireFormat> formats = new ArrayList<>(asText.length);
    for (boolean text : asText) {
      formats.add(text ? WireFormat.TEXT : WireFormat.BINARY);
    }
    return new ColumnDecoder(List.of(codecs), formats, names, table);
  }

  /**
   * Parses one CopyData message into a row that keeps the message and decodes a value when it is
   * first read: the message's structure (field count, field lengths) is checked here, the values
   * are not. The message must not be changed afterwards.
   *
   * @param m the message, as {@code readFromCopy()} returned it
   * @param decoder this COPY's {@link #decoder}
   * @return the row, or null when the message holds no row (the header or trailer alone)
   * @throws EtlException of kind {@code INVALID_DATA} when the message is malformed
   */
  public @Nullable TableRow parseWire(byte[] m, ColumnDecoder decoder) {
    int p = 0;
    int end = m.length;
    p = rowStart(m, p, end);
    if (p < 0) {
      return null;
    }
    int n = codecs.length;
    // the rows share one span array, allocated for many rows at a time
    if (spanChunk.length - spanNext < n) {
      spanChunk = new long[n * SPAN_CHUNK_ROWS];
      spanNext = 0;
    }
    long[] spans = spanChunk;
    int base = spanNext;
    // the message, its share of the spans, and the values once they are read
    long size = rowOverhead(n) + 8L * n + 16 + end;
    for (int col = 0; col < n; col++) {
      if (end - p < 4) {
        throw malformed("binary", "truncated field length in column " + (col + 1));
      }
      int flen = Bytes.int32(m, p);
      p += 4;
      if (flen == -1) {
        spans[base + col] = WireRows.NULL;
        continue;
      }
      if (flen < 0 || flen > end - p) {
        throw malformed("binary", "field length out of range in column " + (col + 1));
      }
      spans[base + col] = WireRows.span(p, flen);
      size += estimate(col, flen);
      p += flen;
    }
    if (p != end) {
      throw malformed("binary", "a CopyData message holds more than one row");
    }
    lastRowSizeHint = size;
    spanNext = base + n;
    return WireRows.row(m, spans, base, n, decoder, size);
  }

  /** The heap a column's decoded value takes, from the estimates read once per column. */
  private long estimate(int col, int flen) {
    long fixed = estimateBase[col];
    return fixed >= 0 ? fixed + estimatePerByte[col] * flen : codecs[col].heapEstimate(flen);
  }

  /**
   * Reads what precedes a row's fields in a CopyData message: the file header (first message), the
   * field count or the trailer.
   *
   * @return where the row's first field starts, or -1 when the message holds no row (the header
   *     alone, or the trailer)
   */
  private int rowStart(byte[] m, int start, int end) {
    int p = start;
    if (!headerSeen) {
      p = header(m, p, end);
      if (p == end) {
        return -1;
      }
    }
    if (trailerSeen) {
      throw malformed("binary", "data after the trailer");
    }
    if (end - p < 2) {
      throw malformed("binary", "truncated field count");
    }
    int count = Bytes.int16(m, p);
    p += 2;
    if (count == -1) {
      trailerSeen = true;
      if (p != end) {
        throw malformed("binary", "bytes after the trailer");
      }
      return -1;
    }
    if (count != codecs.length) {
      throw malformed("binary", "row has " + count + " columns, expected " + codecs.length);
    }
    return p;
  }

  private int header(byte[] m, int p, int end) {
    if (end - p < SIGNATURE.length + 8) {
      throw malformed("binary", "truncated file header");
    }
    for (byte s : SIGNATURE) {
      if (m[p++] != s) {
        throw malformed("binary", "bad file signature");
      }
    }
    int flags = Bytes.int32(m, p);
    // bit 16 means OIDs are included; bits 17-31 are unknown critical flags
    if ((flags & 0xFFFF0000) != 0) {
      throw malformed("binary", "unsupported header flags " + Integer.toHexString(flags));
    }
    int ext = Bytes.int32(m, p + 4);
    p += 8;
    if (ext < 0 || ext > end - p) {
      throw malformed("binary", "header extension out of range");
    }
    headerSeen = true;
    return p + ext;
  }

  @Override
  public void finish() {
    if (!trailerSeen) {
      throw malformed("binary", headerSeen ? "no trailer" : "no file header");
    }
  }
}
