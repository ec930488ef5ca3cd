package org.pgetl.core.internal.codec;

import java.time.DateTimeException;
import java.time.Instant;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.time.LocalTime;
import java.time.OffsetTime;
import java.time.ZoneOffset;
import org.pgetl.model.PgInterval;

/**
 * Codecs of date, time, timetz, timestamp, timestamptz and interval.
 *
 * <p>Text forms are those of {@code DateStyle=ISO} and {@code IntervalStyle=postgres}: {@code
 * 2024-01-31}, {@code 0044-03-15 BC}, {@code 12345-01-01}, {@code 13:45:00.5}, {@code
 * 13:45:00+05:30}, {@code 2024-01-31 13:45:00.123456+00}, {@code 1 year 2 mons -3 days +04:05:06},
 * {@code infinity}. Binary forms count from 2000-01-01 in days (date) or microseconds. Year 1 BC is
 * proleptic year 0, as in {@link LocalDate}; the infinities map to the MAX/MIN constants of the
 * Java type, and time {@code 24:00:00} to {@link LocalTime#MAX}.
 */
final class DateTimeCodecs {
  static final long PG_EPOCH_DAY = 10_957; // 2000-01-01
  static final long PG_EPOCH_SECOND = PG_EPOCH_DAY * 86_400;
  static final long MICROS_PER_DAY = 86_400_000_000L;
  private static final int MAX_OFFSET_SECONDS = 18 * 3600;

  private DateTimeCodecs() {}

  // ------------------------------------------------------------------ shared conversions

  static LocalDateTime localDateTime(long pgMicros) {
    if (pgMicros == Long.MAX_VALUE) {
      return LocalDateTime.MAX;
    }
    if (pgMicros == Long.MIN_VALUE) {
      return LocalDateTime.MIN;
    }
    long sec = Math.floorDiv(pgMicros, 1_000_000L) + PG_EPOCH_SECOND;
    int nanos = (int) Math.floorMod(pgMicros, 1_000_000L) * 1000;
    return LocalDateTime.ofEpochSecond(sec, nanos, ZoneOffset.UTC);
  }

  static Instant instant(long pgMicros) {
    if (pgMicros == Long.MAX_VALUE) {
      return Instant.MAX;
    }
    if (pgMicros == Long.MIN_VALUE) {
      return Instant.MIN;
    }
    long sec = Math.floorDiv(pgMicros, 1_000_000L) + PG_EPOCH_SECOND;
    long nanos = Math.floorMod(pgMicros, 1_000_000L) * 1000;
    return Instant.ofEpochSecond(sec, nanos);
  }

  static LocalTime localTime(long micros) {
    if (micros == MICROS_PER_DAY) {
      return LocalTime.MAX;
    }
    if (micros < 0 || micros > MICROS_PER_DAY) {
      throw BadValue.of("time of day out of range");
    }
    return LocalTime.ofNanoOfDay(micros * 1000);
  }

  // ------------------------------------------------------------------ text parsing

  /** A cursor over ASCII text: the parse position of one value. */
  private static final class Cursor {
    final byte[] b;
    int i;
    final int end;

    Cursor(byte[] b, int off, int len) {
      this.b = b;
      this.i = off;
      this.end = off + len;
    }

    boolean atEnd() {
      return i >= end;
    }

    int peek() {
      return i < end ? b[i] : -1;
    }

    void expect(char c) {
      if (i >= end || b[i] != c) {
        throw BadValue.of("expected '" + c + "'");
      }
      i++;
    }

    /** Reads exactly n digits. */
    int fixed(int n) {
      if (end - i < n) {
        throw BadValue.of("truncated");
      }
      int v = Bytes.digits(b, i, n);
      i += n;
      return v;
    }

    /** Reads one or more digits (at most 10) as a long. */
    long number() {
      int start = i;
      long v = 0;
      while (i < end && b[i] >= '0' && b[i] <= '9') {
        v = v * 10 + (b[i] - '0');
        i++;
        if (i - start > 10) {
          throw BadValue.of("number too long");
        }
      }
      if (i == start) {
        throw BadValue.of("expected a digit");
      }
      return v;
    }

    /** Reads {@code .f}, 1 to 6 digits, as microseconds; nothing when no point follows. */
    long fraction() {
      if (i >= end || b[i] != '.') {
        return 0;
      }
      i++;
      int start = i;
      long v = 0;
      while (i < end && b[i] >= '0' && b[i] <= '9') {
        v = v * 10 + (b[i] - '0');
        i++;
      }
      int n = i - start;
      if (n == 0 || n > 6) {
        throw BadValue.of("fraction needs 1 to 6 digits");
      }
      for (int k = n; k < 6; k++) {
        v *= 10;
      }
      return v;
    }

    boolean consume(String s) {
      if (end - i >= s.length() && Bytes.equalsAscii(b, i, s.length(), s)) {
        i += s.length();
        return true;
      }
      return false;
    }

    void done() {
      if (i != end) {
        throw BadValue.of("unexpected trailing characters");
      }
    }
  }

