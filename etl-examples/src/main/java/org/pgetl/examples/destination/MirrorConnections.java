package org.pgetl.examples.destination;

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;
import java.util.Properties;
import java.util.concurrent.locks.ReentrantLock;
import org.pgetl.PgConnectionConfig;

/**
 * The connections of {@link PostgresMirrorDestination} to its target database: a small pool, one
 * connection per writer thread at most, opened on demand and closed when broken.
 *
 * <p>Every connection is set up the same way: auto-commit off (each write is one transaction), and
 * the session settings under which {@link org.pgetl.model.PgText} prints values exactly as the
 * server does ({@code TimeZone=UTC}, ISO dates, {@code extra_float_digits=3}, hex bytea), so that a
 * value bound as text and a value read back as text compare equal.
 *
 * <p>Thread-safe. The lock guards the idle list only; connections are opened and closed outside it.
 */
final class MirrorConnections {
  private static final String SESSION_SETUP =
      "SET TimeZone = 'UTC'; SET DateStyle = 'ISO, YMD'; SET IntervalStyle = 'postgres';"
          + " SET extra_float_digits = 3; SET bytea_output = 'hex'";

  private final PgConnectionConfig target;
  private final String applicationName;
  private final ReentrantLock lock = new ReentrantLock();
  private final Deque<Connection> idle = new ArrayDeque<>();
  private final List<Connection> open = new ArrayList<>();
  private boolean closed;

  /**
   * Creates an empty pool.
   *
   * @param target the target database
   * @param applicationName the {@code application_name} of every connection
   */
  MirrorConnections(PgConnectionConfig target, String applicationName) {
    this.target = target;
    this.applicationName = applicationName;
  }

  /**
   * Returns an idle connection, or opens a new one.
   *
   * @return a connection with auto-commit off; give it back with {@link #release}
   * @throws SQLException when a new connection cannot be opened
   * @throws IllegalStateException after {@link #closeAll()}
   */
  Connection acquire() throws SQLException {
    lock.lock();
    try {
      if (closed) {
        throw new IllegalStateException("the connections to " + target.describe() + " are closed");
      }
      Connection c = idle.pollFirst();
      if (c != null) {
        return c;
      }
    } finally {
      lock.unlock();
    }
    Connection c = openConnection();
    lock.lock();
    try {
      if (!closed) {
        open.add(c);
        return c;
      }
    } finally {
      lock.unlock();
    }
    c.close();
    throw new IllegalStateException("the connections to " + target.describe() + " are closed");
  }

  /**
   * Gives a connection back: to the idle list, or closed when it is broken.
   *
   * @param c the connection from {@link #acquire()}
   * @param broken true when the connection failed and must not be used again
   */
  void release(Connection c, boolean broken) {
    lock.lock();
    try {
      if (!broken && !closed) {
        idle.addFirst(c);
        return;
      }
      open.remove(c);
    } finally {
      lock.unlock();
    }
    closeQuietly(c);
  }

  /**
   * Closes the idle connections: after one connection was lost, the others were most likely lost
   * with it (a restart of the target closes them all), and the next write should not find out one
   * by one.
   */
  void discardIdle() {
    List<Connection> stale;
    lock.lock();
    try {
      stale = new ArrayList<>(idle);
      idle.clear();
      open.removeAll(stale);
    } finally {
      lock.unlock();
    }
    stale.forEach(MirrorConnections::closeQuietly);
  }

  /** Closes every connection, idle or not; later {@link #acquire()} calls fail. */
  void closeAll() {
    List<Connection> all;
    lock.lock();
    try {
      closed = true;
      all = new ArrayList<>(open);
      open.clear();
      idle.clear();
    } finally {
      lock.unlock();
    }
    all.forEach(MirrorConnections::closeQuietly);
  }

  /**
   * Opens a connection with the session settings, outside the pool (for startup).
   *
   * @return a new connection with auto-commit off; the caller closes it
   * @throws SQLException when the connection fails
   */
  Connection openConnection() throws SQLException {
    Properties props = new Properties();
    props.setProperty("user", target.user());
    if (target.password() != null) {
      props.setProperty("password", target.password());
    }
    props.setProperty("ApplicationName", applicationName);
    Connection c = DriverManager.getConnection(target.jdbcUrl(), props);
    try (Statement s = c.createStatement()) {
      s.execute(SESSION_SETUP);
      c.setAutoCommit(false);
    } catch (SQLException e) {
      closeQuietly(c);
      throw e;
    }
    return c;
  }

  private static void closeQuietly(Connection c) {
    try {
      c.close();
    } catch (SQLException e) {
      // the connection is going away either way
    }
  }
}
