package org.pgetl.core.internal.codec;

import java.util.UUID;

/** Codecs of the simple built-in types: booleans, integers, floats, text, bytea, "char", uuid. */
final class Scalars {
  private Scalars() {}

  static final class Bool extends ValueCodec {
    Bool(String label) {
      super(label);
    }

    // a boxed primitive
    @Override
    long heapEstimate(int len) {
      return BOXED;
    }

    @Override
    public boolean canDecodeBinary() {
      return true;
    }

    @Override
    Object text(byte[] b, int off, int len) {
      if (len == 1) {
        if (b[off] == 't') {
          return true;
        }
        if (b[off] == 'f') {
          return false;
        }
      }
      throw BadValue.of("expected t or f");
    }

    @Override
    Object binary(byte[] b, int off, int len) {
      Bytes.need(len, 1, "bool");
      if (b[off] == 1) {
        return true;
      }
      if (b[off] == 0) {
        return false;
      }
      throw BadValue.of("expected byte 0 or 1");
    }
  }

  static final class Int2 extends ValueCodec {
    Int2(String label) {
      super(label);
    }

    // a boxed primitive
    @Override
    long heapEstimate(int len) {
      return BOXED;
    }

    @Override
    public boolean canDecodeBinary() {
      return true;
    }

    @Override
    Object text(byte[] b, int off, int len) {
      return (short) Bytes.parseLong(b, off, len, Short.MIN_VALUE, Short.MAX_VALUE);
    }

    @Override
    Object binary(byte[] b, int off, int len) {
      Bytes.need(len, 2, "int2");
      return (short) Bytes.int16(b, off);
    }
  }

  static final class Int4 extends ValueCodec {
    Int4(String label) {
      super(label);
    }

    // a boxed primitive
    @Override
    long heapEstimate(int len) {
      return BOXED;
    }

    @Override
    public boolean canDecodeBinary() {
      return true;
    }

    @Override
    Object text(byte[] b, int off, int len) {
      return (int) Bytes.parseLong(b, off, len, Integer.MIN_VALUE, Integer.MAX_VALUE);
    }

    @Override
    Object binary(byte[] b, int off, int len) {
      Bytes.need(len, 4, "int4");
      return Bytes.int32(b, off);
    }
  }

  static final class Int8 extends ValueCodec {
    Int8(String label) {
      super(label);
    }

    // a boxed primitive
    @Override
    long heapEstimate(int len) {
      return BOXED;
    }

    @Override
    public boolean canDecodeBinary() {
      return true;
    }

    @Override
    Object text(byte[] b, int off, int len) {
      return Bytes.parseLong(b, off, len);
    }

    @Override
    Object binary(byte[] b, int off, int len) {
      Bytes.need(len, 8, "int8");
      return Bytes.int64(b, off);
    }
  }

  /** oid, xid, cid: unsigned 32-bit numbers, as Long. */
  static final class UnsignedInt4 extends ValueCodec {
    UnsignedInt4(String label) {
      super(label);
    }

    // a boxed primitive
    @Override
    long heapEstimate(int len) {
      return BOXED;
    }

    @Override
    public boolean canDecodeBinary() {
      return true;
    }

    @Override
    Object text(byte[] b, int off, int len) {
      if (len > 0 && b[off] == '-') {
        throw BadValue.of("negative unsigned number");
      }
      return Bytes.parseLong(b, off, len, 0, 0xFFFFFFFFL);
    }

    @Override
    Object binary(byte[] b, int off, int len) {
      Bytes.need(len, 4, "unsigned 32-bit id");
      return Bytes.int32(b, off) & 0xFFFFFFFFL;
    }
  }

  /** xid8: an unsigned 64-bit number, as Long; values past Long.MAX_VALUE cannot be held. */
  static final class Xid8 extends ValueCodec {
    Xid8(String label) {
      super(label);
    }

    // a boxed primitive
    @Override
    long heapEstimate(int len) {
      return BOXED;
    }

    @Override
    public boolean canDecodeBinary() {
      return true;
    }

    @Override
    Object text(byte[] b, int off, int len) {
      if (len > 0 && b[off] == '-') {
        throw BadValue.of("negative unsigned number");
      }
      if (len == 20 && b[off] >= '0' && b[off] <= '9') {
        throw BadValue.conversion("xid8 value past the range of Long");
      }
      return Bytes.parseLong(b, off, len);
    }

    @Override
    Object binary(byte[] b, int off, int len) {
      Bytes.need(len, 8, "xid8");
      long v = Bytes.int64(b, off);
      if (v < 0) {
        throw BadValue.conversion("xid8 value past the range of Long");
      }
      return v;
    }
  }

  static final class Float4 extends ValueCodec {
    Float4(String label) {
      super(label);
    }

