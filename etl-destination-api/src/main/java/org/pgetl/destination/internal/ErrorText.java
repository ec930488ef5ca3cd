package org.pgetl.destination.internal;

import org.jspecify.annotations.Nullable;

/**
 * Database error text that may go into an {@code EtlException}'s detail, and so into logs. A
 * database quotes the values it complains about (DuckDB: {@code Duplicate key "id: 5"}, PostgreSQL:
 * {@code invalid input syntax for type integer: "x"}), and row values must never reach logs: the
 * destinations keep a message's first line and mask its quoted parts.
 */
public final class ErrorText {
  private ErrorText() {}

  /**
   * Returns the first line of a message, stripped: the error's kind and text, without the statement
   * or detail that may follow.
   *
   * @param message the message, or null
   * @return its first line ({@code "null"} for null)
   */
  public static String firstLine(@Nullable String message) {
    String m = String.valueOf(message).strip();
    int nl = m.indexOf('\n');
    return nl < 0 ? m : m.substring(0, nl);
  }

  /**
   * Returns a message with every {@code "double-quoted"} and {@code 'single-quoted'} part replaced
   * by {@code <...>}.
   *
   * @param message the message
   * @return the masked message
   */
  public static String maskQuoted(String message) {
    return message.replaceAll("\"[^\"]*\"|'[^']*'", "<...>");
  }
}
