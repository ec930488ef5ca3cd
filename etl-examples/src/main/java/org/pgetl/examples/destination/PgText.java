package org.pgetl.examples.destination;

import java.math.BigDecimal;
import java.time.Instant;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.time.LocalTime;
import java.time.OffsetTime;
import java.time.ZoneOffset;
import java.util.List;
import java.util.Locale;
import org.pgetl.model.PgArray;

/**
 * PostgreSQL's text output form of pgetl's model values, for destinations that store a value as
 * text ({@code DuckDbDestination} does for types it has no exact column type for).
 *
 * <p>Every string here is what PostgreSQL prints with {@code DateStyle=ISO}, {@code
 * IntervalStyle=postgres} and {@code TimeZone=UTC}, and PostgreSQL reads it back to the same value:
 * {@code t}/{@code f}, {@code 0044-03-15 BC}, {@code infinity}, {@code 24:00:00}, {@code 2024-01-31
 * 10:15:30.5+00}, {@code \x00ff}, {@code {{1,NULL},{3,4}}}. Floating-point numbers are printed
 * exactly, though not always with PostgreSQL's choice of exponent ({@code 1.0E7} and {@code 1e+07}
 * read back alike).
 */
final class PgText {
  private static final char[] HEX = "0123456789abcdef".toCharArray();

  private PgText() {}

  /**
   * Returns the text form of a non-null model value.
   *
   * @param value a value as {@code TableRow} holds it
   * @return PostgreSQL's text form
   */
  static String format(Object value) {
    StringBuilder sb = new StringBuilder();
    append(sb, value);
    return sb.toString();
  }

  private static void append(StringBuilder sb, Object v) {
    if (v instanceof String s) {
      sb.append(s);
    } else if (v instanceof Boolean b) {
      sb.append(b ? 't' : 'f');
    } else if (v instanceof Float f) {
      appendFloat(sb, f.doubleValue(), Float.toString(f));
    } else if (v instanceof Double d) {
      appendFloat(sb, d, Double.toString(d));
    } else if (v instanceof byte[] bytes) {
      appendHex(sb.append("\\x"), bytes);
    } else if (v instanceof LocalDate d) {
      appendDate(sb, d);
    } else if (v instanceof LocalTime t) {
      appendTime(sb, t);
    } else if (v instanceof OffsetTime t) {
      appendTime(sb, t.toLocalTime());
      appendOffset(sb, t.getOffset());
    } else if (v instanceof LocalDateTime t) {
      appendTimestamp(sb, t, null);
    } else if (v instanceof Instant i) {
      appendInstant(sb, i);
    } else if (v instanceof PgArray a) {
      appendArray(sb, a);
    } else {
      sb.append(v); // Short, Integer, Long, PgNumeric, PgInterval, UUID print as PostgreSQL does
    }
  }

  private static void appendFloat(StringBuilder sb, double d, String javaText) {
    if (Double.isNaN(d)) {
      sb.append("NaN");
    } else if (Double.isInfinite(d)) {
      sb.append(d > 0 ? "Infinity" : "-Infinity");
    } else {
      // Java's shortest round-trip digits, without a needless ".0"
      sb.append(new BigDecimal(javaText).stripTrailingZeros().toString());
    }
  }

  /**
   * Appends bytes as lower-case hexadecimal digits.
   *
   * @param sb the target
   * @param bytes the bytes
   * @return {@code sb}
   */
  static StringBuilder appendHex(StringBuilder sb, byte[] bytes) {
    for (byte b : bytes) {
      sb.append(HEX[(b >> 4) & 0xF]).append(HEX[b & 0xF]);
    }
    return sb;
  }

  private static void appendDate(StringBuilder sb, LocalDate d) {
    if (d.equals(LocalDate.MAX) || d.equals(LocalDate.MIN)) {
      sb.append(d.equals(LocalDate.MAX) ? "infinity" : "-infinity");
      return;
    }
    appendDatePart(sb, d);
    if (d.getYear() <= 0) {
      sb.append(" BC");
    }
  }

  private static void appendTimestamp(StringBuilder sb, LocalDateTime t, String zone) {
    if (t.equals(LocalDateTime.MAX) || t.equals(LocalDateTime.MIN)) {
      sb.append(t.equals(LocalDateTime.MAX) ? "infinity" : "-infinity");
      return;
    }
    appendDatePart(sb, t.toLocalDate());
    appendTime(sb.append(' '), t.toLocalTime());
    sb.append(zone == null ? "" : zone);
    if (t.getYear() <= 0) {
      sb.append(" BC");
    }
  }

