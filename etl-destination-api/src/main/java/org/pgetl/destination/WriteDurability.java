package org.pgetl.destination;

/**
 * What the engine requires of a {@link Destination#writeEvents} answer.
 *
 * <p>{@link #MAY_DEFER} is the common case. {@link #REQUIRE_DURABLE} is sent when the engine needs
 * the data durable before it moves on (the end of a table's catch-up, a durability barrier); an
 * empty {@code REQUIRE_DURABLE} write asks only "is everything you accepted durable now?".
 */
public enum WriteDurability {
  /** The destination may answer {@code accepted()} now and {@code durable()} on a later write. */
  MAY_DEFER,
  /**
   * The destination must answer {@code durable()} (or fail); {@code accepted()} is a contract
   * violation that fails the stream.
   */
  REQUIRE_DURABLE
}
