package org.pgetl.examples;

import java.io.IOException;
import java.io.Reader;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Properties;
import org.pgetl.PgConnectionConfig;
import org.pgetl.destination.postgres.PostgresMirrorDestination;
import org.pgetl.store.postgres.PostgresStore;

/**
 * The child side of a {@link ChildJvm} that runs a pipeline: it reads its settings from a
 * properties file (so that no password shows on a command line), ends with its parent, and sets up
 * the mirror the crash tests check — the state in a {@link PostgresStore} in the source database,
 * the rows in a {@link PostgresMirrorDestination} in a second one.
 *
 * <p>The settings it reads: {@code host}, {@code port}, {@code user}, {@code password}, {@code
 * source} and {@code target} (database names).
 */
public final class ChildProcess {
  /** The mirror's connections: enough for a copy and the stream at once. */
  private static final int MIRROR_CONNECTIONS = 2;

  private ChildProcess() {}

  /**
   * Reads the settings file.
   *
   * @param file the properties file
   * @return the settings
   * @throws IOException when it cannot be read
   */
  public static Properties settings(Path file) throws IOException {
    Properties p = new Properties();
    try (Reader r = Files.newBufferedReader(file)) {
      p.load(r);
    }
    return p;
  }

  /**
   * Returns the connection to one database of the settings' server.
   *
   * @param p the settings
   * @param database the database name
   * @return the connection settings
   */
  public static PgConnectionConfig connection(Properties p, String database) {
    return PgConnectionConfig.builder()
        .host(p.getProperty("host"))
        .port(Integer.parseInt(p.getProperty("port")))
        .database(database)
        .user(p.getProperty("user"))
        .password(p.getProperty("password"))
        .build();
  }

  /**
   * Ends this process when the test's process is gone: the test never closes our standard input, so
   * its end means the parent died (a killed build), and no pipeline must outlive it.
   *
   * @param threadName the name of the watching thread
   */
  public static void exitWithTheParent(String threadName) {
    Thread watchdog =
        new Thread(
            () -> {
              try {
                while (System.in.read() >= 0) {
                  // the parent writes nothing
                }
              } catch (IOException e) {
                // the pipe broke: the parent is gone too
              }
              Runtime.getRuntime().halt(4);
            },
            threadName);
    watchdog.setDaemon(true);
    watchdog.start();
  }

  /**
   * The state store and the destination of a mirror.
   *
   * @param store the pipeline's store, in the source database; close it after the pipeline
   * @param destination the mirror in the {@code target} database
   */
  public record Mirror(PostgresStore store, PostgresMirrorDestination destination) {}

  /**
   * Opens the mirror of the settings' {@code source} database into their {@code target} one.
   *
   * @param p the settings
   * @param pipelineId the pipeline whose state the store keeps
   * @return the store (open) and the destination
   */
  public static Mirror mirror(Properties p, String pipelineId) {
    PgConnectionConfig source = connection(p, p.getProperty("source"));
    PgConnectionConfig target = connection(p, p.getProperty("target"));
    PostgresStore store = PostgresStore.builder().connection(source).pipelineId(pipelineId).build();
    return new Mirror(store, new PostgresMirrorDestination(target, MIRROR_CONNECTIONS));
  }
}
