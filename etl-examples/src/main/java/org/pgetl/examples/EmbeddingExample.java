package org.pgetl.examples;

import org.pgetl.PgConnectionConfig;
import org.pgetl.Pipeline;
import org.pgetl.PipelineConfig;
import org.pgetl.examples.destination.StdoutJsonDestination;
import org.pgetl.store.postgres.PostgresStore;

/**
 * The smallest complete embedding of pgetl, quoted in the README: replicate the tables of
 * publication {@code shop} to stdout, keeping progress in the source database, until the process is
 * asked to stop. In a service, do the same in its start-up hook and close the pipeline (then the
 * store) in its shutdown hook; replace {@link StdoutJsonDestination} with your own {@code
 * Destination}.
 */
public final class EmbeddingExample {
  private EmbeddingExample() {}

  /**
   * Runs the example.
   *
   * @param args the source URL, such as {@code
   *     jdbc:postgresql://localhost:5432/shop?user=pgetl&password=secret}
   */
  public static void main(String[] args) {
    // embedding-example:begin
    PgConnectionConfig source = PgConnectionConfig.fromJdbcUrl(args[0]); // jdbc:postgresql://...
    PipelineConfig config =
        PipelineConfig.builder().pipelineId("shop").publication("shop").source(source).build();
    try (PostgresStore store =
            PostgresStore.builder().connection(source).pipelineId("shop").build();
        Pipeline pipeline = Pipeline.create(config, store, new StdoutJsonDestination())) {
      pipeline.start(); // fails fast: wrong password, missing publication, ...
      Runtime.getRuntime().addShutdownHook(new Thread(pipeline::close)); // drain on SIGTERM
      pipeline.shutdownHandle().whenRequested().toCompletableFuture().join(); // copy, then stream
    }
    // embedding-example:end
  }
}
