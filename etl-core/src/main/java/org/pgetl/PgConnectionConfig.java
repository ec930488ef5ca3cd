package org.pgetl;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Objects;
import java.util.Set;
import java.util.stream.Collectors;
import org.jspecify.annotations.Nullable;
import org.pgetl.core.internal.pg.ConnectionUrl;
import org.pgetl.core.internal.pg.Secrets;
import org.pgetl.error.ErrorKind;
import org.pgetl.error.EtlException;

/**
 * How pgetl reaches a PostgreSQL server: host (or several, tried in order), port, database,
 * credentials, TLS and socket settings. Immutable and safe to share between threads; build one with
 * {@link #builder()}, change one with {@link #toBuilder()}, or parse a URL with {@link
 * #fromJdbcUrl(String)}.
 *
 * <p>With several hosts (a primary and its physical standbys), every connection goes to the first
 * host of the list that accepts it and is a primary ({@link TargetServerType#PRIMARY}, pgjdbc's
 * {@code targetServerType=primary}): a standby is never used, so after a promotion the same
 * configuration reaches the new primary.
 *
 * <p>The constructor validates every field and throws {@link EtlException} of kind {@link
 * ErrorKind#CONFIG_ERROR} with a message that names the field and the constraint, for example
 * {@code source.port must be in 1..65535, was 0}.
 *
 * <p>The password never appears in {@link #toString()}, in logs or in exception messages.
 */
// its signatures carry @Nullable of org.jspecify, read at compile time only (requires static)
@SuppressWarnings("exports")
public final class PgConnectionConfig {
  /** The PostgreSQL default port. */
  public static final int DEFAULT_PORT = 5432;

  /** How long to wait for a TCP connection and the login: pgjdbc's own default. */
  public static final Duration DEFAULT_CONNECT_TIMEOUT = Duration.ofSeconds(10);

  /**
   * The TLS mode; libpq's and pgjdbc's default, which uses TLS when the server offers it without
   * verifying the certificate.
   */
  public static final SslMode DEFAULT_SSL_MODE = SslMode.PREFER;

  /** The longest connect timeout accepted: a longer one hides an unreachable server. */
  static final Duration MAX_CONNECT_TIMEOUT = Duration.ofHours(1);

  private static final String FIELD = "source.";

  /**
   * The TLS mode of a connection, with the meaning libpq gives to {@code sslmode}.
   *
   * <p>Only {@link #VERIFY_CA} and {@link #VERIFY_FULL} protect against a server that impersonates
   * the real one; {@link #VERIFY_FULL} also checks that the certificate names the host.
   */
  public enum SslMode {
    /** Never use TLS. */
    DISABLE("disable"),
    /** Try without TLS first; use TLS if the server requires it. */
    ALLOW("allow"),
    /** Try TLS first; fall back to plain text if the server does not offer it. */
    PREFER("prefer"),
    /** Require TLS, without verifying the server certificate. */
    REQUIRE("require"),
    /** Require TLS and a server certificate signed by the trusted root. */
    VERIFY_CA("verify-ca"),
    /** Require TLS, a trusted server certificate, and a certificate that names the host. */
    VERIFY_FULL("verify-full");

    private final String libpqName;

    SslMode(String libpqName) {
      this.libpqName = libpqName;
    }

    /**
     * Returns the mode as libpq and pgjdbc spell it, for example {@code verify-full}.
     *
     * @return the {@code sslmode} value
     */
    public String libpqName() {
      return libpqName;
    }

    /**
     * Parses an {@code sslmode} value as libpq spells it (case-insensitive, {@code _} accepted for
     * {@code -}).
     *
     * @param text the value, for example {@code verify-full}
     * @return the mode
     * @throws EtlException of kind {@link ErrorKind#CONFIG_ERROR} for an unknown value
     */
    public static SslMode parse(String text) {
      String normalized = text.trim().toLowerCase(Locale.ROOT).replace('_', '-');
      for (SslMode mode : values()) {
        if (mode.libpqName.equals(normalized)) {
          return mode;
        }
      }
      throw invalid(
          "sslMode must be one of disable, allow, prefer, require, verify-ca, verify-full, was '"
              + text
              + "'");
    }

    /**
     * Returns true when the mode verifies the server certificate against a trusted root.
     *
     * @return whether the certificate is verified
     */
    public boolean verifiesCertificate() {
      return this == VERIFY_CA || this == VERIFY_FULL;
    }
  }

