package org.pgetl.examples.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
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
        .containsExactly("pgetl_apply_it");
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
