package org.pgetl.model;

import java.math.BigDecimal;
import java.math.MathContext;
import java.math.RoundingMode;
import java.time.Instant;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.time.LocalTime;
import java.time.OffsetTime;
import java.time.ZoneOffset;
import java.util.List;
import java.util.UUID;
import org.jspecify.annotations.Nullable;

/**
 * Formats the Java value of any PostgreSQL type (see {@code docs/types.md}) back into the text form
 * that PostgreSQL's input functions accept, so that a destination can write a value to PostgreSQL
 * with a parameter such as {@code ?::numeric}.
 *
 * <p>The text is exactly what PostgreSQL itself prints for the value in a session with {@code
 * DateStyle=ISO}, {@code IntervalStyle=postgres}, {@code extra_float_digits=3} (shortest exact
 * floats), {@code bytea_output=hex} and {@code TimeZone=UTC}: for every value {@code v} that pgetl
 * decodes, {@code format(v)} equals the server's output text of that value. Values of types that
 * pgetl keeps as text ({@code inet}, {@code money}, composite and range types, ...) are returned
 * unchanged. This class formats only; it parses nothing.
 */
// its signatures carry @Nullable of org.jspecify, read at compile time only (requires static)
@SuppressWarnings("exports")
public final class PgText {
  private static final int BOX_OID = 603;
  private static final char[] HEX = "0123456789abcdef".toCharArray();
  private static final BigDecimal TWO = BigDecimal.valueOf(2);

  private PgText() {}

  /**
   * Returns the PostgreSQL text form of a value, or null for null (SQL NULL).
   *
   * <p>Accepted types: {@link String}, {@link Boolean} ({@code t}/{@code f}), {@link Short}, {@link
   * Integer}, {@link Long}, {@link Float}, {@link Double}, {@link PgNumeric}, {@link BigDecimal},
   * {@code byte[]} ({@code \x} hex), {@link LocalDate}, {@link LocalTime}, {@link OffsetTime},
   * {@link LocalDateTime}, {@link Instant}, {@link PgInterval}, {@link UUID} and {@link PgArray}.
   * The sentinels {@code LocalDate.MAX}/{@code MIN}, {@code LocalDateTime.MAX}/{@code MIN} and
   * {@code Instant.MAX}/{@code MIN} print as {@code infinity}/{@code -infinity}, and {@code
   * LocalTime.MAX} as {@code 24:00:00}.
   *
   * @param value the value, or null
   * @return the text form, or null when {@code value} is null
   * @throws IllegalArgumentException when the value's class is not one of the above
   */
  public static @Nullable String format(@Nullable Object value) {
    return value == null ? null : text(value);
  }

  /** Returns the text form of a value that is not SQL NULL. */
  private static String text(Object value) {
    if (value instanceof String s) {
      return s;
    }
    StringBuilder sb = new StringBuilder(32);
    appendTo(sb, value);
    return sb.toString();
  }

  /**
   * Returns the text form of an array whose element type uses a delimiter other than the one {@link
   * #format(Object)} assumes (a comma, or a semicolon for {@code box}), such as an extension type
   * with its own {@code typdelim}.
   *
   * @param array the array
   * @param delimiter the element type's delimiter
   * @return the text form, for example {@code [0:1]={a,"b c"}}
   */
  public static String formatArray(PgArray array, char delimiter) {
    StringBuilder sb = new StringBuilder(16 + 8 * array.elements().size());
    appendArray(sb, array, delimiter);
    return sb.toString();
  }

  private static void appendTo(StringBuilder sb, Object value) {
    if (value instanceof String s) {
      sb.append(s);
    } else if (value instanceof Integer || value instanceof Long || value instanceof Short) {
      sb.append(((Number) value).longValue());
    } else if (value instanceof Boolean b) {
      sb.append(b ? 't' : 'f');
    } else if (value instanceof PgNumeric n) {
      sb.append(n);
    } else if (value instanceof Instant i) {
      appendInstant(sb, i);
    } else if (value instanceof LocalDateTime t) {
      appendTimestamp(sb, t);
    } else if (value instanceof LocalDate d) {
      appendDate(sb, d);
    } else if (value instanceof Double d) {
      appendDouble(sb, d);
    } else if (value instanceof Float f) {
      appendFloat(sb, f);
    } else if (value instanceof byte[] b) {
      appendBytea(sb, b);
    } else if (value instanceof UUID u) {
      sb.append(u);
    } else if (value instanceof LocalTime t) {
      appendTime(sb, t);
    } else if (value instanceof OffsetTime t) {
      appendTime(sb, t.toLocalTime());
      appendOffset(sb, t.getOffset().getTotalSeconds());
    } else if (value instanceof PgInterval i) {
      sb.append(i);
    } else if (value instanceof PgArray a) {
      appendArray(sb, a, a.elementTypeOid() == BOX_OID ? ';' : ',');
    } else if (value instanceof BigDecimal d) {
      sb.append(d.toPlainString());
    } else {
      throw new IllegalArgumentException(
          "PgText cannot format a " + value.getClass().getName() + " (see docs/types.md)");
    }
  }

