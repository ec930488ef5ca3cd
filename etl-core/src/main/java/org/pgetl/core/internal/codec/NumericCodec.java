package org.pgetl.core.internal.codec;

import java.math.BigDecimal;
import java.math.BigInteger;
import java.math.RoundingMode;
import org.pgetl.model.PgNumeric;

/**
 * The numeric type, as {@link PgNumeric} with the exact display scale.
 *
 * <p>Binary form ({@code numeric_send}): int16 ndigits, int16 weight, uint16 sign, uint16 dscale,
 * then ndigits base-10000 digits, the first one worth {@code 10000^weight}. The binary form is
 * decoded without strings: the unscaled value is built from the base-10000 digits in a long when it
 * fits (at least 16 significant digits), by multiply-add on a BigInteger otherwise.
 */
final class NumericCodec extends ValueCodec {
  private static final int SIGN_POS = 0x0000;
  private static final int SIGN_NEG = 0x4000;
  private static final int SIGN_NAN = 0xC000;
  private static final int SIGN_PINF = 0xD000;
  private static final int SIGN_NINF = 0xF000;
  private static final int DSCALE_MAX = 0x3FFF;
  private static final long[] POW10 = new long[19];
  // the largest long that can take one more base-10000 digit without overflow
  private static final long LONG_ROOM = (Long.MAX_VALUE - 9999) / 10000;

  static {
    POW10[0] = 1;
    for (int i = 1; i < POW10.length; i++) {
      POW10[i] = POW10[i - 1] * 10;
    }
  }

  NumericCodec(String label) {
    super(label);
  }

  // PgNumeric and its BigDecimal; beyond 16 digits also a BigInteger and its int[]
  @Override
  long heapEstimate(int len) {
    return len <= 16 ? 64 : 112L + len;
  }

  @Override
  public boolean canDecodeBinary() {
    return true;
  }

  @Override
  Object text(byte[] b, int off, int len) {
    if (len == 0) {
      throw BadValue.of("empty numeric");
    }
    byte first = b[off];
    if (first == 'N' && Bytes.equalsAscii(b, off, len, "NaN")) {
      return PgNumeric.NAN;
    }
    if (first == 'I' && Bytes.equalsAscii(b, off, len, "Infinity")) {
      return PgNumeric.POSITIVE_INFINITY;
    }
    if (first == '-' && Bytes.equalsAscii(b, off, len, "-Infinity")) {
      return PgNumeric.NEGATIVE_INFINITY;
    }
    int i = off;
    int end = off + len;
    boolean neg = first == '-';
    if (neg) {
      i++;
    }
    long unscaled = 0;
    int digits = 0;
    int scale = -1;
    for (; i < end; i++) {
      int c = b[i];
      if (c == '.') {
        if (scale >= 0) {
          throw BadValue.of("two decimal points");
        }
        scale = 0;
        continue;
      }
      int d = c - '0';
      if (d < 0 || d > 9) {
        throw BadValue.of("not a digit");
      }
      if (digits < 18) {
        unscaled = unscaled * 10 + d;
      }
      digits++;
      if (scale >= 0) {
        scale++;
      }
    }
    if (digits == 0) {
      throw BadValue.of("no digits");
    }
    if (scale == 0) {
      throw BadValue.of("decimal point without digits after it");
    }
    if (scale < 0) {
      scale = 0;
    }
    if (digits <= 18) {
      return PgNumeric.of(BigDecimal.valueOf(neg ? -unscaled : unscaled, scale));
    }
    char[] chars = new char[len];
    for (int k = 0; k < len; k++) {
      chars[k] = (char) b[off + k];
    }
    return PgNumeric.of(new BigDecimal(chars));
  }

  @Override
  Object binary(byte[] b, int off, int len) {
    Bytes.needAtLeast(len, 8, "numeric header");
    int ndigits = Bytes.int16(b, off);
    int weight = Bytes.int16(b, off + 2);
    int sign = Bytes.int16(b, off + 4) & 0xFFFF;
    int dscale = Bytes.int16(b, off + 6) & 0xFFFF;
    if (ndigits < 0 || len != 8 + 2 * ndigits) {
      throw BadValue.of("digit count does not match the length");
    }
    switch (sign) {
      case SIGN_NAN -> {
        return special(ndigits, PgNumeric.NAN);
      }
      case SIGN_PINF -> {
        return special(ndigits, PgNumeric.POSITIVE_INFINITY);
      }
      case SIGN_NINF -> {
        return special(ndigits, PgNumeric.NEGATIVE_INFINITY);
      }
      case SIGN_POS, SIGN_NEG -> {}
      default -> throw BadValue.of("invalid sign");
    }
    if (dscale > DSCALE_MAX) {
      throw BadValue.of("invalid display scale");
    }
    if (ndigits == 0) {
      return PgNumeric.of(BigDecimal.valueOf(0, dscale));
    }
    int p = off + 8;
    int sign10 = sign == SIGN_NEG ? -1 : 1;
    // the digits read as one integer have this decimal scale
    long accScale = 4L * (ndigits - 1 - weight);
    // the leading base-10000 digits go into a long as long as another one fits: up to 16 decimal
    // digits always, 20 when the first ones are small
    long acc = 0;
    int k = 0;
    while (k < ndigits && acc <= LONG_ROOM) {
      acc = acc * 10000 + digit(b, p + 2 * k);
      k++;
    }
    if (k == ndigits) {
      long shift = dscale - accScale;
      if (shift >= 0 && shift < POW10.length && acc <= Long.MAX_VALUE / POW10[(int) shift]) {
        return PgNumeric.of(BigDecimal.valueOf(sign10 * (acc * POW10[(int) shift]), dscale));
      }
      if (shift < 0 && -shift < POW10.length) {
        // digits hidden by dscale are cut, as numeric_recv does
        return PgNumeric.of(BigDecimal.valueOf(sign10 * (acc / POW10[(int) -shift]), dscale));
      }
      return PgNumeric.of(
          BigDecimal.valueOf(sign10 * acc, Math.toIntExact(accScale))
              .setScale(dscale, RoundingMode.DOWN));
    }
    // more digits: multiply-add chunks of up to four base-10000 digits (10^16) into a BigInteger
    BigInteger big = BigInteger.valueOf(acc);
    while (k < ndigits) {
      long chunk = 0;
      long scaleOfChunk = 1;
      for (int c = 0; c < 4 && k < ndigits; c++, k++) {
        chunk = chunk * 10000 + digit(b, p + 2 * k);
        scaleOfChunk *= 10000;
      }
      big = big.multiply(BigInteger.valueOf(scaleOfChunk)).add(BigInteger.valueOf(chunk));
    }
    BigDecimal v = new BigDecimal(sign10 < 0 ? big.negate() : big, Math.toIntExact(accScale));
    return PgNumeric.of(v.setScale(dscale, RoundingMode.DOWN));
  }

  private static int digit(byte[] b, int at) {
    int d = Bytes.int16(b, at);
    if (d < 0 || d > 9999) {
      throw BadValue.of("invalid base-10000 digit");
    }
    return d;
  }

  private static PgNumeric special(int ndigits, PgNumeric value) {
    if (ndigits != 0) {
      throw BadValue.of("special value with digits");
    }
    return value;
  }
}
