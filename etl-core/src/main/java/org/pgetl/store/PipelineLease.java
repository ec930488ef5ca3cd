package org.pgetl.store;

import java.time.Duration;
import java.util.Optional;

/**
 * The lease that lets one instance of a pipeline run at a time: before it touches a slot, a state
 * row or the destination, an instance acquires it; another instance of the same pipeline id waits
 * (standby) or fails. Each acquisition increments a persisted <em>epoch</em>, a fencing token the
 * destination sees ({@code DestinationContext.epoch()}).
 *
 * <p>A handle belongs to one pipeline instance; {@link #tryAcquire()}, {@link #isHeld} and {@link
 * #close()} are called from its supervisor, {@link #holder()} from any thread. {@code
 * PostgresStore} keeps the lease as a session advisory lock on a connection of its own (the server
 * releases it when that session ends, a kill -9 included) and the epoch in a row; {@code
 * MemoryStore} keeps it in the store instance, so that two pipelines sharing one memory store in
 * one JVM behave the same.
 */
public interface PipelineLease extends AutoCloseable {

  /**
   * Tries to take the lease, once, without waiting.
   *
   * @return the new epoch when this handle holds the lease now (also when it already did: then the
   *     epoch of that acquisition), empty when another instance holds it
   * @throws org.pgetl.error.EtlException of kind {@code STATE_STORE_ERROR} when the store fails
   */
  Optional<Long> tryAcquire();

  /**
   * Returns true when the holder before the last successful {@link #tryAcquire()} released the
   * lease itself (a clean stop), or there was none: then it stopped before, and the new holder may
   * act at once. After a lost lease (a killed process, a cut network) the new holder waits its
   * takeover delay first.
   *
   * @return whether the previous holder released the lease
   */
  boolean previousHolderReleased();

  /**
   * Checks that this handle still holds the lease, waiting at most {@code timeout} for the store.
   * Never throws: a check that fails or does not finish in time means the lease is lost, and the
   * handle must {@link #tryAcquire()} again (with a new epoch) to hold it.
   *
   * @param timeout the longest wait
   * @return true when the lease is confirmed held
   */
  boolean isHeld(Duration timeout);

  /**
   * Returns who holds the lease now, as far as the store knows.
   *
   * @return the holder, or empty when nobody holds it
   * @throws org.pgetl.error.EtlException of kind {@code STATE_STORE_ERROR} when the store fails
   */
  Optional<LeaseHolder> holder();

  /** Releases the lease if held, and the handle's resources. Idempotent. */
  @Override
  void close();
}