  /**
   * Which kind of server a connection accepts, as pgjdbc's {@code targetServerType} says it.
   *
   * <p>The default is {@link #PRIMARY} when several hosts are given (a standby must never be the
   * source, nor hold the state store) and {@link #ANY} for one host, which keeps logical decoding
   * on a standby (PostgreSQL 16+) possible.
   */
  public enum TargetServerType {
    /** Any server that accepts the connection, primary or standby. */
    ANY("any"),
    /** A primary only: a server in recovery (a standby) is skipped, or refused. */
    PRIMARY("primary");

    private final String pgjdbcName;

    TargetServerType(String pgjdbcName) {
      this.pgjdbcName = pgjdbcName;
    }

    /**
     * Returns the value as pgjdbc spells it, for example {@code primary}.
     *
     * @return the {@code targetServerType} value
     */
    public String pgjdbcName() {
      return pgjdbcName;
    }

    /**
     * Parses pgjdbc's {@code targetServerType} or libpq's {@code target_session_attrs}: {@code
     * any}; {@code primary}, {@code master} or {@code read-write} (case-insensitive).
     *
     * @param text the value
     * @return the type
     * @throws EtlException of kind {@link ErrorKind#CONFIG_ERROR} for any other value, standbys
     *     included: pgetl does not choose a standby among several hosts
     */
    public static TargetServerType parse(String text) {
      String normalized = text.trim().toLowerCase(Locale.ROOT).replace('_', '-');
      return switch (normalized) {
        case "any" -> ANY;
        case "primary", "master", "read-write" -> PRIMARY;
        default ->
            throw invalid(
                "targetServerType must be any or primary (also master, read-write), was '"
                    + text
                    + "'");
      };
    }
  }

  /**
   * One host and its port. {@link PgConnectionConfig} validates each entry, naming its place in the
   * list.
   *
   * @param host the host name or address (an IPv6 address without brackets)
   * @param port the TCP port
   */
  public record HostPort(String host, int port) {
    /**
     * Returns {@code host:port}, with an IPv6 address in brackets: {@code [::1]:5432}.
     *
     * @return the entry as a URL spells it
     */
    @Override
    public String toString() {
      return (host != null && host.indexOf(':') >= 0 ? "[" + host + "]" : host) + ":" + port;
    }
  }

  private final List<HostPort> hosts;
  private final @Nullable TargetServerType requestedTargetServerType;
  private final TargetServerType targetServerType;
  private final String database;
  private final String user;
  private final @Nullable String password;
  private final SslMode sslMode;
  private final @Nullable Path sslRootCert;
  private final @Nullable Path sslCert;
  private final @Nullable Path sslKey;
  private final Duration connectTimeout;
  private final boolean tcpKeepAlive;

  private PgConnectionConfig(Builder b) {
    List<HostPort> all = new ArrayList<>(1 + b.additionalHosts.size());
    all.add(checkHost(b.host, b.port, "host", "port"));
    for (int i = 0; i < b.additionalHosts.size(); i++) {
      HostPort extra = b.additionalHosts.get(i);
      String field = "hosts[" + (i + 1) + "]";
      if (extra == null) {
        throw invalid(field + " must not be null");
      }
      all.add(checkHost(extra.host(), extra.port(), field + ".host", field + ".port"));
    }
    Set<String> seen = new HashSet<>();
    for (HostPort h : all) {
      if (!seen.add(h.host().toLowerCase(Locale.ROOT) + "/" + h.port())) {
        throw invalid("hosts must not list " + h + " twice");
      }
    }
    this.hosts = List.copyOf(all);
    this.requestedTargetServerType = b.targetServerType;
    this.targetServerType =
        b.targetServerType != null
            ? b.targetServerType
            : hosts.size() > 1 ? TargetServerType.PRIMARY : TargetServerType.ANY;
    if (hosts.size() > 1 && targetServerType != TargetServerType.PRIMARY) {
      throw invalid(
          "targetServerType must be primary when several hosts are given (a standby must never"
              + " be the source), was "
              + targetServerType.pgjdbcName());
    }
    this.database = requireText(b.database, "database");
    this.user = requireText(b.user, "user");
    if (b.password != null && b.password.indexOf('\0') >= 0) {
      throw invalid("password must not contain NUL characters");
    }
    this.password = b.password;
    if (b.sslMode == null) {
      throw invalid("sslMode must not be null");
    }
    this.sslMode = b.sslMode;
    this.sslRootCert = b.sslRootCert;
    this.sslCert = b.sslCert;
    this.sslKey = b.sslKey;
    if ((sslCert == null) != (sslKey == null)) {
      throw invalid(
          "sslCert and sslKey must be set together, was sslCert="
              + (sslCert == null ? "unset" : "set")
              + ", sslKey="
              + (sslKey == null ? "unset" : "set"));
    }
    if (sslMode == SslMode.DISABLE && (sslRootCert != null || sslCert != null)) {
      throw invalid("sslRootCert, sslCert and sslKey need sslMode other than disable");
    }
    if (b.connectTimeout == null) {
      throw invalid("connectTimeout must not be null");
    }
    if (b.connectTimeout.isNegative() || b.connectTimeout.isZero()) {
      throw invalid("connectTimeout must be > 0, was " + b.connectTimeout);
    }
    if (b.connectTimeout.compareTo(MAX_CONNECT_TIMEOUT) > 0) {
      throw invalid(
          "connectTimeout must be <= " + MAX_CONNECT_TIMEOUT + ", was " + b.connectTimeout);
    }
    this.connectTimeout = b.connectTimeout;
    this.tcpKeepAlive = b.tcpKeepAlive;
  }

