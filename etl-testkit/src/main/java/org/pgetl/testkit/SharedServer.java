package org.pgetl.testkit;

import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Properties;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.FutureTask;
import java.util.concurrent.atomic.AtomicReference;
import org.jspecify.annotations.Nullable;

/**
 * The one server per JVM behind {@link EmbeddedPostgres#shared()}, chosen from the environment and
 * started on first use.
 */
final class SharedServer {
  static final String URL_PROPERTY = "pgetl.test.database.url";
  static final String URL_ENV = "PGETL_TEST_DATABASE_URL";
  static final String BACKEND_PROPERTY = "pgetl.test.postgres";
  static final String BACKEND_ENV = "PGETL_TEST_POSTGRES";

  private static final AtomicReference<FutureTask<PostgresServer>> SERVER = new AtomicReference<>();

  private SharedServer() {}

  /** Where the shared server comes from. */
  enum Backend {
    EMBEDDED,
    EXTERNAL,
    TESTCONTAINERS
  }

  /**
   * The choice made from the environment.
   *
   * @param backend where the server comes from
   * @param url the external server's URL (for {@link Backend#EXTERNAL})
   * @param source the property or variable that made the choice, for messages
   */
  record Choice(Backend backend, @Nullable String url, String source) {}

  /** Returns the shared server, starting it on first call; a failure is remembered. */
  static PostgresServer get() {
    FutureTask<PostgresServer> task = SERVER.get();
    if (task == null) {
      FutureTask<PostgresServer> mine =
          new FutureTask<>(() -> start(choose(System.getProperties(), System.getenv())));
      FutureTask<PostgresServer> other = SERVER.compareAndExchange(null, mine);
      if (other == null) {
        mine.run();
        task = mine;
      } else {
        task = other;
      }
    }
    try {
      return task.get();
    } catch (ExecutionException e) {
      // a FutureTask's failure carries what its task threw
      Throwable cause = Objects.requireNonNullElse(e.getCause(), e);
      throw new TestkitException(
          "the shared test PostgreSQL server is not available: " + cause.getMessage(), cause);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new TestkitException("interrupted while starting the shared test server", e);
    }
  }

  /**
   * Reads the environment: an external URL wins, then an explicit backend, else embedded.
   *
   * @param props the system properties
   * @param env the environment variables
   * @return the choice
   */
  static Choice choose(Properties props, Map<String, String> env) {
    String url = firstNonBlank(props.getProperty(URL_PROPERTY), env.get(URL_ENV));
    if (url != null) {
      String source =
          props.getProperty(URL_PROPERTY) != null && !props.getProperty(URL_PROPERTY).isBlank()
              ? "system property " + URL_PROPERTY
              : "environment variable " + URL_ENV;
      return new Choice(Backend.EXTERNAL, url.trim(), source);
    }
    String backend = firstNonBlank(props.getProperty(BACKEND_PROPERTY), env.get(BACKEND_ENV));
    if (backend == null) {
      return new Choice(Backend.EMBEDDED, null, "default");
    }
    String source = BACKEND_ENV + "/" + BACKEND_PROPERTY + "=" + backend;
    return switch (backend.trim().toLowerCase(Locale.ROOT)) {
      case "embedded" -> new Choice(Backend.EMBEDDED, null, source);
      case "testcontainers", "docker" -> new Choice(Backend.TESTCONTAINERS, null, source);
      default ->
          throw new TestkitException(
              source
                  + " is not understood: use 'embedded' (the default) or 'testcontainers', or set "
                  + URL_ENV
                  + " to use an external server");
    };
  }

  private static PostgresServer start(Choice choice) {
    return switch (choice.backend()) {
      case EXTERNAL ->
          ExternalPostgres.fromUrl(
                  Objects.requireNonNull(choice.url(), "an external choice carries its URL"),
                  choice.source())
              .verify();
      case TESTCONTAINERS ->
          TestcontainersBackend.start(
              PostgresVersion.selected(System.getProperties(), System.getenv()));
      case EMBEDDED -> EmbeddedPostgres.builder().start();
    };
  }

  private static @Nullable String firstNonBlank(@Nullable String a, @Nullable String b) {
    if (a != null && !a.isBlank()) {
      return a;
    }
    if (b != null && !b.isBlank()) {
      return b;
    }
    return null;
  }
}
