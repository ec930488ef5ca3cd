package org.pgetl.testkit;

import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.regex.Pattern;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A real PostgreSQL server started from the {@code io.zonky.test.postgres} binaries, for tests and
 * demos: no Docker, no installed PostgreSQL.
 *
 * <p>The server listens on {@code 127.0.0.1} on a free port, with {@code wal_level=logical} and
 * room for many replication slots and walsenders. TCP connections (replication included) need the
 * superuser's password ({@code scram-sha-256}); the Unix socket in the data folder is trusted. When
 * the JVM runs as root, the server runs as an unprivileged OS user ({@code postgres} by default,
 * created when missing), because PostgreSQL refuses to run as root.
 *
 * <pre>{@code
 * try (EmbeddedPostgres pg = EmbeddedPostgres.builder().version("16").start()) {
 *   pg.createDatabase("shop");
 *   try (Connection c = pg.connect("shop")) { ... }
 * }
 * }</pre>
 *
 * <p>{@link #close()} stops the server and deletes its data folder; a JVM shutdown hook does the
 * same for servers still running at exit, and servers left behind by a JVM that was killed are
 * removed by the next JVM that starts one. Most tests use {@link #shared()} (through {@link
 * PostgresExtension}) instead of starting their own server.
 *
 * <p>The version is chosen by {@link Builder#version(String)}, else the system property {@code
 * pgetl.test.postgres.version}, else the environment variable {@code PGETL_TEST_POSTGRES_VERSION}
 * (a major such as {@code 15} or a full binaries version such as {@code 15.14.0}), else 17.
 */
public final class EmbeddedPostgres implements PostgresServer, AutoCloseable {
  /** The address the server listens on. */
  public static final String HOST = "127.0.0.1";

  /** The superuser created when the builder names none. */
  public static final String DEFAULT_SUPERUSER = "postgres";

  /** The superuser's password when the builder gives none. */
  public static final String DEFAULT_PASSWORD = "postgres";

  /** The settings every embedded server gets (the builder's settings come after and win). */
  static final Map<String, String> DEFAULT_SETTINGS;

  static {
    Map<String, String> s = new LinkedHashMap<>();
    s.put("wal_level", "logical");
    s.put("max_replication_slots", "64");
    s.put("max_wal_senders", "64");
    s.put("wal_sender_timeout", "10s");
    s.put("max_connections", "300");
    s.put("max_prepared_transactions", "20");
    s.put("fsync", "off");
    s.put("full_page_writes", "off");
    s.put("synchronous_commit", "on");
    s.put("shared_buffers", "128MB");
    s.put("max_worker_processes", "16");
    DEFAULT_SETTINGS = java.util.Collections.unmodifiableMap(s);
  }

  private static final Logger log = LoggerFactory.getLogger(EmbeddedPostgres.class);
  private static final Pattern SETTING_NAME = Pattern.compile("[a-z_][a-z0-9_.]*");
  private static final Duration COMMAND_TIMEOUT = Duration.ofMinutes(2);
  private static final Duration DEFAULT_STARTUP_TIMEOUT = Duration.ofSeconds(60);
  private static final Duration STOP_TIMEOUT = Duration.ofSeconds(30);
  private static final int PORT_ATTEMPTS = 5;

  private final PostgresVersion version;
  private final Path bin;
  private final ServerUser user;
  private final Path instanceDir;
  private final Path dataDir;
  private final String superuser;
  private final String password;
  private final AtomicBoolean closed = new AtomicBoolean();
  private volatile int port;
  private volatile long pid;
  private volatile int serverVersionNum;
  private volatile String serverVersion;

  private EmbeddedPostgres(
      PostgresVersion version,
      Path bin,
      ServerUser user,
      Path instanceDir,
      String superuser,
      String password) {
    this.version = version;
    this.bin = bin;
    this.user = user;
    this.instanceDir = instanceDir;
    this.dataDir = instanceDir.resolve("pgdata");
    this.superuser = superuser;
    this.password = password;
  }

