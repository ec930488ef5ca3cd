package org.pgetl.testkit;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.UserPrincipal;
import java.nio.file.attribute.UserPrincipalNotFoundException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.stream.Collectors;
import org.jspecify.annotations.Nullable;

/**
 * The OS user that runs initdb, pg_ctl and postgres.
 *
 * <p>PostgreSQL refuses to run as root. When the JVM runs as uid 0 (as CI does), the server runs as
 * an unprivileged user instead (created when missing) through {@code runuser} or, where that is
 * absent, {@code su}. Otherwise the server runs as the JVM's own user.
 *
 * @param name the user name
 * @param switchUser whether commands must be wrapped to run as that user
 */
record ServerUser(String name, boolean switchUser) {
  /** The system property naming the unprivileged user used when the JVM runs as root. */
  static final String PROPERTY = "pgetl.test.postgres.user";

  /** The user used when the JVM runs as root and nothing else is asked for. */
  static final String DEFAULT_NAME = "postgres";

  private static final Duration USERADD_TIMEOUT = Duration.ofSeconds(60);

  /**
   * Decides who runs the server.
   *
   * @param requested the unprivileged user asked for, or null for the default
   * @return the user
   */
  static ServerUser resolve(@Nullable String requested) {
    if (!isRoot()) {
      return new ServerUser(System.getProperty("user.name"), false);
    }
    String name = requested != null ? requested : System.getProperty(PROPERTY, DEFAULT_NAME);
    if (name.isBlank() || name.equals("root")) {
      throw new TestkitException(
          "the JVM runs as root and PostgreSQL cannot run as root: name an unprivileged OS user"
              + " (builder osUser(...) or -D"
              + PROPERTY
              + "=postgres), not '"
              + name
              + "'");
    }
    ensureExists(name);
    if (Commands.which("runuser").isEmpty() && Commands.which("su").isEmpty()) {
      throw new TestkitException(
          "the JVM runs as root and must run PostgreSQL as user '"
              + name
              + "', but neither runuser nor su is installed: install util-linux"
              + " (apt-get install util-linux) or run the build as an unprivileged user");
    }
    return new ServerUser(name, true);
  }

  /** Tells whether this JVM runs as uid 0. */
  static boolean isRoot() {
    try {
      Object uid = Files.getAttribute(Path.of("/proc/self"), "unix:uid");
      return uid instanceof Integer i && i == 0;
    } catch (IOException | UnsupportedOperationException | IllegalArgumentException e) {
      return "root".equals(System.getProperty("user.name"));
    }
  }

  private static void ensureExists(String name) {
    if (lookup(name).isPresent()) {
      return;
    }
    Path useradd =
        Commands.which("useradd")
            .orElseThrow(
                () ->
                    new TestkitException(
                        "the JVM runs as root, PostgreSQL must run as an unprivileged user, and user '"
                            + name
                            + "' does not exist; useradd is not installed to create it: create the"
                            + " user yourself (for example 'adduser --system "
                            + name
                            + "') or install the passwd package"));
    Commands.Result r =
        Commands.run(
            List.of(
                useradd.toString(),
                "--system",
                "--user-group",
                "--no-create-home",
                "--home-dir",
                "/nonexistent",
                "--shell",
                "/usr/sbin/nologin",
                name),
            Path.of("/"),
            USERADD_TIMEOUT);
    // exit code 9: created meanwhile by a concurrent JVM
    if (!r.ok() && lookup(name).isEmpty()) {
      throw new TestkitException(
          "cannot create the OS user '"
              + name
              + "' that runs PostgreSQL (the server cannot run as root):\n"
              + r.describe());
    }
  }

  private static Optional<UserPrincipal> lookup(String name) {
    try {
      return Optional.of(
          Path.of("/").getFileSystem().getUserPrincipalLookupService().lookupPrincipalByName(name));
    } catch (UserPrincipalNotFoundException e) {
      return Optional.empty();
    } catch (IOException e) {
      throw new TestkitException("cannot look up OS user '" + name + "': " + e.getMessage(), e);
    }
  }

  /**
   * Wraps a command so that it runs as this user.
   *
   * @param command the program and its arguments
   * @return the command to run
   */
  List<String> wrap(List<String> command) {
    if (!switchUser) {
      return command;
    }
    Optional<Path> runuser = Commands.which("runuser");
    List<String> wrapped = new ArrayList<>();
    if (runuser.isPresent()) {
      wrapped.add(runuser.get().toString());
      wrapped.add("-u");
      wrapped.add(name);
      wrapped.add("--");
      wrapped.addAll(command);
    } else {
      wrapped.add(Commands.which("su").map(Path::toString).orElse("su"));
      wrapped.add("-s");
      wrapped.add("/bin/sh");
      wrapped.add(name);
      wrapped.add("-c");
      wrapped.add(command.stream().map(Commands::shellQuote).collect(Collectors.joining(" ")));
    }
    return wrapped;
  }

  /**
   * Gives a file or folder to this user (when the JVM runs as root).
   *
   * @param path the file or folder
   * @throws IOException when the owner cannot be changed
   */
  void own(Path path) throws IOException {
    if (!switchUser) {
      return;
    }
    UserPrincipal principal =
        lookup(name).orElseThrow(() -> new IOException("OS user '" + name + "' vanished"));
    Files.setOwner(path, principal);
  }
}
