package org.pgetl.store.postgres;

import javax.sql.DataSource;
import org.postgresql.ds.PGSimpleDataSource;

/**
 * Turns a {@link PostgresStoreConfig} into connections: one unpooled {@link DataSource} that both
 * the migration and the pool use, built from the store's {@link org.pgetl.PgConnectionConfig}.
 */
final class ConnectionSettings {
  private ConnectionSettings() {}

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
    ds.setURL(config.connection().jdbcUrl());
    ds.setUser(config.connection().user());
    if (config.connection().password() != null) {
      ds.setPassword(config.connection().password());
    }
    ds.setApplicationName(applicationName(config.pipelineId()));
    return ds;
  }
}
