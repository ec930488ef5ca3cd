package org.pgetl.core.internal.pg;

import java.time.Duration;
import java.util.Objects;

/**
 * How a {@link ReplicationStream} waits when nothing is pending: a few rounds without parking, then
 * parks that start at {@code firstPark} and double up to {@code maxPark}. Any message resets it.
 *
 * @param spins rounds that do not park (each round already waits inside pgjdbc, see {@link
 *     ReplicationStream})
 * @param firstPark the first park
 * @param maxPark the longest park
 */
public record IdleBackoff(int spins, Duration firstPark, Duration maxPark) {
  /** Three free rounds, then 20 µs doubling up to 1 ms. */
  public static final IdleBackoff DEFAULT =
      new IdleBackoff(3, Duration.ofNanos(20_000), Duration.ofMillis(1));

  /** Validates the components. */
  public IdleBackoff {
    Objects.requireNonNull(firstPark, "firstPark");
    Objects.requireNonNull(maxPark, "maxPark");
    if (spins < 0) {
      throw new IllegalArgumentException("spins must be >= 0, was " + spins);
    }
    if (firstPark.isNegative() || firstPark.isZero() || maxPark.compareTo(firstPark) < 0) {
      throw new IllegalArgumentException(
          "need 0 < firstPark <= maxPark, was " + firstPark + " and " + maxPark);
    }
  }

  /**
   * Returns how long to park in an idle round: 0 for the first {@link #spins()} rounds, then the
   * doubling park.
   *
   * @param round the number of idle rounds since the last message, from 0
   * @return the park in nanoseconds, 0 for none
   */
  long parkNanos(int round) {
    if (round < spins) {
      return 0;
    }
    int doublings = Math.min(round - spins, 30);
    long park = firstPark.toNanos() << doublings;
    long max = maxPark.toNanos();
    return park <= 0 || park > max ? max : park;
  }
}
