package org.pgetl.testkit;

import java.sql.Connection;
import java.sql.SQLException;

/**
 * A running PostgreSQL server for tests: the embedded one ({@link EmbeddedPostgres}) or an external
 * server named by {@code PGETL_TEST_DATABASE_URL}.
 *
 * <p>Every server has {@code wal_level=logical} and accepts password connections of its superuser
 * over TCP, replication connections included.
 */
public sealed interface PostgresServer permits EmbeddedPostgres, ExternalPostgres {
  /**
   * Returns the host name or address to connect to.
   *
   * @return for the embedded server always {@code 127.0.0.1}
   */
  String host();

  /**
   * Returns the TCP port the server listens on.
   *
   * @return the port
   */
  int port();

  /**
   * Returns the name of the superuser the tests connect as.
   *
   * @return the superuser name
   */
  String superuser();

  /**
   * Returns the superuser's password.
   *
   * @return the password
   */
  String password();

  /**
   * Returns the server version as a number, like {@code server_version_num}.
   *
   * @return for example {@code 170006} for PostgreSQL 17.6
   */
  int serverVersionNum();

  /**
   * Returns the server version as text, like {@code server_version}.
   *
   * @return for example {@code 17.6}
   */
  String serverVersion();

  /**
   * Returns the JDBC URL of a database on this server, without credentials.
   *
   * @param database the database name
   * @return for example {@code jdbc:postgresql://127.0.0.1:54321/orders}
   */
  String jdbcUrl(String database);

  /**
   * Opens a connection to a database as the superuser.
   *
   * @param database the database name
   * @return a new connection in auto-commit mode; the caller closes it
   * @throws SQLException when the connection fails
   */
  Connection connect(String database) throws SQLException;

  /**
   * Creates a database owned by the superuser.
   *
   * @param name the database name, as stored in the catalog (quoted for SQL here)
   * @throws TestkitException when the database cannot be created
   */
  void createDatabase(String name);

  /**
   * Drops a database if it exists, after clearing what would block the drop: rolls back its
   * prepared transactions, terminates its sessions and walsenders and drops its replication slots.
   *
   * @param name the database name, as stored in the catalog
   * @throws TestkitException when the database cannot be dropped
   */
  void dropDatabase(String name);
}
