package org.pgetl.core.internal.pg;

import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.Objects;
import java.util.Properties;
import java.util.stream.Collectors;
import org.jspecify.annotations.Nullable;
import org.pgetl.PgConnectionConfig;
import org.pgetl.error.ErrorKind;
import org.pgetl.error.EtlException;
import org.postgresql.PGProperty;

/**
 * Opens connections to the PostgreSQL source (the first primary of its host list, when several
 * hosts are given): plain JDBC connections (catalog queries, copy connections that import a
 * snapshot) and replication connections ({@code replication=database}).
 *
 * <p>Every session gets the settings the value decoders rely on, so that the server's text output
 * is the same whatever the server's or the role's defaults: {@code DateStyle=ISO}, {@code
 * IntervalStyle=postgres}, {@code extra_float_digits=3}, {@code client_encoding=UTF8}, {@code
 * TimeZone=UTC} and {@code lc_monetary=C}. They travel in pgjdbc's {@code options} startup
 * parameter. pgjdbc itself also sends the JVM's time zone as a startup parameter, which the server
 * applies after {@code options}; so {@code TimeZone} is set once more, with {@code SET}, right
 * after connecting.
 *
 * <p>Thread-safe: holds only the immutable configuration.
 */
public final class PgConnector {
  /**
   * The version pgjdbc may assume without asking, which lets it send {@code application_name} and
   * {@code extra_float_digits} in the startup packet; also the oldest version the replication API
   * needs.
   */
  static final String ASSUME_MIN_SERVER_VERSION = "10";

  private final PgConnectionConfig config;

  /**
   * Creates a connector for one server.
   *
   * @param config where and how to connect
   */
  public PgConnector(PgConnectionConfig config) {
    this.config = Objects.requireNonNull(config, "config");
  }

  /**
   * Returns the configuration.
   *
   * @return the configuration
   */
  public PgConnectionConfig config() {
    return config;
  }

  /**
   * Opens a plain connection with bounded timeouts ({@link SessionTimeouts#BOUNDED}), in
   * auto-commit mode.
   *
   * @param applicationName the {@code application_name}, clamped to 63 bytes
   * @return an open connection; the caller closes it
   * @throws EtlException when the connection fails, of the kind {@link PgErrors} decides
   */
  public Connection openPlain(String applicationName) {
    return openPlain(applicationName, SessionTimeouts.BOUNDED);
  }

  /**
   * Opens a plain connection with the given timeouts, in auto-commit mode.
   *
   * @param applicationName the {@code application_name}, clamped to 63 bytes
   * @param timeouts the session's timeouts
   * @return an open connection; the caller closes it
   * @throws EtlException when the connection fails
   */
  public Connection openPlain(String applicationName, SessionTimeouts timeouts) {
    return connect(plainProperties(applicationName, timeouts), applicationName);
  }

  /**
   * Opens a plain connection that reads the database as of an exported snapshot: it runs {@code
   * BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY} and {@code SET TRANSACTION SNAPSHOT} and
   * returns with that transaction open (auto-commit off). The caller reads, then commits and
   * closes. Timeouts are off ({@link SessionTimeouts#NONE}): a copy may run for hours.
   *
   * @param applicationName the {@code application_name}, clamped to 63 bytes
   * @param snapshotId the id {@code pg_export_snapshot()} or {@code EXPORT_SNAPSHOT} returned
   * @return a connection inside the snapshot's transaction
   * @throws EtlException of kind {@link ErrorKind#SOURCE_SNAPSHOT_TOO_OLD} when the exporting
   *     transaction is gone, or another kind when the connection fails
   */
  public Connection openSnapshotChild(String applicationName, String snapshotId) {
    checkSnapshotId(snapshotId);
    Connection c = openPlain(applicationName, SessionTimeouts.NONE);
    try {
      c.setAutoCommit(false);
      try (Statement st = c.createStatement()) {
        // pgjdbc sends its own BEGIN before the first statement once auto-commit is off; the
        // isolation level and read-only mode go with that BEGIN through these two settings.
        c.setTransactionIsolation(Connection.TRANSACTION_REPEATABLE_READ);
        c.setReadOnly(true);
        st.execute("SET TRANSACTION SNAPSHOT '" + snapshotId + "'");
      }
      return c;
    } catch (SQLException e) {
      closeQuietly(c);
      throw PgErrors.map(e, "could not import snapshot " + snapshotId + " on a copy connection");
    }
  }

  /**
   * Opens a replication connection ({@code replication=database}, simple query protocol), with
   * every session timeout off.
   *
   * @param applicationName the {@code application_name}, clamped to 63 bytes
   * @return an open replication connection; the caller closes it
   * @throws EtlException when the connection fails
   */
  public ReplicationConnection openReplication(String applicationName) {
    Connection c = connect(replicationProperties(applicationName), applicationName);
    try {
      return new ReplicationConnection(c, ApplicationNames.clamp(applicationName));
    } catch (RuntimeException e) {
      closeQuietly(c);
      throw e;
    }
  }

