package org.pgetl.testkit;

import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.Objects;
import java.util.Properties;
import org.jspecify.annotations.Nullable;

/**
 * A PostgreSQL server the testkit did not start: one named by a JDBC URL, or a container.
 *
 * <p>It connects with the URL's user and password and creates test databases next to the URL's
 * database, which serves as the maintenance database.
 */
final class ExternalPostgres implements PostgresServer {
  private final String description;
  private final String host;
  private final int port;
  private final String maintenanceDb;
  private final String user;
  private final String password;
  private final String extraParameters;
  private int serverVersionNum;
  private @Nullable String serverVersion; // read by verify()

  private ExternalPostgres(
      String description,
      String host,
      int port,
      String maintenanceDb,
      String user,
      String password,
      String extraParameters) {
    this.description = description;
    this.host = host;
    this.port = port;
    this.maintenanceDb = maintenanceDb;
    this.user = user;
    this.password = password;
    this.extraParameters = extraParameters;
  }

  /**
   * Reads a {@code jdbc:postgresql} URL with {@code user} and {@code password} parameters.
   *
   * @param url the URL
   * @param source where the URL came from, for messages
   * @return the server, not connected yet
   * @throws TestkitException when the URL is not usable
   */
  static ExternalPostgres fromUrl(String url, String source) {
    Properties parsed = org.postgresql.Driver.parseURL(url, null);
    if (parsed == null) {
      throw new TestkitException(
          source
              + " is not a PostgreSQL JDBC URL; expected"
              + " jdbc:postgresql://host:5432/postgres?user=...&password=...");
    }
    String host = parsed.getProperty("PGHOST", "localhost");
    if (host.contains(",")) {
      throw new TestkitException(source + " must name one host, not '" + host + "'");
    }
    int port = Integer.parseInt(parsed.getProperty("PGPORT", "5432").split(",", 2)[0]);
    String db = parsed.getProperty("PGDBNAME", "postgres");
    if (db.isEmpty()) {
      db = "postgres";
    }
    String user = parsed.getProperty("user");
    String password = parsed.getProperty("password");
    if (user == null || password == null) {
      throw new TestkitException(
          source
              + " must carry the credentials of a superuser (or a role with CREATEDB and"
              + " REPLICATION): add ?user=...&password=... to the URL");
    }
    StringBuilder extra = new StringBuilder();
    int q = url.indexOf('?');
    if (q >= 0) {
      for (String param : url.substring(q + 1).split("&", -1)) {
        String key = param.split("=", 2)[0];
        if (!param.isEmpty() && !key.equals("user") && !key.equals("password")) {
          extra.append(extra.length() == 0 ? "?" : "&").append(param);
        }
      }
    }
    return new ExternalPostgres(
        "external server " + host + ":" + port + " (from " + source + ")",
        host,
        port,
        db,
        user,
        password,
        extra.toString());
  }

  /**
   * Describes a server the caller reached some other way (a container).
   *
   * @return the server, not connected yet
   */
  static ExternalPostgres of(
      String description, String host, int port, String db, String user, String password) {
    return new ExternalPostgres(description, host, port, db, user, password, "");
  }

  /**
   * Connects once, reads the version and checks that the server can do logical replication.
   *
   * @return this server
   * @throws TestkitException when the server cannot be used for pgetl's tests
   */
  ExternalPostgres verify() {
    try (Connection c = connect(maintenanceDb);
        Statement s = c.createStatement();
        ResultSet rs =
            s.executeQuery(
                "SELECT current_setting('server_version_num')::int,"
                    + " current_setting('server_version'), current_setting('wal_level')")) {
      rs.next();
      serverVersionNum = rs.getInt(1);
      serverVersion = rs.getString(2);
      String walLevel = rs.getString(3);
      if (serverVersionNum < 140000) {
        throw new TestkitException(
            description + " runs PostgreSQL " + serverVersion + "; pgetl's tests need 14 or newer");
      }
      if (!"logical".equals(walLevel)) {
        throw new TestkitException(
            description
                + " runs with wal_level="
                + walLevel
                + "; pgetl's tests need wal_level=logical (ALTER SYSTEM SET wal_level = logical,"
                + " then restart the server)");
      }
      return this;
    } catch (SQLException e) {
      throw new TestkitException(
          "cannot connect to "
              + description
              + " as '"
              + user
              + "': "
              + e.getMessage()
              + DatabaseAdmin.sqlState(e),
          e);
    }
  }

  @Override
  public String host() {
    return host;
  }

  @Override
  public int port() {
    return port;
  }

  @Override
  public String superuser() {
    return user;
  }

  @Override
  public String password() {
    return password;
  }

  @Override
  public int serverVersionNum() {
    return serverVersionNum;
  }

  @Override
  public String serverVersion() {
    return Objects.requireNonNull(
        serverVersion, "verify() reads the version, and only verified servers are handed out");
  }

  @Override
  public String jdbcUrl(String database) {
    Objects.requireNonNull(database, "database");
    String h = host.contains(":") && !host.startsWith("[") ? "[" + host + "]" : host;
    return "jdbc:postgresql://"
        + h
        + ":"
        + port
        + "/"
        + java.net.URLEncoder.encode(database, StandardCharsets.UTF_8).replace("+", "%20")
        + extraParameters;
  }

  @Override
  public Connection connect(String database) throws SQLException {
    return DriverManager.getConnection(
        jdbcUrl(database), DatabaseAdmin.connectionProperties(user, password));
  }

  @Override
  public void createDatabase(String name) {
    DatabaseAdmin.createDatabase(this::connect, maintenanceDb, name);
  }

  @Override
  public void dropDatabase(String name) {
    DatabaseAdmin.dropDatabase(this::connect, maintenanceDb, name);
  }

  @Override
  public String toString() {
    return description;
  }
}
