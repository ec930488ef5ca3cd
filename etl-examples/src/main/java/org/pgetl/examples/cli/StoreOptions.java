package org.pgetl.examples.cli;

import org.pgetl.PgConnectionConfig;
import org.pgetl.store.postgres.PostgresStore;
import picocli.CommandLine.Option;

/**
 * The options that find a pipeline's PostgreSQL state store, shared by {@code status}, {@code
 * tables} and {@code lifecycle}: the store's database and schema, the pipeline, and {@code
 * --verbose}.
 */
final class StoreOptions {
  @Option(
      names = "--store-url",
      required = true,
      paramLabel = "URL",
      description =
          "The database of the pipeline's state store (the source database when the pipeline"
              + " runs with --state-store source); a URL without a password takes it from"
              + " PGPASSWORD.")
  String storeUrl;

  @Option(
      names = "--store-schema",
      paramLabel = "SCHEMA",
      defaultValue = "etl",
      description = "The state store's schema (default: ${DEFAULT-VALUE}).")
  String storeSchema;

  @Option(
      names = "--pipeline-id",
      required = true,
      paramLabel = "ID",
      description = "The pipeline's id.")
  String pipelineId;

  @Option(
      names = {"-v", "--verbose"},
      description = "Show log lines and the stack trace of a failure.")
  boolean verbose;

  /**
   * Returns the store database's connection settings; a URL without a password takes it from {@code
   * PGPASSWORD}.
   *
   * @return the settings
   */
  PgConnectionConfig storeDb() {
    return Connections.config(storeUrl);
  }

  /**
   * Opens the pipeline's store (creating or migrating its schema when needed).
   *
   * @return the open store; close it
   */
  PostgresStore open() {
    return PostgresStore.builder()
        .connection(storeDb())
        .schema(storeSchema)
        .pipelineId(pipelineId)
        .build();
  }
}
