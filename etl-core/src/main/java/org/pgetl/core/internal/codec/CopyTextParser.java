package org.pgetl.core.internal.codec;

import java.util.List;
import org.jspecify.annotations.Nullable;
import org.pgetl.error.EtlException;

/**
 * Parses rows of {@code COPY ... TO STDOUT} in the text format: a row ends with a newline, columns
 * are separated by tabs, {@code \N} is SQL NULL, and backslash escapes ({@code \b \f \n \r \t \v
 * \\}, {@code \ooo} octal, {@code \xhh} hex, a backslash before any other character) stand for
 * bytes. Fields without a backslash are decoded straight from the message.
 */
public final class CopyTextParser extends CopyRowParser {
  private byte[] scratch = new byte[256];

  /**
   * Creates a parser.
   *
   * @param codecs the codecs of the copied columns, in COPY order
   */
  public CopyTextParser(List<ValueCodec> codecs) {
    super(codecs);
  }

  @Override
  public @Nullable Object @Nullable [] parseRow(byte[] m, int off, int len) {
    if (m == null || off < 0 || len < 0 || off > m.length - len) {
      throw malformed("text", "message bounds outside the buffer");
    }
    if (len == 0 || m[off + len - 1] != '\n') {
      throw malformed("text", "row does not end with a newline");
    }
    int end = off + len - 1;
    int n = codecs.length;
    if (end - off == 2 && m[off] == '\\' && m[off + 1] == '.') {
      return null; // end-of-data marker
    }
    @Nullable Object[] values = new Object[n];
    long size = rowOverhead(n);
    if (n == 0) {
      if (end != off) {
        throw malformed("text", "row has columns, expected none");
      }
      lastRowSizeHint = size;
      return values;
    }
    int p = off;
    int col = 0;
    while (true) {
      int start = p;
      boolean escaped = false;
      while (p < end) {
        byte c = m[p];
        if (c == '\t') {
          break;
        }
        if (c == '\\') {
          escaped = true;
          p++;
        }
        p++;
      }
      if (p > end) {
        throw malformed("text", "row ends with a lone backslash");
      }
      if (col == n) {
        throw malformed("text", "row has more than " + n + " columns");
      }
      int flen = p - start;
      try {
        if (!escaped) {
          values[col] = codecs[col].decodeText(m, start, flen);
          size += codecs[col].heapEstimate(flen);
        } else if (flen == 2 && m[start + 1] == 'N') {
          values[col] = null;
        } else {
          int k = unescape(m, start, p);
          values[col] = codecs[col].decodeText(scratch, 0, k);
          size += codecs[col].heapEstimate(k);
        }
      } catch (EtlException e) {
        throw inColumn(col, e);
      }
      col++;
      if (p == end) {
        break;
      }
      p++; // the tab
    }
    if (col != n) {
      throw malformed("text", "row has " + col + " columns, expected " + n);
    }
    lastRowSizeHint = size;
    return values;
  }

  /** Writes the unescaped bytes of {@code m[start, stop)} to the scratch buffer. */
  private int unescape(byte[] m, int start, int stop) {
    if (scratch.length < stop - start) {
      scratch = new byte[Math.max(stop - start, scratch.length * 2)];
    }
    byte[] s = scratch;
    int k = 0;
    int p = start;
    while (p < stop) {
      byte c = m[p++];
      if (c != '\\') {
        s[k++] = c;
        continue;
      }
      byte e = m[p++]; // a backslash is never last: the scan checked that
      switch (e) {
        case 'b' -> s[k++] = '\b';
        case 'f' -> s[k++] = '\f';
        case 'n' -> s[k++] = '\n';
        case 'r' -> s[k++] = '\r';
        case 't' -> s[k++] = '\t';
        case 'v' -> s[k++] = 0x0B;
        case '0', '1', '2', '3', '4', '5', '6', '7' -> {
          int v = e - '0';
          for (int i = 0; i < 2 && p < stop && m[p] >= '0' && m[p] <= '7'; i++) {
            v = v * 8 + (m[p++] - '0');
          }
          s[k++] = (byte) v;
        }
        case 'x' -> {
          int h = p < stop ? Bytes.hexDigit(m[p]) : -1;
          if (h < 0) {
            s[k++] = 'x'; // "\x" without a hex digit is a plain x, as COPY FROM reads it
          } else {
            p++;
            int h2 = p < stop ? Bytes.hexDigit(m[p]) : -1;
            if (h2 >= 0) {
              h = h * 16 + h2;
              p++;
            }
            s[k++] = (byte) h;
          }
        }
        default -> s[k++] = e;
      }
    }
    return k;
  }

  @Override
  public void finish() {
    // the text format has no trailer in the protocol
  }
}