  // ---------------------------------------------------------------- date and time

  private static void appendDate(StringBuilder sb, LocalDate d) {
    if (d.equals(LocalDate.MAX)) {
      sb.append("infinity");
    } else if (d.equals(LocalDate.MIN)) {
      sb.append("-infinity");
    } else {
      int year = d.getYear();
      appendYmd(sb, year, d.getMonthValue(), d.getDayOfMonth());
      if (year <= 0) {
        sb.append(" BC");
      }
    }
  }

  private static void appendTimestamp(StringBuilder sb, LocalDateTime t) {
    if (t.equals(LocalDateTime.MAX)) {
      sb.append("infinity");
    } else if (t.equals(LocalDateTime.MIN)) {
      sb.append("-infinity");
    } else {
      int year = t.getYear();
      appendYmd(sb, year, t.getMonthValue(), t.getDayOfMonth());
      sb.append(' ');
      appendTime(sb, t.getHour(), t.getMinute(), t.getSecond(), t.getNano() / 1000);
      if (year <= 0) {
        sb.append(" BC");
      }
    }
  }

  private static void appendInstant(StringBuilder sb, Instant i) {
    if (i.equals(Instant.MAX)) {
      sb.append("infinity");
    } else if (i.equals(Instant.MIN)) {
      sb.append("-infinity");
    } else {
      LocalDateTime t =
          LocalDateTime.ofEpochSecond(i.getEpochSecond(), i.getNano(), ZoneOffset.UTC);
      int year = t.getYear();
      appendYmd(sb, year, t.getMonthValue(), t.getDayOfMonth());
      sb.append(' ');
      appendTime(sb, t.getHour(), t.getMinute(), t.getSecond(), t.getNano() / 1000);
      sb.append("+00");
      if (year <= 0) {
        sb.append(" BC");
      }
    }
  }

  private static void appendYmd(StringBuilder sb, int year, int month, int day) {
    int y = year <= 0 ? 1 - year : year;
    if (y < 1000) {
      sb.append(y < 10 ? "000" : y < 100 ? "00" : "0");
    }
    sb.append(y).append('-');
    append2(sb, month);
    sb.append('-');
    append2(sb, day);
  }

  private static void appendTime(StringBuilder sb, LocalTime t) {
    if (t.equals(LocalTime.MAX)) {
      sb.append("24:00:00");
    } else {
      appendTime(sb, t.getHour(), t.getMinute(), t.getSecond(), t.getNano() / 1000);
    }
  }

  private static void appendTime(StringBuilder sb, int hour, int minute, int second, int micros) {
    append2(sb, hour);
    sb.append(':');
    append2(sb, minute);
    sb.append(':');
    append2(sb, second);
    appendFraction(sb, micros);
  }

  /** Appends {@code .ffffff} without trailing zeros, or nothing for zero. */
  private static void appendFraction(StringBuilder sb, long micros) {
    if (micros == 0) {
      return;
    }
    sb.append('.');
    long div = 100_000;
    while (micros != 0) {
      long digit = micros / div;
      sb.append((char) ('0' + digit));
      micros -= digit * div;
      div /= 10;
    }
  }

  /** Appends a UTC offset the way PostgreSQL prints it: {@code +HH}, {@code +HH:MM}, or more. */
  private static void appendOffset(StringBuilder sb, int totalSeconds) {
    int abs = Math.abs(totalSeconds);
    sb.append(totalSeconds < 0 ? '-' : '+');
    append2(sb, abs / 3600);
    int min = abs / 60 % 60;
    int sec = abs % 60;
    if (min != 0 || sec != 0) {
      sb.append(':');
      append2(sb, min);
      if (sec != 0) {
        sb.append(':');
        append2(sb, sec);
      }
    }
  }

