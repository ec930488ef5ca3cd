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
import java.util.concurrent.atomic.AtomicInteger;
import org.awaitility.core.ConditionTimeoutException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.pgetl.examples.ChildJvm;
import org.pgetl.testkit.EmbeddedPostgres;
import org.pgetl.testkit.PostgresServer;

/**
 * A source failover through {@code pgetl replicate} with its defaults: a PostgreSQL 17 primary with
 * a physical standby that synchronises slots and is listed in {@code synchronized_standby_slots},
 * reached through a two-host URL. {@code pgetl check} says whether the pipeline would survive a
 * failover (and warns when the standby is not listed); then, under a workload, the primary stops at
 * once ({@code -m immediate}) and the standby is promoted. The process, not restarted, continues
 * from the synchronised apply slot into a PostgreSQL mirror on another server, the mirror ends
 * equal to the new primary, and the status line reports the failover's error as recovered.
 */
@Timeout(value = 5, unit = TimeUnit.MINUTES)
class ReplicateFailoverIT {
  private static final Duration WAIT = Duration.ofSeconds(120);
  private static final String CONTENT =
      "SELECT count(*) || ' rows, ' || coalesce(md5(string_agg(id || ':' || v || ':'"
          + " || md5(note), ',' ORDER BY id)), '-') FROM public.orders";

  @TempDir Path dir;

  @Test
  void replicateWithItsDefaultsFollowsAPromotedStandbyAndCheckSaysItWould() throws Exception {
    PostgresServer mirror = EmbeddedPostgres.shared();
    String mirrorDb = "failover_mirror_" + ProcessHandle.current().pid();
    mirror.createDatabase(mirrorDb);
    try (EmbeddedPostgres primary = EmbeddedPostgres.builder().version(17).start()) {
      primary.createDatabase("shop");
      exec(
          primary,
          "CREATE TABLE orders (id int PRIMARY KEY, v int, note text)",
          "ALTER TABLE orders ALTER COLUMN note SET STORAGE EXTERNAL",
          "INSERT INTO orders SELECT g, 0, repeat(md5(g::text), 200) FROM generate_series(1, 300) g");
      try (EmbeddedPostgres standby = primary.standby().slotSync(true).start()) {
        String credentials = "user=" + primary.superuser() + "&password=" + primary.password();
        String source =
            "jdbc:postgresql://"
                + primary.host()
                + ":"
                + primary.port()
                + ","
                + standby.host()
                + ":"
                + standby.port()
                + "/shop?targetServerType=primary&"
                + credentials;
        String standbyAt = standby.host() + ":" + standby.port();

        // a standby that synchronized_standby_slots does not list is a warning naming the fix
        exec(
            primary, "ALTER SYSTEM SET synchronized_standby_slots = ''", "SELECT pg_reload_conf()");
        exec(primary, "CREATE PUBLICATION orders_pub FOR TABLE orders");
        CliRun.Finished unlisted = check(source);
        assertThat(unlisted.exitCode()).as(unlisted.out() + unlisted.err()).isZero();
        assertThat(unlisted.out().lines())
            .filteredOn(l -> l.startsWith("warn failover: "))
            .singleElement()
            .asString()
            .contains("streams through slot pgetl_standby, which synchronized_standby_slots does")
            .contains("ALTER SYSTEM SET synchronized_standby_slots = 'pgetl_standby'")
            .contains("will be a failover slot (failoverSlots=auto)");
        exec(
            primary,
            "ALTER SYSTEM SET synchronized_standby_slots = 'pgetl_standby'",
            "SELECT pg_reload_conf()");

        ChildJvm child =
            ChildJvm.start(
                dir,
                Main.class,
                List.of(
                    "replicate",
                    "--source-url",
                    source,
                    "--publication",
                    "orders_pub",
                    "--destination",
                    "postgres:"
                        + mirror.jdbcUrl(mirrorDb)
                        + "?user="
                        + mirror.superuser()
                        + "&password="
                        + mirror.password(),
                    "--pipeline-id",
                    "cli_failover",
                    "--status-every",
                    "1s"));
        try {
          awaitMirrorEquals(child, mirror, mirrorDb, primary);
          // the standby's copy of the slot becomes usable once the slot on the primary moved past
          // the standby's horizon
          await()
              .atMost(WAIT)
              .pollInterval(Duration.ofMillis(500))
              .until(
                  () -> {
                    exec(primary, "UPDATE orders SET v = v + 1 WHERE id = 1");
                    exec(primary, "SELECT pg_log_standby_snapshot()");
                    return "true"
                        .equals(
                            query(
                                standby,
                                "SELECT (synced AND NOT temporary)::text FROM pg_replication_slots"
                                    + " WHERE slot_name = 'pgetl_apply_cli_failover'"));
                  });
          CliRun.Finished ready = check(source);
          assertThat(ready.out().lines())
              .as(ready.out())
              .anySatisfy(
                  l ->
                      assertThat(l)
                          .startsWith("ok   failover: PostgreSQL 17.")
                          .contains("apply slot pgetl_apply_cli_failover is a failover slot")
                          .contains("synchronized_standby_slots = 'pgetl_standby'")
                          .contains(
                              "standby "
                                  + standbyAt
                                  + " holds a synchronised copy of pgetl_apply_cli_failover"));

          AtomicInteger done = new AtomicInteger();
          Thread loader = new Thread(() -> workload(primary, 1000, Integer.MAX_VALUE, done));
          loader.start();
          await().atMost(WAIT).until(() -> done.get() >= 20);
          primary.stopImmediately();
          loader.join(WAIT.toMillis());
          standby.promote();
          long promoted = System.nanoTime();
          exec(standby, "INSERT INTO orders VALUES (100000, 7, 'after the promotion')");
          try {
            await()
                .atMost(WAIT)
                .pollInterval(Duration.ofMillis(20))
                .ignoreExceptions()
                .until(
                    () ->
                        "1"
                            .equals(
                                query(
                                    mirror,
                                    mirrorDb,
                                    "SELECT count(*)::text FROM public.orders WHERE id = 100000")));
          } catch (ConditionTimeoutException e) {
            throw new AssertionError(
                "the change after the promotion never arrived:\n" + child.text(), e);
          }
          long firstChangeMillis = (System.nanoTime() - promoted) / 1_000_000;
          System.out.printf(
              "failover (pgetl replicate, defaults): promotion to first change applied: %d ms%n",
              firstChangeMillis);

          workload(standby, 50_000, 30, new AtomicInteger());
          awaitMirrorEquals(child, mirror, mirrorDb, standby);
          assertThat(child.process.isAlive()).as("pgetl replicate still runs").isTrue();
          assertThat(child.awaitLine(l -> l.contains(" ago (recovered): "), 2))
              .as("a status line reports the failover's error as recovered:%n%s", child.text())
              .isTrue();

          child.terminate();
          assertThat(child.waitFor(2)).as("exit code; output:%n%s", child.text()).isZero();
          assertThat(child.lines()).noneMatch(l -> l.startsWith("error:"));
          assertThat(
                  query(
                      standby,
                      "SELECT (synced AND failover)::text FROM pg_replication_slots"
                          + " WHERE slot_name = 'pgetl_apply_cli_failover'"))
              .as("the new primary kept the synchronised slot, no new one was made")
              .isEqualTo("true");
        } finally {
          if (child.process.isAlive()) {
            child.process.destroyForcibly();
          }
        }
      }
    } finally {
      mirror.dropDatabase(mirrorDb);
    }
  }

