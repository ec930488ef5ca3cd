package org.pgetl.store;

import java.time.Instant;
import java.util.Objects;

/**
 * Who holds a pipeline's lease.
 *
 * @param holder the holder's description: host, process id and application, as it gave them
 * @param epoch the epoch of its acquisition
 * @param since when it acquired the lease
 */
public record LeaseHolder(String holder, long epoch, Instant since) {
  /** Validates the components. */
  public LeaseHolder {
    Objects.requireNonNull(holder, "holder");
    Objects.requireNonNull(since, "since");
  }
}
