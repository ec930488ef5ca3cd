package org.pgetl.store.postgres;

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Properties;
import java.util.concurrent.atomic.AtomicInteger;
import org.pgetl.testkit.EmbeddedPostgres;
import org.pgetl.testkit.PostgresServer;

/**
 * The one place where the store's integration tests get a PostgreSQL server: the testkit's shared
 * server (a superuser; {@code PGETL_TEST_DATABASE_URL} selects an external one), on which each test
 * class makes its own databases and roles and drops them afterwards.
 */
final class TestPostgres {
  private static final AtomicInteger COUNTER = new AtomicInteger();
  private static final String RUN = Long.toString(ProcessHandle.current().pid(), 36);

  private TestPostgres() {}

  /**
   * Creates an empty database.
   *
   * @param purpose a short lower-case word that shows in the database's name
   * @return the database; close it to drop it and the roles made for it
   */
  static Database newDatabase(String purpose) {
    Admin admin = admin();
    String name = uniqueName("pgetl_" + purpose);
    admin.execute(admin.jdbcUrl(admin.database), "CREATE DATABASE " + name);
    return new Database(admin, name);
  }

  /**
   * Returns a name no other database or role of this run has.
   *
   * @param prefix lower-case letters, digits, underscores
   * @return the name
   */
  static String uniqueName(String prefix) {
    return (prefix + "_" + RUN + "_" + COUNTER.incrementAndGet()).toLowerCase(Locale.ROOT);
  }

  private static Admin admin() {
    PostgresServer server = EmbeddedPostgres.shared();
    return new Admin(
        server.host(),
        Integer.toString(server.port()),
        "postgres",
        server.superuser(),
        server.password());
  }

  private record Admin(String host, String port, String database, String user, String password) {
    String jdbcUrl(String db) {
      return "jdbc:postgresql://" + host + ":" + port + "/" + db;
    }

    Connection connect(String url, String asUser, String asPassword) throws SQLException {
      Properties props = new Properties();
      if (asUser != null) {
        props.setProperty("user", asUser);
      }
      if (asPassword != null) {
        props.setProperty("password", asPassword);
      }
      return DriverManager.getConnection(url, props);
    }

    void execute(String url, String... statements) {
      try (Connection c = connect(url, user, password);
          Statement st = c.createStatement()) {
        for (String s : statements) {
          st.execute(s);
        }
      } catch (SQLException e) {
        throw new IllegalStateException("test setup failed: " + e.getMessage(), e);
      }
    }
  }

  /** A database of the test server, dropped on close with every role made through it. */
  static final class Database implements AutoCloseable {
    private final Admin admin;
    private final String name;
    private final List<String> roles = new ArrayList<>();

    private Database(Admin admin, String name) {
      this.admin = admin;
      this.name = name;
    }

    /** Returns the database's name. */
    String name() {
      return name;
    }

    /** Returns the JDBC URL of the database, without credentials. */
    String jdbcUrl() {
      return admin.jdbcUrl(name);
    }

    /** Returns the admin role. */
    String adminUser() {
      return admin.user();
    }

    /** Returns the admin role's password, or null. */
    String adminPassword() {
      return admin.password();
    }

    /** Returns a store builder connected as the admin role. */
    PostgresStore.Builder storeBuilder(String pipelineId) {
      return PostgresStore.builder()
          .jdbcUrl(jdbcUrl())
          .user(admin.user())
          .password(admin.password())
          .pipelineId(pipelineId);
    }

    /** Opens a connection as the admin role. */
    Connection connect() throws SQLException {
      return admin.connect(jdbcUrl(), admin.user(), admin.password());
    }

    /** Opens a connection as another role. */
    Connection connectAs(String user, String password) throws SQLException {
      return admin.connect(jdbcUrl(), user, password);
    }

    /** Runs statements as the admin role, in this database. */
    void execute(String... statements) {
      admin.execute(jdbcUrl(), statements);
    }

    /** Runs a query as the admin role and returns the first column of every row, as text. */
    List<String> queryColumn(String query) {
      try (Connection c = connect();
          Statement st = c.createStatement();
          ResultSet rs = st.executeQuery(query)) {
        List<String> out = new ArrayList<>();
        while (rs.next()) {
          out.add(rs.getString(1));
        }
        return out;
      } catch (SQLException e) {
        throw new IllegalStateException("test query failed: " + e.getMessage(), e);
      }
    }

    /** Runs a query as the admin role that returns one number. */
    long queryLong(String query) {
      return Long.parseLong(queryColumn(query).get(0));
    }

    /**
     * Creates a login role with no other attribute (not a superuser, no CREATEDB, no CREATEROLE).
     *
     * @param prefix part of the role's name
     * @param password its password
     * @return the role's name
     */
    String createLoginRole(String prefix, String password) {
      String role = uniqueName(prefix);
      admin.execute(
          admin.jdbcUrl(admin.database()),
          "CREATE ROLE " + role + " LOGIN PASSWORD '" + password.replace("'", "''") + "'");
      roles.add(role);
      return role;
    }

    @Override
    public void close() {
      String adminDb = admin.jdbcUrl(admin.database());
      admin.execute(adminDb, "DROP DATABASE IF EXISTS " + name + " WITH (FORCE)");
      for (String role : roles) {
        admin.execute(adminDb, "DROP ROLE IF EXISTS " + role);
      }
    }
  }
}
