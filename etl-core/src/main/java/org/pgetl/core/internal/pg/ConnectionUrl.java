package org.pgetl.core.internal.pg;

import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import org.jspecify.annotations.Nullable;
import org.pgetl.error.ErrorKind;
import org.pgetl.error.EtlException;

/**
 * A parsed connection URL, as plain values: the JDBC form {@code
 * jdbc:postgresql://host:port/db?user=..&password=..&sslmode=..} and the libpq form {@code
 * postgresql://user:password@host:port/db?sslmode=..} (also {@code postgres://}), with several
 * comma-separated hosts, percent-decoded values and the query parameters that {@code
 * PgConnectionConfig.fromJdbcUrl} documents. The parser checks the URL's syntax only; the
 * configuration that consumes these values validates them (an unknown {@code sslmode=}, an empty
 * user). It knows nothing of the configuration types, which depend on it, not the reverse. Messages
 * and {@link #toString()} never contain a password ({@link Secrets}).
 *
 * @param hosts one or more hosts, in the URL's order
 * @param database the database, possibly empty
 * @param user the user, or null when the URL names none
 * @param password the password, or null when the URL has none
 * @param sslMode the {@code sslmode=} as written, or the mode the legacy {@code ssl=} parameter
 *     stands for ({@code verify-full} or {@code disable}, as pgjdbc reads it); null when neither is
 *     given
 * @param sslRootCert the {@code sslrootcert=} file, or null
 * @param sslCert the {@code sslcert=} file, or null
 * @param sslKey the {@code sslkey=} file, or null
 * @param connectTimeout the {@code connectTimeout=}, or null
 * @param tcpKeepAlive the {@code tcpKeepAlive=}, or null
 * @param targetServerType the {@code targetServerType=} or {@code target_session_attrs} as written,
 *     or null
 */
