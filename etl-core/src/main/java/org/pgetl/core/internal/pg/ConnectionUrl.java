package org.pgetl.core.internal.pg;

import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import org.pgetl.PgConnectionConfig;
import org.pgetl.PgConnectionConfig.SslMode;
import org.pgetl.PgConnectionConfig.TargetServerType;
import org.pgetl.error.ErrorKind;
import org.pgetl.error.EtlException;

/**
 * The parser of connection URLs behind {@link PgConnectionConfig#fromJdbcUrl(String)}: the JDBC
 * form {@code jdbc:postgresql://host:port/db?user=..&password=..&sslmode=..} and the libpq form
 * {@code postgresql://user:password@host:port/db?sslmode=..} (also {@code postgres://}), with
 * several comma-separated hosts, percent-decoded values and the query parameters that {@code
 * fromJdbcUrl} documents. Messages never contain a password ({@link Secrets}).
 */
public final class ConnectionUrl {
  private static final String FIELD = "source.";

  private ConnectionUrl() {}

  /**
   * Parses a URL into a builder holding its fields.
   *
   * @param url the URL
   * @return a builder; {@code build()} validates the fields
   * @throws EtlException of kind {@link ErrorKind#CONFIG_ERROR} when the URL is malformed
   */
  public static PgConnectionConfig.Builder parse(String url) {
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
    PgConnectionConfig.Builder b = PgConnectionConfig.builder();
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
        b.user(decode(userInfo.substring(0, colon), "user", url));
        b.password(decode(userInfo.substring(colon + 1), "password", url));
      } else {
        b.user(decode(userInfo, "user", url));
      }
    }
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
      int port =
          portPart != null && !portPart.isEmpty()
              ? parseInt(portPart, i == 0 ? "port" : "hosts[" + i + "].port", url)
              : PgConnectionConfig.DEFAULT_PORT;
      if (i == 0) {
        b.host(host);
        b.port(port);
      } else {
        b.addHost(host, port);
      }
    }
    b.database(decode(path, "database", url));
    if (query != null && !query.isEmpty()) {
      applyQuery(b, query, url);
    }
    return b;
  }

  private static void applyQuery(PgConnectionConfig.Builder b, String query, String url) {
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
    boolean sslModeGiven = false;
    for (Map.Entry<String, String> e : params.entrySet()) {
      String value = e.getValue();
      switch (e.getKey().toLowerCase(Locale.ROOT)) {
        case "user" -> b.user(value);
        case "password" -> b.password(value);
        case "sslmode" -> {
          b.sslMode(SslMode.parse(value));
          sslModeGiven = true;
        }
        case "ssl" -> legacySsl = parseBoolean(value, "ssl", url);
        case "sslrootcert" -> b.sslRootCert(Path.of(value));
        case "sslcert" -> b.sslCert(Path.of(value));
        case "sslkey" -> b.sslKey(Path.of(value));
        case "connecttimeout", "connect_timeout" -> {
          int seconds = parseInt(value, "connectTimeout", url);
          b.connectTimeout(Duration.ofSeconds(seconds));
        }
        case "tcpkeepalive", "keepalives" -> b.tcpKeepAlive(parseBoolean(value, e.getKey(), url));
        case "targetservertype", "target_session_attrs" ->
            b.targetServerType(TargetServerType.parse(value));
        default ->
            throw invalid(
                "url parameter '"
                    + e.getKey()
                    + "' is not supported (supported: user, password, sslmode, ssl, sslrootcert,"
                    + " sslcert, sslkey, connectTimeout, tcpKeepAlive, targetServerType)");
      }
    }
    if (!sslModeGiven && legacySsl != null) {
      b.sslMode(legacySsl ? SslMode.VERIFY_FULL : SslMode.DISABLE);
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
