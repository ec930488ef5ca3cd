package org.pgetl.core.internal.time;

import java.time.Instant;

/** The system clocks. */
enum SystemTicker implements Ticker {
  INSTANCE;

  @Override
  public long nanoTime() {
    return System.nanoTime();
  }

  @Override
  public Instant now() {
    return Instant.now();
  }
}
