package org.pgetl.core.internal.codec;

import org.pgetl.model.PgText;

/**
 * Codecs of built-in types that pgetl keeps as their text form (a String): the text form is taken
 * as is, and the binary form is printed exactly as the type's output function would print it.
 */
final class TextForms {
  private static final char[] HEX = "0123456789abcdef".toCharArray();
  private static final char[] HEX_UPPER = "0123456789ABCDEF".toCharArray();

  private TextForms() {}

  /** A codec whose text form is kept as is and whose binary form is printed by {@link #print}. */
  abstract static class Printed extends ValueCodec {
    Printed(String label) {
      super(label);
    }

    @Override
    public boolean canDecodeBinary() {
      return true;
    }

    @Override
    final Object text(byte[] b, int off, int len) {
      return Bytes.utf8(b, off, len);
    }

    @Override
    final Object binary(byte[] b, int off, int len) {
      StringBuilder sb = new StringBuilder(Math.min(1024, 16 + 2 * len));
      print(sb, b, off, len);
      return sb.toString();
    }

    abstract void print(StringBuilder sb, byte[] b, int off, int len);
  }

  /** inet and cidr: family, bits, is_cidr, address length, address (network_out). */
  static final class Inet extends Printed {
    private static final int AF_INET = 2;
    private static final int AF_INET6 = 3;
    private final boolean cidr;

    Inet(String label, boolean cidr) {
      super(label);
      this.cidr = cidr;
    }

    @Override
    void print(StringBuilder sb, byte[] b, int off, int len) {
      Bytes.needAtLeast(len, 4, "inet header");
      int family = b[off] & 0xFF;
      int bits = b[off + 1] & 0xFF;
      int nb = b[off + 3] & 0xFF;
      int max;
      if (family == AF_INET) {
        max = 32;
        Bytes.need(nb, 4, "IPv4 address");
      } else if (family == AF_INET6) {
        max = 128;
        Bytes.need(nb, 16, "IPv6 address");
      } else {
        throw BadValue.of("unknown address family");
      }
      Bytes.need(len, 4 + nb, "inet");
      if (bits > max) {
        throw BadValue.of("netmask length out of range");
      }
      int a = off + 4;
      if (family == AF_INET) {
        for (int i = 0; i < 4; i++) {
          if (i > 0) {
            sb.append('.');
          }
          sb.append(b[a + i] & 0xFF);
        }
      } else {
        ipv6(sb, b, a);
      }
      if (bits != max || cidr) {
        sb.append('/').append(bits);
      }
    }

    /** Prints an IPv6 address as PostgreSQL's inet_net_ntop does (:: for the longest zero run). */
    private static void ipv6(StringBuilder sb, byte[] b, int a) {
      int[] words = new int[8];
      for (int i = 0; i < 8; i++) {
        words[i] = (b[a + 2 * i] & 0xFF) << 8 | (b[a + 2 * i + 1] & 0xFF);
      }
      int bestBase = -1;
      int bestLen = 0;
      int curBase = -1;
      int curLen = 0;
      for (int i = 0; i < 8; i++) {
        if (words[i] == 0) {
          if (curBase == -1) {
            curBase = i;
            curLen = 1;
          } else {
            curLen++;
          }
        } else if (curBase != -1) {
          if (bestBase == -1 || curLen > bestLen) {
            bestBase = curBase;
            bestLen = curLen;
          }
          curBase = -1;
        }
      }
      if (curBase != -1 && (bestBase == -1 || curLen > bestLen)) {
        bestBase = curBase;
        bestLen = curLen;
      }
      if (bestBase != -1 && bestLen < 2) {
        bestBase = -1;
      }
      for (int i = 0; i < 8; i++) {
        if (bestBase != -1 && i >= bestBase && i < bestBase + bestLen) {
          if (i == bestBase) {
            sb.append(':');
          }
          continue;
        }
        if (i != 0) {
          sb.append(':');
        }
        if (i == 6
            && bestBase == 0
            && (bestLen == 6
                || (bestLen == 7 && words[7] != 0x0001)
                || (bestLen == 5 && words[5] == 0xffff))) {
          for (int k = 12; k < 16; k++) {
            if (k > 12) {
              sb.append('.');
            }
            sb.append(b[a + k] & 0xFF);
          }
          break;
        }
        sb.append(Integer.toHexString(words[i]));
      }
      if (bestBase != -1 && bestBase + bestLen == 8) {
        sb.append(':');
      }
    }
  }