  /**
   * Returns a builder for a new embedded server.
   *
   * @return a builder with the defaults
   */
  public static Builder builder() {
    return new Builder();
  }

  /**
   * Starts an embedded server with the defaults (version from the environment, else 17).
   *
   * @return the running server; close it to stop it
   * @throws TestkitException when the server cannot start; the message says why and how to fix it
   */
  public static EmbeddedPostgres start() {
    return builder().start();
  }

  /**
   * Returns the server shared by all tests of this JVM, starting it on first use; it stops when the
   * JVM exits.
   *
   * <p>It is an embedded server of the selected version, unless the environment names another one:
   * {@code PGETL_TEST_DATABASE_URL} (or system property {@code pgetl.test.database.url}), a {@code
   * jdbc:postgresql://host:port/db?user=...&password=...} URL of an external server with {@code
   * wal_level=logical}; or {@code PGETL_TEST_POSTGRES=testcontainers} (or system property {@code
   * pgetl.test.postgres}), a {@code postgres} container started through Testcontainers, which must
   * then be on the test classpath.
   *
   * @return the shared server; do not close it
   * @throws TestkitException when the server cannot start (every later call throws again)
   */
  public static PostgresServer shared() {
    return SharedServer.get();
  }

  /** {@inheritDoc} */
  @Override
  public String host() {
    return HOST;
  }

  /** {@inheritDoc} */
  @Override
  public int port() {
    return port;
  }

  /** {@inheritDoc} */
  @Override
  public String superuser() {
    return superuser;
  }

  /** {@inheritDoc} */
  @Override
  public String password() {
    return password;
  }

  /** {@inheritDoc} */
  @Override
  public int serverVersionNum() {
    return serverVersionNum;
  }

  /** {@inheritDoc} */
  @Override
  public String serverVersion() {
    return serverVersion;
  }

  /**
   * Returns the version of the binaries this server runs.
   *
   * @return for example {@code 17.6.0}
   */
  public String binariesVersion() {
    return version.version();
  }

  /**
   * Returns the data folder ({@code PGDATA}); it is deleted when the server stops.
   *
   * @return the data folder
   */
  public Path dataDirectory() {
    return dataDir;
  }

  /**
   * Returns the process id of the postmaster.
   *
   * @return the pid
   */
  public long pid() {
    return pid;
  }

  /**
   * Tells whether the server process is running.
   *
   * @return true until the server is stopped
   */
  public boolean isRunning() {
    return !closed.get() && ProcessHandle.of(pid).map(ProcessHandle::isAlive).orElse(false);
  }

  /** {@inheritDoc} */
  @Override
  public String jdbcUrl(String database) {
    Objects.requireNonNull(database, "database");
    return "jdbc:postgresql://"
        + HOST
        + ":"
        + port
        + "/"
        + java.net.URLEncoder.encode(database, StandardCharsets.UTF_8).replace("+", "%20");
  }

  /** {@inheritDoc} */
  @Override
  public Connection connect(String database) throws SQLException {
    return DriverManager.getConnection(
        jdbcUrl(database), DatabaseAdmin.connectionProperties(superuser, password));
  }

  /** {@inheritDoc} */
  @Override
  public void createDatabase(String name) {
    DatabaseAdmin.createDatabase(this::connect, "postgres", name);
  }

  /** {@inheritDoc} */
  @Override
  public void dropDatabase(String name) {
    DatabaseAdmin.dropDatabase(this::connect, "postgres", name);
  }

  /**
   * Stops the server (fast shutdown, then immediate, then SIGKILL) and deletes its data folder.
   * Calling it again does nothing.
   *
   * @throws TestkitException when the server process cannot be stopped
   */
  @Override
  public void close() {
    if (!closed.compareAndSet(false, true)) {
      return;
    }
    try {
      stopServer();
      Binaries.deleteTree(instanceDir);
      log.debug("stopped postgresql {} on port {}", version, port);
    } catch (IOException e) {
      throw new TestkitException(
          "postgres stopped but its folder " + instanceDir + " cannot be deleted: " + e, e);
    } finally {
      Instances.unregister(this);
    }
  }