  private static void append2(StringBuilder sb, int v) {
    if (v < 10) {
      sb.append('0');
    }
    sb.append(v);
  }

  // ---------------------------------------------------------------- bytea

  private static void appendBytea(StringBuilder sb, byte[] b) {
    sb.ensureCapacity(sb.length() + 2 + 2 * b.length);
    sb.append("\\x");
    for (byte x : b) {
      sb.append(HEX[(x >> 4) & 0xF]).append(HEX[x & 0xF]);
    }
  }

  // ---------------------------------------------------------------- floats

  /*
   * PostgreSQL 12+ prints floats (with extra_float_digits > 0) with Ryu: the shortest decimal that
   * lies strictly inside the rounding interval of the binary value (the open interval between the
   * midpoints to its two neighbours; PostgreSQL builds Ryu without accepting the bounds, so 1e23
   * prints as 9.999999999999999e+22), and of those the closest to the exact value. Java 17's
   * Double.toString is not always the shortest, so the digits are found here, exactly, with
   * BigDecimal: for a digit count p, the two p-digit decimals around the exact value are the only
   * candidates. Fixed notation is used for decimal exponents in [-4, 15) for float8 and [-4, 6)
   * for float4, exponent notation otherwise.
   */

  private static void appendDouble(StringBuilder sb, double d) {
    if (Double.isNaN(d)) {
      sb.append("NaN");
    } else if (Double.isInfinite(d)) {
      sb.append(d > 0 ? "Infinity" : "-Infinity");
    } else if (d == 0) {
      sb.append(Double.doubleToRawLongBits(d) < 0 ? "-0" : "0");
    } else {
      double a = Math.abs(d);
      BigDecimal exact = new BigDecimal(a);
      BigDecimal low = exact.add(new BigDecimal(Math.nextDown(a))).divide(TWO);
      BigDecimal high = exact.add(new BigDecimal(Math.ulp(a)).divide(TWO));
      if (d < 0) {
        sb.append('-');
      }
      appendShortest(sb, shortest(exact, low, high, Double.toString(a), 17), 15);
    }
  }

  private static void appendFloat(StringBuilder sb, float f) {
    if (Float.isNaN(f)) {
      sb.append("NaN");
    } else if (Float.isInfinite(f)) {
      sb.append(f > 0 ? "Infinity" : "-Infinity");
    } else if (f == 0) {
      sb.append(Float.floatToRawIntBits(f) < 0 ? "-0" : "0");
    } else {
      float a = Math.abs(f);
      BigDecimal exact = new BigDecimal(a);
      BigDecimal low = exact.add(new BigDecimal(Math.nextDown(a))).divide(TWO);
      BigDecimal high = exact.add(new BigDecimal(Math.ulp(a)).divide(TWO));
      if (f < 0) {
        sb.append('-');
      }
      appendShortest(sb, shortest(exact, low, high, Float.toString(a), 9), 6);
    }
  }

  /** Returns the shortest decimal strictly between low and high, closest to exact (positive). */
  private static BigDecimal shortest(
      BigDecimal exact, BigDecimal low, BigDecimal high, String jdk, int maxDigits) {
    // a first guess from the JDK, whose output always reads back (if sometimes too long)
    int guess = Math.min(maxDigits, significantDigits(jdk));
    @Nullable BigDecimal best = null;
    int p = guess;
    for (; p <= maxDigits + 1 && best == null; p++) {
      best = candidate(exact, low, high, p);
    }
    if (best == null) {
      return exact.round(new MathContext(maxDigits, RoundingMode.HALF_EVEN));
    }
    for (p = guess - 1; p >= 1; p--) {
      BigDecimal shorter = candidate(exact, low, high, p);
      if (shorter == null) {
        break;
      }
      best = shorter;
    }
    return best;
  }

