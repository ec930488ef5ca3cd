package org.pgetl.examples.crash;

import java.nio.file.Path;
import java.time.Duration;
import java.util.Properties;
import org.pgetl.PgConnectionConfig;
import org.pgetl.Pipeline;
import org.pgetl.PipelineConfig;
import org.pgetl.destination.Destination;
import org.pgetl.destination.iceberg.IcebergDestination;
import org.pgetl.destination.postgres.PostgresMirrorDestination;
import org.pgetl.examples.ChildProcess;
import org.pgetl.store.postgres.PostgresStore;

/**
 * The process {@link CrashLoopIT} kills: a pipeline from the source database into a {@link
 * PostgresMirrorDestination} in a second database (or, with the setting {@code iceberg}, into an
 * {@link IcebergDestination} over that warehouse directory), with a {@link PostgresStore} in the
 * source database, running until the process is killed (SIGKILL) or stopped (SIGTERM).
 *
 * <p>Its one argument is a properties file with {@code host}, {@code port}, {@code user}, {@code
 * password}, {@code source} and {@code target} (database names), {@code pipeline} and {@code
 * publication}, so that no password shows on a command line. It prints {@value #STARTED} once the
 * pipeline runs, {@value #STOPPED} after a clean stop, and {@value #FAILED} (then exits 3) when the
 * pipeline stops by itself.
 */
public final class CrashLoopChild {
  static final String STARTED = "crash-child: pipeline started";
  static final String STOPPED = "crash-child: pipeline stopped cleanly";
  static final String FAILED = "crash-child: pipeline failed";

  /** Small batches: a copy takes many batches (and transactions), so kills land inside it. */
  static final long BATCH_MAX_BYTES = 64 * 1024;

  /** Set by the SIGTERM hook: the pipeline's end is then the stop it asked for. */
  private static volatile boolean stopping;

  private CrashLoopChild() {}

  /**
   * Runs the pipeline until the process is killed or terminated.
   *
   * @param args the properties file
   * @throws Exception when the settings cannot be read or the pipeline cannot start
   */
  public static void main(String[] args) throws Exception {
    System.setProperty("org.slf4j.simpleLogger.showDateTime", "true");
    System.setProperty("org.slf4j.simpleLogger.dateTimeFormat", "HH:mm:ss.SSS");
    // each write's sequence keys and each commit's content, to read a failure from the logs
    System.setProperty("org.slf4j.simpleLogger.log.org.pgetl.destination.iceberg", "debug");
    ChildProcess.exitWithTheParent("crash-child-parent-watch");
    Properties p = ChildProcess.settings(Path.of(args[0]));
    PgConnectionConfig source = ChildProcess.connection(p, p.getProperty("source"));
    PipelineConfig config =
        PipelineConfig.builder()
            .pipelineId(p.getProperty("pipeline"))
            .publication(p.getProperty("publication"))
            .source(source)
            .batchMaxBytes(BATCH_MAX_BYTES)
            .batchMaxFill(Duration.ofMillis(100))
            .maxTableSyncWorkers(2)
            .copyConnectionsPerTable(2)
            .copyMinBytesPerConnection(0) // small tables, copied over every connection
            .retryDelay(Duration.ofMillis(500))
            .statusInterval(Duration.ofSeconds(1))
            .shutdownTimeout(Duration.ofSeconds(20))
            // chunked: every table with an integer key copied in chunks of 64 kB
            .chunkedCopyMinBytes(
                Boolean.parseBoolean(p.getProperty("chunked")) ? 0 : Long.MAX_VALUE)
            .copyChunkBytes(64 * 1024)
            .build();
    ChildProcess.Mirror mirror = ChildProcess.mirror(p, config.pipelineId());
    PostgresStore store = mirror.store();
    String iceberg = p.getProperty("iceberg");
    Destination destination =
        iceberg == null
            ? mirror.destination()
            : IcebergDestination.hadoop(Path.of(iceberg))
                .mode(
                    Boolean.parseBoolean(p.getProperty("iceberg.changelog"))
                        ? IcebergDestination.Mode.CHANGELOG
                        : IcebergDestination.Mode.UPSERT)
                .commitInterval(Duration.ofMillis(500))
                .build();
    Pipeline pipeline = Pipeline.create(config, store, destination);
    Runtime.getRuntime()
        .addShutdownHook(
            new Thread(
                () -> {
                  stopping = true;
                  pipeline.close();
                  store.close();
                  System.out.println(
                      pipeline.failure().isPresent()
                          ? FAILED + ": " + pipeline.failure().get()
                          : STOPPED);
                },
                "crash-child-stop"));
    pipeline.start();
    System.out.println(STARTED);
    while (!pipeline.awaitTermination(Duration.ofMinutes(1))) {
      // runs until killed
    }
    if (stopping) {
      return; // the hook reports
    }
    System.out.println(FAILED + ": " + pipeline.failure().map(String::valueOf).orElse("stopped"));
    System.out.flush();
    Runtime.getRuntime().halt(3);
  }
}