  /**
   * Stops the server (fast shutdown) and keeps its data folder and port, to start it again with
   * {@link #restart()}: an outage of the source, as a test sees it. Every connection is closed.
   *
   * @throws TestkitException when the server is closed or cannot be stopped
   */
  public void stop() {
    if (closed.get()) {
      throw new TestkitException("the server was closed; it cannot be stopped or started again");
    }
    stopServer();
    log.info("stopped postgresql {} on {}:{} (data kept)", serverVersion, HOST, port);
  }

  /**
   * Starts a server stopped by {@link #stop()} again, on the same port with the same data. Does
   * nothing when it runs.
   *
   * @throws TestkitException when the server is closed or does not start
   */
  public void restart() {
    if (closed.get()) {
      throw new TestkitException("the server was closed; it cannot be started again");
    }
    if (Instances.postmaster(dataDir).isPresent()) {
      return;
    }
    Path logFile = instanceDir.resolve("postgres.log");
    Commands.Result r =
        run(
            List.of(
                bin.resolve("pg_ctl").toString(),
                "start",
                "-D",
                dataDir.toString(),
                "-l",
                logFile.toString(),
                "-w",
                "-t",
                Long.toString(DEFAULT_STARTUP_TIMEOUT.toSeconds()),
                "-o",
                "-p " + port),
            DEFAULT_STARTUP_TIMEOUT.plusSeconds(30));
    if (!r.ok()) {
      throw startFailure("pg_ctl could not start the server again", r, readLog(logFile));
    }
    pid =
        Instances.postmaster(dataDir)
            .map(ProcessHandle::pid)
            .orElseThrow(
                () ->
                    startFailure(
                        "pg_ctl reported a start but no postmaster runs", null, readLog(logFile)));
    checkConnection(logFile);
    log.info("started postgresql {} again on {}:{} (pid {})", serverVersion, HOST, port, pid);
  }

  @Override
  public String toString() {
    return "EmbeddedPostgres[" + version + " at " + HOST + ":" + port + ", " + dataDir + "]";
  }

  // ---------------------------------------------------------------- starting

  private void startServer(Map<String, String> settings, Duration startupTimeout)
      throws IOException {
    long started = System.nanoTime();
    checkUserCanRun();
    initdb();
    writeConfiguration(settings);
    Path logFile = instanceDir.resolve("postgres.log");
    Commands.Result r = null;
    for (int attempt = 1; attempt <= PORT_ATTEMPTS; attempt++) {
      int candidate = freePort();
      r =
          run(
              List.of(
                  bin.resolve("pg_ctl").toString(),
                  "start",
                  "-D",
                  dataDir.toString(),
                  "-l",
                  logFile.toString(),
                  "-w",
                  "-t",
                  Long.toString(startupTimeout.toSeconds()),
                  "-o",
                  "-p " + candidate),
              startupTimeout.plusSeconds(30));
      if (r.ok()) {
        port = candidate;
        break;
      }
      String logText = readLog(logFile);
      Optional<ProcessHandle> stray = Instances.postmaster(dataDir);
      stray.ifPresent(Instances::killTree);
      if (!(logText.contains("could not bind") || logText.contains("Address already in use"))) {
        throw startFailure("pg_ctl could not start the server", r, logText);
      }
      log.debug("port {} was taken before postgres bound it; trying another", candidate);
    }
    if (port == 0) {
      throw startFailure(
          "no free TCP port on " + HOST + " after " + PORT_ATTEMPTS + " attempts",
          r,
          readLog(logFile));
    }
    pid =
        Instances.postmaster(dataDir)
            .map(ProcessHandle::pid)
            .orElseThrow(
                () ->
                    startFailure(
                        "pg_ctl reported a start but no postmaster runs", null, readLog(logFile)));
    checkConnection(logFile);
    log.info(
        "started postgresql {} on {}:{} (pid {}, user {}) in {} ms",
        serverVersion,
        HOST,
        port,
        pid,
        user.name(),
        (System.nanoTime() - started) / 1_000_000);
  }

