package org.pgetl.core.internal.codec;

/**
 * Codecs of composite, range and multirange types, kept as their text form (a String). From binary,
 * each field or bound is decoded by its own type's codec and printed back with the quoting rules of
 * {@code record_out} and {@code range_out}.
 */
final class RowTypes {
  private static final int RANGE_EMPTY = 0x01;
  private static final int RANGE_LB_INC = 0x02;
  private static final int RANGE_UB_INC = 0x04;
  private static final int RANGE_LB_INF = 0x08;
  private static final int RANGE_UB_INF = 0x10;
  private static final int RANGE_LB_NULL = 0x20;
  private static final int RANGE_UB_NULL = 0x40;

  /**
   * How deep records may nest in one value. Table columns nest only as deep as their composite
   * types do; deeper nesting (anonymous records in records) is refused, because every level doubles
   * the quotes of the levels inside it.
   */
  static final int MAX_RECORD_NESTING = 32;

  private static final ThreadLocal<int[]> NESTING = ThreadLocal.withInitial(() -> new int[1]);

  private RowTypes() {}

  /**
   * A composite type ({@code record_send}: int32 field count, then per field int32 type oid, int32
   * length or -1, bytes).
   */
  static final class Composite extends TextForms.Printed {
    private final TypeRegistry registry;
    private final boolean binaryOk;

    Composite(String label, TypeRegistry registry, boolean binaryOk) {
      super(label);
      this.registry = registry;
      this.binaryOk = binaryOk;
    }

    @Override
    public boolean canDecodeBinary() {
      return binaryOk;
    }

    @Override
    void print(StringBuilder sb, byte[] b, int off, int len) {
      int[] depth = NESTING.get();
      if (depth[0] >= MAX_RECORD_NESTING) {
        throw BadValue.of("records nested more than " + MAX_RECORD_NESTING + " deep");
      }
      depth[0]++;
      try {
        printFields(sb, b, off, len);
      } finally {
        depth[0]--;
      }
    }

    private void printFields(StringBuilder sb, byte[] b, int off, int len) {
      Bytes.needAtLeast(len, 4, "record field count");
      int end = off + len;
      int n = Bytes.int32(b, off);
      if (n < 0 || n > (len - 4) / 8) {
        throw BadValue.of("record field count out of range");
      }
      int p = off + 4;
      sb.append('(');
      for (int f = 0; f < n; f++) {
        if (f > 0) {
          sb.append(',');
        }
        Bytes.needAtLeast(end - p, 8, "record field header");
        int oid = Bytes.int32(b, p);
        int flen = Bytes.int32(b, p + 4);
        p += 8;
        if (flen == -1) {
          continue;
        }
        if (flen < 0 || flen > end - p) {
          throw BadValue.of("record field length out of range");
        }
        String value = registry.binaryAsText(oid, b, p, flen);
        p += flen;
        quote(sb, value, false);
      }
      if (p != end) {
        throw BadValue.of("trailing bytes after the last record field");
      }
      sb.append(')');
    }
  }

  /**
   * A range type ({@code range_send}: a flags byte, then the lower and upper bounds present as
   * int32 length and bytes).
   */
  static final class Range extends TextForms.Printed {
    private final TypeRegistry registry;
    private final int subtypeOid;
    private final boolean binaryOk;

    Range(String label, TypeRegistry registry, int subtypeOid, boolean binaryOk) {
      super(label);
      this.registry = registry;
      this.subtypeOid = subtypeOid;
      this.binaryOk = binaryOk;
    }

    @Override
    public boolean canDecodeBinary() {
      return binaryOk;
    }

    @Override
    void print(StringBuilder sb, byte[] b, int off, int len) {
      Bytes.needAtLeast(len, 1, "range flags");
      int end = off + len;
      int flags = b[off] & 0xFF;
      int p = off + 1;
      if ((flags & RANGE_EMPTY) != 0) {
        if (len != 1) {
          throw BadValue.of("empty range with bounds");
        }
        sb.append("empty");
        return;
      }
      sb.append((flags & RANGE_LB_INC) != 0 ? '[' : '(');
      if ((flags & (RANGE_LB_INF | RANGE_LB_NULL)) == 0) {
        p = bound(sb, b, p, end);
      }
      sb.append(',');
      if ((flags & (RANGE_UB_INF | RANGE_UB_NULL)) == 0) {
        p = bound(sb, b, p, end);
      }
      sb.append((flags & RANGE_UB_INC) != 0 ? ']' : ')');
      if (p != end) {
        throw BadValue.of("trailing bytes after the range bounds");
      }
    }

    private int bound(StringBuilder sb, byte[] b, int p, int end) {
      Bytes.needAtLeast(end - p, 4, "range bound length");
      int n = Bytes.int32(b, p);
      p += 4;
      if (n < 0 || n > end - p) {
        throw BadValue.of("range bound length out of range");
      }
      quote(sb, registry.binaryAsText(subtypeOid, b, p, n), true);
      return p + n;
    }
  }

  /** A multirange type ({@code multirange_send}: int32 count, then each range's length, bytes). */
  static final class Multirange extends TextForms.Printed {
    private final Range range;

    Multirange(String label, Range range) {
      super(label);
      this.range = range;
    }

    @Override
    public boolean canDecodeBinary() {
      return range.canDecodeBinary();
    }

    @Override
    void print(StringBuilder sb, byte[] b, int off, int len) {
      Bytes.needAtLeast(len, 4, "multirange count");
      int end = off + len;
      int n = Bytes.int32(b, off);
      if (n < 0 || n > (len - 4) / 5) {
        throw BadValue.of("multirange count out of range");
      }
      int p = off + 4;
      sb.append('{');
      for (int k = 0; k < n; k++) {
        if (k > 0) {
          sb.append(',');
        }
        Bytes.needAtLeast(end - p, 4, "range length");
        int rlen = Bytes.int32(b, p);
        p += 4;
        if (rlen < 0 || rlen > end - p) {
          throw BadValue.of("range length out of range");
        }
        range.print(sb, b, p, rlen);
        p += rlen;
      }
      if (p != end) {
        throw BadValue.of("trailing bytes after the last range");
      }
      sb.append('}');
    }
  }

  /**
   * Appends a field or bound, quoted as {@code record_out} / {@code range_bound_escape} do: in
   * double quotes when empty or holding a quote, backslash, parenthesis, comma or white space (and,
   * for range bounds, a bracket); quotes and backslashes inside are doubled.
   */
  static void quote(StringBuilder sb, String v, boolean rangeBound) {
    boolean q = v.isEmpty();
    for (int i = 0; i < v.length() && !q; i++) {
      char c = v.charAt(i);
      q =
          c == '"'
              || c == '\\'
              || c == '('
              || c == ')'
              || c == ','
              || c == ' '
              || (c >= '\t' && c <= '\r')
              || (rangeBound && (c == '[' || c == ']'));
    }
    if (!q) {
      sb.append(v);
      return;
    }
    sb.append('"');
    for (int i = 0; i < v.length(); i++) {
      char c = v.charAt(i);
      if (c == '"' || c == '\\') {
        sb.append(c);
      }
      sb.append(c);
    }
    sb.append('"');
  }
}