  private static CliRun.Finished check(String source) {
    return CliRun.run(
        "check",
        "--source-url",
        source,
        "--publication",
        "orders_pub",
        "--pipeline-id",
        "cli_failover");
  }

  /**
   * Inserts, updates (one of two leaving the TOAST column unchanged) and deletes rows, one small
   * transaction after another, until the server goes away or {@code count} transactions are done.
   */
  private static void workload(
      EmbeddedPostgres server, int firstId, int count, AtomicInteger done) {
    try (Connection c = server.connect("shop");
        Statement st = c.createStatement()) {
      c.setAutoCommit(false);
      for (int n = 0; n < count; n++) {
        int id = firstId + n;
        st.execute("INSERT INTO orders VALUES (" + id + ", 0, repeat(md5('" + id + "'), 200))");
        st.execute("UPDATE orders SET v = v + 1 WHERE id = " + (1 + n % 250));
        st.execute(
            "UPDATE orders SET note = repeat(md5('x" + n + "'), 150) WHERE id = " + (251 + n % 40));
        if (n % 3 == 0) {
          st.execute("DELETE FROM orders WHERE id = " + (id - 1));
        }
        c.commit();
        done.incrementAndGet();
      }
    } catch (SQLException e) {
      // the server went away (the primary's immediate stop): the workload ends there
    }
  }

  private static void awaitMirrorEquals(
      ChildJvm child, PostgresServer mirror, String mirrorDb, EmbeddedPostgres source) {
    try {
      await()
          .atMost(WAIT)
          .ignoreExceptions() // the mirror table exists once the copy started
          .until(() -> query(mirror, mirrorDb, CONTENT).equals(query(source, CONTENT)));
    } catch (ConditionTimeoutException e) {
      throw new AssertionError("the mirror did not converge; pgetl printed:\n" + child.text(), e);
    }
  }

  private static void exec(EmbeddedPostgres pg, String... sql) throws SQLException {
    try (Connection c = pg.connect("shop");
        Statement s = c.createStatement()) {
      for (String q : sql) {
        s.execute(q);
      }
    }
  }

  private static String query(EmbeddedPostgres pg, String sql) throws SQLException {
    return query(pg, "shop", sql);
  }

  private static String query(PostgresServer pg, String database, String sql) throws SQLException {
    try (Connection c = pg.connect(database);
        Statement s = c.createStatement();
        ResultSet rs = s.executeQuery(sql)) {
      return rs.next() ? rs.getString(1) : null;
    }
  }
}
