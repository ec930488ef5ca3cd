package org.pgetl.core.internal.pg;

import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.jspecify.annotations.Nullable;

/**
 * The one rule for keeping passwords out of messages, logs and {@code toString()}: every place that
 * shows a connection URL, a setting or a server's error text goes through it.
 *
 * <p>A URL loses the password of its {@code user:password@} part and the value of every parameter
 * whose name contains {@code password} in any case ({@code password}, {@code sslpassword}, ...); a
 * known secret is replaced wherever it appears in a text. Each is replaced by {@link #MASK}.
 */
public final class Secrets {
  /** What a masked secret reads as. */
  public static final String MASK = "***";

  // a parameter such as password= or sslPassword=, its value up to the next '&'
  private static final Pattern PASSWORD_PARAM =
      Pattern.compile("(?i)([?&][^=&]*password[^=&]*=)[^&]*");

  private Secrets() {}

  /**
   * Returns a URL (JDBC or libpq form) with its passwords masked.
   *
   * @param url the URL; null gives null
   * @return the URL, safe to show
   */
  public static @Nullable String redactUrl(@Nullable String url) {
    if (url == null) {
      return null;
    }
    String out =
        PASSWORD_PARAM.matcher(url).replaceAll(r -> Matcher.quoteReplacement(r.group(1)) + MASK);
    int scheme = out.indexOf("://");
    if (scheme < 0) {
      return out;
    }
    int start = scheme + 3;
    int end = out.length();
    for (int i = start; i < out.length(); i++) {
      char c = out.charAt(i);
      if (c == '/' || c == '?') {
        end = i;
        break;
      }
    }
    int at = out.lastIndexOf('@', end - 1);
    if (at >= start) {
      int colon = out.indexOf(':', start);
      if (colon >= 0 && colon < at) {
        out = out.substring(0, colon + 1) + MASK + out.substring(at);
      }
    }
    return out;
  }

  /**
   * Returns how a password setting is shown: {@code null} when unset, the mask otherwise.
   *
   * @param password the password, or null
   * @return {@code null} or {@link #MASK}
   */
  public static String show(@Nullable String password) {
    return password == null ? "null" : MASK;
  }

  /**
   * Replaces every occurrence of a known secret in a text (a server's error message that quotes a
   * connection string, for example).
   *
   * @param text the text; null gives null
   * @param secret the secret; null or empty leaves the text as it is
   * @return the text without the secret
   */
  public static @Nullable String scrub(@Nullable String text, @Nullable String secret) {
    if (secret == null || secret.isEmpty() || text == null) {
      return text;
    }
    return text.replace(secret, MASK);
  }
}
