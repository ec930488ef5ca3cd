package org.pgetl.store.postgres;

import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.util.zip.CRC32;
import javax.sql.DataSource;
import org.flywaydb.core.Flyway;
import org.flywaydb.core.api.FlywayException;
import org.flywaydb.core.api.output.MigrateResult;
import org.pgetl.error.ErrorKind;
import org.pgetl.error.EtlException;
import org.pgetl.model.TableName;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Brings the store's schema up to date with the Flyway migrations shipped in this jar ({@code
 * db/pgetl/V<n>__*.sql}), with Flyway's history table ({@value #HISTORY_TABLE}) in the same schema.
 *
 * <p>Processes that start together against one database are serialised by a session-level {@code
 * pg_advisory_lock} keyed by the schema name, held on its own connection around the whole
 * migration: Flyway's own lock covers the migrations but not the creation of the schema and of its
 * history table, which two first starts would otherwise race on. The wait is bounded by {@code
 * lock_timeout}.
 */
final class Migrations {
  /** Flyway's history table, in the store's schema. */
  static final String HISTORY_TABLE = "pgetl_schema_history";

  /** Where the migrations are in the jar. */
  static final String LOCATION = "classpath:db/pgetl";

  /**
   * The versions of the migrations in the jar, {@code V1} to {@code V5}. A store whose history
   * holds exactly these, all successful, is up to date and opens without Flyway (see {@link
   * #upToDate}); {@code MigrationsTest} checks the list against the jar's scripts.
   */
  static final java.util.Set<String> VERSIONS = java.util.Set.of("1", "2", "3", "4", "5");

  /** The placeholder the scripts use for the quoted schema name. */
  static final String SCHEMA_PLACEHOLDER = "pgetl_schema";

  // "pget" in the high half; the low half is the CRC-32 of the schema name.
  private static final long LOCK_KEY_PREFIX = 0x7067_6574L << 32;

  private static final Logger LOG = LoggerFactory.getLogger(Migrations.class);

  private Migrations() {}

  /**
   * Returns the advisory-lock key that serialises migrations of one schema.
   *
   * @param schema the schema name
   * @return a stable 64-bit key
   */
  static long lockKey(String schema) {
    CRC32 crc = new CRC32();
    crc.update(schema.getBytes(StandardCharsets.UTF_8));
    return LOCK_KEY_PREFIX | crc.getValue();
  }

  /**
   * Migrates the store's schema to the newest version in the jar.
   *
   * @param config the store's settings
   * @param dataSource an unpooled data source for the store's database
   * @return how many migrations this call applied (0 when the schema was up to date)
   * @throws EtlException of kind {@code STATE_STORE_ERROR} when the database cannot be reached or a
   *     migration fails
   */
  static int migrate(PostgresStoreConfig config, DataSource dataSource) {
    String schema = config.schema();
    long key = lockKey(schema);
    try (Connection lockConnection = dataSource.getConnection()) {
      try (Statement st = lockConnection.createStatement()) {
        st.execute("SET lock_timeout = " + config.migrationLockTimeout().toMillis());
        st.execute("SELECT pg_advisory_lock(" + key + ")");
      }
      // Closing the lock's session releases the lock, whatever Flyway did.
      if (upToDate(lockConnection, schema)) {
        LOG.info(
            "store schema {} is up to date for pipeline {} (versions {})",
            schema,
            config.pipelineId(),
            new java.util.TreeSet<>(VERSIONS));
        return 0;
      }
      return runFlyway(config, dataSource);
    } catch (SQLException e) {
      String what =
          "55P03".equals(e.getSQLState())
              ? "waited "
                  + config.migrationLockTimeout()
                  + " for another process to finish migrating it; if none is running, find the"
                  + " session that holds advisory lock "
                  + key
                  + " in pg_locks"
              : "check that the role can connect to the store's database";
      throw new EtlException(
          ErrorKind.STATE_STORE_ERROR,
          "could not migrate the store schema '"
              + schema
              + "' for pipeline "
              + config.pipelineId()
              + ": "
              + what,
          Jdbc.describe(e),
          e);
    }
  }

  /**
   * Returns true when the schema's history says every migration of this jar was applied
   * successfully and nothing else was: then Flyway would apply nothing, and its start (scanning the
   * jar, reading the database's metadata, validating checksums) is the larger part of opening a
   * store. Anything else (no history, a failed or unknown version) goes through Flyway, which
   * migrates or explains. Read under the migration lock, so no migration is under way.
   */
  static boolean upToDate(Connection c, String schema) throws SQLException {
    String history = TableName.quoteIdentifier(schema) + "." + HISTORY_TABLE;
    try (java.sql.PreparedStatement ps = c.prepareStatement("SELECT to_regclass(?) IS NOT NULL")) {
      ps.setString(1, history);
      try (java.sql.ResultSet rs = ps.executeQuery()) {
        if (!rs.next() || !rs.getBoolean(1)) {
          return false;
        }
      }
    }
    java.util.Set<String> applied = new java.util.HashSet<>();
    try (Statement st = c.createStatement();
        java.sql.ResultSet rs =
            st.executeQuery(
                "SELECT version, success FROM " + history + " WHERE version IS NOT NULL")) {
      while (rs.next()) {
        if (!rs.getBoolean(2)) {
          return false;
        }
        applied.add(rs.getString(1));
      }
    }
    return applied.equals(VERSIONS);
  }

