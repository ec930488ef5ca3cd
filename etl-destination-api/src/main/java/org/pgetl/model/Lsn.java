package org.pgetl.model;

import org.pgetl.error.ErrorKind;
import org.pgetl.error.EtlException;

/**
 * A PostgreSQL write-ahead-log position: an unsigned 64-bit number whose text form is two
 * hexadecimal halves separated by a slash, {@code 16/B374D848}.
 *
 * <p>Ordering is unsigned: {@code FFFFFFFF/FFFFFFFF} is the greatest LSN and {@code 0/0} the
 * smallest. Instances are immutable and safe to share between threads.
 *
 * @param value the position as an unsigned 64-bit number
 */
public record Lsn(long value) implements Comparable<Lsn> {
  /** The zero position, {@code 0/0}, which PostgreSQL uses for "invalid" or "none". */
  public static final Lsn ZERO = new Lsn(0);

  /** The greatest position, {@code FFFFFFFF/FFFFFFFF}. */
  public static final Lsn MAX = new Lsn(-1L);

  /**
   * Returns the LSN of an unsigned 64-bit value.
   *
   * @param value the position as an unsigned 64-bit number
   * @return the LSN
   */
  public static Lsn of(long value) {
    return value == 0 ? ZERO : new Lsn(value);
  }

  /**
   * Parses the text form {@code X/Y}, where X and Y are 1 to 8 hexadecimal digits (either case).
   *
   * @param text the text form, as PostgreSQL prints it
   * @return the LSN
   * @throws EtlException of kind {@link ErrorKind#INVALID_DATA} when the text is not an LSN
   */
  public static Lsn parse(String text) {
    if (text == null) {
      throw new EtlException(ErrorKind.INVALID_DATA, "LSN text is null");
    }
    int slash = text.indexOf('/');
    if (slash <= 0 || slash == text.length() - 1 || slash > 8 || text.length() - slash - 1 > 8) {
      throw invalid(text);
    }
    long hi = parseHex(text, 0, slash);
    long lo = parseHex(text, slash + 1, text.length());
    return of((hi << 32) | lo);
  }

  private static long parseHex(String text, int from, int to) {
    long v = 0;
    for (int i = from; i < to; i++) {
      char c = text.charAt(i);
      int d;
      if (c >= '0' && c <= '9') {
        d = c - '0';
      } else if (c >= 'a' && c <= 'f') {
        d = c - 'a' + 10;
      } else if (c >= 'A' && c <= 'F') {
        d = c - 'A' + 10;
      } else {
        throw invalid(text);
      }
      v = (v << 4) | d;
    }
    return v;
  }

  private static EtlException invalid(String text) {
    String shown = text.length() > 40 ? text.substring(0, 40) + "..." : text;
    return new EtlException(
        ErrorKind.INVALID_DATA,
        "not an LSN: '" + shown + "'",
        "expected two hexadecimal numbers of 1 to 8 digits separated by '/', like 16/B374D848");
  }

  /**
   * Compares unsigned, as PostgreSQL does.
   *
   * @param other the other LSN
   * @return negative, zero or positive as this LSN is before, at or after {@code other}
   */
  @Override
  public int compareTo(Lsn other) {
    return Long.compareUnsigned(value, other.value);
  }

  /**
   * Returns true when this LSN is strictly after {@code other}.
   *
   * @param other the other LSN
   * @return whether this LSN is greater
   */
  public boolean isAfter(Lsn other) {
    return compareTo(other) > 0;
  }

  /**
   * Returns true when this LSN is strictly before {@code other}.
   *
   * @param other the other LSN
   * @return whether this LSN is smaller
   */
  public boolean isBefore(Lsn other) {
    return compareTo(other) < 0;
  }

  /**
   * Returns true for {@code 0/0}.
   *
   * @return whether this is the zero LSN
   */
  public boolean isZero() {
    return value == 0;
  }

  /**
   * Returns the greater of two LSNs.
   *
   * @param a one LSN
   * @param b another LSN
   * @return the greater one ({@code a} when equal)
   */
  public static Lsn max(Lsn a, Lsn b) {
    return a.compareTo(b) >= 0 ? a : b;
  }

  /**
   * Returns the smaller of two LSNs.
   *
   * @param a one LSN
   * @param b another LSN
   * @return the smaller one ({@code a} when equal)
   */
  public static Lsn min(Lsn a, Lsn b) {
    return a.compareTo(b) <= 0 ? a : b;
  }

  /**
   * Returns the number of WAL bytes from {@code earlier} to this LSN, or 0 when {@code earlier} is
   * not before this one.
   *
   * @param earlier the earlier position
   * @return the distance in bytes, saturating at {@link Long#MAX_VALUE}
   */
  public long bytesSince(Lsn earlier) {
    if (compareTo(earlier) <= 0) {
      return 0;
    }
    long d = value - earlier.value;
    return d < 0 ? Long.MAX_VALUE : d;
  }

  /**
   * Returns the text form {@code X/Y} with upper-case hexadecimal digits, as PostgreSQL prints it.
   *
   * @return the text form
   */
  @Override
  public String toString() {
    return Long.toHexString(value >>> 32).toUpperCase(java.util.Locale.ROOT)
        + '/'
        + Long.toHexString(value & 0xFFFFFFFFL).toUpperCase(java.util.Locale.ROOT);
  }
}
