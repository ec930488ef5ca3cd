package org.pgetl.core.internal.codec;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.jspecify.annotations.Nullable;
import org.pgetl.model.PgArray;

/**
 * Arrays of any element type, as {@link PgArray}.
 *
 * <p>Text form ({@code array_out}): an optional bounds prefix {@code [lb:ub][lb:ub]=} when a lower
 * bound is not 1, then nested braces; elements are separated by the element type's delimiter,
 * {@code NULL} unquoted is SQL NULL, and quoted elements escape {@code "} and {@code \} with a
 * backslash. Binary form ({@code array_send}): int32 ndim, int32 has-nulls flag, int32 element oid,
 * ndim pairs of (int32 length, int32 lower bound), then each element as int32 length (-1 for NULL)
 * and bytes.
 */
final class ArrayCodec extends ValueCodec {
  /** PostgreSQL's MAXDIM. */
  static final int MAX_DIMENSIONS = 6;

  private final int elementOid;
  private final ValueCodec element;
  private final byte delimiter;

  ArrayCodec(String label, int elementOid, ValueCodec element, char delimiter) {
    super(label);
    this.elementOid = elementOid;
    this.element = element;
    this.delimiter = (byte) delimiter;
  }

  @Override
  public boolean canDecodeBinary() {
    return element.canDecodeBinary();
  }

  // ------------------------------------------------------------------ binary

  @Override
  Object binary(byte[] b, int off, int len) {
    Bytes.needAtLeast(len, 12, "array header");
    int end = off + len;
    int ndim = Bytes.int32(b, off);
    int flags = Bytes.int32(b, off + 4);
    int elemOid = Bytes.int32(b, off + 8);
    if (ndim < 0 || ndim > MAX_DIMENSIONS) {
      throw BadValue.of("array dimensions out of range");
    }
    if (flags != 0 && flags != 1) {
      throw BadValue.of("invalid array flags");
    }
    if (elemOid != elementOid) {
      throw BadValue.of(
          "array element type "
              + Integer.toUnsignedString(elemOid)
              + " differs from the column's element type "
              + Integer.toUnsignedString(elementOid));
    }
    int p = off + 12;
    Bytes.needAtLeast(end - p, 8 * ndim, "array dimensions");
    Integer[] dims = new Integer[ndim];
    Integer[] lbs = new Integer[ndim];
    long count = ndim == 0 ? 0 : 1;
    for (int d = 0; d < ndim; d++) {
      int n = Bytes.int32(b, p);
      int lb = Bytes.int32(b, p + 4);
      if (n < 0 || (long) lb + n - 1 > Integer.MAX_VALUE) {
        throw BadValue.of("array dimension out of range");
      }
      dims[d] = n;
      lbs[d] = lb;
      count *= n;
      p += 8;
      if (count > (end - p) / 4 + 1) {
        throw BadValue.of("array larger than its bytes");
      }
    }
    if (count > (end - p) / 4) {
      throw BadValue.of("array larger than its bytes");
    }
    List<@Nullable Object> elems = new ArrayList<>((int) count);
    for (long k = 0; k < count; k++) {
      Bytes.needAtLeast(end - p, 4, "array element length");
      int n = Bytes.int32(b, p);
      p += 4;
      if (n == -1) {
        if (flags == 0) {
          throw BadValue.of("NULL element in an array flagged without nulls");
        }
        elems.add(null);
        continue;
      }
      if (n < 0 || n > end - p) {
        throw BadValue.of("array element length out of range");
      }
      elems.add(element.binary(b, p, n));
      p += n;
    }
    if (p != end) {
      throw BadValue.of("trailing bytes after the last array element");
    }
    if (count == 0) {
      return PgArray.ofList(elementOid, List.of());
    }
    return new PgArray(elementOid, Arrays.asList(dims), Arrays.asList(lbs), elems);
  }

  // ------------------------------------------------------------------ text

  @Override
  Object text(byte[] b, int off, int len) {
    return new TextParser(b, off, len).parse();
  }

  private final class TextParser {
    final byte[] b;
    final int end;
    int i;
    int ndim = -1;
    final int[] dims = new int[MAX_DIMENSIONS];
    // the bounds prefix, [lower:upper] per dimension; nbounds of them when there is one
    final int[] boundsLower = new int[MAX_DIMENSIONS];
    final int[] boundsUpper = new int[MAX_DIMENSIONS];
    int nbounds;
    final List<@Nullable Object> elems = new ArrayList<>();
    // allocated by the first escaped element
    byte @Nullable [] scratch;

    TextParser(byte[] b, int off, int len) {
      this.b = b;
      this.i = off;
      this.end = off + len;
    }

