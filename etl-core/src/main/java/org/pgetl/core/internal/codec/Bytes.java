package org.pgetl.core.internal.codec;

import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;

/** Reading big-endian numbers, decimal integers and UTF-8 text straight out of a byte array. */
final class Bytes {
  private Bytes() {}

  static void need(int len, int expected, String what) {
    if (len != expected) {
      throw BadValue.of(what + " needs " + expected + " bytes, got " + len);
    }
  }

  static void needAtLeast(int available, int needed, String what) {
    if (available < needed) {
      throw BadValue.of("truncated " + what);
    }
  }

  static int int16(byte[] b, int off) {
    return (short) (((b[off] & 0xFF) << 8) | (b[off + 1] & 0xFF));
  }

  static int int32(byte[] b, int off) {
    return ((b[off] & 0xFF) << 24)
        | ((b[off + 1] & 0xFF) << 16)
        | ((b[off + 2] & 0xFF) << 8)
        | (b[off + 3] & 0xFF);
  }

  static long int64(byte[] b, int off) {
    return ((long) int32(b, off) << 32) | (int32(b, off + 4) & 0xFFFFFFFFL);
  }

  /**
   * Decodes UTF-8, refusing malformed input instead of replacing it: a replacement character in the
   * result is rare, and only then is the input checked strictly.
   */
  static String utf8(byte[] b, int off, int len) {
    String s = new String(b, off, len, StandardCharsets.UTF_8);
    if (s.indexOf('\uFFFD') >= 0) {
      try {
        StandardCharsets.UTF_8
            .newDecoder()
            .onMalformedInput(CodingErrorAction.REPORT)
            .onUnmappableCharacter(CodingErrorAction.REPORT)
            .decode(java.nio.ByteBuffer.wrap(b, off, len));
      } catch (CharacterCodingException e) {
        throw BadValue.of("malformed UTF-8");
      }
    }
    return s;
  }

  /** Returns the text as ASCII-only (PostgreSQL's fixed output formats), refusing anything else. */
  static String ascii(byte[] b, int off, int len) {
    for (int i = off; i < off + len; i++) {
      if (b[i] < 0) {
        throw BadValue.of("non-ASCII byte");
      }
    }
    return new String(b, off, len, StandardCharsets.ISO_8859_1);
  }

  /** Parses a signed decimal integer of the whole range; no sign other than a leading minus. */
  static long parseLong(byte[] b, int off, int len) {
    if (len <= 0) {
      throw BadValue.of("empty number");
    }
    int i = off;
    int end = off + len;
    boolean neg = b[i] == '-';
    if (neg || b[i] == '+') {
      i++;
      if (i == end) {
        throw BadValue.of("sign without digits");
      }
    }
    if (end - i > 19) {
      throw BadValue.of("number out of range");
    }
    long v = 0; // accumulated negatively, so that Long.MIN_VALUE fits
    for (; i < end; i++) {
      int d = b[i] - '0';
      if (d < 0 || d > 9) {
        throw BadValue.of("not a digit");
      }
      if (v < -922337203685477580L || (v == -922337203685477580L && d > 8)) {
        throw BadValue.of("number out of range");
      }
      v = v * 10 - d;
    }
    if (!neg) {
      if (v == Long.MIN_VALUE) {
        throw BadValue.of("number out of range");
      }
      v = -v;
    }
    return v;
  }

  /** Parses a decimal integer that must lie in [min, max]. */
  static long parseLong(byte[] b, int off, int len, long min, long max) {
    long v = parseLong(b, off, len);
    if (v < min || v > max) {
      throw BadValue.of("number out of range");
    }
    return v;
  }

  /** Parses exactly {@code n} decimal digits. */
  static int digits(byte[] b, int off, int n) {
    int v = 0;
    for (int i = off; i < off + n; i++) {
      int d = b[i] - '0';
      if (d < 0 || d > 9) {
        throw BadValue.of("not a digit");
      }
      v = v * 10 + d;
    }
    return v;
  }

  static int hexDigit(int c) {
    if (c >= '0' && c <= '9') {
      return c - '0';
    }
    if (c >= 'a' && c <= 'f') {
      return c - 'a' + 10;
    }
    if (c >= 'A' && c <= 'F') {
      return c - 'A' + 10;
    }
    return -1;
  }

  static boolean equalsAscii(byte[] b, int off, int len, String s) {
    if (len != s.length()) {
      return false;
    }
    for (int i = 0; i < len; i++) {
      if (b[off + i] != s.charAt(i)) {
        return false;
      }
    }
    return true;
  }
}