  /**
   * Says, reading only, what {@link #migrate} would do to the schema: nothing when its history
   * holds every migration of this jar, otherwise one line naming what a start creates and the
   * privilege that needs, which the role has. No lock is taken: a migration under way at the same
   * time shows as not done yet.
   *
   * @param c a connection to the store's database, as the store's role
   * @param schema the store's schema
   * @return empty when the schema is up to date, else what a start will create
   * @throws EtlException of kind {@code PERMISSION_DENIED} when the role may not create what is
   *     missing (the description names the grant), {@code STATE_STORE_ERROR} when the history
   *     records a failed migration
   * @throws SQLException when the catalog cannot be read
   */
  static Optional<String> setupNeeded(Connection c, String schema) throws SQLException {
    String database;
    String databaseSql;
    String role;
    boolean databaseCreate;
    boolean schemaExists;
    boolean schemaCreate;
    String schemaSql;
    try (PreparedStatement ps =
        c.prepareStatement(
            "SELECT current_database(), quote_ident(current_database()), quote_ident(current_user),"
                + " has_database_privilege(current_user, current_database(), 'CREATE'),"
                + " n.oid IS NOT NULL,"
                + " coalesce(has_schema_privilege(current_user, n.oid, 'CREATE'), false),"
                + " quote_ident(?)"
                + " FROM (SELECT 1) AS one LEFT JOIN pg_namespace n ON n.nspname = ?")) {
      ps.setString(1, schema);
      ps.setString(2, schema);
      try (ResultSet rs = ps.executeQuery()) {
        rs.next();
        database = rs.getString(1);
        databaseSql = rs.getString(2);
        role = rs.getString(3);
        databaseCreate = rs.getBoolean(4);
        schemaExists = rs.getBoolean(5);
        schemaCreate = rs.getBoolean(6);
        // as an operator would type it in the grant the message names
        schemaSql = rs.getString(7);
      }
    }
    if (!schemaExists) {
      if (!databaseCreate) {
        throw new EtlException(
            ErrorKind.PERMISSION_DENIED,
            "schema "
                + schema
                + " does not exist in database "
                + database
                + " and role "
                + role
                + " has no CREATE on the database to create it at start: GRANT CREATE ON DATABASE "
                + databaseSql
                + " TO "
                + role
                + ", or create it for the role: CREATE SCHEMA "
                + schemaSql
                + " AUTHORIZATION "
                + role);
      }
      return Optional.of(
          "schema "
              + schema
              + " does not exist; start will create it (needs CREATE on database "
              + database
              + ", which role "
              + role
              + " has)");
    }
    Set<String> applied = new TreeSet<>();
    Set<String> failed = new TreeSet<>();
    String history = TableName.quoteIdentifier(schema) + "." + HISTORY_TABLE;
    boolean hasHistory;
    try (PreparedStatement ps = c.prepareStatement("SELECT to_regclass(?) IS NOT NULL")) {
      ps.setString(1, history);
      try (ResultSet rs = ps.executeQuery()) {
        hasHistory = rs.next() && rs.getBoolean(1);
      }
    }
    if (hasHistory) {
      try (Statement st = c.createStatement();
          ResultSet rs =
              st.executeQuery(
                  "SELECT version, success FROM " + history + " WHERE version IS NOT NULL")) {
        while (rs.next()) {
          (rs.getBoolean(2) ? applied : failed).add(rs.getString(1));
        }
      }
    }
    if (!failed.isEmpty()) {
      throw new EtlException(
          ErrorKind.STATE_STORE_ERROR,
          "the history of store schema "
              + schema
              + " records a failed migration (version "
              + String.join(", ", failed)
              + "): undo what it left and delete its row from "
              + history
              + " before starting");
    }
    Set<String> missing = new TreeSet<>(VERSIONS);
    missing.removeAll(applied);
    if (missing.isEmpty()) {
      return Optional.empty();
    }
    String what =
        hasHistory
            ? "schema " + schema + " lacks migrations " + String.join(", ", missing)
            : "schema " + schema + " exists without the store's tables";
    if (!schemaCreate) {
      throw new EtlException(
          ErrorKind.PERMISSION_DENIED,
          what
              + " and role "
              + role
              + " has no CREATE on it to add them at start: GRANT CREATE ON SCHEMA "
              + schemaSql
              + " TO "
              + role);
    }
    return Optional.of(
        what
            + "; start will "
            + (hasHistory ? "migrate it" : "create them")
            + " (needs CREATE on schema "
            + schema
            + ", which role "
            + role
            + " has)");
  }

  private static int runFlyway(PostgresStoreConfig config, DataSource dataSource) {
    String schema = config.schema();
    Flyway flyway =
        Flyway.configure(Migrations.class.getClassLoader())
            .dataSource(dataSource)
            .locations(LOCATION)
            .schemas(schema)
            .defaultSchema(schema)
            .createSchemas(true)
            .table(HISTORY_TABLE)
            .placeholders(Map.of(SCHEMA_PLACEHOLDER, TableName.quoteIdentifier(schema)))
            .placeholderReplacement(true)
            .validateOnMigrate(true)
            .cleanDisabled(true)
            .outOfOrder(false)
            .load();
    try {
      MigrateResult result = flyway.migrate();
      LOG.info(
          "store schema {} at version {} for pipeline {} ({} migrations applied)",
          schema,
          result.targetSchemaVersion != null
              ? result.targetSchemaVersion
              : result.initialSchemaVersion,
          config.pipelineId(),
          result.migrationsExecuted);
      return result.migrationsExecuted;
    } catch (FlywayException e) {
      SQLException sql = Jdbc.findSqlException(e);
      throw new EtlException(
          ErrorKind.STATE_STORE_ERROR,
          "could not migrate the store schema '"
              + schema
              + "' for pipeline "
              + config.pipelineId()
              + ": the role needs CREATE on the database, or a schema of that name that it owns"
              + " (see the minimal grants in docs/operations.md)",
          sql != null ? Jdbc.describe(sql) + "; " + e.getMessage() : e.getMessage(),
          e);
    }
  }
}
