package org.pgetl.examples.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.pgetl.testkit.TestDatabase;
import org.pgetl.testkit.WithPostgres;

/**
 * What a user sees when {@code pgetl replicate} cannot start: one line on stderr with the failure
 * and what to do, a non-zero exit code, and no replication slot left on the server.
 */
@WithPostgres
@Timeout(value = 3, unit = TimeUnit.MINUTES)
class CliErrorsIT {
  private static TestDatabase db;

  @BeforeAll
  static void schema(TestDatabase database) {
    db = database;
    db.execute(
        "CREATE TABLE items (id int PRIMARY KEY, name text)",
        "INSERT INTO items VALUES (1, 'one')",
        "CREATE PUBLICATION items_pub FOR TABLE items");
  }

  private static String url(String password) {
    return db.jdbcUrl() + "?user=" + db.user() + "&password=" + password;
  }

  @Test
  void aMissingPublicationIsOneLineAndLeavesNoSlot() {
    CliRun.Finished r =
        CliRun.run(
            "replicate",
            "--source-url",
            url(db.password()),
            "--publication",
            "no_such_pub",
            "--pipeline-id",
            "missing_pub");
    assertThat(r.exitCode()).isEqualTo(Main.EXIT_FAILURE);
    assertThat(r.errLines()).hasSize(1);
    assertThat(r.errLines().get(0))
        .startsWith("error: PUBLICATION_NOT_FOUND: ")
        .contains("no_such_pub")
        .contains("hint: ");
    assertThat(r.out()).isEmpty();
    assertThat(db.replicationSlots()).isEmpty();
  }

  @Test
  void aWrongPasswordIsOneLineWithoutThePasswordAndLeavesNoSlot() {
    for (String store : new String[] {"source", "memory"}) {
      CliRun.Finished r =
          CliRun.run(
              "replicate",
              "--source-url",
              url("not-the-password"),
              "--publication",
              "items_pub",
              "--pipeline-id",
              "wrong_password",
              "--state-store",
              store);
      assertThat(r.exitCode()).as("store %s", store).isEqualTo(Main.EXIT_FAILURE);
      assertThat(r.errLines()).as("store %s", store).hasSize(1);
      assertThat(r.errLines().get(0))
          .as("store %s", store)
          .startsWith("error: ")
          .containsIgnoringCase("password authentication failed")
          .doesNotContain("not-the-password");
    }
    assertThat(db.replicationSlots()).isEmpty();
  }

  @Test
  void anUnreachableServerIsOneLineAndExitsNonZero() {
    CliRun.Finished r =
        CliRun.run(
            "replicate",
            "--source-url",
            "jdbc:postgresql://127.0.0.1:1/nowhere?user=u&password=p&connectTimeout=2",
            "--publication",
            "items_pub",
            "--state-store",
            "memory");
    assertThat(r.exitCode()).isEqualTo(Main.EXIT_FAILURE);
    assertThat(r.errLines()).hasSize(1);
    assertThat(r.errLines().get(0))
        .startsWith("error: SOURCE_CONNECTION_FAILED: ")
        .contains("127.0.0.1")
        .contains("hint: ")
        .contains("then run the command again")
        .doesNotContain("by itself"); // the process exits: it does not reconnect by itself
  }

  @Test
  void aPublicationOfAMissingTableIsOneLineAndLeavesNoSlot() {
    CliRun.Finished r =
        CliRun.run(
            "replicate",
            "--source-url",
            url(db.password()),
            "--publication",
            "new_pub",
            "--create-publication",
            "public.items,public.no_such_table",
            "--state-store",
            "memory");
    assertThat(r.exitCode()).isEqualTo(Main.EXIT_FAILURE);
    assertThat(r.errLines()).hasSize(1);
    assertThat(r.errLines().get(0))
        .startsWith("error: CONFIG_ERROR: cannot create publication new_pub")
        .contains("no_such_table");
    assertThat(db.queryLong("SELECT count(*) FROM pg_publication WHERE pubname = 'new_pub'"))
        .isZero();
    assertThat(db.replicationSlots()).isEmpty();
  }
}