  /** macaddr (6 bytes) and macaddr8 (8 bytes), printed as lower-case hex pairs and colons. */
  static final class MacAddr extends Printed {
    private final int size;

    MacAddr(String label, int size) {
      super(label);
      this.size = size;
    }

    @Override
    void print(StringBuilder sb, byte[] b, int off, int len) {
      Bytes.need(len, size, "MAC address");
      for (int i = 0; i < size; i++) {
        if (i > 0) {
          sb.append(':');
        }
        sb.append(HEX[(b[off + i] >> 4) & 0xF]).append(HEX[b[off + i] & 0xF]);
      }
    }
  }

  /**
   * money: int64 cents, printed as {@code cash_out} does under {@code lc_monetary=C}: {@code $},
   * comma thousands separators, two decimals, a leading minus ({@code -$1,234.56}).
   */
  static final class Money extends Printed {
    Money(String label) {
      super(label);
    }

    @Override
    void print(StringBuilder sb, byte[] b, int off, int len) {
      Bytes.need(len, 8, "money");
      long v = Bytes.int64(b, off);
      if (v < 0) {
        sb.append('-');
      }
      sb.append('$');
      String digits = Long.toUnsignedString(v < 0 ? -v : v); // MIN_VALUE reads right unsigned
      if (digits.length() < 3) {
        digits = "00".substring(digits.length() - 1) + digits;
      }
      int intLen = digits.length() - 2;
      for (int i = 0; i < intLen; i++) {
        if (i > 0 && (intLen - i) % 3 == 0) {
          sb.append(',');
        }
        sb.append(digits.charAt(i));
      }
      sb.append('.').append(digits, intLen, digits.length());
    }
  }

  /** bit and varbit: int32 bit count, then the bits packed high bit first. */
  static final class Bits extends Printed {
    Bits(String label) {
      super(label);
    }

    @Override
    void print(StringBuilder sb, byte[] b, int off, int len) {
      Bytes.needAtLeast(len, 4, "bit length");
      int bits = Bytes.int32(b, off);
      if (bits < 0 || len - 4 != (int) ((bits + 7L) / 8)) {
        throw BadValue.of("bit count does not match the length");
      }
      sb.ensureCapacity(bits);
      for (int i = 0; i < bits; i++) {
        sb.append((b[off + 4 + (i >> 3)] & (0x80 >> (i & 7))) != 0 ? '1' : '0');
      }
    }
  }

  /** pg_lsn: uint64, printed as two upper-case hex halves, {@code 16/B374D848}. */
  static final class Lsn extends Printed {
    Lsn(String label) {
      super(label);
    }

    @Override
    void print(StringBuilder sb, byte[] b, int off, int len) {
      Bytes.need(len, 8, "pg_lsn");
      hexUpper(sb, Bytes.int32(b, off));
      sb.append('/');
      hexUpper(sb, Bytes.int32(b, off + 4));
    }

    private static void hexUpper(StringBuilder sb, int v) {
      String s = Integer.toHexString(v);
      for (int i = 0; i < s.length(); i++) {
        char c = s.charAt(i);
        sb.append(c >= 'a' ? HEX_UPPER[c - 'a' + 10] : c);
      }
    }
  }

  /** tid: uint32 block and uint16 offset, {@code (0,1)}. */
  static final class Tid extends Printed {
    Tid(String label) {
      super(label);
    }

    @Override
    void print(StringBuilder sb, byte[] b, int off, int len) {
      Bytes.need(len, 6, "tid");
      sb.append('(').append(Bytes.int32(b, off) & 0xFFFFFFFFL).append(',');
      sb.append(Bytes.int16(b, off + 4) & 0xFFFF).append(')');
    }
  }

  /** txid_snapshot and pg_snapshot: {@code xmin:xmax:xip,xip}. */
  static final class Snapshot extends Printed {
    Snapshot(String label) {
      super(label);
    }

    @Override
    void print(StringBuilder sb, byte[] b, int off, int len) {
      Bytes.needAtLeast(len, 20, "snapshot");
      int n = Bytes.int32(b, off);
      if (n < 0 || len != 20 + 8L * n) {
        throw BadValue.of("snapshot size does not match the length");
      }
      sb.append(Long.toUnsignedString(Bytes.int64(b, off + 4))).append(':');
      sb.append(Long.toUnsignedString(Bytes.int64(b, off + 12))).append(':');
      for (int i = 0; i < n; i++) {
        if (i > 0) {
          sb.append(',');
        }
        sb.append(Long.toUnsignedString(Bytes.int64(b, off + 20 + 8 * i)));
      }
    }
  }

