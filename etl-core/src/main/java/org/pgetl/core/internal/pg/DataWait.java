package org.pgetl.core.internal.pg;

/**
 * How a {@link ReplicationStream} waits for the server's next bytes when nothing is pending: in the
 * kernel, woken by the bytes themselves ({@link SocketDataWait}), rather than by a poll with a
 * back-off.
 */
@FunctionalInterface
interface DataWait {
  /**
   * Waits until the connection has bytes to read (already buffered, or arriving within the
   * timeout), without consuming any.
   *
   * @param timeoutNanos the longest to wait, in nanoseconds; > 0
   * @return true when bytes are there, or the connection failed (the read that follows reports it);
   *     false when the timeout passed first
   */
  boolean awaitData(long timeoutNanos);
}
