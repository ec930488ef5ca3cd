package org.pgetl.model;

import java.util.Objects;

/**
 * The position of an event in the source's commit order: the commit LSN of its transaction and its
 * ordinal inside the transaction (BEGIN is 0).
 *
 * <p>Keys are unique per event and totally ordered in commit order, so a destination can store the
 * greatest key it applied and skip events at or below it after a restart (delivery is
 * at-least-once). The text form is {@code 16-hex-digits/16-hex-digits}.
 *
 * @param commitLsn the commit LSN of the event's transaction
 * @param txOrdinal the zero-based ordinal of the event inside its transaction
 */
public record EventSequenceKey(Lsn commitLsn, long txOrdinal)
    implements Comparable<EventSequenceKey> {
  /**
   * Validates the components.
   *
   * @param commitLsn the commit LSN of the event's transaction
   * @param txOrdinal the zero-based ordinal of the event inside its transaction
   */
  public EventSequenceKey {
    Objects.requireNonNull(commitLsn, "commitLsn");
    if (txOrdinal < 0) {
      throw new IllegalArgumentException("txOrdinal must be >= 0, was " + txOrdinal);
    }
  }

  @Override
  public int compareTo(EventSequenceKey o) {
    int c = commitLsn.compareTo(o.commitLsn);
    return c != 0 ? c : Long.compare(txOrdinal, o.txOrdinal);
  }

  /** Returns {@code %016x/%016x} of the commit LSN and the ordinal; sorts like the key. */
  @Override
  public String toString() {
    return String.format("%016x/%016x", commitLsn.value(), txOrdinal);
  }
}
