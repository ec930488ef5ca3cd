package org.pgetl.examples.cli;

import org.jspecify.annotations.Nullable;
import org.pgetl.error.EtlException;
import org.pgetl.error.RetryDirective;
import org.pgetl.testkit.TestkitException;

/**
 * Turns a failure into the one line the command line prints: what failed, the detail that explains
 * it, and what to do. Never a stack trace (that needs {@code --verbose}).
 */
final class ErrorReport {
  private ErrorReport() {}

  /**
   * Returns the one-line report of a failure.
   *
   * @param t the failure
   * @return {@code error: ...}, on one line
   */
  static String describe(Throwable t) {
    EtlException etl = find(t);
    if (etl != null) {
      return describe(etl);
    }
    if (t instanceof java.sql.SQLException sql) {
      return "error: "
          + singleLine(sql.getMessage())
          + (sql.getSQLState() == null ? "" : " (SQLSTATE " + sql.getSQLState() + ")");
    }
    if (t instanceof CliException || t instanceof TestkitException) {
      return "error: " + singleLine(t.getMessage());
    }
    return "error: " + singleLine(t.toString());
  }

  /**
   * Returns the one-line report of a failure that ends the command: kind, description, detail and
   * what to do ({@link #exitHint}).
   *
   * @param e the failure
   * @return {@code error: KIND: description (detail). hint: ...}
   */
  static String describe(EtlException e) {
    StringBuilder sb = new StringBuilder("error: ").append(e.kind()).append(": ");
    sb.append(singleLine(e.description()));
    if (e.detail() != null && !e.detail().isBlank()) {
      sb.append(" (").append(singleLine(e.detail())).append(')');
    }
    String hint = exitHint(e);
    if (hint != null && !hint.isBlank()) {
      sb.append(". hint: ").append(singleLine(hint));
    }
    int others = 0;
    for (Throwable s : e.getSuppressed()) {
      // failed preflight checks are named in the description already
      if (!(s instanceof EtlException named && e.description().contains(named.description()))) {
        others++;
      }
    }
    if (others > 0) {
      sb.append(" [+").append(others).append(" more, see --verbose]");
    }
    return sb.toString();
  }

  /**
   * Returns what to do about a failure that ends the command. The library's hint says what a
   * running pipeline does about its kind ("the pipeline reconnects by itself", "then roll the table
   * back"); when the failure reaches the command line, the process exits instead, so the kinds that
   * a pipeline retries, and those whose hint names a library operation, say to run the command
   * again.
   *
   * @param e the failure
   * @return the hint
   */
  static String exitHint(EtlException e) {
    return switch (e.kind()) {
      case SOURCE_CONNECTION_FAILED ->
          "check that the source server is reachable (host, port, network), then run the command"
              + " again";
      case SOURCE_DATABASE_SHUTDOWN ->
          "the source server is shutting down or restarting: run the command again once it accepts"
              + " connections";
      case SOURCE_DATABASE_IN_RECOVERY ->
          "the source server is in recovery: run the command again once it accepts connections";
      case SOURCE_LOCK_TIMEOUT -> "a lock on the source was busy: run the command again";
      case SOURCE_OPERATION_CANCELED ->
          "a statement was cancelled on the source: run the command again";
      case DESTINATION_CONNECTION_FAILED ->
          "check that the destination is reachable, then run the command again";
      case DESTINATION_TIMEOUT -> "the destination was too slow: run the command again";
      case DESTINATION_ATOMIC_BATCH_RETRYABLE ->
          "the destination refused a batch that can be written again: run the command again";
      case REPLICATION_SLOT_NOT_FOUND, REPLICATION_SLOT_INVALIDATED ->
          "run the command again with --on-missing-slot recopy to create a new slot and copy"
              + " every table again; to keep the slot through a failover next time, keep"
              + " --failover-slots auto or on (PostgreSQL 17+, sync_replication_slots = on on the"
              + " standby)";
      case REPLICATION_SLOT_DELETION_TIMEOUT ->
          "a walsender still holds the slot: run the command again in a moment";
      case STATE_STORE_ERROR ->
          "check the state store's connection settings (--state-store) and that its database is"
              + " reachable, then run the command again";
      case PERMISSION_DENIED ->
          "grant the privilege named in the detail (see docs/operations.md for the minimal"
              + " grants), then run the command again";
      case WORKER_PANIC ->
          "a worker died of an unexpected error: report it with the detail (--verbose shows the"
              + " stack trace), then run the command again";
      default ->
          e.directive() == RetryDirective.TIMED
              ? e.hint() + "; then run the command again"
              : e.hint();
    };
  }

  /** Finds the first {@link EtlException} in a cause chain. */
  private static @Nullable EtlException find(Throwable t) {
    for (Throwable c = t; c != null; c = c.getCause() == c ? null : c.getCause()) {
      if (c instanceof EtlException e) {
        return e;
      }
    }
    return null;
  }

  /**
   * Joins the lines of a message into one, collapsing runs of white space.
   *
   * @param text the text, or null
   * @return the text on one line
   */
  static String singleLine(@Nullable String text) {
    if (text == null) {
      return "";
    }
    return text.strip().replaceAll("\\s*\\R\\s*", " ").replaceAll("\\s{2,}", " ");
  }
}
