package org.pgetl.testkit;

import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.util.List;
import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * Starts a {@code postgres} container through Testcontainers, loaded by reflection so that
 * Testcontainers stays an optional test dependency.
 */
final class TestcontainersBackend {
  /** The container classes of Testcontainers 2.x and 1.x. */
  static final List<String> CONTAINER_CLASSES =
      List.of(
          "org.testcontainers.postgresql.PostgreSQLContainer",
          "org.testcontainers.containers.PostgreSQLContainer");

  private static final String FACTORY_CLASS = "org.testcontainers.DockerClientFactory";

  private TestcontainersBackend() {}

  /**
   * Starts a container of the version's major and returns it as a server.
   *
   * @param version the version whose major picks the image ({@code postgres:<major>})
   * @return the running server; the container stops when the JVM exits
   * @throws TestkitException when Testcontainers is missing or no Docker engine is reachable
   */
  static PostgresServer start(PostgresVersion version) {
    ClassLoader loader = TestcontainersBackend.class.getClassLoader();
    Class<?> containerClass =
        CONTAINER_CLASSES.stream()
            .map(name -> load(loader, name))
            .filter(Objects::nonNull)
            .findFirst()
            .orElse(null);
    Class<?> factoryClass = load(loader, FACTORY_CLASS);
    if (containerClass == null || factoryClass == null) {
      throw new TestkitException(
          "PGETL_TEST_POSTGRES=testcontainers needs Testcontainers on the test classpath: add the"
              + " test dependency org.testcontainers:testcontainers-postgresql, or unset"
              + " PGETL_TEST_POSTGRES to use the embedded server (no Docker needed)");
    }
    try {
      Object factory = factoryClass.getMethod("instance").invoke(null);
      boolean docker = (Boolean) factoryClass.getMethod("isDockerAvailable").invoke(factory);
      if (!docker) {
        throw new TestkitException(
            "PGETL_TEST_POSTGRES=testcontainers but Testcontainers finds no Docker engine: start"
                + " Docker (or set DOCKER_HOST), or unset PGETL_TEST_POSTGRES to use the embedded"
                + " server");
      }
      Object container =
          containerClass.getConstructor(String.class).newInstance("postgres:" + version.major());
      List<String> command = new java.util.ArrayList<>(List.of("postgres"));
      EmbeddedPostgres.DEFAULT_SETTINGS.forEach(
          (k, v) -> {
            command.add("-c");
            command.add(k + "=" + v);
          });
      Method withCommand = containerClass.getMethod("withCommand", String[].class);
      withCommand.invoke(container, (Object) command.toArray(new String[0]));
      containerClass.getMethod("start").invoke(container);
      Runtime.getRuntime()
          .addShutdownHook(
              new Thread(
                  () -> {
                    try {
                      containerClass.getMethod("stop").invoke(container);
                    } catch (ReflectiveOperationException e) {
                      System.err.println("pgetl: cannot stop the postgres container: " + e);
                    }
                  },
                  "pgetl-postgres-container-stop"));
      String host = (String) containerClass.getMethod("getHost").invoke(container);
      Integer port =
          (Integer) containerClass.getMethod("getMappedPort", int.class).invoke(container, 5432);
      String user = (String) containerClass.getMethod("getUsername").invoke(container);
      String password = (String) containerClass.getMethod("getPassword").invoke(container);
      String db = (String) containerClass.getMethod("getDatabaseName").invoke(container);
      return ExternalPostgres.of(
              "container postgres:" + version.major() + " at " + host + ":" + port,
              host,
              port,
              db,
              user,
              password)
          .verify();
    } catch (InvocationTargetException e) {
      // what the reflected call threw; the wrapper itself when there is none
      Throwable cause = Objects.requireNonNullElse(e.getCause(), e);
      throw new TestkitException(
          "Testcontainers could not start postgres:" + version.major() + ": " + cause, cause);
    } catch (ReflectiveOperationException | ClassCastException e) {
      throw new TestkitException(
          "this Testcontainers version is not supported by the pgetl testkit: " + e, e);
    }
  }

  private static @Nullable Class<?> load(ClassLoader loader, String name) {
    try {
      return Class.forName(name, false, loader);
    } catch (ClassNotFoundException | LinkageError e) {
      return null;
    }
  }
}
