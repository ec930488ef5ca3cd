package org.pgetl.destination.iceberg;

import java.nio.file.Path;
import java.time.Duration;
import org.pgetl.PgConnectionConfig;
import org.pgetl.Pipeline;
import org.pgetl.PipelineConfig;
import org.pgetl.store.postgres.PostgresStore;

/**
 * The embedding of the Iceberg destination that {@code docs/destinations.md} quotes, compiled with
 * the tests.
 */
final class EmbeddingSnippet {
  private EmbeddingSnippet() {}

  static void run(String sourceUrl) {
    // iceberg-embedding:begin
    PgConnectionConfig source = PgConnectionConfig.fromJdbcUrl(sourceUrl); // jdbc:postgresql://...
    PipelineConfig config =
        PipelineConfig.builder().pipelineId("shop").publication("shop").source(source).build();
    IcebergDestination iceberg =
        IcebergDestination.hadoop(Path.of("warehouse")) // or jdbc(...), builder(properties)
            .mode(IcebergDestination.Mode.UPSERT) // the default; CHANGELOG keeps the history
            .commitInterval(Duration.ofSeconds(10)) // the default
            .build();
    try (PostgresStore store =
            PostgresStore.builder().connection(source).pipelineId("shop").build();
        Pipeline pipeline = Pipeline.create(config, store, iceberg)) {
      pipeline.start(); // copies every published table, then streams its changes
      pipeline.shutdownHandle().whenRequested().toCompletableFuture().join();
    }
    // iceberg-embedding:end
  }
}
