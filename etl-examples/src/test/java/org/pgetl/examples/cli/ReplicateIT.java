package org.pgetl.examples.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.pgetl.examples.ChildJvm;
import org.pgetl.testkit.TestDatabase;
import org.pgetl.testkit.WithPostgres;

/**
 * {@code pgetl replicate} into stdout, driven by {@code pgetl lifecycle} from the side, stopped
 * like Ctrl-C.
 */
@WithPostgres
@Timeout(value = 3, unit = TimeUnit.MINUTES)
class ReplicateIT {

  @Test
  void copiesStreamsFollowsTheLifecycleAndStopsCleanly(TestDatabase db) throws Exception {
    db.execute(
        "CREATE TABLE items (id int PRIMARY KEY, name text)",
        "INSERT INTO items SELECT g, 'item ' || g FROM generate_series(1, 50) g");
    String url = db.jdbcUrl() + "?user=" + db.user() + "&password=" + db.password();
    String[] target = {
      "--store-url", url, "--pipeline-id", "it", "--destination-name", "stdout-json"
    };
    CliRun run =
        CliRun.start(
            "replicate",
            "--source-url",
            url,
            "--publication",
            "items_pub",
            "--create-publication",
            "public.items",
            "--pipeline-id",
            "it",
            "--status-every",
            "200ms");
    await()
        .atMost(Duration.ofSeconds(60))
        .until(() -> run.out().lines().filter(l -> l.contains("\"kind\":\"copy\"")).count() == 50);
    assertThat(run.err()).contains("created publication items_pub for \"public\".\"items\"");

    db.execute("INSERT INTO items VALUES (51, 'streamed')");
    await().atMost(Duration.ofSeconds(30)).until(() -> run.out().contains("\"streamed\""));

    CliRun.Finished paused = CliRun.run(concat("lifecycle", "pause", "--reason", "test", target));
    assertThat(paused.exitCode()).isZero();
    assertThat(paused.out()).contains("destination stdout-json: paused").contains("reason: test");
    await().atMost(Duration.ofSeconds(30)).until(() -> run.err().contains("lifecycle paused"));
    db.execute("INSERT INTO items VALUES (52, 'while paused')");

    CliRun.Finished shown = CliRun.run(concat("lifecycle", "show", target));
    assertThat(shown.out()).contains(": paused, set by");
    assertThat(CliRun.run(concat("lifecycle", "resume", target)).exitCode()).isZero();
    await().atMost(Duration.ofSeconds(30)).until(() -> run.out().contains("\"while paused\""));

    run.stop();
    assertThat(run.exit().get(60, TimeUnit.SECONDS)).isZero();
    assertThat(run.err()).contains("pgetl: stopped cleanly");
    // the slot stays: the next start resumes from it
    assertThat(db.replicationSlots())
        .extracting(s -> s.slotName())
        .filteredOn(n -> n.contains("_it"))
        .containsExactly("pgetl_apply_it");
  }