  private static HostPort checkHost(
      @Nullable String value, int port, String hostField, String portField) {
    String host = requireText(value, hostField);
    if (host.chars().anyMatch(Character::isWhitespace) || host.indexOf(',') >= 0) {
      throw invalid(
          hostField
              + " must be one host name or address without spaces or commas (add further hosts"
              + " with addHost)");
    }
    if (port < 1 || port > 65535) {
      throw invalid(portField + " must be in 1..65535, was " + port);
    }
    return new HostPort(host, port);
  }

  private static String requireText(@Nullable String value, String field) {
    if (value == null || value.isBlank()) {
      throw invalid(field + " must not be empty");
    }
    if (value.indexOf('\0') >= 0) {
      throw invalid(field + " must not contain NUL characters");
    }
    return value;
  }

  private static EtlException invalid(String message) {
    return new EtlException(ErrorKind.CONFIG_ERROR, FIELD + message);
  }

  /**
   * Returns a new builder with the defaults: port {@value #DEFAULT_PORT}, {@link SslMode#PREFER}, a
   * connect timeout of 10 seconds and TCP keepalive on.
   *
   * @return a builder
   */
  public static Builder builder() {
    return new Builder();
  }

  /**
   * Returns a builder that starts from this configuration.
   *
   * @return a builder holding every field of this configuration
   */
  public Builder toBuilder() {
    Builder b = new Builder();
    b.host = hosts.get(0).host();
    b.port = hosts.get(0).port();
    b.additionalHosts.addAll(hosts.subList(1, hosts.size()));
    b.targetServerType = requestedTargetServerType;
    b.database = database;
    b.user = user;
    b.password = password;
    b.sslMode = sslMode;
    b.sslRootCert = sslRootCert;
    b.sslCert = sslCert;
    b.sslKey = sslKey;
    b.connectTimeout = connectTimeout;
    b.tcpKeepAlive = tcpKeepAlive;
    return b;
  }

  /**
   * Parses a connection URL: {@code jdbc:postgresql://host:port/db?user=..&password=..&sslmode=..}
   * or the libpq form {@code postgresql://user:password@host:port/db?sslmode=..} (also {@code
   * postgres://}). Values are percent-decoded. Several hosts are separated by commas, each with its
   * own port or the default one, as pgjdbc and libpq write them: {@code
   * jdbc:postgresql://h1:5432,h2:5433/db}, {@code postgresql://h1,[::1]:5433/db}.
   *
   * <p>Query parameters understood: {@code user}, {@code password}, {@code sslmode}, {@code ssl}
   * ({@code true} means {@code verify-full} unless {@code sslmode} is given, as in pgjdbc), {@code
   * sslrootcert}, {@code sslcert}, {@code sslkey}, {@code connectTimeout} or {@code
   * connect_timeout} (seconds), {@code tcpKeepAlive} or {@code keepalives}, {@code
   * targetServerType} or {@code target_session_attrs} ({@code any} or {@code primary}; see {@link
   * TargetServerType#parse(String)}). Any other parameter is rejected, so that a misspelled
   * security setting does not pass unnoticed.
   *
   * @param url the URL
   * @return the configuration
   * @throws EtlException of kind {@link ErrorKind#CONFIG_ERROR} when the URL is malformed or a
   *     field is invalid; the message never contains the password
   */
  public static PgConnectionConfig fromJdbcUrl(String url) {
    return builderFromJdbcUrl(url).build();
  }