    PgArray parse() {
      if (i < end && b[i] == '[') {
        while (i < end && b[i] == '[') {
          if (nbounds == MAX_DIMENSIONS) {
            throw BadValue.of("too many array dimensions");
          }
          i++;
          boundsLower[nbounds] = bound(':');
          boundsUpper[nbounds] = bound(']');
          nbounds++;
        }
        expect('=');
      }
      expect('{');
      if (i < end && b[i] == '}') {
        i++;
        if (i != end || nbounds != 0) {
          throw BadValue.of("malformed empty array");
        }
        return PgArray.ofList(elementOid, List.of());
      }
      level(0);
      if (i != end) {
        throw BadValue.of("trailing characters after the array");
      }
      Integer[] d = new Integer[ndim];
      Integer[] lb = new Integer[ndim];
      for (int k = 0; k < ndim; k++) {
        d[k] = dims[k];
        lb[k] = 1;
      }
      if (nbounds != 0) {
        if (nbounds != ndim) {
          throw BadValue.of("bounds do not match the array's dimensions");
        }
        for (int k = 0; k < ndim; k++) {
          if ((long) boundsUpper[k] - boundsLower[k] + 1 != dims[k]) {
            throw BadValue.of("bounds do not match the array's dimensions");
          }
          lb[k] = boundsLower[k];
        }
      }
      return new PgArray(elementOid, Arrays.asList(d), Arrays.asList(lb), elems);
    }

    private int bound(char terminator) {
      int start = i;
      while (i < end && b[i] != terminator) {
        i++;
      }
      if (i >= end) {
        throw BadValue.of("unterminated array bounds");
      }
      long v = Bytes.parseLong(b, start, i - start, Integer.MIN_VALUE, Integer.MAX_VALUE);
      i++;
      return (int) v;
    }

    private void expect(char c) {
      if (i >= end || b[i] != c) {
        throw BadValue.of("expected '" + c + "' in array");
      }
      i++;
    }

    /** Parses {@code {...}} at nesting level {@code level}, the opening brace already consumed. */
    private void level(int level) {
      int count = 0;
      while (true) {
        if (i >= end) {
          throw BadValue.of("unterminated array");
        }
        if (b[i] == '{') {
          if (level + 1 >= MAX_DIMENSIONS || (ndim != -1 && level + 1 >= ndim)) {
            throw BadValue.of("array nesting does not match its dimensions");
          }
          i++;
          level(level + 1);
        } else {
          if (ndim == -1) {
            ndim = level + 1;
          } else if (ndim != level + 1) {
            throw BadValue.of("array nesting does not match its dimensions");
          }
          element();
        }
        count++;
        if (i >= end) {
          throw BadValue.of("unterminated array");
        }
        byte c = b[i++];
        if (c == '}') {
          break;
        }
        if (c != delimiter) {
          throw BadValue.of("expected a delimiter or '}' in array");
        }
      }
      if (dims[level] == 0) {
        dims[level] = count;
      } else if (dims[level] != count) {
        throw BadValue.of("sub-arrays of different sizes");
      }
    }

    private void element() {
      if (b[i] == '"') {
        i++;
        int start = i;
        boolean escaped = false;
        while (true) {
          if (i >= end) {
            throw BadValue.of("unterminated quoted array element");
          }
          byte c = b[i];
          if (c == '"') {
            break;
          }
          if (c == '\\') {
            escaped = true;
            i++;
          }
          i++;
        }
        int stop = i;
        i++; // closing quote
        add(start, stop, escaped);
        return;
      }
      int start = i;
      boolean escaped = false;
      while (i < end && b[i] != delimiter && b[i] != '}') {
        if (b[i] == '"' || b[i] == '{') {
          throw BadValue.of("unexpected character in unquoted array element");
        }
        if (b[i] == '\\') {
          escaped = true;
          i++;
        }
        i++;
      }
      if (i > end) {
        throw BadValue.of("unterminated array element");
      }
      if (i == start) {
        throw BadValue.of("empty unquoted array element");
      }
      if (!escaped && i - start == 4 && isNullIgnoringCase(start)) {
        elems.add(null);
        return;
      }
      add(start, i, escaped);
    }

    private boolean isNullIgnoringCase(int at) {
      return (b[at] | 0x20) == 'n'
          && (b[at + 1] | 0x20) == 'u'
          && (b[at + 2] | 0x20) == 'l'
          && (b[at + 3] | 0x20) == 'l';
    }

    private void add(int start, int stop, boolean escaped) {
      if (!escaped) {
        elems.add(element.text(b, start, stop - start));
        return;
      }
      byte[] s = scratch;
      if (s == null || s.length < stop - start) {
        s = new byte[Math.max(64, stop - start)];
        scratch = s;
      }
      int n = 0;
      for (int k = start; k < stop; k++) {
        if (b[k] == '\\') {
          k++;
        }
        s[n++] = b[k];
      }
      elems.add(element.text(s, 0, n));
    }
  }
}
