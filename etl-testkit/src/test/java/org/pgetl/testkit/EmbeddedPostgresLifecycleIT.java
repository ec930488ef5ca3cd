package org.pgetl.testkit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.Statement;
import java.util.List;
import java.util.Properties;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** No server and no data folder outlives its owner: close, JVM exit, killed JVM, failed start. */
@Timeout(value = 5, unit = TimeUnit.MINUTES)
class EmbeddedPostgresLifecycleIT {

  @Test
  void serverAcceptsPasswordConnectionsAndCreatesDatabases() throws Exception {
    try (EmbeddedPostgres pg =
        EmbeddedPostgres.builder()
            .password("s3cret 'quoted'")
            .setting("logical_decoding_work_mem", "64kB")
            .start()) {
      pg.createDatabase("Shop Floor");
      TestDatabase db = new TestDatabase(pg, "Shop Floor");
      assertThat(db.queryString("SELECT current_database()")).isEqualTo("Shop Floor");
      assertThat(db.queryString("SHOW logical_decoding_work_mem")).isEqualTo("64kB");
      assertThat(db.queryString("SHOW wal_level")).isEqualTo("logical");
      assertThat(db.queryString("SHOW max_replication_slots")).isEqualTo("64");
      assertThat(db.queryString("SHOW fsync")).isEqualTo("off");
      assertThat(db.queryString("SHOW listen_addresses")).isEqualTo("127.0.0.1");

      Properties wrong = new Properties();
      wrong.setProperty("user", pg.superuser());
      wrong.setProperty("password", "wrong");
      assertThatThrownBy(() -> DriverManager.getConnection(pg.jdbcUrl("postgres"), wrong))
          .hasMessageContaining("password authentication failed");

      Properties replication = DatabaseAdmin.connectionProperties(pg.superuser(), pg.password());
      replication.setProperty("replication", "database");
      replication.setProperty("preferQueryMode", "simple");
      replication.setProperty("assumeMinServerVersion", "14");
      try (Connection c = DriverManager.getConnection(pg.jdbcUrl("Shop Floor"), replication);
          Statement s = c.createStatement();
          ResultSet rs = s.executeQuery("IDENTIFY_SYSTEM")) {
        assertThat(rs.next()).isTrue();
        assertThat(rs.getString("dbname")).isEqualTo("Shop Floor");
      }

      pg.dropDatabase("Shop Floor");
      assertThat(
              new TestDatabase(pg, "postgres")
                  .queryLong("SELECT count(*) FROM pg_database WHERE datname = 'Shop Floor'"))
          .isZero();
      pg.dropDatabase("Shop Floor"); // absent: nothing to do
    }
  }

  @Test
  void closeIsIdempotentAndStopsEverything() {
    EmbeddedPostgres pg = EmbeddedPostgres.builder().start();
    long pid = pg.pid();
    Path folder = pg.dataDirectory().getParent();

    pg.close();
    pg.close();

    assertThat(pg.isRunning()).isFalse();
    assertThat(alive(pid)).isFalse();
    assertThat(folder).doesNotExist();
  }

  @Test
  void sharedServerIsOnePerJvm() {
    PostgresServer first = EmbeddedPostgres.shared();
    assertThat(EmbeddedPostgres.shared()).isSameAs(first);
    assertThat(first.serverVersionNum()).isGreaterThanOrEqualTo(140000);
  }

  @Test
  void jvmExitStopsTheServerThroughTheShutdownHook() throws Exception {
    Process child = startChild("exit");
    Ready ready = awaitReady(child);

    assertThat(child.waitFor(60, TimeUnit.SECONDS)).as("child JVM exits").isTrue();

    assertThat(alive(ready.pid())).as("postmaster of the exited JVM").isFalse();
    assertThat(ready.dataDir().getParent()).doesNotExist();
  }

  @Test
  void sweepStopsTheOrphanOfAKilledJvm() throws Exception {
    Process child = startChild("hang");
    Ready ready = awaitReady(child);

    child.destroyForcibly();
    assertThat(child.waitFor(60, TimeUnit.SECONDS)).isTrue();
    assertThat(alive(ready.pid())).as("orphaned postmaster before the sweep").isTrue();

    List<Path> swept = Instances.sweep();

    assertThat(swept).contains(ready.dataDir().getParent());
    assertThat(alive(ready.pid())).as("orphaned postmaster after the sweep").isFalse();
    assertThat(ready.dataDir().getParent()).doesNotExist();
  }

  @Test
  void failedStartSaysWhyAndLeavesNothingBehind() throws IOException {
    List<Path> before = ownFolders();

    assertThatThrownBy(() -> EmbeddedPostgres.builder().setting("wal_level", "sideways").start())
        .isInstanceOf(TestkitException.class)
        .hasMessageContaining("pg_ctl could not start the server")
        .hasMessageContaining("server log:")
        .hasMessageContaining("wal_level");

    assertThat(ownFolders()).isEqualTo(before);
  }

  @Test
  void unknownMajorNamesTheSupportedOnes() {
    assertThatThrownBy(() -> EmbeddedPostgres.builder().version("12"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("[14, 15, 16, 17, 18]");
  }

  // ---------------------------------------------------------------- helpers

  record Ready(long pid, Path dataDir) {}

  private static boolean alive(long pid) {
    return ProcessHandle.of(pid).map(ProcessHandle::isAlive).orElse(false);
  }

  private static Process startChild(String mode) throws IOException {
    Path java = Path.of(System.getProperty("java.home"), "bin", "java");
    ProcessBuilder pb =
        new ProcessBuilder(
            java.toString(),
            "-cp",
            System.getProperty("java.class.path"),
            ChildJvm.class.getName(),
            mode);
    pb.redirectError(ProcessBuilder.Redirect.INHERIT);
    return pb.start();
  }

  private static Ready awaitReady(Process child) throws Exception {
    BufferedReader out =
        new BufferedReader(new InputStreamReader(child.getInputStream(), StandardCharsets.UTF_8));
    String line =
        CompletableFuture.supplyAsync(
                () -> {
                  try {
                    String l;
                    while ((l = out.readLine()) != null) {
                      if (l.startsWith("READY ")) {
                        return l;
                      }
                    }
                    return null;
                  } catch (IOException e) {
                    return null;
                  }
                })
            .get(120, TimeUnit.SECONDS);
    assertThat(line).as("child JVM started a server").isNotNull();
    String[] parts = line.split(" ", 3);
    return new Ready(Long.parseLong(parts[1]), Path.of(parts[2]));
  }

  /** The server folders owned by this JVM. */
  private static List<Path> ownFolders() throws IOException {
    Path root = Instances.dataRoot();
    if (!Files.isDirectory(root)) {
      return List.of();
    }
    long self = ProcessHandle.current().pid();
    try (Stream<Path> dirs = Files.list(root)) {
      return dirs.filter(
              d -> {
                try {
                  return Instances.Owner.read(d.resolve(Instances.OWNER_FILE)).pid() == self;
                } catch (IOException e) {
                  return false;
                }
              })
          .sorted()
          .toList();
    }
  }
}