  /**
   * Returns a builder holding what a JDBC URL says, not validated yet: set what the URL lacks or
   * should not decide (a user, a password from a secret store), then {@link Builder#build()}. The
   * URL's form and parameters are those of {@link #fromJdbcUrl(String)}.
   *
   * @param url the URL
   * @return a builder with the URL's hosts, database and parameters
   * @throws EtlException of kind {@link ErrorKind#CONFIG_ERROR} when the URL is malformed; the
   *     message never contains the password
   */
  public static Builder builderFromJdbcUrl(String url) {
    // the parser hands over plain values and never sees this type: the public type consumes them
    ConnectionUrl parsed = ConnectionUrl.parse(url);
    Builder b = builder();
    List<ConnectionUrl.Host> hosts = parsed.hosts();
    for (int i = 0; i < hosts.size(); i++) {
      ConnectionUrl.Host h = hosts.get(i);
      Integer given = h.port();
      int port = given != null ? given : DEFAULT_PORT;
      if (i == 0) {
        b.host(h.host()).port(port);
      } else {
        b.addHost(h.host(), port);
      }
    }
    b.database(parsed.database());
    String user = parsed.user();
    if (user != null) {
      b.user(user);
    }
    String password = parsed.password();
    if (password != null) {
      b.password(password);
    }
    String sslMode = parsed.sslMode();
    if (sslMode != null) {
      b.sslMode(SslMode.parse(sslMode));
    }
    Path sslRootCert = parsed.sslRootCert();
    if (sslRootCert != null) {
      b.sslRootCert(sslRootCert);
    }
    Path sslCert = parsed.sslCert();
    if (sslCert != null) {
      b.sslCert(sslCert);
    }
    Path sslKey = parsed.sslKey();
    if (sslKey != null) {
      b.sslKey(sslKey);
    }
    Duration connectTimeout = parsed.connectTimeout();
    if (connectTimeout != null) {
      b.connectTimeout(connectTimeout);
    }
    Boolean tcpKeepAlive = parsed.tcpKeepAlive();
    if (tcpKeepAlive != null) {
      b.tcpKeepAlive(tcpKeepAlive);
    }
    String targetServerType = parsed.targetServerType();
    if (targetServerType != null) {
      b.targetServerType(TargetServerType.parse(targetServerType));
    }
    return b;
  }

  /** Returns the URL with its passwords masked, for messages (see {@link Secrets}). */
  static @Nullable String redactUrl(@Nullable String url) {
    return Secrets.redactUrl(url);
  }

  /**
   * Returns the host name or address; the first one when several are given.
   *
   * @return the host
   */
  public String host() {
    return hosts.get(0).host();
  }

  /**
   * Returns the TCP port of the first host.
   *
   * @return the port, 1 to 65535
   */
  public int port() {
    return hosts.get(0).port();
  }

  /**
   * Returns every host with its port, in the order connections try them: the first is {@link
   * #host()} and {@link #port()}.
   *
   * @return one or more hosts, unmodifiable
   */
  public List<HostPort> hosts() {
    return hosts;
  }

  /**
   * Returns which kind of server a connection accepts: {@link TargetServerType#PRIMARY} whenever
   * several hosts are given, else the one asked for ({@link TargetServerType#ANY} by default).
   *
   * @return the target server type
   */
  public TargetServerType targetServerType() {
    return targetServerType;
  }

  /**
   * Returns the database name.
   *
   * @return the database
   */
  public String database() {
    return database;
  }

  /**
   * Returns the role name to log in as.
   *
   * @return the user
   */
  public String user() {
    return user;
  }

  /**
   * Returns the password; null when none is set (trust, peer or certificate authentication). Never
   * log it.
   *
   * @return the password, or null
   */
  public @Nullable String password() {
    return password;
  }

  /**
   * Returns the TLS mode.
   *
   * @return the mode
   */
  public SslMode sslMode() {
    return sslMode;
  }

  /**
   * Returns the file of trusted root certificates (PEM) used to verify the server, or null for the
   * driver's default ({@code ~/.postgresql/root.crt}).
   *
   * @return the root certificate path, or null
   */
  public @Nullable Path sslRootCert() {
    return sslRootCert;
  }

  /**
   * Returns the client certificate file, or null when no client certificate is sent.
   *
   * @return the client certificate path, or null
   */
  public @Nullable Path sslCert() {
    return sslCert;
  }

