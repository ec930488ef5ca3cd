package org.pgetl.testkit;

/**
 * A failure of the test PostgreSQL server or of a test database helper: the server could not be
 * started or stopped, or a statement run through {@link TestDatabase} failed.
 *
 * <p>The message says what went wrong and how to fix it, and carries the output of the PostgreSQL
 * programs involved (never a password).
 */
public final class TestkitException extends RuntimeException {
  private static final long serialVersionUID = 1L;

  /**
   * Creates an exception with a message.
   *
   * @param message what went wrong and how to fix it
   */
  public TestkitException(String message) {
    super(message);
  }

  /**
   * Creates an exception with a message and a cause.
   *
   * @param message what went wrong and how to fix it
   * @param cause the underlying failure
   */
  public TestkitException(String message, Throwable cause) {
    super(message, cause);
  }
}
