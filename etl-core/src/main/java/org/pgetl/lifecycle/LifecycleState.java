package org.pgetl.lifecycle;

import java.util.Locale;
import java.util.Optional;

/**
 * An operator's intent for one destination of a pipeline, kept in the store's {@code
 * destination_lifecycle} table and followed live by the running pipeline.
 */
public enum LifecycleState {
  /** Normal operation: read WAL, copy, deliver. The state when no row exists. */
  ACTIVE,
  /**
   * Stop reading and delivering; discard buffered work; keep the slot (WAL is retained). Resume
   * re-reads from the durable point.
   */
  PAUSED,
  /** Take no new work, flush what is buffered, then idle. Reversible. */
  DRAINING,
  /**
   * Terminal: drop the pipeline's slots and state. Only an operator writes it, with SQL; pgetl
   * refuses to.
   */
  RETIRED;

  /**
   * Returns the value as stored in the database ({@code active}, {@code paused}, ...).
   *
   * @return the lower-case name
   */
  public String dbValue() {
    return name().toLowerCase(Locale.ROOT);
  }

  /**
   * Parses a stored value exactly ({@code active}, {@code paused}, {@code draining}, {@code
   * retired}).
   *
   * @param value the stored value
   * @return the state, or empty for any other value
   */
  public static Optional<LifecycleState> fromDbValue(String value) {
    if (value == null) {
      return Optional.empty();
    }
    for (LifecycleState s : values()) {
      if (s.dbValue().equals(value)) {
        return Optional.of(s);
      }
    }
    return Optional.empty();
  }
}