  private void checkUserCanRun() {
    Commands.Result r =
        run(List.of(bin.resolve("postgres").toString(), "--version"), COMMAND_TIMEOUT);
    if (!r.ok()) {
      throw new TestkitException(
          "the OS user '"
              + user.name()
              + "' cannot run the PostgreSQL binaries in "
              + bin
              + ". Every folder on that path must be readable and traversable by that user"
              + " (chmod o+rx), or point -Djava.io.tmpdir at a folder that is.\n"
              + r.describe());
    }
  }

  private void initdb() throws IOException {
    Path pwfile = instanceDir.resolve("pwfile");
    Files.writeString(
        pwfile,
        password + "\n",
        StandardCharsets.UTF_8,
        StandardOpenOption.CREATE_NEW,
        StandardOpenOption.WRITE);
    Files.setPosixFilePermissions(pwfile, PosixFilePermissions.fromString("rw-------"));
    user.own(pwfile);
    try {
      Commands.Result r =
          run(
              List.of(
                  bin.resolve("initdb").toString(),
                  "-D",
                  dataDir.toString(),
                  "-U",
                  superuser,
                  "--pwfile=" + pwfile,
                  "--auth-local=trust",
                  "--auth-host=scram-sha-256",
                  "-E",
                  "UTF8",
                  "--locale=C",
                  "--no-sync",
                  "--no-instructions"),
              COMMAND_TIMEOUT);
      if (!r.ok()) {
        throw new TestkitException(
            "initdb failed for PostgreSQL "
                + version
                + " in "
                + dataDir
                + " (as OS user '"
                + user.name()
                + "'); check that the folder is writable by that user and that the disk has"
                + " room:\n"
                + r.describe());
      }
    } finally {
      Files.deleteIfExists(pwfile);
    }
  }

  private void writeConfiguration(Map<String, String> settings) throws IOException {
    String hba =
        """
        # written by the pgetl testkit: trust on the local socket, passwords over TCP
        local   all           all                 trust
        local   replication   all                 trust
        host    all           all   127.0.0.1/32  scram-sha-256
        host    replication   all   127.0.0.1/32  scram-sha-256
        host    all           all   ::1/128       scram-sha-256
        host    replication   all   ::1/128       scram-sha-256
        """;
    Files.writeString(dataDir.resolve("pg_hba.conf"), hba, StandardCharsets.UTF_8);
    StringBuilder conf = new StringBuilder("\n# written by the pgetl testkit\n");
    Map<String, String> all = new LinkedHashMap<>();
    all.put("listen_addresses", HOST);
    all.put("unix_socket_directories", dataDir.toString());
    all.put("password_encryption", "scram-sha-256");
    all.putAll(DEFAULT_SETTINGS);
    all.putAll(settings);
    for (Map.Entry<String, String> e : all.entrySet()) {
      conf.append(configLine(e.getKey(), e.getValue())).append('\n');
    }
    Files.writeString(
        dataDir.resolve("postgresql.conf"),
        conf.toString(),
        StandardCharsets.UTF_8,
        StandardOpenOption.APPEND);
  }

  /** Formats one postgresql.conf line, quoting the value. */
  static String configLine(String name, String value) {
    return name + " = '" + value.replace("\\", "\\\\").replace("'", "''") + "'";
  }

  private void checkConnection(Path logFile) {
    try (Connection c = connect("postgres");
        Statement s = c.createStatement();
        ResultSet rs =
            s.executeQuery(
                "SELECT current_setting('server_version_num')::int,"
                    + " current_setting('server_version')")) {
      rs.next();
      serverVersionNum = rs.getInt(1);
      serverVersion = rs.getString(2);
    } catch (SQLException e) {
      throw startFailure(
          "the server started but refuses a password connection over TCP on "
              + HOST
              + ":"
              + port
              + " ("
              + e.getMessage()
              + DatabaseAdmin.sqlState(e)
              + ")",
          null,
          readLog(logFile));
    }
  }

