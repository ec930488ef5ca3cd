package org.pgetl.examples.destination;

import java.math.BigDecimal;
import java.time.Instant;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.time.LocalTime;
import java.time.OffsetTime;
import java.time.ZoneOffset;
import java.util.List;
import java.util.Objects;
import org.jspecify.annotations.Nullable;
import org.pgetl.model.PgArray;
import org.pgetl.model.PgInterval;
import org.pgetl.model.PgNumeric;
import org.pgetl.model.PgText;

/**
 * Builds one JSON object on one line, by hand: fields are appended in order, strings are escaped,
 * and model values are mapped as {@link StdoutJsonDestination} documents.
 *
 * <p>Escaping: {@code "} and {@code \}, the control characters below U+0020 (as {@code \n}, {@code
 * \t}, ... or {@code \}{@code u00XX}), U+2028 and U+2029 (which break JavaScript parsers) and lone
 * surrogates (which UTF-8 cannot encode) are escaped; every other character is written as is, so
 * the line stays readable. The output never contains a raw line break.
 */
final class JsonLine {
  private final StringBuilder sb = new StringBuilder(128).append('{');
  private boolean first = true;

  /**
   * Appends a field with a string value (or {@code null}).
   *
   * @param name the field name
   * @param value the value
   * @return this
   */
  JsonLine field(String name, String value) {
    name(name);
    if (value == null) {
      sb.append("null");
    } else {
      string(sb, value);
    }
    return this;
  }

  /**
   * Appends a field with a number value.
   *
   * @param name the field name
   * @param value the value
   * @return this
   */
  JsonLine field(String name, long value) {
    name(name).append(value);
    return this;
  }

  /**
   * Appends a field with a boolean value.
   *
   * @param name the field name
   * @param value the value
   * @return this
   */
  JsonLine field(String name, boolean value) {
    name(name).append(value);
    return this;
  }

  /**
   * Appends a field whose value is already JSON text (an object or array built by the caller).
   *
   * @param name the field name
   * @param json valid JSON text
   * @return this
   */
  JsonLine rawField(String name, CharSequence json) {
    name(name).append(json);
    return this;
  }

  private StringBuilder name(String name) {
    sb.append(first ? "" : ",");
    first = false;
    string(sb, name);
    return sb.append(':');
  }

  /**
   * Closes the object and returns it with a trailing newline.
   *
   * @return the line
   */
  String end() {
    return sb.append("}\n").toString();
  }

  // --- values

  /**
   * Appends a model value as JSON (see the mapping in {@link StdoutJsonDestination}).
   *
   * @param out the target
   * @param v a value as {@code TableRow} holds it, or null
   */
  static void value(StringBuilder out, @Nullable Object v) {
    if (v == null) {
      out.append("null");
    } else if (v instanceof Boolean || v instanceof Short || v instanceof Integer) {
      out.append(v);
    } else if (v instanceof Long) {
      out.append(v);
    } else if (v instanceof Float f) {
      floating(out, f.doubleValue(), Float.toString(f));
    } else if (v instanceof Double d) {
      floating(out, d, Double.toString(d));
    } else if (v instanceof PgNumeric n) {
      if (n.isFinite()) {
        out.append(n); // plain decimal text: a JSON number with the exact digits and scale
      } else {
        string(out, n.toString());
      }
    } else if (v instanceof byte[] bytes) {
      string(
          out,
          Objects.requireNonNull(
              PgText.format(bytes), "only SQL NULL has no text form")); // hex form, \x00ff
    } else if (v instanceof PgArray a) {
      array(out, a);
    } else {
      string(out, temporalOrText(v));
    }
  }

  private static void floating(StringBuilder out, double d, String javaText) {
    if (Double.isNaN(d) || Double.isInfinite(d)) {
      string(out, Double.isNaN(d) ? "NaN" : d > 0 ? "Infinity" : "-Infinity");
    } else {
      out.append(javaText); // e.g. 1.5, 1.0E20: valid JSON numbers, exact round trip
    }
  }

  private static String temporalOrText(Object v) {
    if (v instanceof LocalDate d) {
      return d.equals(LocalDate.MAX) ? "infinity" : d.equals(LocalDate.MIN) ? "-infinity" : iso(d);
    }
    if (v instanceof LocalDateTime t) {
      return t.equals(LocalDateTime.MAX)
          ? "infinity"
          : t.equals(LocalDateTime.MIN) ? "-infinity" : iso(t);
    }
    if (v instanceof Instant i) {
      return i.equals(Instant.MAX)
          ? "infinity"
          : i.equals(Instant.MIN)
              ? "-infinity"
              : iso(LocalDateTime.ofInstant(i, ZoneOffset.UTC)) + "Z";
    }
    if (v instanceof LocalTime t) {
      return time(t);
    }
    if (v instanceof OffsetTime t) {
      return time(t.toLocalTime()) + t.getOffset().getId();
    }
    if (v instanceof PgInterval i) {
      return isoDuration(i);
    }
    return v.toString(); // String, UUID, and anything else in its text form
  }

