package org.pgetl.core.internal.decode;

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.util.Properties;
import org.pgetl.testkit.TestDatabase;

/**
 * Where the decoder's integration tests find PostgreSQL: the database the testkit's {@code
 * PostgresExtension} gives the test class (a superuser, {@code wal_level=logical}, {@code
 * max_prepared_transactions > 0}).
 */
final class TestServer {
  private static volatile TestDatabase database;

  private TestServer() {}

  static void use(TestDatabase db) {
    database = db;
  }

  private static TestDatabase db() {
    TestDatabase db = database;
    if (db == null) {
      throw new IllegalStateException("TestServer.use(TestDatabase) was not called");
    }
    return db;
  }

  /** Opens a plain SQL connection in autocommit mode. */
  static Connection connect() throws SQLException {
    return db().connect();
  }

  /** Opens a replication connection ({@code replication=database}) with extra properties. */
  static Connection connectReplication(Properties extra) throws SQLException {
    TestDatabase db = db();
    Properties p = new Properties();
    p.setProperty("user", db.user());
    p.setProperty("password", db.password());
    p.setProperty("replication", "database");
    p.setProperty("preferQueryMode", "simple");
    p.setProperty("assumeMinServerVersion", "14");
    p.putAll(extra);
    return DriverManager.getConnection(db.jdbcUrl(), p);
  }
}