  private TestkitException startFailure(String what, Commands.Result result, String logText) {
    StringBuilder sb =
        new StringBuilder("cannot start embedded PostgreSQL ")
            .append(version)
            .append(" (data folder ")
            .append(dataDir)
            .append(", OS user '")
            .append(user.name())
            .append("'): ")
            .append(what);
    if (result != null) {
      sb.append('\n').append(result.describe());
    }
    if (!logText.isBlank()) {
      sb.append("\nserver log:\n").append(logText.strip());
    }
    return new TestkitException(sb.toString());
  }

  private static String readLog(Path logFile) {
    try {
      return Files.isRegularFile(logFile)
          ? Commands.tail(Files.readString(logFile, StandardCharsets.UTF_8))
          : "";
    } catch (IOException e) {
      return "(cannot read " + logFile + ": " + e + ")";
    }
  }

  private static int freePort() throws IOException {
    try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getByName(HOST))) {
      socket.setReuseAddress(true);
      return socket.getLocalPort();
    }
  }

  private Commands.Result run(List<String> command, Duration timeout) {
    return Commands.run(user.wrap(command), Binaries.cacheRoot(), timeout);
  }

  // ---------------------------------------------------------------- stopping

  private void stopServer() {
    Optional<ProcessHandle> postmaster = Instances.postmaster(dataDir);
    if (postmaster.isEmpty()) {
      return;
    }
    for (String mode : List.of("fast", "immediate")) {
      Commands.Result r;
      try {
        r =
            run(
                List.of(
                    bin.resolve("pg_ctl").toString(),
                    "stop",
                    "-D",
                    dataDir.toString(),
                    "-m",
                    mode,
                    "-w",
                    "-t",
                    Long.toString(STOP_TIMEOUT.toSeconds())),
                STOP_TIMEOUT.plusSeconds(10));
      } catch (TestkitException e) {
        log.warn("pg_ctl stop -m {} failed: {}", mode, e.getMessage());
        continue;
      }
      if (r.ok() ? awaitExit(postmaster.get()) : !postmaster.get().isAlive()) {
        return;
      }
      log.warn("pg_ctl stop -m {} left postgres running:\n{}", mode, r.describe());
    }
    Instances.killTree(postmaster.get());
    if (postmaster.get().isAlive()) {
      throw new TestkitException(
          "cannot stop postgres (pid " + postmaster.get().pid() + ") in " + dataDir);
    }
  }

  /** Waits for the postmaster to exit: pg_ctl returns when the pid file is gone, a bit before. */
  private static boolean awaitExit(ProcessHandle process) {
    try {
      process.onExit().get(STOP_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
      return true;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return !process.isAlive();
    } catch (ExecutionException | TimeoutException e) {
      return !process.isAlive();
    }
  }

  /**
   * Builds and starts an {@link EmbeddedPostgres}.
   *
   * <p>Defaults: the version selected by the environment (else 17), superuser {@code postgres} with
   * password {@code postgres}, OS user {@code postgres} when the JVM runs as root, a 60 s startup
   * timeout, and no settings beyond the testkit's own.
   */
  public static final class Builder {
    private PostgresVersion version;
    private String superuser = DEFAULT_SUPERUSER;
    private String password = DEFAULT_PASSWORD;
    private String osUser;
    private Duration startupTimeout = DEFAULT_STARTUP_TIMEOUT;
    private final Map<String, String> settings = new LinkedHashMap<>();

    private Builder() {}

    /**
     * Selects the PostgreSQL version: a major ({@code "14"} to {@code "18"}) or a full binaries
     * version such as {@code "16.10.0"}.
     *
     * @param version the version
     * @return this builder
     * @throws IllegalArgumentException when the text names no usable version
     */
    public Builder version(String version) {
      this.version = PostgresVersion.parse(version);
      return this;
    }

    /**
     * Selects the PostgreSQL major version (14 to 18).
     *
     * @param major the major version
     * @return this builder
     * @throws IllegalArgumentException when the major is not supported
     */
    public Builder version(int major) {
      return version(Integer.toString(major));
    }

    /**
     * Sets the name of the superuser that initdb creates.
     *
     * @param superuser the role name
     * @return this builder
     */
    public Builder superuser(String superuser) {
      Objects.requireNonNull(superuser, "superuser");
      if (superuser.isBlank()) {
        throw new IllegalArgumentException("superuser must not be blank");
      }
      this.superuser = superuser;
      return this;
    }

    /**
     * Sets the superuser's password.
     *
     * @param password the password, not empty
     * @return this builder
     */
    public Builder password(String password) {
      Objects.requireNonNull(password, "password");
      if (password.isEmpty() || password.contains("\n")) {
        throw new IllegalArgumentException("password must be non-empty and on one line");
      }
      this.password = password;
      return this;
    }

    /**
     * Sets the unprivileged OS user that runs the server when the JVM runs as root (ignored
     * otherwise); it is created with {@code useradd --system} when missing.
     *
     * @param osUser the OS user name
     * @return this builder
     */
    public Builder osUser(String osUser) {
      this.osUser = Objects.requireNonNull(osUser, "osUser");
      return this;
    }

    /**
     * Adds a server setting, written to {@code postgresql.conf}; it overrides the testkit's own.
     *
     * @param name the setting, for example {@code logical_decoding_work_mem}
     * @param value its value, for example {@code 64kB}
     * @return this builder
     */
    public Builder setting(String name, String value) {
      Objects.requireNonNull(name, "name");
      Objects.requireNonNull(value, "value");
      String key = name.toLowerCase(Locale.ROOT);
      if (!SETTING_NAME.matcher(key).matches()) {
        throw new IllegalArgumentException("not a PostgreSQL setting name: '" + name + "'");
      }
      if (value.indexOf('\n') >= 0 || value.indexOf('\r') >= 0) {
        throw new IllegalArgumentException("setting " + name + " must be on one line");
      }
      settings.put(key, value);
      return this;
    }

    /**
     * Sets how long to wait for the server to accept connections.
     *
     * @param timeout the timeout, at least one second
     * @return this builder
     */
    public Builder startupTimeout(Duration timeout) {
      Objects.requireNonNull(timeout, "timeout");
      if (timeout.toSeconds() < 1) {
        throw new IllegalArgumentException("startupTimeout must be >= 1s, was " + timeout);
      }
      this.startupTimeout = timeout;
      return this;
    }

    /**
     * Unpacks the binaries if needed, creates a fresh data folder and starts the server.
     *
     * @return the running server; close it to stop it and delete its data
     * @throws TestkitException when the server cannot start; the message says why and how to fix it
     */
    public EmbeddedPostgres start() {
      PostgresVersion v =
          version != null
              ? version
              : PostgresVersion.selected(System.getProperties(), System.getenv());
      Instances.sweepOnce();
      Path install = Binaries.install(v);
      ServerUser user = ServerUser.resolve(osUser);
      Path instanceDir;
      try {
        Path root = Instances.dataRoot();
        Binaries.ensureSharedFolder(root);
        instanceDir =
            Files.createTempDirectory(
                root,
                Instances.PREFIX + v.major() + "-",
                PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwx------")));
        Instances.Owner.current(install.resolve("bin"), user.name())
            .write(instanceDir.resolve(Instances.OWNER_FILE));
        user.own(instanceDir);
      } catch (IOException e) {
        throw new TestkitException(
            "cannot create a data folder under "
                + Instances.dataRoot()
                + ": "
                + e
                + ". It must be writable; point -Djava.io.tmpdir at a writable folder that every"
                + " user can traverse.",
            e);
      }
      EmbeddedPostgres pg =
          new EmbeddedPostgres(v, install.resolve("bin"), user, instanceDir, superuser, password);
      Instances.register(pg);
      try {
        pg.startServer(new LinkedHashMap<>(settings), startupTimeout);
        return pg;
      } catch (IOException | RuntimeException e) {
        try {
          pg.close();
        } catch (RuntimeException suppressed) {
          e.addSuppressed(suppressed);
        }
        if (e instanceof TestkitException te) {
          throw te;
        }
        throw new TestkitException(
            "cannot start embedded PostgreSQL " + v + " in " + instanceDir + ": " + e, e);
      }
    }
  }
}
