package org.pgetl.core.internal.pg;

import java.io.IOException;
import java.lang.reflect.Field;
import java.net.SocketTimeoutException;
import java.sql.Connection;
import java.sql.SQLException;
import org.jspecify.annotations.Nullable;
import org.postgresql.core.BaseConnection;
import org.postgresql.core.PGStream;
import org.postgresql.core.QueryExecutor;
import org.postgresql.core.QueryExecutorBase;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Waits for the server's next bytes on a pgjdbc connection in a blocking socket read with a
 * timeout, without consuming them, so that the owner of a replication stream sleeps in the kernel
 * and wakes as the bytes arrive.
 *
 * <h2>Implementation notes</h2>
 *
 * pgjdbc has no public "wait until readable": {@code PGReplicationStream.read()} blocks with no
 * bound (a socket timeout makes it loop, not return), and {@code readPending()} asks "anything
 * pending?" with a fixed 1 ms socket read. The wait here is that same peek with a longer timeout:
 * it sets the socket timeout of the connection's {@link PGStream} to the bound, peeks one byte
 * ({@link PGStream#peekChar()}, which buffers what arrives and consumes nothing), and puts the
 * previous timeout back. A timeout can therefore only end a wait between two messages, never in the
 * middle of one: the message itself is then read by {@code readPending()}, which finds the bytes
 * buffered, with the connection's own timeout. pgjdbc reaches the {@link PGStream} of a connection
 * through a protected field only; it is read once, by reflection. When that fails (a pgjdbc whose
 * internals differ) {@link #of(Connection)} returns null and the stream polls as before.
 */
final class SocketDataWait implements DataWait {
  private static final Logger LOG = LoggerFactory.getLogger(SocketDataWait.class);
  private static final @Nullable Field PG_STREAM = pgStreamField();

  private final PGStream stream;

  private SocketDataWait(PGStream stream) {
    this.stream = stream;
  }

  /**
   * Returns a wait on the socket of a pgjdbc connection, or null when this pgjdbc does not let the
   * wait reach its socket.
   *
   * @param connection a pgjdbc connection
   * @return the wait, or null
   */
  static @Nullable SocketDataWait of(Connection connection) {
    Field f = PG_STREAM;
    if (f == null) {
      return null;
    }
    try {
      QueryExecutor executor = connection.unwrap(BaseConnection.class).getQueryExecutor();
      if (executor instanceof QueryExecutorBase base && f.get(base) instanceof PGStream pgStream) {
        return new SocketDataWait(pgStream);
      }
    } catch (SQLException | IllegalAccessException | RuntimeException e) {
      LOG.debug("no socket wait on this connection, the stream polls: {}", e.toString());
    }
    return null;
  }

  @Override
  public boolean awaitData(long timeoutNanos) {
    // the socket timeout has millisecond resolution and 0 means "never": round up, at least 1 ms
    long millis = Math.max(1, (timeoutNanos + 999_999) / 1_000_000);
    int previous;
    try {
      previous = stream.getNetworkTimeout();
      stream.setNetworkTimeout((int) Math.min(Integer.MAX_VALUE, millis));
    } catch (IOException e) {
      return true; // a broken socket: the read reports it with pgjdbc's error
    }
    try {
      stream.peekChar();
      return true;
    } catch (SocketTimeoutException e) {
      return false;
    } catch (IOException e) {
      return true; // end of stream or a reset: the read reports it
    } finally {
      try {
        stream.setNetworkTimeout(previous);
      } catch (IOException e) {
        LOG.debug("could not restore the socket timeout: {}", e.getMessage());
      }
    }
  }

  private static @Nullable Field pgStreamField() {
    try {
      Field f = QueryExecutorBase.class.getDeclaredField("pgStream");
      f.setAccessible(true);
      return f;
    } catch (NoSuchFieldException | RuntimeException e) {
      LoggerFactory.getLogger(SocketDataWait.class)
          .info("this pgjdbc hides its socket: replication streams poll when idle ({})", e);
      return null;
    }
  }
}
