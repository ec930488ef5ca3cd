package org.pgetl.testkit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** A server named by URL (as PGETL_TEST_DATABASE_URL does) is checked and used like ours. */
@Timeout(value = 3, unit = TimeUnit.MINUTES)
class ExternalPostgresIT {

  @Test
  void usesAServerGivenByUrl() {
    try (EmbeddedPostgres pg = EmbeddedPostgres.builder().password("ext pass").start()) {
      pg.createDatabase("admin");
      String url = pg.jdbcUrl("admin") + "?user=postgres&password=ext%20pass";

      ExternalPostgres external = ExternalPostgres.fromUrl(url, "test").verify();

      assertThat(external.serverVersionNum()).isEqualTo(pg.serverVersionNum());
      assertThat(external.serverVersion()).isEqualTo(pg.serverVersion());
      external.createDatabase("pgetl_test_external");
      TestDatabase db = new TestDatabase(external, "pgetl_test_external");
      db.execute("SELECT pg_create_logical_replication_slot('ext_slot', 'pgoutput')");
      assertThat(db.replicationSlots()).hasSize(1);
      external.dropDatabase("pgetl_test_external");
      assertThat(
              new TestDatabase(pg, "postgres")
                  .queryLong(
                      "SELECT count(*) FROM pg_replication_slots WHERE slot_name = 'ext_slot'"))
          .isZero();
    }
  }

  @Test
  void serverWithoutLogicalDecodingIsRefusedWithTheFix() {
    try (EmbeddedPostgres pg = EmbeddedPostgres.builder().setting("wal_level", "replica").start()) {
      String url = pg.jdbcUrl("postgres") + "?user=postgres&password=postgres";

      assertThatThrownBy(() -> ExternalPostgres.fromUrl(url, "PGETL_TEST_DATABASE_URL").verify())
          .isInstanceOf(TestkitException.class)
          .hasMessageContaining("wal_level=replica")
          .hasMessageContaining("ALTER SYSTEM SET wal_level = logical");
    }
  }

  @Test
  void wrongPasswordIsReportedWithoutThePassword() {
    try (EmbeddedPostgres pg = EmbeddedPostgres.start()) {
      String url = pg.jdbcUrl("postgres") + "?user=postgres&password=hunter2";

      assertThatThrownBy(() -> ExternalPostgres.fromUrl(url, "VAR").verify())
          .isInstanceOf(TestkitException.class)
          .hasMessageContaining("cannot connect to external server 127.0.0.1:" + pg.port())
          .hasMessageContaining("password authentication failed")
          .hasMessageNotContaining("hunter2");
    }
  }
}
