package org.pgetl.testkit;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Keeps track of the embedded servers of this JVM and of the data folders of all JVMs.
 *
 * <p>Each server lives in its own folder {@code <tmpdir>/pgetl-postgres/data/pg-<major>-<id>}
 * holding {@value #OWNER_FILE} (which JVM owns it), {@code pgdata/} and {@code postgres.log}. A JVM
 * shutdown hook stops the servers of this JVM that are still running and deletes their folders.
 * Servers whose JVM died without running its hooks (killed) are found by {@link #sweep()}: their
 * owner process is gone, so the server is stopped and the folder deleted.
 */
final class Instances {
  static final String OWNER_FILE = "owner.properties";
  static final String PREFIX = "pg-";

  /** A folder without owner file that is older than this was abandoned while being created. */
  static final Duration ABANDONED_AFTER = Duration.ofMinutes(10);

  private static final Logger log = LoggerFactory.getLogger(Instances.class);
  private static final Duration STOP_TIMEOUT = Duration.ofSeconds(30);

  private static final Set<EmbeddedPostgres> LIVE = ConcurrentHashMap.newKeySet();
  private static final AtomicBoolean HOOK_INSTALLED = new AtomicBoolean();
  private static final AtomicBoolean SWEPT = new AtomicBoolean();

  private Instances() {}

  /** Returns the folder that holds one sub-folder per server. */
  static Path dataRoot() {
    return Binaries.cacheRoot().resolve("data");
  }

  /** Registers a server so that the shutdown hook stops it if nobody else does. */
  static void register(EmbeddedPostgres server) {
    if (HOOK_INSTALLED.compareAndSet(false, true)) {
      Runtime.getRuntime()
          .addShutdownHook(new Thread(Instances::stopAll, "pgetl-postgres-shutdown"));
    }
    LIVE.add(server);
  }

  static void unregister(EmbeddedPostgres server) {
    LIVE.remove(server);
  }

  private static void stopAll() {
    for (EmbeddedPostgres server : new ArrayList<>(LIVE)) {
      try {
        server.close();
      } catch (RuntimeException e) {
        System.err.println("pgetl: cannot stop embedded postgres at exit: " + e.getMessage());
      }
    }
  }

  /**
   * Identifies the JVM that owns a server folder: its pid, start time and pid namespace (so that a
   * JVM in another namespace, whose pid we cannot see, is never taken for dead).
   *
   * @param pid the JVM's process id
   * @param start the JVM's start time, as {@link Instant#toString()}, or empty if unknown
   * @param pidNamespace the JVM's pid namespace, or empty if unknown
   * @param bin the folder of the server programs
   * @param user the OS user that runs the server
   */
  record Owner(long pid, String start, String pidNamespace, String bin, String user) {
    static Owner current(Path bin, String user) {
      ProcessHandle self = ProcessHandle.current();
      String start = self.info().startInstant().map(Instant::toString).orElse("");
      return new Owner(self.pid(), start, currentPidNamespace(), bin.toString(), user);
    }

    void write(Path file) throws IOException {
      Properties p = new Properties();
      p.setProperty("jvm.pid", Long.toString(pid));
      p.setProperty("jvm.start", start);
      p.setProperty("jvm.pidns", pidNamespace);
      p.setProperty("bin", bin);
      p.setProperty("user", user);
      try (OutputStream out = Files.newOutputStream(file)) {
        p.store(out, "the JVM that owns this PostgreSQL test server");
      }
    }

    static Owner read(Path file) throws IOException {
      Properties p = new Properties();
      try (InputStream in = Files.newInputStream(file)) {
        p.load(in);
      }
      try {
        return new Owner(
            Long.parseLong(p.getProperty("jvm.pid", "")),
            p.getProperty("jvm.start", ""),
            p.getProperty("jvm.pidns", ""),
            p.getProperty("bin", ""),
            p.getProperty("user", ""));
      } catch (NumberFormatException e) {
        throw new IOException(file + " is damaged: " + e.getMessage(), e);
      }
    }

    /** Tells whether the owning JVM still runs, judged from this JVM. */
    boolean alive() {
      if (!pidNamespace.equals(currentPidNamespace())) {
        return true; // not ours to judge
      }
      Optional<ProcessHandle> handle = ProcessHandle.of(pid).filter(ProcessHandle::isAlive);
      if (handle.isEmpty()) {
        return false;
      }
      if (start.isEmpty()) {
        return true;
      }
      return handle.get().info().startInstant().map(i -> i.toString().equals(start)).orElse(true);
    }
  }

  static String currentPidNamespace() {
    try {
      return Files.readSymbolicLink(Path.of("/proc/self/ns/pid")).toString();
    } catch (IOException | UnsupportedOperationException e) {
      return "";
    }
  }

  /** Runs {@link #sweep()} once per JVM. */
  static void sweepOnce() {
    if (SWEPT.compareAndSet(false, true)) {
      sweep();
    }
  }

  /**
   * Stops the servers of dead JVMs and deletes their folders.
   *
   * @return the folders deleted
   */
  static List<Path> sweep() {
    return sweep(dataRoot());
  }

  /**
   * Stops the servers of dead JVMs under a folder and deletes their folders.
   *
   * @param root the folder holding one sub-folder per server
   * @return the folders deleted
   */
  static List<Path> sweep(Path root) {
    List<Path> deleted = new ArrayList<>();
    if (!Files.isDirectory(root)) {
      return deleted;
    }
    try (DirectoryStream<Path> dirs = Files.newDirectoryStream(root, PREFIX + "*")) {
      for (Path dir : dirs) {
        try {
          if (sweepOne(dir)) {
            deleted.add(dir);
          }
        } catch (IOException | RuntimeException e) {
          log.debug("cannot sweep {}: {}", dir, e.toString());
        }
      }
    } catch (IOException e) {
      log.debug("cannot list {}: {}", root, e.toString());
    }
    return deleted;
  }

  private static boolean sweepOne(Path dir) throws IOException {
    Path ownerFile = dir.resolve(OWNER_FILE);
    if (!Files.exists(ownerFile)) {
      FileTime modified = Files.getLastModifiedTime(dir);
      if (modified.toInstant().isAfter(Instant.now().minus(ABANDONED_AFTER))) {
        return false; // another JVM may be creating it right now
      }
      Binaries.deleteTree(dir);
      return true;
    }
    Owner owner = Owner.read(ownerFile);
    if (owner.alive()) {
      return false;
    }
    Path pgdata = dir.resolve("pgdata");
    Optional<ProcessHandle> postmaster = postmaster(pgdata);
    if (postmaster.isPresent()) {
      log.info(
          "stopping orphaned postgres (pid {}) of dead jvm {} in {}",
          postmaster.get().pid(),
          owner.pid(),
          dir);
      stopOrphan(owner, pgdata, postmaster.get());
    }
    Binaries.deleteTree(dir);
    return true;
  }

  /** Returns the running postmaster of a data folder, if any. */
  static Optional<ProcessHandle> postmaster(Path pgdata) {
    Path pidFile = pgdata.resolve("postmaster.pid");
    String first;
    try {
      if (!Files.isRegularFile(pidFile)) {
        return Optional.empty();
      }
      List<String> lines = Files.readAllLines(pidFile, StandardCharsets.UTF_8);
      if (lines.isEmpty()) {
        return Optional.empty();
      }
      first = lines.get(0).trim();
    } catch (IOException e) {
      return Optional.empty();
    }
    long pid;
    try {
      pid = Long.parseLong(first);
    } catch (NumberFormatException e) {
      return Optional.empty();
    }
    return ProcessHandle.of(pid)
        .filter(ProcessHandle::isAlive)
        .filter(h -> h.info().command().map(c -> c.endsWith("/postgres")).orElse(true));
  }

  private static void stopOrphan(Owner owner, Path pgdata, ProcessHandle postmaster) {
    Path pgCtl = Path.of(owner.bin(), "pg_ctl");
    boolean asOther =
        ServerUser.isRoot() && !owner.user().isEmpty() && !owner.user().equals("root");
    if (Files.isExecutable(pgCtl)) {
      ServerUser user = new ServerUser(owner.user(), asOther);
      Commands.run(
          user.wrap(
              List.of(
                  pgCtl.toString(),
                  "stop",
                  "-D",
                  pgdata.toString(),
                  "-m",
                  "immediate",
                  "-w",
                  "-t",
                  Long.toString(STOP_TIMEOUT.toSeconds()))),
          Binaries.cacheRoot(),
          STOP_TIMEOUT.plusSeconds(10));
    }
    killTree(postmaster);
  }

  /** Kills a process and its descendants if they are still alive, and waits for them. */
  static void killTree(ProcessHandle process) {
    if (!process.isAlive()) {
      return;
    }
    List<ProcessHandle> all = new ArrayList<>(process.descendants().toList());
    all.add(0, process);
    for (ProcessHandle p : all) {
      p.destroyForcibly();
    }
    for (ProcessHandle p : all) {
      try {
        p.onExit().get(STOP_TIMEOUT.toMillis(), java.util.concurrent.TimeUnit.MILLISECONDS);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        return;
      } catch (java.util.concurrent.ExecutionException | java.util.concurrent.TimeoutException e) {
        log.warn("postgres process {} did not exit after SIGKILL", p.pid());
      }
    }
  }
}
