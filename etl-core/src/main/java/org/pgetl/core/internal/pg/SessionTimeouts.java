package org.pgetl.core.internal.pg;

import java.time.Duration;
import java.util.Objects;

/**
 * The server-side timeouts of a session: {@code statement_timeout}, {@code lock_timeout} and {@code
 * idle_in_transaction_session_timeout}. Zero disables one.
 *
 * @param statement the longest a statement may run
 * @param lock the longest a statement may wait for a lock
 * @param idleInTransaction the longest a transaction may stay idle
 */
public record SessionTimeouts(Duration statement, Duration lock, Duration idleInTransaction) {
  /**
   * For catalog queries and slot management: bounded, so that a stuck lock or a forgotten
   * transaction on a shared server surfaces as an error instead of a hang.
   */
  public static final SessionTimeouts BOUNDED =
      new SessionTimeouts(Duration.ofSeconds(30), Duration.ofSeconds(10), Duration.ofSeconds(60));

  /**
   * For replication connections and copy connections: a COPY of a large table and a transaction
   * that holds a snapshot while the destination writes may both last hours.
   */
  public static final SessionTimeouts NONE =
      new SessionTimeouts(Duration.ZERO, Duration.ZERO, Duration.ZERO);

  /** Validates the components. */
  public SessionTimeouts {
    Objects.requireNonNull(statement, "statement");
    Objects.requireNonNull(lock, "lock");
    Objects.requireNonNull(idleInTransaction, "idleInTransaction");
    if (statement.isNegative() || lock.isNegative() || idleInTransaction.isNegative()) {
      throw new IllegalArgumentException("session timeouts must be >= 0");
    }
  }
}
