package org.pgetl.examples.conformance;

import java.nio.file.Path;
import java.time.Duration;
import java.util.Properties;
import org.pgetl.PgConnectionConfig;
import org.pgetl.Pipeline;
import org.pgetl.PipelineConfig;
import org.pgetl.destination.postgres.PostgresMirrorDestination;
import org.pgetl.examples.ChildProcess;
import org.pgetl.store.postgres.PostgresStore;

/**
 * The process the killed pass of {@link SubscriptionConformanceIT} kills: one scenario's pipeline
 * from its source database into a {@link PostgresMirrorDestination} in its mirror database, with a
 * {@link PostgresStore} in the mirror database (not in the source, where a {@code FOR ALL TABLES}
 * publication would publish the store's own tables).
 *
 * <p>Its one argument is a properties file with {@code host}, {@code port}, {@code user}, {@code
 * password}, {@code source}, {@code target}, {@code pipeline}, {@code publication} and {@code
 * binary}. It prints {@value #STARTED} once the pipeline runs and {@value #FAILED} (then exits 3)
 * when the pipeline stops by itself.
 */
public final class ConformanceChild {
  static final String STARTED = "conformance-child: pipeline started";
  static final String FAILED = "conformance-child: pipeline failed";

  private ConformanceChild() {}

  /**
   * Runs the pipeline until the process is killed.
   *
   * @param args the properties file
   * @throws Exception when the settings cannot be read
   */
  public static void main(String[] args) throws Exception {
    ChildProcess.exitWithTheParent("conformance-child-parent-watch");
    Properties p = ChildProcess.settings(Path.of(args[0]));
    PgConnectionConfig source = ChildProcess.connection(p, p.getProperty("source"));
    PgConnectionConfig target = ChildProcess.connection(p, p.getProperty("target"));
    PipelineConfig config =
        SubscriptionConformanceIT.pipelineConfig(
            p.getProperty("pipeline"),
            p.getProperty("publication"),
            source,
            Boolean.parseBoolean(p.getProperty("binary")));
    PostgresStore store =
        PostgresStore.builder().connection(target).pipelineId(config.pipelineId()).build();
    Pipeline pipeline = Pipeline.create(config, store, new PostgresMirrorDestination(target, 2));
    try {
      pipeline.start();
      System.out.println(STARTED);
      while (!pipeline.awaitTermination(Duration.ofMinutes(1))) {
        // runs until killed
      }
      System.out.println(FAILED + ": " + pipeline.failure().map(String::valueOf).orElse("stopped"));
    } catch (RuntimeException e) {
      System.out.println(FAILED + ": " + e);
    }
    System.out.flush();
    Runtime.getRuntime().halt(3);
  }
}