  /** Reads {@code Y-MM-DD}; the year has 4 or more digits. Returns the (positive) year etc. */
  private static int[] ymd(Cursor c) {
    int start = c.i;
    long year = c.number();
    if (c.i - start < 4 || year < 1 || year > 999_999_999) {
      throw BadValue.of("year needs 4 or more digits and must lie in the range of LocalDate");
    }
    c.expect('-');
    int month = c.fixed(2);
    c.expect('-');
    int day = c.fixed(2);
    return new int[] {(int) year, month, day};
  }

  private static LocalDate date(int[] ymd, boolean bc) {
    int year = bc ? 1 - ymd[0] : ymd[0];
    try {
      return LocalDate.of(year, ymd[1], ymd[2]);
    } catch (DateTimeException e) {
      throw BadValue.of("invalid date");
    }
  }

  /** Reads {@code HH:MM:SS[.ffffff]} as microseconds of the day (24:00:00 allowed). */
  private static long timeMicros(Cursor c) {
    int h = c.fixed(2);
    c.expect(':');
    int m = c.fixed(2);
    c.expect(':');
    int s = c.fixed(2);
    long frac = c.fraction();
    if (m > 59 || s > 59 || h > 24 || (h == 24 && (m != 0 || s != 0 || frac != 0))) {
      throw BadValue.of("time out of range");
    }
    return (h * 3600L + m * 60L + s) * 1_000_000L + frac;
  }

  /** Reads {@code +HH[:MM[:SS]]} as seconds east of UTC. */
  private static int offsetSeconds(Cursor c) {
    int sign = c.peek();
    if (sign != '+' && sign != '-') {
      throw BadValue.of("expected a UTC offset");
    }
    c.i++;
    int h = c.fixed(2);
    int m = 0;
    int s = 0;
    if (c.peek() == ':') {
      c.i++;
      m = c.fixed(2);
      if (c.peek() == ':') {
        c.i++;
        s = c.fixed(2);
      }
    }
    int total = h * 3600 + m * 60 + s;
    if (m > 59 || s > 59 || total > MAX_OFFSET_SECONDS) {
      throw BadValue.of("UTC offset out of range");
    }
    return sign == '-' ? -total : total;
  }

  private static boolean bc(Cursor c) {
    return c.consume(" BC");
  }

  // ------------------------------------------------------------------ codecs

  static final class Date extends ValueCodec {
    Date(String label) {
      super(label);
    }

    // a LocalDate
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
      if (Bytes.equalsAscii(b, off, len, "infinity")) {
        return LocalDate.MAX;
      }
      if (Bytes.equalsAscii(b, off, len, "-infinity")) {
        return LocalDate.MIN;
      }
      Cursor c = new Cursor(b, off, len);
      int[] ymd = ymd(c);
      boolean bc = bc(c);
      c.done();
      return date(ymd, bc);
    }

