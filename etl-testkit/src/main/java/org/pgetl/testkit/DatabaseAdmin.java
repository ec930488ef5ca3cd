package org.pgetl.testkit;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Properties;
import org.pgetl.model.TableName;

/** Creates and drops test databases and their replication slots through a superuser connection. */
final class DatabaseAdmin {
  /** How long {@code pg_terminate_backend} waits for a backend to exit. */
  static final int TERMINATE_WAIT_MILLIS = 10_000;

  /** Attempts to drop a slot whose walsender comes back (a client that reconnects). */
  private static final int SLOT_DROP_ATTEMPTS = 5;

  private DatabaseAdmin() {}

  /** Opens a superuser connection to a database. */
  @FunctionalInterface
  interface Connector {
    Connection connect(String database) throws SQLException;
  }

  /** Returns the connection properties shared by every test connection. */
  static Properties connectionProperties(String user, String password) {
    Properties props = new Properties();
    props.setProperty("user", user);
    props.setProperty("password", password);
    props.setProperty("ApplicationName", "pgetl-testkit");
    props.setProperty("connectTimeout", "20");
    props.setProperty("loginTimeout", "30");
    return props;
  }

  static void createDatabase(Connector connector, String maintenanceDb, String name) {
    String quoted = TableName.quoteIdentifier(name);
    try (Connection c = connector.connect(maintenanceDb);
        Statement s = c.createStatement()) {
      s.execute("CREATE DATABASE " + quoted + " ENCODING 'UTF8' TEMPLATE template0");
    } catch (SQLException e) {
      throw new TestkitException(
          "cannot create database " + quoted + ": " + e.getMessage() + sqlState(e), e);
    }
  }

  static void dropDatabase(Connector connector, String maintenanceDb, String name) {
    String quoted = TableName.quoteIdentifier(name);
    if (name.equals(maintenanceDb)) {
      throw new TestkitException("refusing to drop the maintenance database " + quoted);
    }
    try (Connection c = connector.connect(maintenanceDb)) {
      if (!exists(c, name)) {
        return;
      }
      rollbackPreparedTransactions(c, connector, name);
      try (Statement s = c.createStatement()) {
        // nobody reconnects while we clear the way (a pipeline under test may retry)
        s.execute("ALTER DATABASE " + quoted + " ALLOW_CONNECTIONS false");
      }
      terminateBackends(c, name);
      dropSlots(c, name);
      try (Statement s = c.createStatement()) {
        s.execute("DROP DATABASE IF EXISTS " + quoted + " WITH (FORCE)");
      }
    } catch (SQLException e) {
      throw new TestkitException(
          "cannot drop database " + quoted + ": " + e.getMessage() + sqlState(e), e);
    }
  }

  private static boolean exists(Connection c, String name) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement("SELECT 1 FROM pg_database WHERE datname = ?")) {
      ps.setString(1, name);
      try (ResultSet rs = ps.executeQuery()) {
        return rs.next();
      }
    }
  }

  private static void rollbackPreparedTransactions(Connection c, Connector connector, String name)
      throws SQLException {
    List<String> gids = new ArrayList<>();
    try (PreparedStatement ps =
        c.prepareStatement("SELECT gid FROM pg_prepared_xacts WHERE database = ?")) {
      ps.setString(1, name);
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          gids.add(rs.getString(1));
        }
      }
    }
    if (gids.isEmpty()) {
      return;
    }
    // a prepared transaction can only be finished from its own database
    try (Connection inDb = connector.connect(name);
        Statement s = inDb.createStatement()) {
      for (String gid : gids) {
        s.execute("ROLLBACK PREPARED '" + gid.replace("'", "''") + "'");
      }
    }
  }

  /** Terminates every session of a database, walsenders included, and waits for them to exit. */
  static void terminateBackends(Connection c, String name) throws SQLException {
    try (PreparedStatement ps =
        c.prepareStatement(
            "SELECT pg_terminate_backend(pid, ?) FROM pg_stat_activity"
                + " WHERE datname = ? AND pid <> pg_backend_pid()")) {
      ps.setLong(1, TERMINATE_WAIT_MILLIS);
      ps.setString(2, name);
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          // each row waited for one backend
        }
      }
    }
  }

  /**
   * Drops every replication slot of a database, terminating the walsender of an active slot first.
   *
   * @param c a superuser connection (to any database)
   * @param name the database whose slots to drop
   * @return the names of the dropped slots
   */
  static List<String> dropSlots(Connection c, String name) throws SQLException {
    List<String> dropped = new ArrayList<>();
    SQLException last = null;
    for (int attempt = 0; attempt < SLOT_DROP_ATTEMPTS; attempt++) {
      List<String> slots = new ArrayList<>();
      try (PreparedStatement ps =
          c.prepareStatement(
              "SELECT slot_name, active_pid,"
                  + " CASE WHEN active_pid IS NULL THEN true"
                  + " ELSE pg_terminate_backend(active_pid, ?) END"
                  + " FROM pg_replication_slots WHERE database = ?")) {
        ps.setLong(1, TERMINATE_WAIT_MILLIS);
        ps.setString(2, name);
        try (ResultSet rs = ps.executeQuery()) {
          while (rs.next()) {
            slots.add(rs.getString(1));
          }
        }
      }
      if (slots.isEmpty()) {
        return dropped;
      }
      last = null;
      for (String slot : slots) {
        try (PreparedStatement ps =
            c.prepareStatement(
                "SELECT pg_drop_replication_slot(slot_name) FROM pg_replication_slots"
                    + " WHERE slot_name = ?")) {
          ps.setString(1, slot);
          ps.execute();
          dropped.add(slot);
        } catch (SQLException e) {
          // 55006: the slot became active again between terminate and drop; go round again
          last = e;
        }
      }
      if (last == null) {
        return dropped;
      }
    }
    // the loop returns unless every attempt, the last one included, failed a drop
    SQLException failure = Objects.requireNonNull(last, "the last attempt failed to drop a slot");
    throw new SQLException(
        "replication slots of database "
            + TableName.quoteIdentifier(name)
            + " stay active after "
            + SLOT_DROP_ATTEMPTS
            + " attempts to terminate their walsenders",
        failure.getSQLState(),
        failure);
  }

  static String sqlState(SQLException e) {
    return e.getSQLState() == null ? "" : " (SQLSTATE " + e.getSQLState() + ")";
  }
}
