package org.pgetl.core.internal.decode;

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.util.Properties;

/**
 * Where the decoder's integration tests find PostgreSQL: the one seam to switch when the tests move
 * to the testkit's server. For now it reads the JDBC URL (user and password in it) from the
 * environment variable {@value #URL_VARIABLE}; the server needs {@code wal_level=logical} and
 * {@code max_prepared_transactions > 0}, and the user must be a superuser (replication origins).
 */
final class TestServer {
  static final String URL_VARIABLE = "PGETL_TEST_DATABASE_URL";

  private TestServer() {}

  static String jdbcUrl() {
    String url = System.getenv(URL_VARIABLE);
    if (url == null || url.isBlank()) {
      throw new IllegalStateException(
          "set "
              + URL_VARIABLE
              + " to the JDBC URL of a PostgreSQL 14+ server started with wal_level=logical and"
              + " max_prepared_transactions > 0, e.g."
              + " jdbc:postgresql://127.0.0.1:5432/postgres?user=postgres&password=secret");
    }
    return url;
  }

  /** Opens a plain SQL connection in autocommit mode. */
  static Connection connect() throws SQLException {
    return DriverManager.getConnection(jdbcUrl());
  }

  /** Opens a replication connection ({@code replication=database}) with extra properties. */
  static Connection connectReplication(Properties extra) throws SQLException {
    Properties p = new Properties();
    p.setProperty("replication", "database");
    p.setProperty("preferQueryMode", "simple");
    p.setProperty("assumeMinServerVersion", "14");
    p.putAll(extra);
    return DriverManager.getConnection(jdbcUrl(), p);
  }
}