    // a boxed primitive
    @Override
    long heapEstimate(int len) {
      return BOXED;
    }

    @Override
    public boolean canDecodeBinary() {
      return true;
    }

    @Override
    Object text(byte[] b, int off, int len) {
      return (float) parseFloat(b, off, len, true);
    }

    @Override
    Object binary(byte[] b, int off, int len) {
      Bytes.need(len, 4, "float4");
      return Float.intBitsToFloat(Bytes.int32(b, off));
    }
  }

  static final class Float8 extends ValueCodec {
    Float8(String label) {
      super(label);
    }

    // a boxed primitive
    @Override
    long heapEstimate(int len) {
      return BOXED;
    }

    @Override
    public boolean canDecodeBinary() {
      return true;
    }

    @Override
    Object text(byte[] b, int off, int len) {
      return parseFloat(b, off, len, false);
    }

    @Override
    Object binary(byte[] b, int off, int len) {
      Bytes.need(len, 8, "float8");
      return Double.longBitsToDouble(Bytes.int64(b, off));
    }
  }

  /** Parses PostgreSQL's float output: NaN, Infinity, -Infinity, or a decimal (maybe e+NN). */
  static double parseFloat(byte[] b, int off, int len, boolean isFloat) {
    if (Bytes.equalsAscii(b, off, len, "NaN")) {
      return Double.NaN;
    }
    if (Bytes.equalsAscii(b, off, len, "Infinity")) {
      return Double.POSITIVE_INFINITY;
    }
    if (Bytes.equalsAscii(b, off, len, "-Infinity")) {
      return Double.NEGATIVE_INFINITY;
    }
    // only the characters of a plain decimal: Java's parser would also take "0x1p3", "1d", " 1"
    if (len == 0 || len > 64) {
      throw BadValue.of("not a float");
    }
    for (int i = off; i < off + len; i++) {
      byte c = b[i];
      if (!((c >= '0' && c <= '9') || c == '.' || c == '-' || c == '+' || c == 'e' || c == 'E')) {
        throw BadValue.of("not a float");
      }
    }
    String s = new String(b, off, len, java.nio.charset.StandardCharsets.ISO_8859_1);
    return isFloat ? Float.parseFloat(s) : Double.parseDouble(s);
  }

  /** text, varchar, bpchar, name, json, xml and other types whose binary form is their text. */
  static final class Text extends ValueCodec {
    Text(String label) {
      super(label);
    }

    // a String of at most len one-byte (Latin-1) or len / 2 two-byte chars
    @Override
    long heapEstimate(int len) {
      return STRING + len;
    }

    @Override
    public boolean canDecodeBinary() {
      return true;
    }

    @Override
    Object text(byte[] b, int off, int len) {
      return Bytes.utf8(b, off, len);
    }

    @Override
    Object binary(byte[] b, int off, int len) {
      return Bytes.utf8(b, off, len);
    }
  }

  /** jsonb and jsonpath: the binary form is a version byte (1) and the text. */
  static final class VersionedText extends ValueCodec {
    VersionedText(String label) {
      super(label);
    }

    // a String of at most len one-byte (Latin-1) or len / 2 two-byte chars
    @Override
    long heapEstimate(int len) {
      return STRING + len;
    }

    @Override
    public boolean canDecodeBinary() {
      return true;
    }

    @Override
    Object text(byte[] b, int off, int len) {
      return Bytes.utf8(b, off, len);
    }

    @Override
    Object binary(byte[] b, int off, int len) {
      Bytes.needAtLeast(len, 1, "version byte");
      if (b[off] != 1) {
        throw BadValue.of("unsupported binary format version " + b[off]);
      }
      return Bytes.utf8(b, off + 1, len - 1);
    }
  }

  /** A type known only by its text form: a String, and no binary decoding. */
  static final class TextOnly extends ValueCodec {
    TextOnly(String label) {
      super(label);
    }

    // a String of at most len one-byte (Latin-1) or len / 2 two-byte chars
    @Override
    long heapEstimate(int len) {
      return STRING + len;
    }

    @Override
    public boolean canDecodeBinary() {
      return false;
    }

    @Override
    Object text(byte[] b, int off, int len) {
      return Bytes.utf8(b, off, len);
    }

    @Override
    Object binary(byte[] b, int off, int len) {
      throw noBinary();
    }
  }

  static final class Bytea extends ValueCodec {
    Bytea(String label) {
      super(label);
    }

    // a byte[]
    @Override
    long heapEstimate(int len) {
      return 24L + len;
    }

    @Override
    public boolean canDecodeBinary() {
      return true;
    }

    @Override
    Object text(byte[] b, int off, int len) {
      if (len >= 2 && b[off] == '\\' && b[off + 1] == 'x') {
        return hex(b, off + 2, len - 2);
      }
      return escaped(b, off, len);
    }

