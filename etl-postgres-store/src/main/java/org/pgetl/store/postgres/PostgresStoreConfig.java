package org.pgetl.store.postgres;

import java.time.Duration;
import java.util.regex.Pattern;
import org.pgetl.PgConnectionConfig;
import org.pgetl.error.ErrorKind;
import org.pgetl.error.EtlException;

/**
 * The immutable settings of a {@link PostgresStore}: where its database is, which schema holds its
 * tables, which pipeline it serves, and the size of its connection pool. Build one with {@link
 * PostgresStore#builder()}; change one with {@link #toBuilder()}.
 *
 * <p>The password never appears in {@link #toString()}.
 *
 * @param connection the database of the store and the role to connect as, with the same fields and
 *     rules as the pipeline's source (hosts, TLS, timeouts): the source database or any other one
 * @param schema the schema of the store's tables (created when missing)
 * @param pipelineId the pipeline whose rows this store reads and writes
 * @param maxPoolSize the most connections the store opens at once
 * @param minIdle the connections kept open while idle
 * @param idleTimeout how long an idle connection above {@code minIdle} stays open
 * @param connectionTimeout how long a call waits for a free connection before it fails
 * @param statementTimeout the {@code statement_timeout} of the store's sessions; {@link
 *     Duration#ZERO} for none
 * @param migrationLockTimeout how long start-up waits for another process that is migrating the
 *     same schema
 */
public record PostgresStoreConfig(
    PgConnectionConfig connection,
    String schema,
    String pipelineId,
    int maxPoolSize,
    int minIdle,
    Duration idleTimeout,
    Duration connectionTimeout,
    Duration statementTimeout,
    Duration migrationLockTimeout) {

  /** The default schema, as in upstream: one schema per database holds every pipeline's rows. */
  public static final String DEFAULT_SCHEMA = "etl";

  /**
   * The default pool size: the engine makes few, short store calls; four connections cover the
   * apply worker, a few table-sync workers and the lifecycle poll without a queue.
   */
  public static final int DEFAULT_MAX_POOL_SIZE = 4;

  /** The default idle size: an idle pipeline holds no store connection. */
  public static final int DEFAULT_MIN_IDLE = 0;

  /** The default idle timeout: long enough to reuse a connection across a burst of calls. */
  public static final Duration DEFAULT_IDLE_TIMEOUT = Duration.ofSeconds(30);

  /** The default wait for a connection: a store that cannot answer within it is treated as down. */
  public static final Duration DEFAULT_CONNECTION_TIMEOUT = Duration.ofSeconds(10);

  /**
   * The default statement timeout: store statements touch a handful of rows; one that waits longer
   * is stuck behind a lock, and failing lets the engine retry instead of hanging.
   */
  public static final Duration DEFAULT_STATEMENT_TIMEOUT = Duration.ofSeconds(30);

  /** The default wait for a concurrent migration: a first migration takes well under a second. */
  public static final Duration DEFAULT_MIGRATION_LOCK_TIMEOUT = Duration.ofSeconds(60);

  // HikariCP's own lower bounds.
  private static final Duration MIN_IDLE_TIMEOUT = Duration.ofSeconds(10);
  private static final Duration MIN_CONNECTION_TIMEOUT = Duration.ofMillis(250);

  // A name PostgreSQL accepts unquoted and that survives quoting unchanged: letters, digits and
  // underscores, at most 63 bytes (NAMEDATALEN - 1), not in the reserved pg_ prefix.
  private static final Pattern SCHEMA_NAME = Pattern.compile("[A-Za-z_][A-Za-z0-9_]{0,62}");

  /** Validates every setting; each message names the setting and the rule it broke. */
  public PostgresStoreConfig {
    if (connection == null) {
      throw invalid("connection must be set (a PgConnectionConfig, or a jdbcUrl in the builder)");
    }
    requireText(schema, "schema");
    if (!SCHEMA_NAME.matcher(schema).matches()) {
      throw invalid(
          "schema must be 1 to 63 letters, digits or underscores, not starting with a digit, was '"
              + schema
              + "'");
    }
    if (schema.regionMatches(true, 0, "pg_", 0, 3)) {
      throw invalid(
          "schema must not start with pg_ (reserved by PostgreSQL), was '" + schema + "'");
    }
    requireText(pipelineId, "pipelineId");
    if (pipelineId.indexOf('\0') >= 0) {
      throw invalid("pipelineId must not contain NUL characters");
    }
    if (maxPoolSize < 1) {
      throw invalid("maxPoolSize must be >= 1, was " + maxPoolSize);
    }
    if (minIdle < 0 || minIdle > maxPoolSize) {
      throw invalid("minIdle must be in 0..maxPoolSize (" + maxPoolSize + "), was " + minIdle);
    }
    requireAtLeast(idleTimeout, MIN_IDLE_TIMEOUT, "idleTimeout");
    requireAtLeast(connectionTimeout, MIN_CONNECTION_TIMEOUT, "connectionTimeout");
    requireAtLeast(statementTimeout, Duration.ZERO, "statementTimeout");
    requireAtLeast(migrationLockTimeout, Duration.ofMillis(1), "migrationLockTimeout");
  }

  /**
   * Returns a builder that starts from these settings.
   *
   * @return a new builder
   */
  public PostgresStore.Builder toBuilder() {
    return new PostgresStore.Builder(this);
  }

  /**
   * Returns the settings with the password masked.
   *
   * @return a description safe to log
   */
  @Override
  public String toString() {
    return "PostgresStoreConfig[connection="
        + connection
        + ", schema="
        + schema
        + ", pipelineId="
        + pipelineId
        + ", maxPoolSize="
        + maxPoolSize
        + ", minIdle="
        + minIdle
        + ", idleTimeout="
        + idleTimeout
        + ", connectionTimeout="
        + connectionTimeout
        + ", statementTimeout="
        + statementTimeout
        + ", migrationLockTimeout="
        + migrationLockTimeout
        + "]";
  }

  private static void requireText(String value, String name) {
    if (value == null || value.isBlank()) {
      throw invalid(name + " must be set (non-blank)");
    }
  }

  private static void requireAtLeast(Duration value, Duration min, String name) {
    if (value == null) {
      throw invalid(name + " must be set");
    }
    if (value.compareTo(min) < 0) {
      throw invalid(name + " must be >= " + min + ", was " + value);
    }
  }

  static EtlException invalid(String message) {
    return new EtlException(ErrorKind.CONFIG_ERROR, "invalid postgres store setting: " + message);
  }
}