  /** The geometric types, whose binary forms are float8 coordinates. */
  static final class Geometric extends Printed {
    enum Shape {
      POINT,
      LINE,
      LSEG,
      BOX,
      PATH,
      POLYGON,
      CIRCLE
    }

    private final Shape shape;

    Geometric(String label, Shape shape) {
      super(label);
      this.shape = shape;
    }

    @Override
    void print(StringBuilder sb, byte[] b, int off, int len) {
      switch (shape) {
        case POINT -> {
          Bytes.need(len, 16, "point");
          point(sb, b, off);
        }
        case LINE -> {
          Bytes.need(len, 24, "line");
          sb.append('{');
          num(sb, b, off);
          sb.append(',');
          num(sb, b, off + 8);
          sb.append(',');
          num(sb, b, off + 16);
          sb.append('}');
        }
        case LSEG -> {
          Bytes.need(len, 32, "lseg");
          sb.append('[');
          point(sb, b, off);
          sb.append(',');
          point(sb, b, off + 16);
          sb.append(']');
        }
        case BOX -> {
          Bytes.need(len, 32, "box");
          point(sb, b, off);
          sb.append(',');
          point(sb, b, off + 16);
        }
        case PATH -> {
          Bytes.needAtLeast(len, 5, "path");
          boolean closed = b[off] != 0;
          points(sb, b, off + 1, len - 1, closed ? '(' : '[', closed ? ')' : ']');
        }
        case POLYGON -> points(sb, b, off, len, '(', ')');
        case CIRCLE -> {
          Bytes.need(len, 24, "circle");
          sb.append('<');
          point(sb, b, off);
          sb.append(',');
          num(sb, b, off + 16);
          sb.append('>');
        }
      }
    }

    private static void points(
        StringBuilder sb, byte[] b, int off, int len, char open, char close) {
      Bytes.needAtLeast(len, 4, "point count");
      int n = Bytes.int32(b, off);
      if (n <= 0 || len != 4 + 16L * n) {
        throw BadValue.of("point count does not match the length");
      }
      sb.append(open);
      for (int i = 0; i < n; i++) {
        if (i > 0) {
          sb.append(',');
        }
        point(sb, b, off + 4 + 16 * i);
      }
      sb.append(close);
    }

    private static void point(StringBuilder sb, byte[] b, int off) {
      sb.append('(');
      num(sb, b, off);
      sb.append(',');
      num(sb, b, off + 8);
      sb.append(')');
    }

    private static void num(StringBuilder sb, byte[] b, int off) {
      sb.append(PgText.format(Double.longBitsToDouble(Bytes.int64(b, off))));
    }
  }

  /**
   * int2vector and oidvector: sent as a one-dimensional array, printed as the numbers separated by
   * spaces.
   */
  static final class Vector extends Printed {
    private final int elementOid;

    Vector(String label, int elementOid) {
      super(label);
      this.elementOid = elementOid;
    }

    @Override
    void print(StringBuilder sb, byte[] b, int off, int len) {
      Bytes.needAtLeast(len, 12, "array header");
      int ndim = Bytes.int32(b, off);
      int elem = Bytes.int32(b, off + 8);
      if (ndim == 0) {
        Bytes.need(len, 12, "empty vector");
        return;
      }
      if (ndim != 1 || elem != elementOid || Bytes.int32(b, off + 4) != 0) {
        throw BadValue.of("not a one-dimensional vector without nulls");
      }
      Bytes.needAtLeast(len, 20, "array dimension");
      int n = Bytes.int32(b, off + 12);
      int size = elementOid == TypeRegistry.INT2 ? 2 : 4;
      if (n < 0 || len != 20 + (4L + size) * n) {
        throw BadValue.of("vector size does not match the length");
      }
      int p = off + 20;
      for (int i = 0; i < n; i++) {
        if (Bytes.int32(b, p) != size) {
          throw BadValue.of("vector element of the wrong size");
        }
        if (i > 0) {
          sb.append(' ');
        }
        if (size == 2) {
          sb.append(Bytes.int16(b, p + 4));
        } else {
          sb.append(Bytes.int32(b, p + 4) & 0xFFFFFFFFL);
        }
        p += 4 + size;
      }
    }
  }
}
