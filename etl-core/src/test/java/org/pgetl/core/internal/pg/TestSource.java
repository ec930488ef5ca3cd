package org.pgetl.core.internal.pg;

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import org.pgetl.PgConnectionConfig;
import org.pgetl.testkit.EmbeddedPostgres;
import org.pgetl.testkit.PostgresServer;

/**
 * The one seam between these integration tests and a PostgreSQL server (wal_level=logical, a
 * superuser): the testkit's shared server ({@code PGETL_TEST_DATABASE_URL} selects an external
 * one). Each test class asks for its own database with {@link #freshDatabase(String)}.
 */
final class TestSource {
  private TestSource() {}

  /** Returns the server's configuration, connected to its {@code postgres} database. */
  static PgConnectionConfig server() {
    PostgresServer server = EmbeddedPostgres.shared();
    return PgConnectionConfig.builder()
        .host(server.host())
        .port(server.port())
        .database("postgres")
        .user(server.superuser())
        .password(server.password())
        .build();
  }

  /**
   * Drops the database of that name (and the replication slots in it) if it exists, creates it
   * again, and returns a configuration that connects to it.
   */
  static PgConnectionConfig freshDatabase(String name) throws SQLException {
    PgConnectionConfig server = server();
    try (Connection c = open(server);
        Statement st = c.createStatement()) {
      try (PreparedStatement ps =
          c.prepareStatement(
              "SELECT pg_terminate_backend(active_pid, 5000) FROM pg_replication_slots"
                  + " WHERE database = ? AND active_pid IS NOT NULL")) {
        ps.setString(1, name);
        ps.execute();
      }
      try (PreparedStatement ps =
          c.prepareStatement(
              "SELECT pg_drop_replication_slot(slot_name) FROM pg_replication_slots"
                  + " WHERE database = ?")) {
        ps.setString(1, name);
        ps.execute();
      }
      st.execute("DROP DATABASE IF EXISTS \"" + name + "\" WITH (FORCE)");
      st.execute("CREATE DATABASE \"" + name + "\"");
    }
    return server.toBuilder().database(name).build();
  }

  /** Opens a plain JDBC connection for test setup and assertions. */
  static Connection open(PgConnectionConfig config) throws SQLException {
    return DriverManager.getConnection(
        "jdbc:postgresql://" + config.host() + ":" + config.port() + "/" + config.database(),
        config.user(),
        config.password());
  }

  /** Runs statements on a connection. */
  static void exec(Connection c, String... sql) throws SQLException {
    try (Statement st = c.createStatement()) {
      for (String s : sql) {
        st.execute(s);
      }
    }
  }

  /** Returns the first column of the first row of a query, as text. */
  static String queryString(Connection c, String sql) throws SQLException {
    try (Statement st = c.createStatement();
        ResultSet rs = st.executeQuery(sql)) {
      return rs.next() ? rs.getString(1) : null;
    }
  }
}
