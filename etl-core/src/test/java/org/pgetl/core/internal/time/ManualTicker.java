package org.pgetl.core.internal.time;

import java.time.Duration;
import java.time.Instant;
import java.util.concurrent.atomic.AtomicLong;

/** A ticker a test moves by hand; both readings advance together. */
public final class ManualTicker implements Ticker {
  private final AtomicLong nanos = new AtomicLong(1_000_000_000L);
  private final Instant origin;

  /** Creates a ticker whose wall clock starts at 2026-01-01T00:00:00Z. */
  public ManualTicker() {
    this(Instant.parse("2026-01-01T00:00:00Z"));
  }

  /**
   * Creates a ticker whose wall clock starts at {@code origin}.
   *
   * @param origin the first wall-clock reading
   */
  public ManualTicker(Instant origin) {
    this.origin = origin;
  }

  /**
   * Moves both clocks forward.
   *
   * @param amount how far
   * @return this ticker
   */
  public ManualTicker advance(Duration amount) {
    if (amount.isNegative()) {
      throw new IllegalArgumentException("a ticker does not go back: " + amount);
    }
    nanos.addAndGet(amount.toNanos());
    return this;
  }

  @Override
  public long nanoTime() {
    return nanos.get();
  }

  @Override
  public Instant now() {
    return origin.plusNanos(nanos.get() - 1_000_000_000L);
  }
}
