package org.pgetl.destination.duckdb;

import java.nio.file.Path;
import org.pgetl.PgConnectionConfig;
import org.pgetl.Pipeline;
import org.pgetl.PipelineConfig;
import org.pgetl.store.postgres.PostgresStore;

/**
 * The embedding of the DuckDB destination that {@code docs/destinations.md} quotes, compiled with
 * the tests.
 */
final class EmbeddingSnippet {
  private EmbeddingSnippet() {}

  static void run(String sourceUrl) {
    // duckdb-embedding:begin
    PgConnectionConfig source = PgConnectionConfig.fromJdbcUrl(sourceUrl); // jdbc:postgresql://...
    PipelineConfig config =
        PipelineConfig.builder().pipelineId("shop").publication("shop").source(source).build();
    try (PostgresStore store =
            PostgresStore.builder().connection(source).pipelineId("shop").build();
        Pipeline pipeline =
            Pipeline.create(config, store, new DuckDbDestination(Path.of("shop.duckdb")))) {
      pipeline.start(); // copies every published table, then streams its changes
      pipeline.shutdownHandle().whenRequested().toCompletableFuture().join();
    }
    // duckdb-embedding:end
  }
}