  @Test
  void statusShowsTheActiveInstanceAndLifecycleRefusesUnknownNames(TestDatabase db)
      throws Exception {
    db.execute(
        "CREATE TABLE things (id int PRIMARY KEY)",
        "INSERT INTO things SELECT g FROM generate_series(1, 5) g");
    String url = url(db);
    CliRun run =
        CliRun.start(
            "replicate",
            "--source-url",
            url,
            "--publication",
            "things_pub",
            "--create-publication",
            "public.things",
            "--pipeline-id",
            "st");
    await()
        .atMost(Duration.ofSeconds(60))
        .until(() -> run.out().lines().filter(l -> l.contains("\"kind\":\"copy\"")).count() == 5);
    String[] store = {"--store-url", url, "--pipeline-id", "st"};

    CliRun.Finished status = CliRun.run(concat(new String[] {"status"}, store));
    assertThat(status.exitCode()).as(status.err()).isZero();
    assertThat(status.out())
        .contains("pipeline st (state store: schema etl of ")
        .containsPattern(
            "lease: held by .* pid "
                + ProcessHandle.current().pid()
                + " \\(stdout-json\\) since .*,"
                + " epoch \\d+ \\(active\\)")
        .contains("destination stdout-json: active (no lifecycle row: active by default)");
    await()
        .atMost(Duration.ofSeconds(30))
        .until(
            () ->
                CliRun.run(concat(new String[] {"status"}, store))
                    .out()
                    .contains("public.things  ready  5 rows copied at "));

    CliRun.Finished unknownPipeline =
        CliRun.run(
            "lifecycle",
            "pause",
            "--store-url",
            url,
            "--pipeline-id",
            "sst",
            "--destination-name",
            "stdout-json");
    assertThat(unknownPipeline.exitCode()).isEqualTo(Main.EXIT_FAILURE);
    assertThat(unknownPipeline.errLines()).hasSize(1);
    assertThat(unknownPipeline.errLines().get(0))
        .startsWith("error: pipeline sst is not known in the state store (schema etl of ")
        .containsPattern("; its pipelines: .*\\bst\\b");

    CliRun.Finished unknownDestination =
        CliRun.run(concat("lifecycle", "drain", "--destination-name", "duckdb", store));
    assertThat(unknownDestination.exitCode()).isEqualTo(Main.EXIT_FAILURE);
    assertThat(unknownDestination.errLines())
        .containsExactly(
            "error: destination duckdb is not known in pipeline st; its destinations: stdout-json");
    assertThat(
            db.queryLong("SELECT count(*) FROM etl.destination_lifecycle WHERE pipeline_id = 'st'"))
        .isZero();
    assertThat(CliRun.run("status", "--store-url", url, "--pipeline-id", "sst").exitCode())
        .isEqualTo(Main.EXIT_FAILURE);

    run.stop();
    assertThat(run.exit().get(60, TimeUnit.SECONDS)).isZero();
    CliRun.Finished stopped = CliRun.run(concat(new String[] {"status"}, store));
    assertThat(stopped.out())
        .containsPattern(
            "lease: not held: no instance is active \\(last: .* \\(stdout-json\\), epoch \\d+,"
                + " acquired .*, released by a clean stop\\)");
  }

  /**
   * With {@code --state-store memory} nothing outlives the process, and neither does its slot: it
   * is temporary, so it retains no WAL after a clean stop or a kill -9.
   */
  @Test
  void aMemoryStoreLeavesNoSlotAfterACleanStopOrAKill(TestDatabase db, @TempDir Path dir)
      throws Exception {
    db.execute(
        "CREATE TABLE notes (id int PRIMARY KEY)",
        "INSERT INTO notes SELECT g FROM generate_series(1, 3) g");
    List<String> args =
        List.of(
            "replicate",
            "--source-url",
            url(db),
            "--publication",
            "notes_pub",
            "--create-publication",
            "public.notes",
            "--pipeline-id",
            "mem",
            "--state-store",
            "memory");
    CliRun run = CliRun.start(args.toArray(String[]::new));
    await()
        .atMost(Duration.ofSeconds(60))
        .until(() -> run.out().lines().filter(l -> l.contains("\"kind\":\"copy\"")).count() == 3);
    assertThat(
            db.queryLong(
                "SELECT count(*) FROM pg_replication_slots WHERE slot_name = 'pgetl_apply_mem'"
                    + " AND temporary"))
        .isEqualTo(1);
    run.stop();
    assertThat(run.exit().get(60, TimeUnit.SECONDS)).isZero();
    assertThat(memorySlots(db)).isZero();

    ChildJvm child = ChildJvm.start(dir, Main.class, args);
    try {
      assertThat(child.awaitLine(l -> l.contains("\"kind\":\"copy\""), 1))
          .as("a copy line; output:%n%s", child.text())
          .isTrue();
      await().atMost(Duration.ofSeconds(30)).until(() -> memorySlots(db) == 1);
      child.process.destroyForcibly();
      assertThat(child.process.waitFor(30, TimeUnit.SECONDS)).isTrue();
      await().atMost(Duration.ofSeconds(30)).until(() -> memorySlots(db) == 0);
    } finally {
      child.process.destroyForcibly();
    }
  }

  private static long memorySlots(TestDatabase db) {
    return db.queryLong(
        "SELECT count(*) FROM pg_replication_slots WHERE slot_name LIKE 'pgetl\\_%\\_mem%'");
  }

  private static String url(TestDatabase db) {
    return db.jdbcUrl() + "?user=" + db.user() + "&password=" + db.password();
  }

  private static String[] concat(String a, String b, String[] rest) {
    return concat(new String[] {a, b}, rest);
  }

  private static String[] concat(String a, String b, String c, String d, String[] rest) {
    return concat(new String[] {a, b, c, d}, rest);
  }

  private static String[] concat(String[] head, String[] rest) {
    String[] all = new String[head.length + rest.length];
    System.arraycopy(head, 0, all, 0, head.length);
    System.arraycopy(rest, 0, all, head.length, rest.length);
    return all;
  }
}