  /**
   * Returns the client key file (PKCS-8 DER or PKCS-12, as pgjdbc reads it), or null.
   *
   * @return the client key path, or null
   */
  public @Nullable Path sslKey() {
    return sslKey;
  }

  /**
   * Returns how long to wait for the TCP connection and the login.
   *
   * @return the connect timeout, positive
   */
  public Duration connectTimeout() {
    return connectTimeout;
  }

  /**
   * Returns whether TCP keepalive is enabled on the socket.
   *
   * @return whether keepalive probes are sent
   */
  public boolean tcpKeepAlive() {
    return tcpKeepAlive;
  }

  /**
   * Returns a URL of this configuration without credentials, for messages: {@code
   * postgresql://host:port/database}, every host listed: {@code
   * postgresql://h1:5432,h2:5433/database}.
   *
   * @return the URL without user and password
   */
  public String describe() {
    return "postgresql://" + hostList() + "/" + database;
  }

  /**
   * Returns the hosts as a URL lists them: {@code h1:5432,[::1]:5433}.
   *
   * @return the comma-separated host list
   */
  private String hostList() {
    return hosts.stream().map(HostPort::toString).collect(Collectors.joining(","));
  }

  /**
   * Returns a pgjdbc URL of this configuration, with every host, the TLS and socket settings and
   * the target server type, but without the user and password (give those as connection
   * properties). Every connection opened with it, a state store's included, goes to a primary when
   * several hosts are listed.
   *
   * @return a URL such as {@code jdbc:postgresql://h1:5432,h2:5432/db?sslmode=verify-full&...}
   */
  public String jdbcUrl() {
    StringBuilder url =
        new StringBuilder("jdbc:postgresql://")
            .append(hostList())
            .append('/')
            .append(
                java.net.URLEncoder.encode(database, StandardCharsets.UTF_8).replace("+", "%20"));
    url.append("?sslmode=").append(sslMode.libpqName());
    if (targetServerType != TargetServerType.ANY) {
      url.append("&targetServerType=").append(targetServerType.pgjdbcName());
    }
    appendPath(url, "sslrootcert", sslRootCert);
    appendPath(url, "sslcert", sslCert);
    appendPath(url, "sslkey", sslKey);
    url.append("&connectTimeout=").append(Math.max(1, connectTimeout.toSeconds()));
    url.append("&tcpKeepAlive=").append(tcpKeepAlive);
    return url.toString();
  }

  private static void appendPath(StringBuilder url, String name, @Nullable Path path) {
    if (path != null) {
      url.append('&')
          .append(name)
          .append('=')
          .append(java.net.URLEncoder.encode(path.toString(), StandardCharsets.UTF_8));
    }
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof PgConnectionConfig c
        && hosts.equals(c.hosts)
        && targetServerType == c.targetServerType
        && database.equals(c.database)
        && user.equals(c.user)
        && Objects.equals(password, c.password)
        && sslMode == c.sslMode
        && Objects.equals(sslRootCert, c.sslRootCert)
        && Objects.equals(sslCert, c.sslCert)
        && Objects.equals(sslKey, c.sslKey)
        && connectTimeout.equals(c.connectTimeout)
        && tcpKeepAlive == c.tcpKeepAlive;
  }

  @Override
  public int hashCode() {
    return Objects.hash(
        hosts,
        targetServerType,
        database,
        user,
        password,
        sslMode,
        sslRootCert,
        sslCert,
        sslKey,
        connectTimeout,
        tcpKeepAlive);
  }

  /**
   * Returns every field except the password, which shows only as set or unset.
   *
   * @return a description without secrets
   */
  @Override
  public String toString() {
    return "PgConnectionConfig[hosts="
        + hostList()
        + ", targetServerType="
        + targetServerType.pgjdbcName()
        + ", database="
        + database
        + ", user="
        + user
        + ", password="
        + Secrets.show(password)
        + ", sslMode="
        + sslMode.libpqName()
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
        + "]";
  }

  /**
   * Collects the fields of a {@link PgConnectionConfig}; {@link #build()} validates them. Not
   * thread-safe.
   */
  public static final class Builder {
    private @Nullable String host;
    private int port = DEFAULT_PORT;
    private final List<HostPort> additionalHosts = new ArrayList<>();
    private @Nullable TargetServerType targetServerType;
    private @Nullable String database;
    private @Nullable String user;
    private @Nullable String password;
    private SslMode sslMode = DEFAULT_SSL_MODE;
    private @Nullable Path sslRootCert;
    private @Nullable Path sslCert;
    private @Nullable Path sslKey;
    private Duration connectTimeout = DEFAULT_CONNECT_TIMEOUT;
    private boolean tcpKeepAlive = true;

