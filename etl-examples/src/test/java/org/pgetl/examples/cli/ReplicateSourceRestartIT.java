package org.pgetl.examples.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.nio.file.Path;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.awaitility.core.ConditionTimeoutException;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.pgetl.examples.ChildJvm;
import org.pgetl.testkit.EmbeddedPostgres;

/**
 * Regression for issue #9 item 12 (the command line's part): with the state store in the source
 * (the default), stopping the source for 15–40 seconds made {@code pgetl replicate} exit 1 with
 * {@code STATE_STORE_ERROR}, because an exception of its status loop ended the command. Here {@code
 * pgetl replicate} runs in a process of its own against a server of its own, into a PostgreSQL
 * mirror in a second database of the same server (so the destination goes away too); the server
 * stops for 30 seconds while it streams. The process keeps running, the mirror converges once the
 * server is back, and SIGTERM still stops it cleanly.
 */
@Timeout(value = 6, unit = TimeUnit.MINUTES)
class ReplicateSourceRestartIT {
  private static final Duration WAIT = Duration.ofSeconds(150);
  private static EmbeddedPostgres server;

  @TempDir Path dir;

  @BeforeAll
  static void start() {
    server = EmbeddedPostgres.builder().start();
    server.createDatabase("shop");
    server.createDatabase("mirror");
  }

  @AfterAll
  static void stop() {
    server.close();
  }

  @Test
  void aSourceStoppedForThirtySecondsLeavesReplicateRunningAndTheMirrorConverges()
      throws Exception {
    exec(
        "shop",
        "CREATE TABLE orders (id int PRIMARY KEY, v int)",
        "INSERT INTO orders SELECT g, 0 FROM generate_series(1, 1000) g");
    String credentials = "?user=" + server.superuser() + "&password=" + server.password();
    ChildJvm child =
        ChildJvm.start(
            dir,
            Main.class,
            List.of(
                "replicate",
                "--source-url",
                server.jdbcUrl("shop") + credentials,
                "--publication",
                "orders_pub",
                "--create-publication",
                "public.orders",
                "--destination",
                "postgres:" + server.jdbcUrl("mirror") + credentials,
                "--pipeline-id",
                "restart",
                "--status-every",
                "1s"));
    try {
      awaitMirrorEqualsSource(child);
      exec("shop", "UPDATE orders SET v = 1 WHERE id <= 100");
      awaitMirrorEqualsSource(child);

      server.stop();
      await()
          .during(Duration.ofSeconds(30))
          .atMost(Duration.ofSeconds(40))
          .until(() -> child.process.isAlive());
      server.restart();

      exec("shop", "UPDATE orders SET v = 2 WHERE id > 900", "INSERT INTO orders VALUES (5000, 5)");
      awaitMirrorEqualsSource(child);
      assertThat(child.process.isAlive()).as("pgetl replicate still runs").isTrue();

      child.terminate();
      assertThat(child.waitFor(2)).as("exit code; output:%n%s", child.text()).isZero();
      assertThat(child.lines()).anyMatch(l -> l.contains("pgetl: stopped cleanly"));
      assertThat(child.lines()).noneMatch(l -> l.startsWith("error:"));
    } finally {
      if (child.process.isAlive()) {
        child.process.destroyForcibly();
      }
    }
  }

  private static void awaitMirrorEqualsSource(ChildJvm child) {
    String sql = "SELECT count(*) || ' rows, sum ' || coalesce(sum(v), 0) FROM public.orders";
    try {
      await()
          .atMost(WAIT)
          .ignoreExceptions() // the mirror table exists once the copy started
          .until(() -> query("mirror", sql).equals(query("shop", sql)));
    } catch (ConditionTimeoutException e) {
      throw new AssertionError("the mirror did not converge; pgetl printed:\n" + child.text(), e);
    }
  }

  private static void exec(String database, String... sql) throws SQLException {
    try (Connection c = server.connect(database);
        Statement s = c.createStatement()) {
      for (String q : sql) {
        s.execute(q);
      }
    }
  }

  private static String query(String database, String sql) throws SQLException {
    try (Connection c = server.connect(database);
        Statement s = c.createStatement();
        ResultSet rs = s.executeQuery(sql)) {
      rs.next();
      return rs.getString(1);
    }
  }
}
