package org.pgetl.core.internal.decode;

import java.time.Instant;

/**
 * Conversions for PostgreSQL timestamps on the wire: signed microseconds since {@code 2000-01-01
 * 00:00:00 UTC}, the form pgoutput uses for commit, prepare, rollback and abort times.
 */
public final class PgTime {
  /** Seconds from the Unix epoch to the PostgreSQL epoch, 2000-01-01T00:00:00Z. */
  public static final long PG_EPOCH_SECONDS = 946_684_800L;

  private static final long MICROS_PER_SECOND = 1_000_000L;

  private PgTime() {}

  /**
   * Returns the instant of a PostgreSQL timestamp.
   *
   * <p>Every {@code long} maps to an instant: the range of microseconds fits the range of {@link
   * Instant}, so no value overflows. PostgreSQL's {@code infinity} and {@code -infinity} ({@link
   * Long#MAX_VALUE}, {@link Long#MIN_VALUE}) map to far-future and far-past instants; commit
   * timestamps never take those values.
   *
   * @param micros microseconds since 2000-01-01T00:00:00Z
   * @return the instant
   */
  public static Instant toInstant(long micros) {
    long seconds = Math.floorDiv(micros, MICROS_PER_SECOND);
    long microsOfSecond = Math.floorMod(micros, MICROS_PER_SECOND);
    return Instant.ofEpochSecond(seconds + PG_EPOCH_SECONDS, microsOfSecond * 1_000L);
  }

  /**
   * Returns the PostgreSQL timestamp of an instant, truncated to whole microseconds (towards the
   * past).
   *
   * @param instant the instant
   * @return microseconds since 2000-01-01T00:00:00Z
   * @throws ArithmeticException when the instant lies outside the range of a {@code long} of
   *     microseconds (about 292,000 years around 2000)
   */
  public static long fromInstant(Instant instant) {
    long seconds = Math.subtractExact(instant.getEpochSecond(), PG_EPOCH_SECONDS);
    return Math.addExact(
        Math.multiplyExact(seconds, MICROS_PER_SECOND), instant.getNano() / 1_000L);
  }
}