    @Override
    Object binary(byte[] b, int off, int len) {
      Bytes.need(len, 4, "date");
      int days = Bytes.int32(b, off);
      if (days == Integer.MAX_VALUE) {
        return LocalDate.MAX;
      }
      if (days == Integer.MIN_VALUE) {
        return LocalDate.MIN;
      }
      return LocalDate.ofEpochDay(PG_EPOCH_DAY + days);
    }
  }

  static final class Time extends ValueCodec {
    Time(String label) {
      super(label);
    }

    // a LocalTime
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
      Cursor c = new Cursor(b, off, len);
      long micros = timeMicros(c);
      c.done();
      return localTime(micros);
    }

    @Override
    Object binary(byte[] b, int off, int len) {
      Bytes.need(len, 8, "time");
      return localTime(Bytes.int64(b, off));
    }
  }

  static final class TimeTz extends ValueCodec {
    TimeTz(String label) {
      super(label);
    }

    // an OffsetTime and its LocalTime (offsets are shared)
    @Override
    long heapEstimate(int len) {
      return 2L * BOXED;
    }

    @Override
    public boolean canDecodeBinary() {
      return true;
    }

    @Override
    Object text(byte[] b, int off, int len) {
      Cursor c = new Cursor(b, off, len);
      long micros = timeMicros(c);
      int offset = offsetSeconds(c);
      c.done();
      return OffsetTime.of(localTime(micros), ZoneOffset.ofTotalSeconds(offset));
    }

    @Override
    Object binary(byte[] b, int off, int len) {
      Bytes.need(len, 12, "timetz");
      long micros = Bytes.int64(b, off);
      int west = Bytes.int32(b, off + 8); // PostgreSQL stores seconds west of UTC
      if (west > MAX_OFFSET_SECONDS || west < -MAX_OFFSET_SECONDS) {
        throw BadValue.of("UTC offset out of range");
      }
      return OffsetTime.of(localTime(micros), ZoneOffset.ofTotalSeconds(-west));
    }
  }

  static final class Timestamp extends ValueCodec {
    Timestamp(String label) {
      super(label);
    }

    // a LocalDateTime: its LocalDate and LocalTime
    @Override
    long heapEstimate(int len) {
      return 3L * BOXED;
    }

    @Override
    public boolean canDecodeBinary() {
      return true;
    }

    @Override
    Object text(byte[] b, int off, int len) {
      if (Bytes.equalsAscii(b, off, len, "infinity")) {
        return LocalDateTime.MAX;
      }
      if (Bytes.equalsAscii(b, off, len, "-infinity")) {
        return LocalDateTime.MIN;
      }
      Cursor c = new Cursor(b, off, len);
      int[] ymd = ymd(c);
      c.expect(' ');
      long micros = timeMicros(c);
      boolean bc = bc(c);
      c.done();
      if (micros == MICROS_PER_DAY) {
        throw BadValue.of("time out of range");
      }
      return LocalDateTime.of(date(ymd, bc), LocalTime.ofNanoOfDay(micros * 1000));
    }

    @Override
    Object binary(byte[] b, int off, int len) {
      Bytes.need(len, 8, "timestamp");
      return localDateTime(Bytes.int64(b, off));
    }
  }

  static final class TimestampTz extends ValueCodec {
    TimestampTz(String label) {
      super(label);
    }

    // an Instant
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
      if (Bytes.equalsAscii(b, off, len, "infinity")) {
        return Instant.MAX;
      }
      if (Bytes.equalsAscii(b, off, len, "-infinity")) {
        return Instant.MIN;
      }
      Cursor c = new Cursor(b, off, len);
      int[] ymd = ymd(c);
      c.expect(' ');
      long micros = timeMicros(c);
      int offset = offsetSeconds(c);
      boolean bc = bc(c);
      c.done();
      if (micros == MICROS_PER_DAY) {
        throw BadValue.of("time out of range");
      }
      long epochSecond = date(ymd, bc).toEpochDay() * 86_400L + micros / 1_000_000L - offset;
      return Instant.ofEpochSecond(epochSecond, (micros % 1_000_000L) * 1000);
    }

    @Override
    Object binary(byte[] b, int off, int len) {
      Bytes.need(len, 8, "timestamptz");
      return instant(Bytes.int64(b, off));
    }
  }

  static final class Interval extends ValueCodec {
    Interval(String label) {
      super(label);
    }

    // a PgInterval
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
      if (Bytes.equalsAscii(b, off, len, "infinity")) {
        return PgInterval.INFINITY;
      }
      if (Bytes.equalsAscii(b, off, len, "-infinity")) {
        return PgInterval.NEGATIVE_INFINITY;
      }
      Cursor c = new Cursor(b, off, len);
      long months = 0;
      long days = 0;
      long micros = 0;
      boolean any = false;
      while (!c.atEnd()) {
        if (any) {
          c.expect(' ');
        }
        int save = c.i;
        boolean neg = c.peek() == '-';
        if (neg || c.peek() == '+') {
          c.i++;
        }
        long n = c.number();
        if (c.peek() == ':') {
          c.i = save;
          micros = intervalTime(c);
          c.done();
          any = true;
          break;
        }
        c.expect(' ');
        long v = neg ? -n : n;
        if (c.consume("years") || c.consume("year")) {
          months += v * 12;
        } else if (c.consume("mons") || c.consume("mon")) {
          months += v;
        } else if (c.consume("days") || c.consume("day")) {
          days += v;
        } else {
          throw BadValue.of("unknown interval unit");
        }
        any = true;
      }
      if (!any) {
        throw BadValue.of("empty interval");
      }
      if (months != (int) months || days != (int) days) {
        throw BadValue.of("interval field out of range");
      }
      return new PgInterval((int) months, (int) days, micros);
    }

    /** Reads {@code [+-]H+:MM:SS[.ffffff]} as signed microseconds (the full int64 range). */
    private static long intervalTime(Cursor c) {
      boolean neg = c.peek() == '-';
      if (neg || c.peek() == '+') {
        c.i++;
      }
      long h = c.number();
      c.expect(':');
      int m = c.fixed(2);
      c.expect(':');
      int s = c.fixed(2);
      long frac = c.fraction();
      if (m > 59 || s > 59) {
        throw BadValue.of("time out of range");
      }
      // accumulate negatively so that the most negative interval fits
      long acc;
      try {
        acc = Math.multiplyExact(-h, 3_600_000_000L);
        acc = Math.subtractExact(acc, m * 60_000_000L + s * 1_000_000L + frac);
      } catch (ArithmeticException e) {
        throw BadValue.of("interval time out of range");
      }
      if (neg) {
        return acc;
      }
      if (acc == Long.MIN_VALUE) {
        throw BadValue.of("interval time out of range");
      }
      return -acc;
    }

    @Override
    Object binary(byte[] b, int off, int len) {
      Bytes.need(len, 16, "interval");
      return new PgInterval(Bytes.int32(b, off + 12), Bytes.int32(b, off + 8), Bytes.int64(b, off));
    }
  }
}
