package org.pgetl.model;

/**
 * A PostgreSQL {@code interval}: months, days and microseconds, kept apart exactly as PostgreSQL
 * stores them (a month is not a fixed number of days, nor a day a fixed number of seconds across a
 * DST change).
 *
 * @param months whole months (years are 12 months)
 * @param days whole days
 * @param microseconds the time part in microseconds
 */
public record PgInterval(int months, int days, long microseconds) {
  /**
   * PostgreSQL's {@code infinity} interval (PostgreSQL 17 and later), stored as the largest value
   * of every field.
   */
  public static final PgInterval INFINITY =
      new PgInterval(Integer.MAX_VALUE, Integer.MAX_VALUE, Long.MAX_VALUE);

  /**
   * PostgreSQL's {@code -infinity} interval (PostgreSQL 17 and later), stored as the smallest value
   * of every field.
   */
  public static final PgInterval NEGATIVE_INFINITY =
      new PgInterval(Integer.MIN_VALUE, Integer.MIN_VALUE, Long.MIN_VALUE);

  /**
   * Returns true unless this is {@link #INFINITY} or {@link #NEGATIVE_INFINITY}.
   *
   * @return whether the interval is finite
   */
  public boolean isFinite() {
    return !equals(INFINITY) && !equals(NEGATIVE_INFINITY);
  }

  /**
   * Returns the text form in PostgreSQL's {@code IntervalStyle=postgres}, for example {@code 1 year
   * 2 mons 3 days 04:05:06.789}, {@code 00:00:00} for a zero interval, and {@code infinity} /
   * {@code -infinity} for the two infinite intervals.
   */
  @Override
  public String toString() {
    if (equals(INFINITY)) {
      return "infinity";
    }
    if (equals(NEGATIVE_INFINITY)) {
      return "-infinity";
    }
    StringBuilder sb = new StringBuilder();
    // mirrors PostgreSQL's EncodeInterval for IntervalStyle=postgres: a field gets a '+' when the
    // nonzero field before it was negative
    boolean[] state = {true, false}; // {isZero, isBefore}
    appendPart(sb, months / 12, "year", state);
    appendPart(sb, months % 12, "mon", state);
    appendPart(sb, days, "day", state);
    if (state[0] || microseconds != 0) {
      boolean minus = microseconds < 0;
      long mag = minus ? -microseconds : microseconds; // Long.MIN_VALUE stays negative: unsigned
      long hours = Long.divideUnsigned(mag, 3_600_000_000L);
      long rem = Long.remainderUnsigned(mag, 3_600_000_000L);
      long minutes = rem / 60_000_000L;
      rem %= 60_000_000L;
      long seconds = rem / 1_000_000L;
      long micros = rem % 1_000_000L;
      sb.append(state[0] ? "" : " ").append(minus ? "-" : (state[1] ? "+" : ""));
      sb.append(hours < 10 ? "0" : "").append(hours).append(':');
      sb.append(minutes < 10 ? "0" : "").append(minutes).append(':');
      sb.append(seconds < 10 ? "0" : "").append(seconds);
      if (micros != 0) {
        String frac = String.format(java.util.Locale.ROOT, "%06d", micros);
        int end = frac.length();
        while (frac.charAt(end - 1) == '0') {
          end--;
        }
        sb.append('.').append(frac, 0, end);
      }
    }
    return sb.toString();
  }

  private static void appendPart(StringBuilder sb, int value, String unit, boolean[] state) {
    if (value == 0) {
      return;
    }
    sb.append(state[0] ? "" : " ").append(state[1] && value > 0 ? "+" : "");
    sb.append(value).append(' ').append(unit).append(value != 1 ? "s" : "");
    state[1] = value < 0;
    state[0] = false;
  }
}
