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
import org.jspecify.annotations.Nullable;
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
  // set by the connection check of the first start, before start() returns the server
  private volatile @Nullable String serverVersion;

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
    return Objects.requireNonNull(
        serverVersion, "the server's version is read when it starts, before it is handed out");
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
   * Stops the server at once ({@code pg_ctl stop -m immediate}): no checkpoint, no goodbye to its
   * clients or standbys, as a crashed host looks to them. The data folder and port are kept, and
   * {@link #restart()} starts it again (with crash recovery).
   *
   * @throws TestkitException when the server is closed or cannot be stopped
   */
  public void stopImmediately() {
    if (closed.get()) {
      throw new TestkitException("the server was closed; it cannot be stopped or started again");
    }
    Optional<ProcessHandle> postmaster = Instances.postmaster(dataDir);
    if (postmaster.isEmpty()) {
      return;
    }
    Commands.Result r =
        run(
            List.of(
                bin.resolve("pg_ctl").toString(),
                "stop",
                "-D",
                dataDir.toString(),
                "-m",
                "immediate",
                "-w",
                "-t",
                Long.toString(STOP_TIMEOUT.toSeconds())),
            STOP_TIMEOUT.plusSeconds(10));
    if (!r.ok() || !awaitExit(postmaster.get())) {
      Instances.killTree(postmaster.get());
    }
    if (postmaster.get().isAlive()) {
      throw new TestkitException(
          "cannot stop postgres (pid " + postmaster.get().pid() + ") in " + dataDir);
    }
    log.info("stopped postgresql {} on {}:{} immediately (data kept)", serverVersion, HOST, port);
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
    checkUserCanRun();
    initdb();
    writeConfiguration(settings);
    launch(startupTimeout);
  }

  /** Starts the postmaster of the prepared data folder on a free port and checks a connection. */
  private void launch(Duration startupTimeout) {
    long started = System.nanoTime();
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

  private TestkitException startFailure(
      String what, Commands.@Nullable Result result, String logText) {
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

  private static int freePort() {
    try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getAllByName(HOST)[0])) {
      socket.setReuseAddress(true);
      return socket.getLocalPort();
    } catch (IOException e) {
      throw new TestkitException("cannot find a free TCP port on " + HOST + ": " + e, e);
    }
  }

  private Commands.Result run(List<String> command, Duration timeout) {
    return Commands.run(user.wrap(command), Binaries.cacheRoot(), timeout);
  }

  /** Creates the folder of a new server, owned by this JVM (see {@link Instances}). */
  private static Path newInstanceDir(PostgresVersion v, Path bin, ServerUser user) {
    try {
      Path root = Instances.dataRoot();
      Binaries.ensureSharedFolder(root);
      Path instanceDir =
          Files.createTempDirectory(
              root,
              Instances.PREFIX + v.major() + "-",
              PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwx------")));
      Instances.Owner.current(bin, user.name()).write(instanceDir.resolve(Instances.OWNER_FILE));
      user.own(instanceDir);
      return instanceDir;
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
  }

  // ---------------------------------------------------------------- standbys

  /**
   * Returns a builder for a physical standby of this server: a second embedded server that replays
   * this one's WAL (streaming replication through a physical slot) and can be promoted.
   *
   * <pre>{@code
   * try (EmbeddedPostgres primary = EmbeddedPostgres.builder().version(17).start();
   *     EmbeddedPostgres standby = primary.standby().slotSync(true).start()) {
   *   ...
   *   primary.stop();
   *   standby.promote();
   * }
   * }</pre>
   *
   * @return a builder; {@link StandbyBuilder#start()} stops this server for a moment
   */
  public StandbyBuilder standby() {
    return new StandbyBuilder(this);
  }

  /**
   * Promotes this server, a standby made by {@link #standby()}, to a primary ({@code pg_ctl
   * promote}) and returns once it accepts writes.
   *
   * @throws TestkitException when the server is no standby or the promotion fails
   */
  public void promote() {
    if (closed.get()) {
      throw new TestkitException("the server was closed; it cannot be promoted");
    }
    Commands.Result r =
        run(
            List.of(
                bin.resolve("pg_ctl").toString(),
                "promote",
                "-D",
                dataDir.toString(),
                "-w",
                "-t",
                Long.toString(DEFAULT_STARTUP_TIMEOUT.toSeconds())),
            DEFAULT_STARTUP_TIMEOUT.plusSeconds(30));
    if (!r.ok()) {
      throw new TestkitException(
          "pg_ctl could not promote the server on port "
              + port
              + ":\n"
              + r.describe()
              + "\nserver log:\n"
              + readLog(instanceDir.resolve("postgres.log")));
    }
    log.info("promoted postgresql {} on {}:{} to a primary", serverVersion, HOST, port);
  }

  /**
   * Tells whether the server is a standby replaying WAL ({@code pg_is_in_recovery()}).
   *
   * @return true for a standby that was not promoted
   * @throws TestkitException when the server cannot be asked
   */
  public boolean isInRecovery() {
    try (Connection c = connect("postgres");
        Statement st = c.createStatement();
        ResultSet rs = st.executeQuery("SELECT pg_is_in_recovery()")) {
      rs.next();
      return rs.getBoolean(1);
    } catch (SQLException e) {
      throw new TestkitException("cannot ask the server on port " + port + " about recovery", e);
    }
  }

  /** Copies a stopped server's data folder, without its slots and its postmaster files. */
  private static void copyDataFolder(Path from, Path to, ServerUser user) throws IOException {
    Path slots = from.resolve("pg_replslot");
    try (java.util.stream.Stream<Path> paths = Files.walk(from)) {
      for (Path source : (Iterable<Path>) paths::iterator) {
        Path rel = from.relativize(source);
        String name = rel.toString();
        if (name.equals("postmaster.pid")
            || name.equals("postmaster.opts")
            || (source.startsWith(slots) && !source.equals(slots))) {
          continue;
        }
        Path target = to.resolve(rel);
        if (Files.isDirectory(source, java.nio.file.LinkOption.NOFOLLOW_LINKS)) {
          Files.createDirectory(target);
          Files.setPosixFilePermissions(target, Files.getPosixFilePermissions(source));
        } else {
          Files.copy(
              source,
              target,
              java.nio.file.StandardCopyOption.COPY_ATTRIBUTES,
              java.nio.file.LinkOption.NOFOLLOW_LINKS);
        }
        user.own(target);
      }
    }
  }

  /** Quotes a value of a libpq connection string. */
  static String conninfoValue(String value) {
    return "'" + value.replace("\\", "\\\\").replace("'", "\\'") + "'";
  }

  private void awaitStreaming(Duration timeout) {
    long deadline = System.nanoTime() + timeout.toNanos();
    long parkNanos = TimeUnit.MILLISECONDS.toNanos(10);
    String last = "no answer";
    while (System.nanoTime() < deadline) {
      try (Connection c = connect("postgres");
          Statement st = c.createStatement();
          ResultSet rs = st.executeQuery("SELECT status FROM pg_stat_wal_receiver")) {
        last = rs.next() ? rs.getString(1) : "no WAL receiver";
        if ("streaming".equals(last)) {
          return;
        }
      } catch (SQLException e) {
        last = e.getMessage();
      }
      // There is no notification to wait on: look again after a short, growing pause.
      java.util.concurrent.locks.LockSupport.parkNanos(parkNanos);
      parkNanos = Math.min(parkNanos * 2, TimeUnit.MILLISECONDS.toNanos(200));
    }
    throw new TestkitException(
        "the standby on port "
            + port
            + " does not stream from its primary after "
            + timeout
            + " (last status: "
            + last
            + ")\nserver log:\n"
            + readLog(instanceDir.resolve("postgres.log")));
  }

  /**
   * Builds a physical standby of a running {@link EmbeddedPostgres} (see {@link
   * EmbeddedPostgres#standby()}).
   *
   * <p>The binaries have no {@code pg_basebackup}, so the standby starts from a cold copy: {@link
   * #start()} creates the physical slot on the primary, stops the primary (fast shutdown), copies
   * its data folder without its replication slots, starts the primary again on its port, then
   * starts the standby ({@code standby.signal}, {@code primary_conninfo}, {@code
   * primary_slot_name}) on a free port and waits until it streams. Connections to the primary are
   * closed by that stop.
   *
   * <p>With {@link #slotSync(boolean)} (PostgreSQL 17+) the standby also synchronises the primary's
   * failover slots: {@code sync_replication_slots = on}, {@code hot_standby_feedback = on}, a
   * database in {@code primary_conninfo}, and {@code synchronized_standby_slots} set on the primary
   * to the standby's slot, so that no logical client gets a change before the standby has it. The
   * primary's logical replication then waits for the standby: close the primary first, or reset
   * that setting, when the standby goes away before it.
   */
  public static final class StandbyBuilder {
    private final EmbeddedPostgres primary;
    private String slotName = "pgetl_standby";
    private boolean slotSync;
    private final Map<String, String> settings = new LinkedHashMap<>();

    private StandbyBuilder(EmbeddedPostgres primary) {
      this.primary = primary;
    }

    /**
     * Names the physical slot on the primary that the standby streams through (default {@code
     * pgetl_standby}); it is created when missing.
     *
     * @param slotName a slot name: lower-case letters, digits and underscores
     * @return this builder
     */
    public StandbyBuilder slotName(String slotName) {
      Objects.requireNonNull(slotName, "slotName");
      if (!slotName.matches("[a-z0-9_]{1,63}")) {
        throw new IllegalArgumentException(
            "slotName must be 1-63 characters of [a-z0-9_], was '" + slotName + "'");
      }
      this.slotName = slotName;
      return this;
    }

    /**
     * Makes the standby keep copies of the primary's failover slots (PostgreSQL 17+), with the
     * settings that needs on both servers (default off).
     *
     * @param slotSync whether slots are synchronised
     * @return this builder
     */
    public StandbyBuilder slotSync(boolean slotSync) {
      this.slotSync = slotSync;
      return this;
    }

    /**
     * Adds a setting of the standby, written to its {@code postgresql.conf} after the primary's.
     *
     * @param name the setting
     * @param value its value
     * @return this builder
     */
    public StandbyBuilder setting(String name, String value) {
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
     * Creates the standby and returns once it streams from the primary.
     *
     * @return the running standby, an {@link EmbeddedPostgres} of its own: close it to stop it and
     *     delete its data
     * @throws TestkitException when the primary is not running, slot synchronisation is asked of a
     *     server before 17, or the standby does not start
     */
    public EmbeddedPostgres start() {
      EmbeddedPostgres p = primary;
      if (!p.isRunning()) {
        throw new TestkitException("the primary must run to get a standby: " + p);
      }
      if (slotSync && p.serverVersionNum < 170000) {
        throw new TestkitException(
            "slot synchronisation needs PostgreSQL 17 or later; the primary runs "
                + p.serverVersion);
      }
      try (Connection c = p.connect("postgres");
          java.sql.PreparedStatement ps =
              c.prepareStatement(
                  "SELECT pg_create_physical_replication_slot(?, true) WHERE NOT EXISTS"
                      + " (SELECT 1 FROM pg_replication_slots WHERE slot_name = ?)")) {
        ps.setString(1, slotName);
        ps.setString(2, slotName);
        ps.execute();
      } catch (SQLException e) {
        throw new TestkitException("cannot create the physical slot " + slotName, e);
      }
      Path instanceDir = newInstanceDir(p.version, p.bin, p.user);
      EmbeddedPostgres standby =
          new EmbeddedPostgres(p.version, p.bin, p.user, instanceDir, p.superuser, p.password);
      Instances.register(standby);
      try {
        p.stopServer();
        try {
          copyDataFolder(p.dataDir, standby.dataDir, p.user);
        } finally {
          p.restart();
        }
        Path signal = standby.dataDir.resolve("standby.signal");
        Files.createFile(signal);
        p.user.own(signal);
        Map<String, String> all = new LinkedHashMap<>();
        all.put("unix_socket_directories", standby.dataDir.toString());
        all.put(
            "primary_conninfo",
            "host="
                + HOST
                + " port="
                + p.port
                + " user="
                + conninfoValue(p.superuser)
                + " password="
                + conninfoValue(p.password)
                + " application_name="
                + slotName
                + (slotSync ? " dbname=postgres" : ""));
        all.put("primary_slot_name", slotName);
        all.put("hot_standby", "on");
        if (slotSync) {
          all.put("hot_standby_feedback", "on");
          all.put("sync_replication_slots", "on");
        }
        all.putAll(settings);
        StringBuilder conf =
            new StringBuilder("\n# standby settings written by the pgetl testkit\n");
        all.forEach((k, v) -> conf.append(configLine(k, v)).append('\n'));
        Files.writeString(
            standby.dataDir.resolve("postgresql.conf"),
            conf.toString(),
            StandardCharsets.UTF_8,
            StandardOpenOption.APPEND);
        standby.launch(DEFAULT_STARTUP_TIMEOUT);
        standby.awaitStreaming(DEFAULT_STARTUP_TIMEOUT);
        if (slotSync) {
          try (Connection c = p.connect("postgres");
              Statement st = c.createStatement()) {
            st.execute("ALTER SYSTEM SET synchronized_standby_slots = '" + slotName + "'");
            st.execute("SELECT pg_reload_conf()");
          }
        }
        log.info(
            "started a standby of {}:{} on {}:{} (slot {}{})",
            HOST,
            p.port,
            HOST,
            standby.port,
            slotName,
            slotSync ? ", slot sync" : "");
        return standby;
      } catch (IOException | SQLException | RuntimeException e) {
        try {
          standby.close();
        } catch (RuntimeException suppressed) {
          e.addSuppressed(suppressed);
        }
        if (e instanceof TestkitException te) {
          throw te;
        }
        throw new TestkitException("cannot start a standby of " + p + ": " + e, e);
      }
    }
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
    private @Nullable PostgresVersion version;
    private String superuser = DEFAULT_SUPERUSER;
    private String password = DEFAULT_PASSWORD;
    private @Nullable String osUser;
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
      Path instanceDir = newInstanceDir(v, install.resolve("bin"), user);
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