    private Builder() {}

    /**
     * Sets the host name or address (required): the first host tried when several are given.
     *
     * @param host the host
     * @return this builder
     */
    public Builder host(String host) {
      this.host = host;
      return this;
    }

    /**
     * Sets the TCP port (default {@value PgConnectionConfig#DEFAULT_PORT}).
     *
     * @param port the port, 1 to 65535
     * @return this builder
     */
    public Builder port(int port) {
      this.port = port;
      return this;
    }

    /**
     * Adds a host to try after {@link #host(String)} and the hosts added before: a physical standby
     * that may be promoted. With several hosts, connections go to the first primary of the list
     * ({@link TargetServerType#PRIMARY}).
     *
     * @param host the host name or address
     * @param port its port, 1 to 65535
     * @return this builder
     */
    public Builder addHost(String host, int port) {
      additionalHosts.add(new HostPort(host, port));
      return this;
    }

    /**
     * Replaces the hosts tried after the first one ({@link #addHost(String, int)}); an empty list
     * leaves only {@link #host(String)}.
     *
     * @param hosts the further hosts, in order
     * @return this builder
     */
    public Builder additionalHosts(List<HostPort> hosts) {
      additionalHosts.clear();
      additionalHosts.addAll(Objects.requireNonNull(hosts, "hosts"));
      return this;
    }

    /**
     * Sets which kind of server a connection accepts (default: {@link TargetServerType#PRIMARY}
     * with several hosts, {@link TargetServerType#ANY} with one; several hosts need {@code
     * PRIMARY}). Null restores the default.
     *
     * @param targetServerType the type, or null
     * @return this builder
     */
    public Builder targetServerType(TargetServerType targetServerType) {
      this.targetServerType = targetServerType;
      return this;
    }

    /**
     * Sets the database name (required).
     *
     * @param database the database
     * @return this builder
     */
    public Builder database(String database) {
      this.database = database;
      return this;
    }

    /**
     * Sets the role to log in as (required).
     *
     * @param user the user
     * @return this builder
     */
    public Builder user(String user) {
      this.user = user;
      return this;
    }

    /**
     * Sets the password, or null for none.
     *
     * @param password the password
     * @return this builder
     */
    public Builder password(String password) {
      this.password = password;
      return this;
    }

    /**
     * Sets the TLS mode (default {@link SslMode#PREFER}).
     *
     * @param sslMode the mode
     * @return this builder
     */
    public Builder sslMode(SslMode sslMode) {
      this.sslMode = sslMode;
      return this;
    }

    /**
     * Sets the trusted root certificate file (PEM), or null for the driver's default location.
     *
     * @param sslRootCert the path
     * @return this builder
     */
    public Builder sslRootCert(Path sslRootCert) {
      this.sslRootCert = sslRootCert;
      return this;
    }

    /**
     * Sets the client certificate file, or null for none. Needs {@link #sslKey(Path)} too.
     *
     * @param sslCert the path
     * @return this builder
     */
    public Builder sslCert(Path sslCert) {
      this.sslCert = sslCert;
      return this;
    }

    /**
     * Sets the client key file, or null for none. Needs {@link #sslCert(Path)} too.
     *
     * @param sslKey the path
     * @return this builder
     */
    public Builder sslKey(Path sslKey) {
      this.sslKey = sslKey;
      return this;
    }

    /**
     * Sets how long to wait for the TCP connection and the login (default 10 seconds); rounded up
     * to whole seconds, as pgjdbc counts them.
     *
     * @param connectTimeout the timeout, positive and at most one hour
     * @return this builder
     */
    public Builder connectTimeout(Duration connectTimeout) {
      this.connectTimeout = connectTimeout;
      return this;
    }

    /**
     * Sets whether TCP keepalive probes are sent (default true).
     *
     * @param tcpKeepAlive whether keepalive is on
     * @return this builder
     */
    public Builder tcpKeepAlive(boolean tcpKeepAlive) {
      this.tcpKeepAlive = tcpKeepAlive;
      return this;
    }

    /**
     * Validates the fields and returns the configuration.
     *
     * @return the configuration
     * @throws EtlException of kind {@link ErrorKind#CONFIG_ERROR} naming the invalid field
     */
    public PgConnectionConfig build() {
      return new PgConnectionConfig(this);
    }
  }
}