  /**
   * Returns the JDBC URL, every host listed, without credentials or settings (they travel as
   * properties).
   */
  String url() {
    return "jdbc:postgresql://"
        + config.hosts().stream()
            .map(PgConnectionConfig.HostPort::toString)
            .collect(Collectors.joining(","))
        + "/"
        + URLEncoder.encode(config.database(), StandardCharsets.UTF_8).replace("+", "%20");
  }

  /** Returns the connection properties of a plain connection. */
  Properties plainProperties(String applicationName, SessionTimeouts timeouts) {
    Properties p = baseProperties(applicationName);
    PGProperty.OPTIONS.set(p, sessionOptions(timeouts));
    return p;
  }

  /** Returns the connection properties of a replication connection. */
  Properties replicationProperties(String applicationName) {
    Properties p = baseProperties(applicationName);
    PGProperty.OPTIONS.set(p, sessionOptions(SessionTimeouts.NONE));
    PGProperty.REPLICATION.set(p, "database");
    PGProperty.PREFER_QUERY_MODE.set(p, "simple");
    return p;
  }

  private Properties baseProperties(String applicationName) {
    Objects.requireNonNull(applicationName, "applicationName");
    Properties p = new Properties();
    PGProperty.USER.set(p, config.user());
    if (config.password() != null) {
      PGProperty.PASSWORD.set(p, config.password());
    }
    PGProperty.APPLICATION_NAME.set(p, ApplicationNames.clamp(applicationName));
    PGProperty.ASSUME_MIN_SERVER_VERSION.set(p, ASSUME_MIN_SERVER_VERSION);
    int timeoutSeconds = ceilSeconds(config.connectTimeout());
    PGProperty.CONNECT_TIMEOUT.set(p, timeoutSeconds);
    PGProperty.LOGIN_TIMEOUT.set(p, timeoutSeconds);
    PGProperty.TCP_KEEP_ALIVE.set(p, config.tcpKeepAlive());
    // With several hosts pgjdbc tries them in order and keeps the first primary: a standby never
    // becomes the source, and after a promotion the same list reaches the new primary.
    PGProperty.TARGET_SERVER_TYPE.set(p, config.targetServerType().pgjdbcName());
    PGProperty.SSL_MODE.set(p, config.sslMode().libpqName());
    if (config.sslRootCert() != null) {
      PGProperty.SSL_ROOT_CERT.set(p, config.sslRootCert().toString());
    }
    if (config.sslCert() != null) {
      PGProperty.SSL_CERT.set(p, config.sslCert().toString());
      PGProperty.SSL_KEY.set(
          p, Objects.requireNonNull(config.sslKey(), "set with sslCert").toString());
    }
    return p;
  }

  /**
   * Returns the {@code options} startup parameter: {@code -c name=value} pairs, no spaces inside.
   */
  static String sessionOptions(SessionTimeouts t) {
    return "-c DateStyle=ISO"
        + " -c IntervalStyle=postgres"
        + " -c extra_float_digits=3"
        + " -c client_encoding=UTF8"
        + " -c TimeZone=UTC"
        + " -c lc_monetary=C"
        + " -c bytea_output=hex"
        + " -c statement_timeout="
        + t.statement().toMillis()
        + " -c lock_timeout="
        + t.lock().toMillis()
        + " -c idle_in_transaction_session_timeout="
        + t.idleInTransaction().toMillis();
  }

  private Connection connect(Properties props, String applicationName) {
    Connection c;
    try {
      c = DriverManager.getConnection(url(), props);
    } catch (SQLException e) {
      throw PgErrors.map(
          e,
          "could not connect to "
              + config.describe()
              + " as user "
              + config.user()
              + " ("
              + ApplicationNames.clamp(applicationName)
              + ")",
          config.password());
    }
    try (Statement st = c.createStatement()) {
      st.execute("SET TimeZone TO 'UTC'");
      return c;
    } catch (SQLException e) {
      closeQuietly(c);
      throw PgErrors.map(e, "could not set up the session on " + config.describe());
    }
  }

  private static int ceilSeconds(Duration d) {
    long seconds = d.getSeconds() + (d.getNano() > 0 ? 1 : 0);
    return (int) Math.max(1, Math.min(Integer.MAX_VALUE, seconds));
  }

  private static void checkSnapshotId(String snapshotId) {
    if (snapshotId == null
        || snapshotId.isEmpty()
        || !snapshotId.chars().allMatch(ch -> Character.digit(ch, 16) >= 0 || ch == '-')) {
      throw new EtlException(
          ErrorKind.INVALID_STATE,
          "not a snapshot id: '" + snapshotId + "' (expected hex and '-')");
    }
  }

  /**
   * Closes a connection (or anything closeable), ignoring a failure to close it.
   *
   * @param c what to close, or null
   */
  public static void closeQuietly(@Nullable AutoCloseable c) {
    if (c == null) {
      return;
    }
    try {
      c.close();
    } catch (Exception ignored) {
      // The connection is being abandoned after another failure, which is the one to report.
    }
  }
}
