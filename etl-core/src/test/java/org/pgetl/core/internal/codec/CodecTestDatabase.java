package org.pgetl.core.internal.codec;

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.util.Properties;

/**
 * Where the codec ITs get their PostgreSQL: the one place to change when they move to the testkit.
 * Today: the JDBC URL in the environment variable {@value #URL_VARIABLE} (for example {@code
 * jdbc:postgresql://127.0.0.1:5432/postgres?user=postgres}); the ITs fail, saying so, when it is
 * not set.
 */
final class CodecTestDatabase {
  static final String URL_VARIABLE = "PGETL_TEST_DATABASE_URL";

  private CodecTestDatabase() {}

  /** Opens a connection with the codec session settings ({@link CodecSession}). */
  static Connection connect() throws SQLException {
    String url = System.getenv(URL_VARIABLE);
    if (url == null || url.isBlank()) {
      throw new IllegalStateException(
          "the codec ITs need a PostgreSQL server: set "
              + URL_VARIABLE
              + " to its JDBC URL, e.g. jdbc:postgresql://127.0.0.1:5432/postgres?user=postgres");
    }
    Properties props = new Properties();
    // text results for getString, so that it returns exactly the server's output
    props.setProperty("binaryTransfer", "false");
    return DriverManager.getConnection(url, CodecSession.applyTo(props));
  }
}