public record ConnectionUrl(
    List<Host> hosts,
    String database,
    @Nullable String user,
    @Nullable String password,
    @Nullable String sslMode,
    @Nullable Path sslRootCert,
    @Nullable Path sslCert,
    @Nullable Path sslKey,
    @Nullable Duration connectTimeout,
    @Nullable Boolean tcpKeepAlive,
    @Nullable String targetServerType) {
  private static final String FIELD = "source.";

  /**
   * One entry of the URL's host list.
   *
   * @param host the host name or address (an IPv6 address without brackets); {@code localhost} when
   *     the URL leaves it empty
   * @param port the port, or null when the URL gives none (the default port applies)
   */
  public record Host(String host, @Nullable Integer port) {}

  /** Copies the host list. */
  public ConnectionUrl {
    hosts = List.copyOf(hosts);
  }

  /** Returns the values with the password masked. */
  @Override
  public String toString() {
    return "ConnectionUrl[hosts="
        + hosts
        + ", database="
        + database
        + ", user="
        + user
        + ", password="
        + (password == null ? null : "***")
        + ", sslMode="
        + sslMode
        + ", sslRootCert="
        + sslRootCert
        + ", sslCert="
        + sslCert
        + ", sslKey="
        + sslKey
        + ", connectTimeout="
        + connectTimeout
        + ", tcpKeepAlive="
        + tcpKeepAlive
        + ", targetServerType="
        + targetServerType
        + "]";
  }

  /**
   * Parses a URL into its values.
   *
   * @param url the URL
   * @return the values
   * @throws EtlException of kind {@link ErrorKind#CONFIG_ERROR} when the URL is malformed
   */
  public static ConnectionUrl parse(String url) {
    if (url == null) {
      throw invalid("url must not be null");
    }
    String rest;
    String lower = url.toLowerCase(Locale.ROOT);
    if (lower.startsWith("jdbc:postgresql://")) {
      rest = url.substring("jdbc:postgresql://".length());
    } else if (lower.startsWith("postgresql://")) {
      rest = url.substring("postgresql://".length());
    } else if (lower.startsWith("postgres://")) {
      rest = url.substring("postgres://".length());
    } else {
      throw invalid(
          "url must start with jdbc:postgresql://, postgresql:// or postgres://, was '"
              + Secrets.redactUrl(url)
              + "'");
    }
    Draft b = new Draft();
    String query = null;
    int q = rest.indexOf('?');
    if (q >= 0) {
      query = rest.substring(q + 1);
      rest = rest.substring(0, q);
    }
    int slash = rest.indexOf('/');
    String authority = slash >= 0 ? rest.substring(0, slash) : rest;
    String path = slash >= 0 ? rest.substring(slash + 1) : "";
    int at = authority.lastIndexOf('@');
    if (at >= 0) {
      String userInfo = authority.substring(0, at);
      authority = authority.substring(at + 1);
      int colon = userInfo.indexOf(':');
      if (colon >= 0) {
        b.user = decode(userInfo.substring(0, colon), "user", url);
        b.password = decode(userInfo.substring(colon + 1), "password", url);
      } else {
        b.user = decode(userInfo, "user", url);
      }
    }
    List<Host> hosts = new ArrayList<>();
    String[] entries = authority.split(",", -1);
    for (int i = 0; i < entries.length; i++) {
      String entry = entries[i];
      if (entry.isEmpty() && entries.length > 1) {
        throw invalid("url has an empty entry in its host list: '" + Secrets.redactUrl(url) + "'");
      }
      String hostPart;
      String portPart = null;
      if (entry.startsWith("[")) {
        int close = entry.indexOf(']');
        if (close < 0) {
          throw invalid("url has an unterminated IPv6 address: '" + Secrets.redactUrl(url) + "'");
        }
        hostPart = entry.substring(1, close);
        String after = entry.substring(close + 1);
        if (after.startsWith(":")) {
          portPart = after.substring(1);
        } else if (!after.isEmpty()) {
          throw invalid("url has text after the IPv6 address: '" + Secrets.redactUrl(url) + "'");
        }
      } else {
        int colon = entry.lastIndexOf(':');
        hostPart = colon >= 0 ? entry.substring(0, colon) : entry;
        portPart = colon >= 0 ? entry.substring(colon + 1) : null;
      }
      String host = hostPart.isEmpty() ? "localhost" : decode(hostPart, "host", url);
      Integer port =
          portPart != null && !portPart.isEmpty()
              ? parseInt(portPart, i == 0 ? "port" : "hosts[" + i + "].port", url)
              : null;
      hosts.add(new Host(host, port));
    }
    String database = decode(path, "database", url);
    if (query != null && !query.isEmpty()) {
      applyQuery(b, query, url);
    }
    return new ConnectionUrl(
        hosts,
        database,
        b.user,
        b.password,
        b.sslMode,
        b.sslRootCert,
        b.sslCert,
        b.sslKey,
        b.connectTimeout,
        b.tcpKeepAlive,
        b.targetServerType);
  }

  /** The values of the URL's user info and query, while the parser reads them. */
  private static final class Draft {
    @Nullable String user;
    @Nullable String password;
    @Nullable String sslMode;
    @Nullable Path sslRootCert;
    @Nullable Path sslCert;
    @Nullable Path sslKey;
    @Nullable Duration connectTimeout;
    @Nullable Boolean tcpKeepAlive;
    @Nullable String targetServerType;
  }

  private static void applyQuery(Draft b, String query, String url) {
    Map<String, String> params = new LinkedHashMap<>();
    for (String pair : query.split("&", -1)) {
      if (pair.isEmpty()) {
        continue;
      }
      int eq = pair.indexOf('=');
      String key = decode(eq >= 0 ? pair.substring(0, eq) : pair, "parameter name", url);
      String value = eq >= 0 ? decode(pair.substring(eq + 1), key, url) : "";
      params.put(key, value);
    }
    Boolean legacySsl = null;
    for (Map.Entry<String, String> e : params.entrySet()) {
      String value = e.getValue();
      switch (e.getKey().toLowerCase(Locale.ROOT)) {
        case "user" -> b.user = value;
        case "password" -> b.password = value;
        case "sslmode" -> b.sslMode = value;
        case "ssl" -> legacySsl = parseBoolean(value, "ssl", url);
        case "sslrootcert" -> b.sslRootCert = Path.of(value);
        case "sslcert" -> b.sslCert = Path.of(value);
        case "sslkey" -> b.sslKey = Path.of(value);
        case "connecttimeout", "connect_timeout" -> {
          int seconds = parseInt(value, "connectTimeout", url);
          b.connectTimeout = Duration.ofSeconds(seconds);
        }
        case "tcpkeepalive", "keepalives" -> b.tcpKeepAlive = parseBoolean(value, e.getKey(), url);
        case "targetservertype", "target_session_attrs" -> b.targetServerType = value;
        default ->
            throw invalid(
                "url parameter '"
                    + e.getKey()
                    + "' is not supported (supported: user, password, sslmode, ssl, sslrootcert,"
                    + " sslcert, sslkey, connectTimeout, tcpKeepAlive, targetServerType)");
      }
    }
    if (b.sslMode == null && legacySsl != null) {
      // pgjdbc's reading of ssl=true: verify everything, unless sslmode says otherwise
      b.sslMode = legacySsl ? "verify-full" : "disable";
    }
  }

  private static boolean parseBoolean(String value, String field, String url) {
    return switch (value.toLowerCase(Locale.ROOT)) {
      case "true", "1", "on", "yes" -> true;
      case "false", "0", "off", "no" -> false;
      default ->
          throw invalid(
              field
                  + " must be true or false in url '"
                  + Secrets.redactUrl(url)
                  + "', was '"
                  + value
                  + "'");
    };
  }

  private static int parseInt(String value, String field, String url) {
    try {
      return Integer.parseInt(value);
    } catch (NumberFormatException e) {
      throw invalid(field + " must be a number in url '" + Secrets.redactUrl(url) + "'");
    }
  }

  // Parsed by hand: java.net.URI rejects legal PostgreSQL URLs (unescaped '@' or '#' in a
  // password).
  private static String decode(String text, String field, String url) {
    // Percent-decoding only: '+' stays a plus sign, as libpq reads it (passwords often hold one).
    if (text.indexOf('%') < 0) {
      return text;
    }
    ByteArrayOutputStream out = new ByteArrayOutputStream(text.length());
    int i = 0;
    while (i < text.length()) {
      int pct = text.indexOf('%', i);
      int literalEnd = pct < 0 ? text.length() : pct;
      out.writeBytes(text.substring(i, literalEnd).getBytes(StandardCharsets.UTF_8));
      if (pct < 0) {
        break;
      }
      if (pct + 2 >= text.length()) {
        throw badEscape(field, url);
      }
      int hi = Character.digit(text.charAt(pct + 1), 16);
      int lo = Character.digit(text.charAt(pct + 2), 16);
      if (hi < 0 || lo < 0) {
        throw badEscape(field, url);
      }
      out.write((hi << 4) | lo);
      i = pct + 3;
    }
    return out.toString(StandardCharsets.UTF_8);
  }

  private static EtlException badEscape(String field, String url) {
    return invalid(
        field + " has an invalid percent escape in url '" + Secrets.redactUrl(url) + "'");
  }

  private static EtlException invalid(String message) {
    return new EtlException(ErrorKind.CONFIG_ERROR, FIELD + message);
  }
}