  /** Returns the p-digit decimal inside (low, high) closest to exact (ties to even), or null. */
  private static @Nullable BigDecimal candidate(
      BigDecimal exact, BigDecimal low, BigDecimal high, int p) {
    BigDecimal down = exact.round(new MathContext(p, RoundingMode.DOWN));
    BigDecimal up = exact.round(new MathContext(p, RoundingMode.UP));
    boolean downOk = down.compareTo(low) > 0;
    boolean upOk = up.compareTo(high) < 0;
    if (downOk && upOk && down.compareTo(up) != 0) {
      int c = exact.subtract(down).compareTo(up.subtract(exact));
      if (c != 0) {
        return c < 0 ? down : up;
      }
      return down.unscaledValue().testBit(0) ? up : down;
    }
    return downOk ? down : upOk ? up : null;
  }

  private static int significantDigits(String jdk) {
    int count = 0;
    int lastNonZero = 0;
    boolean leading = true;
    for (int i = 0; i < jdk.length(); i++) {
      char c = jdk.charAt(i);
      if (c == 'E') {
        break;
      }
      if (c >= '0' && c <= '9') {
        if (leading && c == '0') {
          continue;
        }
        leading = false;
        count++;
        if (c != '0') {
          lastNonZero = count;
        }
      }
    }
    return Math.max(1, lastNonZero);
  }

  private static void appendShortest(StringBuilder sb, BigDecimal v, int fixedLimit) {
    BigDecimal stripped = v.stripTrailingZeros();
    String digits = stripped.unscaledValue().abs().toString();
    int exp = digits.length() - 1 - stripped.scale(); // decimal exponent of the first digit
    if (exp >= -4 && exp < fixedLimit) {
      if (exp < 0) {
        sb.append("0.");
        for (int i = -1; i > exp; i--) {
          sb.append('0');
        }
        sb.append(digits);
      } else if (digits.length() <= exp + 1) {
        sb.append(digits);
        for (int i = digits.length(); i <= exp; i++) {
          sb.append('0');
        }
      } else {
        sb.append(digits, 0, exp + 1).append('.').append(digits, exp + 1, digits.length());
      }
    } else {
      sb.append(digits.charAt(0));
      if (digits.length() > 1) {
        sb.append('.').append(digits, 1, digits.length());
      }
      sb.append('e').append(exp < 0 ? '-' : '+');
      int a = Math.abs(exp);
      if (a < 10) {
        sb.append('0');
      }
      sb.append(a);
    }
  }

  // ---------------------------------------------------------------- arrays

  private static void appendArray(StringBuilder sb, PgArray a, char delimiter) {
    List<Integer> dims = a.dimensions();
    if (dims.isEmpty()) {
      sb.append("{}");
      return;
    }
    if (!a.hasDefaultLowerBounds()) {
      List<Integer> lbs = a.lowerBounds();
      for (int i = 0; i < dims.size(); i++) {
        int lb = lbs.get(i);
        sb.append('[').append(lb).append(':').append((long) lb + dims.get(i) - 1).append(']');
      }
      sb.append('=');
    }
    appendLevel(sb, a.elements(), dims, 0, 0, delimiter);
  }

  /** Appends dimension {@code level} starting at flat index {@code start}; returns the end. */
  private static int appendLevel(
      StringBuilder sb,
      List<@Nullable Object> elems,
      List<Integer> dims,
      int level,
      int start,
      char delim) {
    int n = dims.get(level);
    int idx = start;
    sb.append('{');
    for (int i = 0; i < n; i++) {
      if (i > 0) {
        sb.append(delim);
      }
      if (level + 1 < dims.size()) {
        idx = appendLevel(sb, elems, dims, level + 1, idx, delim);
      } else {
        appendElement(sb, elems.get(idx++), delim);
      }
    }
    sb.append('}');
    return idx;
  }

  private static void appendElement(StringBuilder sb, @Nullable Object e, char delim) {
    if (e == null) {
      sb.append("NULL");
      return;
    }
    String s = text(e);
    boolean quote = s.isEmpty() || s.equalsIgnoreCase("NULL");
    for (int i = 0; i < s.length() && !quote; i++) {
      char c = s.charAt(i);
      quote = c == '"' || c == '\\' || c == '{' || c == '}' || c == delim || isArraySpace(c);
    }
    if (!quote) {
      sb.append(s);
      return;
    }
    sb.append('"');
    for (int i = 0; i < s.length(); i++) {
      char c = s.charAt(i);
      if (c == '"' || c == '\\') {
        sb.append('\\');
      }
      sb.append(c);
    }
    sb.append('"');
  }

  private static boolean isArraySpace(char c) {
    return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\u000B' || c == '\f';
  }
}
