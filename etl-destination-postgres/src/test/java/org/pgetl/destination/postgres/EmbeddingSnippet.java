package org.pgetl.destination.postgres;

import org.pgetl.PgConnectionConfig;
import org.pgetl.Pipeline;
import org.pgetl.PipelineConfig;
import org.pgetl.store.postgres.PostgresStore;

/**
 * The embedding of the PostgreSQL mirror that {@code docs/destinations.md} quotes, compiled with
 * the tests.
 */
final class EmbeddingSnippet {
  private EmbeddingSnippet() {}

  static void run(String sourceUrl, String mirrorUrl) {
    // mirror-embedding:begin
    PgConnectionConfig source = PgConnectionConfig.fromJdbcUrl(sourceUrl); // jdbc:postgresql://...
    PgConnectionConfig mirror = PgConnectionConfig.fromJdbcUrl(mirrorUrl); // another database
    PipelineConfig config =
        PipelineConfig.builder().pipelineId("shop").publication("shop").source(source).build();
    try (PostgresStore store =
            PostgresStore.builder().connection(source).pipelineId("shop").build();
        Pipeline pipeline =
            Pipeline.create(config, store, new PostgresMirrorDestination(mirror, 4, source))) {
      pipeline.start(); // copies every published table, then streams its changes
      pipeline.shutdownHandle().whenRequested().toCompletableFuture().join();
    }
    // mirror-embedding:end
  }
}
