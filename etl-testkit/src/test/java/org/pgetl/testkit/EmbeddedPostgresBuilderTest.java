package org.pgetl.testkit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

class EmbeddedPostgresBuilderTest {

  @Test
  void configValuesAreQuoted() {
    assertThat(EmbeddedPostgres.configLine("wal_level", "logical"))
        .isEqualTo("wal_level = 'logical'");
    assertThat(EmbeddedPostgres.configLine("application_name", "it's a\\b"))
        .isEqualTo("application_name = 'it''s a\\\\b'");
  }

  @Test
  void defaultsCoverLogicalReplication() {
    assertThat(EmbeddedPostgres.DEFAULT_SETTINGS)
        .containsEntry("wal_level", "logical")
        .containsEntry("max_replication_slots", "64")
        .containsEntry("max_wal_senders", "64")
        .containsEntry("wal_sender_timeout", "10s")
        .containsEntry("max_prepared_transactions", "20");
  }

  @Test
  void settingNamesAreChecked() {
    assertThatThrownBy(() -> EmbeddedPostgres.builder().setting("fsync = on\nx", "1"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("not a PostgreSQL setting name");
    assertThatThrownBy(() -> EmbeddedPostgres.builder().setting("work_mem", "1\n2"))
        .hasMessageContaining("must be on one line");
    EmbeddedPostgres.builder()
        .setting("Work_Mem", "64kB")
        .setting("auto_explain.log_min_duration", "0");
  }

  @Test
  void credentialsAndTimeoutsAreChecked() {
    assertThatThrownBy(() -> EmbeddedPostgres.builder().password(""))
        .hasMessageContaining("password must be non-empty");
    assertThatThrownBy(() -> EmbeddedPostgres.builder().superuser(" "))
        .hasMessageContaining("superuser must not be blank");
    assertThatThrownBy(() -> EmbeddedPostgres.builder().startupTimeout(Duration.ofMillis(10)))
        .hasMessageContaining("startupTimeout must be >= 1s");
  }

  @Test
  void rootRunsCommandsThroughRunuser() {
    ServerUser unprivileged = new ServerUser("postgres", true);
    List<String> wrapped = unprivileged.wrap(List.of("/opt/pg/bin/initdb", "-D", "/tmp/x"));
    if (Commands.which("runuser").isPresent()) {
      assertThat(wrapped).endsWith("-u", "postgres", "--", "/opt/pg/bin/initdb", "-D", "/tmp/x");
    } else {
      assertThat(wrapped).endsWith("postgres", "-c", "'/opt/pg/bin/initdb' '-D' '/tmp/x'");
    }
    assertThat(new ServerUser("me", false).wrap(List.of("a"))).containsExactly("a");
  }

  @Test
  void databaseNamesAreFreshAndSafe() {
    String a = PostgresExtension.randomDatabaseName();
    String b = PostgresExtension.randomDatabaseName();
    assertThat(a).matches("pgetl_test_[a-z0-9]{10}").isNotEqualTo(b);
  }
}
