package org.pgetl.examples.cli;

import java.time.Duration;
import java.time.format.DateTimeParseException;
import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import picocli.CommandLine.ITypeConverter;
import picocli.CommandLine.TypeConversionException;

/** Parsers for the option values that people type: durations, row counts and sizes. */
final class Converters {
  private static final Pattern DURATION_PART = Pattern.compile("(\\d+)(ms|s|m|h)");
  private static final Pattern COUNT = Pattern.compile("(\\d[\\d_,]*)([kKmM]?)");

  private Converters() {}

  /**
   * Parses a duration: {@code 30s}, {@code 500ms}, {@code 2m}, {@code 1h30m}, a number of seconds,
   * or the ISO form {@code PT30S}.
   *
   * @param text the text
   * @return the duration
   * @throws IllegalArgumentException when the text is not a duration
   */
  static Duration duration(String text) {
    String t = text.strip().toLowerCase(Locale.ROOT);
    if (t.matches("\\d+")) {
      return Duration.ofSeconds(Long.parseLong(t));
    }
    if (t.startsWith("pt") || t.startsWith("p")) {
      try {
        return Duration.parse(t.toUpperCase(Locale.ROOT));
      } catch (DateTimeParseException e) {
        throw new IllegalArgumentException(notDuration(text), e);
      }
    }
    Matcher m = DURATION_PART.matcher(t);
    Duration total = Duration.ZERO;
    int end = 0;
    while (m.find()) {
      if (m.start() != end) {
        throw new IllegalArgumentException(notDuration(text));
      }
      long n = Long.parseLong(m.group(1));
      total =
          total.plus(
              switch (m.group(2)) {
                case "ms" -> Duration.ofMillis(n);
                case "s" -> Duration.ofSeconds(n);
                case "m" -> Duration.ofMinutes(n);
                default -> Duration.ofHours(n);
              });
      end = m.end();
    }
    if (end == 0 || end != t.length()) {
      throw new IllegalArgumentException(notDuration(text));
    }
    return total;
  }

  private static String notDuration(String text) {
    return "'" + text + "' is not a duration (examples: 30s, 2m, 1h30m, 500ms)";
  }

  /**
   * Parses a count: {@code 20000}, {@code 1_000_000}, {@code 1,000,000}, {@code 20k}, {@code 1m}.
   *
   * @param text the text
   * @return the count
   * @throws IllegalArgumentException when the text is not a count
   */
  static long count(String text) {
    Matcher m = COUNT.matcher(text.strip());
    if (!m.matches()) {
      throw new IllegalArgumentException(
          "'" + text + "' is not a count (examples: 20000, 1_000_000, 20k, 1m)");
    }
    long n;
    try {
      n = Long.parseLong(m.group(1).replace("_", "").replace(",", ""));
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException("'" + text + "' is too large", e);
    }
    long factor =
        switch (m.group(2).toLowerCase(Locale.ROOT)) {
          case "k" -> 1_000L;
          case "m" -> 1_000_000L;
          default -> 1L;
        };
    return Math.multiplyExact(n, factor);
  }

  private static final Pattern SIZE = Pattern.compile("(\\d+)\\s*([kmgt]?i?b?)");

  /**
   * Parses a size: {@code 1GiB}, {@code 64MiB}, {@code 512k}, a number of bytes, or {@code never}
   * ({@link Long#MAX_VALUE}). Multiples are of 1024, with or without the {@code i} and the {@code
   * B}.
   *
   * @param text the text
   * @return the bytes
   * @throws IllegalArgumentException when the text is not a size
   */
  static long size(String text) {
    String t = text.strip().toLowerCase(Locale.ROOT);
    if (t.equals("never")) {
      return Long.MAX_VALUE;
    }
    Matcher m = SIZE.matcher(t);
    if (!m.matches()) {
      throw new IllegalArgumentException(
          "'" + text + "' is not a size (examples: 1GiB, 64MiB, 512k, 0, never)");
    }
    String unit = m.group(2).isEmpty() ? "b" : m.group(2).substring(0, 1);
    int shift =
        switch (unit) {
          case "k" -> 10;
          case "m" -> 20;
          case "g" -> 30;
          case "t" -> 40;
          default -> 0;
        };
    long n;
    try {
      n = Long.parseLong(m.group(1));
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException("'" + text + "' is too large", e);
    }
    if (n > (Long.MAX_VALUE >> shift)) {
      throw new IllegalArgumentException("'" + text + "' is too large");
    }
    return n << shift;
  }

  /** Picocli converter for {@link #size}. */
  static final class SizeConverter implements ITypeConverter<Long> {
    @Override
    public Long convert(String value) {
      try {
        return size(value);
      } catch (IllegalArgumentException e) {
        throw new TypeConversionException(e.getMessage());
      }
    }
  }

  /** Picocli converter for {@link #duration}. */
  static final class DurationConverter implements ITypeConverter<Duration> {
    @Override
    public Duration convert(String value) {
      try {
        return duration(value);
      } catch (IllegalArgumentException e) {
        throw new TypeConversionException(e.getMessage());
      }
    }
  }

  /** Picocli converter for {@link #count}. */
  static final class CountConverter implements ITypeConverter<Long> {
    @Override
    public Long convert(String value) {
      try {
        return count(value);
      } catch (IllegalArgumentException | ArithmeticException e) {
        throw new TypeConversionException(e.getMessage());
      }
    }
  }
}
