package org.pgetl.examples.cli;

import org.pgetl.error.EtlException;
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
   * Returns the one-line report of a pipeline failure: kind, description, detail and hint.
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
    String hint = e.hint();
    if (hint != null && !hint.isBlank()) {
      sb.append(". hint: ").append(singleLine(hint));
    }
    int others = e.getSuppressed().length;
    if (others > 0) {
      sb.append(" [+").append(others).append(" more, see --verbose]");
    }
    return sb.toString();
  }

  /** Finds the first {@link EtlException} in a cause chain. */
  private static EtlException find(Throwable t) {
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
  static String singleLine(String text) {
    if (text == null) {
      return "";
    }
    return text.strip().replaceAll("\\s*\\R\\s*", " ").replaceAll("\\s{2,}", " ");
  }
}