  private static void appendInstant(StringBuilder sb, Instant i) {
    if (i.equals(Instant.MAX) || i.equals(Instant.MIN)) {
      sb.append(i.equals(Instant.MAX) ? "infinity" : "-infinity");
      return;
    }
    appendTimestamp(sb, LocalDateTime.ofInstant(i, ZoneOffset.UTC), "+00");
  }

  /**
   * Appends {@code YYYY-MM-DD} with the year counted as PostgreSQL counts it: {@code 1 - isoYear}
   * for years BC (ISO year 0 is 1 BC). The caller appends the {@code BC} marker where its format
   * wants it.
   *
   * @param sb the target
   * @param d a finite date
   */
  static void appendDatePart(StringBuilder sb, LocalDate d) {
    int year = d.getYear() <= 0 ? 1 - d.getYear() : d.getYear();
    sb.append(
        String.format(Locale.ROOT, "%04d-%02d-%02d", year, d.getMonthValue(), d.getDayOfMonth()));
  }

  /**
   * Appends {@code HH:MM:SS} and, when not zero, the microseconds without trailing zeros; {@link
   * LocalTime#MAX} is PostgreSQL's {@code 24:00:00}.
   *
   * @param sb the target
   * @param t the time of day
   */
  static void appendTime(StringBuilder sb, LocalTime t) {
    if (t.equals(LocalTime.MAX)) {
      sb.append("24:00:00");
      return;
    }
    sb.append(
        String.format(Locale.ROOT, "%02d:%02d:%02d", t.getHour(), t.getMinute(), t.getSecond()));
    appendFraction(sb, t.getNano() / 1000);
  }

  /**
   * Appends {@code .ffffff} without trailing zeros, or nothing for zero microseconds.
   *
   * @param sb the target
   * @param micros 0 to 999999
   */
  static void appendFraction(StringBuilder sb, long micros) {
    if (micros == 0) {
      return;
    }
    String digits = String.format(Locale.ROOT, "%06d", micros);
    int end = digits.length();
    while (digits.charAt(end - 1) == '0') {
      end--;
    }
    sb.append('.').append(digits, 0, end);
  }

  private static void appendOffset(StringBuilder sb, ZoneOffset offset) {
    int total = offset.getTotalSeconds();
    int abs = Math.abs(total);
    sb.append(total < 0 ? '-' : '+').append(String.format(Locale.ROOT, "%02d", abs / 3600));
    if (abs % 3600 != 0) {
      sb.append(String.format(Locale.ROOT, ":%02d", abs % 3600 / 60));
      if (abs % 60 != 0) {
        sb.append(String.format(Locale.ROOT, ":%02d", abs % 60));
      }
    }
  }

  // --- arrays: {elem,elem}, nested braces per dimension, [lo:hi]= prefix for other bounds

  private static void appendArray(StringBuilder sb, PgArray a) {
    if (a.dimensionCount() == 0) {
      sb.append("{}");
      return;
    }
    if (!a.hasDefaultLowerBounds()) {
      for (int d = 0; d < a.dimensionCount(); d++) {
        int lo = a.lowerBounds().get(d);
        sb.append('[').append(lo).append(':').append(lo + a.dimensions().get(d) - 1).append(']');
      }
      sb.append('=');
    }
    appendDimension(sb, a.dimensions(), 0, a.elements(), new int[] {0});
  }

  private static void appendDimension(
      StringBuilder sb, List<Integer> dims, int dim, List<Object> elements, int[] next) {
    sb.append('{');
    for (int i = 0; i < dims.get(dim); i++) {
      sb.append(i == 0 ? "" : ",");
      if (dim + 1 < dims.size()) {
        appendDimension(sb, dims, dim + 1, elements, next);
      } else {
        appendElement(sb, elements.get(next[0]++));
      }
    }
    sb.append('}');
  }

  private static void appendElement(StringBuilder sb, Object element) {
    if (element == null) {
      sb.append("NULL");
      return;
    }
    String text = format(element);
    if (!needsQuotes(text)) {
      sb.append(text);
      return;
    }
    sb.append('"');
    for (int i = 0; i < text.length(); i++) {
      char c = text.charAt(i);
      sb.append(c == '"' || c == '\\' ? "\\" : "").append(c);
    }
    sb.append('"');
  }

  private static boolean needsQuotes(String text) {
    if (text.isEmpty() || text.equalsIgnoreCase("NULL")) {
      return true;
    }
    for (int i = 0; i < text.length(); i++) {
      char c = text.charAt(i);
      if (c == '{' || c == '}' || c == ',' || c == '"' || c == '\\' || Character.isWhitespace(c)) {
        return true;
      }
    }
    return false;
  }
}
