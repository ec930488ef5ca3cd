package org.pgetl.store.postgres;

import javax.sql.DataSource;
import org.pgetl.core.internal.pg.Secrets;
import org.postgresql.Driver;
import org.postgresql.ds.PGSimpleDataSource;

/**
 * Turns a {@link PostgresStoreConfig} into connections: one unpooled {@link DataSource} that both
 * the migration and the pool use, so that the explicit user and password win over the URL's in
 * both.
 */
final class ConnectionSettings {
  private ConnectionSettings() {}

  /**
   * Returns true when pgjdbc can parse the URL.
   *
   * @param jdbcUrl the URL
   * @return whether it is a PostgreSQL JDBC URL
   */
  static boolean isValidUrl(String jdbcUrl) {
    try {
      return Driver.parseURL(jdbcUrl, null) != null;
    } catch (RuntimeException e) {
      return false;
    }
  }

  /**
   * Masks the URL's passwords, by the one rule of {@link Secrets}.
   *
   * @param jdbcUrl the URL
   * @return the URL, safe to log
   */
  static String redact(String jdbcUrl) {
    return Secrets.redactUrl(jdbcUrl);
  }

  /**
   * Returns the application name the store's sessions show in {@code pg_stat_activity}.
   *
   * @param pipelineId the pipeline
   * @return {@code pgetl:store:<pipeline>}
   */
  static String applicationName(String pipelineId) {
    return "pgetl:store:" + pipelineId;
  }

  /**
   * Returns an unpooled data source for the store's database.
   *
   * @param config the store's settings
   * @return a data source that opens a new connection per call
   */
  static DataSource dataSource(PostgresStoreConfig config) {
    PGSimpleDataSource ds = new PGSimpleDataSource();
    ds.setURL(config.jdbcUrl());
    if (config.user() != null) {
      ds.setUser(config.user());
    }
    if (config.password() != null) {
      ds.setPassword(config.password());
    }
    ds.setApplicationName(applicationName(config.pipelineId()));
    return ds;
  }
}
