package org.pgetl.core.internal.codec;

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.util.Properties;
import org.pgetl.PgConnectionConfig;
import org.pgetl.testkit.EmbeddedPostgres;
import org.pgetl.testkit.PostgresServer;

/**
 * Where the codec ITs find PostgreSQL: a database of their own on the testkit's shared server
 * ({@code PGETL_TEST_DATABASE_URL} selects an external server instead).
 */
final class CodecTestDatabase {
  private static final String DATABASE = "pgetl_codec_it";
  private static volatile boolean created;

  private CodecTestDatabase() {}

  /** Opens a connection with the codec session settings ({@link CodecSession}). */
  static Connection connect() throws SQLException {
    PostgresServer server = server();
    Properties props = new Properties();
    props.setProperty("user", server.superuser());
    props.setProperty("password", server.password());
    // text results for getString, so that it returns exactly the server's output
    props.setProperty("binaryTransfer", "false");
    return DriverManager.getConnection(server.jdbcUrl(DATABASE), CodecSession.applyTo(props));
  }

  /** Returns the database as the engine's connection layer ({@code PgConnector}) reaches it. */
  static PgConnectionConfig config() {
    PostgresServer server = server();
    return PgConnectionConfig.builder()
        .host(server.host())
        .port(server.port())
        .database(DATABASE)
        .user(server.superuser())
        .password(server.password())
        .build();
  }

  private static PostgresServer server() {
    PostgresServer server = EmbeddedPostgres.shared();
    synchronized (CodecTestDatabase.class) {
      if (!created) {
        server.dropDatabase(DATABASE);
        server.createDatabase(DATABASE);
        created = true;
      }
    }
    return server;
  }
}
