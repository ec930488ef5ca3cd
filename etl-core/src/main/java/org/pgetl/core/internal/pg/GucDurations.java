package org.pgetl.core.internal.pg;

import java.time.Duration;
import java.util.Locale;
import org.pgetl.error.ErrorKind;
import org.pgetl.error.EtlException;

/**
 * Parses time settings as {@code SHOW} prints them: a number with an optional unit ({@code us},
 * {@code ms}, {@code s}, {@code min}, {@code h}, {@code d}); a bare number is in milliseconds, as
 * for every timeout setting pgetl reads.
 */
final class GucDurations {
  private GucDurations() {}

  /**
   * Parses a time setting.
   *
   * @param name the setting's name, for the error message
   * @param text the value as {@code SHOW} prints it, for example {@code 1min}
   * @return the duration; {@link Duration#ZERO} for 0 or a negative value (disabled)
   * @throws EtlException of kind {@link ErrorKind#INVALID_DATA} when the text is not a time
   */
  static Duration parse(String name, String text) {
    if (text == null) {
      throw bad(name, "null");
    }
    String t = text.trim().toLowerCase(Locale.ROOT);
    int i = 0;
    if (i < t.length() && t.charAt(i) == '-') {
      i++;
    }
    while (i < t.length() && Character.isDigit(t.charAt(i))) {
      i++;
    }
    if (i == 0 || (i == 1 && t.charAt(0) == '-')) {
      throw bad(name, text);
    }
    long n;
    try {
      n = Long.parseLong(t.substring(0, i));
    } catch (NumberFormatException e) {
      throw bad(name, text);
    }
    if (n <= 0) {
      return Duration.ZERO;
    }
    String unit = t.substring(i).trim();
    return switch (unit) {
      case "us" -> Duration.ofNanos(n * 1000);
      case "", "ms" -> Duration.ofMillis(n);
      case "s" -> Duration.ofSeconds(n);
      case "min" -> Duration.ofMinutes(n);
      case "h" -> Duration.ofHours(n);
      case "d" -> Duration.ofDays(n);
      default -> throw bad(name, text);
    };
  }

  private static EtlException bad(String name, String text) {
    return new EtlException(
        ErrorKind.INVALID_DATA, "could not read " + name + ": '" + text + "' is not a time");
  }
}
