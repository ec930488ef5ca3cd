package org.pgetl.store.postgres;

import java.sql.Connection;
import java.sql.SQLException;
import javax.sql.DataSource;
import org.jspecify.annotations.Nullable;
import org.pgetl.error.ErrorKind;
import org.pgetl.error.EtlException;

/**
 * Runs store work on a pooled connection, in autocommit or in one transaction, and turns every
 * {@link SQLException} into an {@link EtlException} of kind {@code STATE_STORE_ERROR} that keeps
 * the SQLSTATE in its detail.
 */
final class Jdbc {

  /** Work on a connection. */
  @FunctionalInterface
  interface Work<T> {
    T run(Connection c) throws SQLException;
  }

  /** Work on a connection that returns nothing. */
  @FunctionalInterface
  interface Step {
    void run(Connection c) throws SQLException;
  }

  private final DataSource pool;
  private final String pipelineId;

  Jdbc(DataSource pool, String pipelineId) {
    this.pool = pool;
    this.pipelineId = pipelineId;
  }

  /**
   * Runs work in autocommit mode (each statement is its own transaction).
   *
   * @param what the operation, for the error message (names the table when there is one)
   * @param work the work
   * @return what the work returned
   */
  <T> T autocommit(String what, Work<T> work) {
    try (Connection c = pool.getConnection()) {
      return work.run(c);
    } catch (SQLException e) {
      throw failure(what, e);
    }
  }

  /**
   * Runs work in one transaction: commits when it returns, rolls back when it throws.
   *
   * @param what the operation, for the error message
   * @param work the work
   * @return what the work returned, once committed
   */
  <T> T transaction(String what, Work<T> work) {
    try (Connection c = pool.getConnection()) {
      c.setAutoCommit(false);
      try {
        T result = work.run(c);
        c.commit();
        return result;
      } catch (SQLException | RuntimeException | Error e) {
        rollbackQuietly(c, e);
        throw e;
      }
    } catch (SQLException e) {
      throw failure(what, e);
    }
  }

  /**
   * Runs work that returns nothing in autocommit mode, as {@link #autocommit(String, Work)}.
   *
   * @param what the operation, for the error message
   * @param step the work
   */
  void autocommitStep(String what, Step step) {
    autocommit(what, returningTrue(step));
  }

  /**
   * Runs work that returns nothing in one transaction, as {@link #transaction(String, Work)}.
   *
   * @param what the operation, for the error message
   * @param step the work
   */
  void transactionStep(String what, Step step) {
    transaction(what, returningTrue(step));
  }

  /** Work that runs {@code step} and returns a non-null placeholder. */
  private static Work<Boolean> returningTrue(Step step) {
    return c -> {
      step.run(c);
      return Boolean.TRUE;
    };
  }

  private static void rollbackQuietly(Connection c, Throwable cause) {
    try {
      c.rollback();
    } catch (SQLException e) {
      cause.addSuppressed(e);
    }
  }

  private EtlException failure(String what, SQLException e) {
    return new EtlException(
        ErrorKind.STATE_STORE_ERROR,
        "state store: " + what + " failed for pipeline " + pipelineId,
        describe(e),
        e);
  }

  /**
   * Describes a SQL failure by its SQLSTATE and message, for an error's detail.
   *
   * @param e the failure
   * @return {@code SQLSTATE <code>: <message>}
   */
  static String describe(SQLException e) {
    return "SQLSTATE " + e.getSQLState() + ": " + e.getMessage();
  }

  /**
   * Returns the first {@link SQLException} in a cause chain.
   *
   * @param t the failure
   * @return the SQL exception, or null when there is none
   */
  static @Nullable SQLException findSqlException(Throwable t) {
    for (Throwable c = t; c != null; c = c.getCause()) {
      if (c instanceof SQLException) {
        return (SQLException) c;
      }
      if (c.getCause() == c) {
        break;
      }
    }
    return null;
  }
}
