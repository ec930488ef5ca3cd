package org.pgetl.examples.cli;

/**
 * A failure of the command line itself (bad input found late, a refused operation), reported as one
 * line on stderr with its exit code.
 */
final class CliException extends RuntimeException {
  private static final long serialVersionUID = 1L;

  private final int exitCode;

  CliException(String message) {
    this(message, Main.EXIT_FAILURE);
  }

  CliException(String message, int exitCode) {
    super(message);
    this.exitCode = exitCode;
  }

  int exitCode() {
    return exitCode;
  }
}
