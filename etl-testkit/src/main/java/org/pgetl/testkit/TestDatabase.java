package org.pgetl.testkit;

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.ResultSetMetaData;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Objects;
import java.util.Properties;
import org.jspecify.annotations.Nullable;

/**
 * A database of its own for one test class, on a test server: its coordinates, connections and
 * small SQL helpers.
 *
 * <p>{@link PostgresExtension} creates it before the class and drops it after, together with its
 * replication slots. The helpers throw {@link TestkitException} (naming the statement) instead of
 * {@link SQLException}, so that tests stay short.
 */
public final class TestDatabase {
  private final PostgresServer server;
  private final String name;

  /**
   * Describes an existing database on a server (the extension creates it).
   *
   * @param server the server
   * @param name the database name
   */
  public TestDatabase(PostgresServer server, String name) {
    this.server = Objects.requireNonNull(server, "server");
    this.name = Objects.requireNonNull(name, "name");
  }

  /**
   * Returns the server this database lives on.
   *
   * @return the server
   */
  public PostgresServer server() {
    return server;
  }

  /**
   * Returns the database name.
   *
   * @return for example {@code pgetl_test_k3v9x0a1q2}
   */
  public String name() {
    return name;
  }

  /**
   * Returns the JDBC URL of this database, without credentials.
   *
   * @return the URL
   */
  public String jdbcUrl() {
    return server.jdbcUrl(name);
  }

  /**
   * Returns the server's host.
   *
   * @return the host
   */
  public String host() {
    return server.host();
  }

  /**
   * Returns the server's TCP port.
   *
   * @return the port
   */
  public int port() {
    return server.port();
  }

  /**
   * Returns the user to connect as (a superuser, allowed to replicate).
   *
   * @return the user name
   */
  public String user() {
    return server.superuser();
  }

  /**
   * Returns the password of {@link #user()}.
   *
   * @return the password
   */
  public String password() {
    return server.password();
  }

  /**
   * Returns the server version as a number, like {@code server_version_num}.
   *
   * @return for example {@code 170006}
   */
  public int serverVersionNum() {
    return server.serverVersionNum();
  }

  /**
   * Opens a connection to this database.
   *
   * @return a new connection in auto-commit mode; the caller closes it
   * @throws SQLException when the connection fails
   */
  public Connection connect() throws SQLException {
    return server.connect(name);
  }

  /**
   * Opens a replication connection to this database ({@code replication=database}, simple query
   * mode), as pgjdbc's replication API needs.
   *
   * @return a new replication connection; the caller closes it
   * @throws SQLException when the connection fails
   */
  public Connection connectReplication() throws SQLException {
    Properties props = DatabaseAdmin.connectionProperties(user(), password());
    props.setProperty("replication", "database");
    props.setProperty("preferQueryMode", "simple");
    props.setProperty("assumeMinServerVersion", "14");
    return DriverManager.getConnection(jdbcUrl(), props);
  }

  /**
   * Runs statements in order, each in its own transaction (auto-commit), on one connection.
   *
   * @param sql the statements
   * @throws TestkitException when a statement fails
   */
  public void execute(String... sql) {
    try (Connection c = connect();
        Statement s = c.createStatement()) {
      for (String statement : sql) {
        try {
          s.execute(statement);
        } catch (SQLException e) {
          throw failure(statement, e);
        }
      }
    } catch (SQLException e) {
      throw failure("connect", e);
    }
  }

  /**
   * Runs a query that returns one number, for example {@code SELECT count(*) FROM t}.
   *
   * @param sql the query; {@code ?} placeholders take the parameters
   * @param params the parameters; a null one is SQL NULL
   * @return the first column of the only row
   * @throws TestkitException when the query fails or returns no row or NULL
   */
  public long queryLong(String sql, @Nullable Object... params) {
    String value = queryString(sql, params);
    if (value == null) {
      throw new TestkitException("query returned NULL: " + sql);
    }
    try {
      return Long.parseLong(value.trim());
    } catch (NumberFormatException e) {
      throw new TestkitException("query did not return a whole number: " + sql, e);
    }
  }