    /** The hex format: {@code \x} then two hex digits a byte (whitespace between pairs allowed). */
    private static byte[] hex(byte[] b, int off, int len) {
      byte[] out = new byte[len / 2];
      int n = 0;
      int i = off;
      int end = off + len;
      while (i < end) {
        int c = b[i];
        if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
          i++;
          continue;
        }
        int hi = Bytes.hexDigit(c);
        int lo = i + 1 < end ? Bytes.hexDigit(b[i + 1]) : -1;
        if (hi < 0 || lo < 0) {
          throw BadValue.of("invalid hex digit");
        }
        out[n++] = (byte) (hi << 4 | lo);
        i += 2;
      }
      return n == out.length ? out : java.util.Arrays.copyOf(out, n);
    }

    /** The escape format: {@code \\} and {@code \ooo}, every other byte as is. */
    private static byte[] escaped(byte[] b, int off, int len) {
      byte[] out = new byte[len];
      int n = 0;
      int end = off + len;
      for (int i = off; i < end; ) {
        byte c = b[i];
        if (c != '\\') {
          out[n++] = c;
          i++;
        } else if (i + 1 < end && b[i + 1] == '\\') {
          out[n++] = '\\';
          i += 2;
        } else if (i + 3 < end
            && isOctal(b[i + 1], '3')
            && isOctal(b[i + 2], '7')
            && isOctal(b[i + 3], '7')) {
          out[n++] = (byte) (((b[i + 1] - '0') << 6) | ((b[i + 2] - '0') << 3) | (b[i + 3] - '0'));
          i += 4;
        } else {
          throw BadValue.of("invalid bytea escape");
        }
      }
      return n == out.length ? out : java.util.Arrays.copyOf(out, n);
    }

    private static boolean isOctal(byte c, char max) {
      return c >= '0' && c <= max;
    }

    @Override
    Object binary(byte[] b, int off, int len) {
      return java.util.Arrays.copyOfRange(b, off, off + len);
    }
  }

  /**
   * The one-byte "char" type. Its output is the byte itself, nothing for a zero byte, and (since
   * PostgreSQL 15) {@code \ooo} for a byte with the high bit set; the binary form is the raw byte.
   * A high-bit byte always decodes to its {@code \ooo} form, whatever the server's version.
   */
  static final class Char extends ValueCodec {
    Char(String label) {
      super(label);
    }

    // a String of at most len one-byte (Latin-1) or len / 2 two-byte chars
    @Override
    long heapEstimate(int len) {
      return STRING + len;
    }

    @Override
    public boolean canDecodeBinary() {
      return true;
    }

    @Override
    Object text(byte[] b, int off, int len) {
      if (len == 1 && b[off] < 0) {
        // PostgreSQL 14 and older print a high-bit byte raw: read it as later versions print it
        return binary(b, off, len);
      }
      return Bytes.utf8(b, off, len);
    }

    @Override
    Object binary(byte[] b, int off, int len) {
      if (len == 0) {
        return "";
      }
      Bytes.need(len, 1, "\"char\"");
      int c = b[off] & 0xFF;
      if (c == 0) {
        return "";
      }
      if (c >= 0x80) {
        return new String(
            new char[] {
              '\\', (char) ('0' + (c >> 6)), (char) ('0' + ((c >> 3) & 7)), (char) ('0' + (c & 7))
            });
      }
      return String.valueOf((char) c);
    }
  }

  static final class Uuid extends ValueCodec {
    Uuid(String label) {
      super(label);
    }

    // a UUID: two longs
    @Override
    long heapEstimate(int len) {
      return 32;
    }

    @Override
    public boolean canDecodeBinary() {
      return true;
    }

    @Override
    Object text(byte[] b, int off, int len) {
      Bytes.need(len, 36, "uuid text");
      long hi = 0;
      long lo = 0;
      int n = 0;
      for (int i = 0; i < 36; i++) {
        byte c = b[off + i];
        if (i == 8 || i == 13 || i == 18 || i == 23) {
          if (c != '-') {
            throw BadValue.of("misplaced hyphen");
          }
          continue;
        }
        int d = Bytes.hexDigit(c);
        if (d < 0) {
          throw BadValue.of("invalid hex digit");
        }
        if (n < 16) {
          hi = hi << 4 | d;
        } else {
          lo = lo << 4 | d;
        }
        n++;
      }
      return new UUID(hi, lo);
    }

    @Override
    Object binary(byte[] b, int off, int len) {
      Bytes.need(len, 16, "uuid");
      return new UUID(Bytes.int64(b, off), Bytes.int64(b, off + 8));
    }
  }
}