  /** ISO-8601 date with astronomical years: {@code -0043-03-15} is 44 BC, {@code +12345-01-01}. */
  private static String iso(LocalDate d) {
    return d.toString();
  }

  private static String iso(LocalDateTime t) {
    return t.toLocalDate() + "T" + time(t.toLocalTime());
  }

  /** {@code HH:MM:SS[.ffffff]}, {@link LocalTime#MAX} as {@code 24:00:00}: PostgreSQL's form. */
  private static String time(LocalTime t) {
    return Objects.requireNonNull(PgText.format(t), "only SQL NULL has no text form");
  }

  /**
   * Returns an ISO-8601 duration with a sign per part, as PostgreSQL prints intervals with {@code
   * IntervalStyle=iso_8601}: {@code P1Y2M3DT4H5M6.789S}, {@code P-1M-2DT-3S}, {@code PT0S}.
   */
  private static String isoDuration(PgInterval i) {
    StringBuilder sb = new StringBuilder("P");
    part(sb, i.months() / 12, 'Y');
    part(sb, i.months() % 12, 'M');
    part(sb, i.days(), 'D');
    long us = i.microseconds();
    if (us != 0) {
      sb.append('T');
      part(sb, us / 3_600_000_000L, 'H');
      part(sb, us % 3_600_000_000L / 60_000_000L, 'M');
      long secUs = us % 60_000_000L;
      if (secUs != 0) {
        // seconds with the microseconds' digits, without trailing zeros: 6.789, -0.5, 10
        sb.append(BigDecimal.valueOf(secUs, 6).stripTrailingZeros().toPlainString()).append('S');
      }
    }
    return sb.length() == 1 ? "PT0S" : sb.toString();
  }

  private static void part(StringBuilder sb, long value, char unit) {
    if (value != 0) {
      sb.append(value).append(unit);
    }
  }

  /**
   * Appends an array as nested JSON arrays, one level per dimension; an array with lower bounds
   * other than 1 becomes {@code {"lower_bounds":[...],"values":[...]}} so the bounds are not lost.
   */
  private static void array(StringBuilder out, PgArray a) {
    boolean bounded = a.dimensionCount() > 0 && !a.hasDefaultLowerBounds();
    if (bounded) {
      out.append("{\"lower_bounds\":").append(a.lowerBounds().toString().replace(" ", ""));
      out.append(",\"values\":");
    }
    if (a.dimensionCount() == 0) {
      out.append("[]");
    } else {
      dimension(out, a.dimensions(), 0, a.elements(), new int[] {0});
    }
    if (bounded) {
      out.append('}');
    }
  }

  private static void dimension(
      StringBuilder out, List<Integer> dims, int dim, List<Object> elements, int[] next) {
    out.append('[');
    for (int i = 0; i < dims.get(dim); i++) {
      out.append(i == 0 ? "" : ",");
      if (dim + 1 < dims.size()) {
        dimension(out, dims, dim + 1, elements, next);
      } else {
        value(out, elements.get(next[0]++));
      }
    }
    out.append(']');
  }

  /**
   * Appends a JSON string literal.
   *
   * @param out the target
   * @param s the text
   */
  static void string(StringBuilder out, String s) {
    out.append('"');
    for (int i = 0; i < s.length(); i++) {
      char c = s.charAt(i);
      switch (c) {
        case '"' -> out.append("\\\"");
        case '\\' -> out.append("\\\\");
        case '\n' -> out.append("\\n");
        case '\r' -> out.append("\\r");
        case '\t' -> out.append("\\t");
        case '\b' -> out.append("\\b");
        case '\f' -> out.append("\\f");
        default -> {
          if (c < 0x20 || c == '\u2028' || c == '\u2029' || isLoneSurrogate(s, i)) {
            out.append(String.format("\\u%04x", (int) c));
          } else {
            out.append(c);
          }
        }
      }
    }
    out.append('"');
  }

  private static boolean isLoneSurrogate(String s, int i) {
    char c = s.charAt(i);
    if (Character.isHighSurrogate(c)) {
      return i + 1 >= s.length() || !Character.isLowSurrogate(s.charAt(i + 1));
    }
    if (Character.isLowSurrogate(c)) {
      return i == 0 || !Character.isHighSurrogate(s.charAt(i - 1));
    }
    return false;
  }
}