  /**
   * Runs a query that returns one value, as text.
   *
   * @param sql the query; {@code ?} placeholders take the parameters
   * @param params the parameters; a null one is SQL NULL
   * @return the first column of the only row, as PostgreSQL writes it as text; null for NULL
   * @throws TestkitException when the query fails or returns no row or more than one
   */
  public @Nullable String queryString(String sql, @Nullable Object... params) {
    List<List<@Nullable String>> rows = queryRows(sql, params);
    if (rows.size() != 1) {
      throw new TestkitException("query returned " + rows.size() + " rows, expected 1: " + sql);
    }
    return rows.get(0).get(0);
  }

  /**
   * Runs a query and returns all rows, each value as text (null for NULL).
   *
   * @param sql the query; {@code ?} placeholders take the parameters
   * @param params the parameters; a null one is SQL NULL
   * @return the rows in the order returned, each a list of column values
   * @throws TestkitException when the query fails
   */
  public List<List<@Nullable String>> queryRows(String sql, @Nullable Object... params) {
    try (Connection c = connect();
        PreparedStatement ps = c.prepareStatement(sql)) {
      for (int i = 0; i < params.length; i++) {
        ps.setObject(i + 1, params[i]);
      }
      try (ResultSet rs = ps.executeQuery()) {
        ResultSetMetaData md = rs.getMetaData();
        int n = md.getColumnCount();
        List<List<@Nullable String>> rows = new ArrayList<>();
        while (rs.next()) {
          List<@Nullable String> row = new ArrayList<>(n);
          for (int i = 1; i <= n; i++) {
            row.add(rs.getString(i));
          }
          rows.add(Collections.unmodifiableList(row));
        }
        return Collections.unmodifiableList(rows);
      }
    } catch (SQLException e) {
      throw failure(sql, e);
    }
  }

  /**
   * Returns the replication slots of this database, by slot name.
   *
   * @return the rows of {@code pg_replication_slots} whose database is this one
   * @throws TestkitException when the query fails
   */
  public List<ReplicationSlotInfo> replicationSlots() {
    String sql =
        "SELECT slot_name, plugin, slot_type, active, active_pid, restart_lsn::text,"
            + " confirmed_flush_lsn::text, wal_status FROM pg_replication_slots"
            + " WHERE database = current_database() ORDER BY slot_name";
    try (Connection c = connect();
        Statement s = c.createStatement();
        ResultSet rs = s.executeQuery(sql)) {
      List<ReplicationSlotInfo> slots = new ArrayList<>();
      while (rs.next()) {
        int pid = rs.getInt(5);
        Integer activePid = rs.wasNull() ? null : pid;
        slots.add(
            new ReplicationSlotInfo(
                rs.getString(1),
                rs.getString(2),
                rs.getString(3),
                rs.getBoolean(4),
                activePid,
                rs.getString(6),
                rs.getString(7),
                rs.getString(8)));
      }
      return Collections.unmodifiableList(slots);
    } catch (SQLException e) {
      throw failure(sql, e);
    }
  }

  /**
   * Drops every replication slot of this database, terminating the walsenders that stream them.
   *
   * @return the names of the dropped slots
   * @throws TestkitException when a slot cannot be dropped
   */
  public List<String> dropAllSlots() {
    try (Connection c = connect()) {
      return DatabaseAdmin.dropSlots(c, name);
    } catch (SQLException e) {
      throw failure("drop replication slots of " + name, e);
    }
  }

  private TestkitException failure(String sql, SQLException e) {
    return new TestkitException(
        "database "
            + name
            + ": "
            + e.getMessage()
            + DatabaseAdmin.sqlState(e)
            + "\nstatement: "
            + sql,
        e);
  }

  @Override
  public String toString() {
    return "TestDatabase[" + name + " on " + server + "]";
  }
}
