package org.pgetl.examples.cli;

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.util.Properties;
import org.pgetl.PgConnectionConfig;
import org.pgetl.error.ErrorKind;
import org.pgetl.error.EtlException;

/** Connection settings from the command line, and plain JDBC connections made from them. */
final class Connections {
  /** The environment variable that supplies a password a URL leaves out, as with libpq. */
  static final String PASSWORD_ENV = "PGPASSWORD";

  private Connections() {}

  /**
   * Parses a connection URL ({@code jdbc:postgresql://...}, {@code postgresql://...}); when it has
   * no password, {@code PGPASSWORD} supplies one.
   *
   * @param url the URL
   * @return the settings
   * @throws EtlException of kind {@code CONFIG_ERROR} for a malformed URL
   */
  static PgConnectionConfig config(String url) {
    PgConnectionConfig config = PgConnectionConfig.fromJdbcUrl(url);
    String password = System.getenv(PASSWORD_ENV);
    if (config.password() == null && password != null && !password.isEmpty()) {
      config = config.toBuilder().password(password).build();
    }
    return config;
  }

  /**
   * Opens a plain JDBC connection.
   *
   * @param config the settings
   * @param what what the connection is for, for the error message
   * @return the connection
   * @throws EtlException of kind {@code SOURCE_CONNECTION_FAILED} (or {@code
   *     SOURCE_AUTHENTICATION_ERROR}) when it cannot be opened
   */
  static Connection open(PgConnectionConfig config, String what) {
    Properties p = new Properties();
    p.setProperty("user", config.user());
    if (config.password() != null) {
      p.setProperty("password", config.password());
    }
    p.setProperty("ApplicationName", "pgetl-cli");
    try {
      return DriverManager.getConnection(config.jdbcUrl(), p);
    } catch (SQLException e) {
      String state = String.valueOf(e.getSQLState());
      ErrorKind kind =
          switch (state) {
            case "28P01", "28000" -> ErrorKind.SOURCE_AUTHENTICATION_ERROR;
            case "3D000" -> ErrorKind.CONFIG_ERROR; // no such database
            case "42501" -> ErrorKind.PERMISSION_DENIED;
            default -> ErrorKind.SOURCE_CONNECTION_FAILED;
          };
      throw new EtlException(
          kind,
          "cannot connect to " + config.describe() + " as user " + config.user() + " to " + what,
          ErrorReport.singleLine(e.getMessage()) + ", SQLSTATE " + state,
          e);
    }
  }
}
