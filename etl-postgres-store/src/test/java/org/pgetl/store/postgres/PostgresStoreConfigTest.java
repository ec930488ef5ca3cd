package org.pgetl.store.postgres;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.function.UnaryOperator;
import org.junit.jupiter.api.Test;
import org.pgetl.error.ErrorKind;
import org.pgetl.error.EtlException;

class PostgresStoreConfigTest {
  private static final String URL = "jdbc:postgresql://db.example.com:5432/app";

  private static PostgresStore.Builder valid() {
    return PostgresStore.builder().jdbcUrl(URL).pipelineId("orders");
  }

  private static void assertRejected(UnaryOperator<PostgresStore.Builder> change, String... words) {
    assertThatThrownBy(() -> change.apply(valid()).config())
        .isInstanceOfSatisfying(
            EtlException.class,
            e -> {
              assertThat(e.kind()).isEqualTo(ErrorKind.CONFIG_ERROR);
              assertThat(e.getMessage()).contains(words);
            });
  }

  @Test
  void defaultsAreSmallAndNamed() {
    PostgresStoreConfig c = valid().config();

    assertThat(c.schema()).isEqualTo("etl");
    assertThat(c.maxPoolSize()).isEqualTo(4);
    assertThat(c.minIdle()).isZero();
    assertThat(c.idleTimeout()).isEqualTo(Duration.ofSeconds(30));
    assertThat(c.connectionTimeout()).isEqualTo(Duration.ofSeconds(10));
    assertThat(c.statementTimeout()).isEqualTo(Duration.ofSeconds(30));
    assertThat(c.migrationLockTimeout()).isEqualTo(Duration.ofSeconds(60));
    assertThat(c.user()).isNull();
    assertThat(c.password()).isNull();
  }

  @Test
  void toBuilderKeepsEverySetting() {
    PostgresStoreConfig c =
        valid()
            .user("u")
            .password("p")
            .schema("Store_1")
            .maxPoolSize(2)
            .minIdle(1)
            .idleTimeout(Duration.ofMinutes(1))
            .connectionTimeout(Duration.ofSeconds(3))
            .statementTimeout(Duration.ZERO)
            .migrationLockTimeout(Duration.ofSeconds(5))
            .config();

    assertThat(c.toBuilder().config()).isEqualTo(c);
  }

  @Test
  void requiredSettingsAreNamed() {
    assertRejected(b -> b.jdbcUrl(null), "jdbcUrl", "must be set");
    assertRejected(b -> b.pipelineId(" "), "pipelineId", "must be set");
    assertRejected(b -> b.schema(null), "schema", "must be set");
    assertRejected(b -> b.user(""), "user", "blank");
  }

  @Test
  void onlyPostgresqlUrlsAreAccepted() {
    assertRejected(b -> b.jdbcUrl("jdbc:mysql://h/db"), "jdbcUrl", "jdbc:postgresql:");
    assertRejected(b -> b.jdbcUrl("jdbc:postgresql://h:notaport/db"), "jdbcUrl", "not a valid");
    assertThat(valid().jdbcUrl("jdbc:postgresql://h1:5432,h2:5433/db?sslmode=require").config())
        .isNotNull();
  }

  @Test
  void theSchemaMustBeAPlainIdentifier() {
    for (String bad :
        new String[] {"etl;drop table x", "1etl", "", "my schema", "e\"tl", "pg_store", "PG_x"}) {
      assertRejected(b -> b.schema(bad), "schema");
    }
    assertRejected(b -> b.schema("s".repeat(64)), "schema", "63");
    assertThat(valid().schema("s".repeat(63)).config().schema()).hasSize(63);
    assertThat(valid().schema("_Pgetl_Store2").config().schema()).isEqualTo("_Pgetl_Store2");
  }

  @Test
  void poolSettingsAreBounded() {
    assertRejected(b -> b.maxPoolSize(0), "maxPoolSize must be >= 1, was 0");
    assertRejected(b -> b.minIdle(5), "minIdle", "was 5");
    assertRejected(b -> b.minIdle(-1), "minIdle");
    assertRejected(b -> b.idleTimeout(Duration.ofSeconds(1)), "idleTimeout", "PT10S");
    assertRejected(b -> b.connectionTimeout(Duration.ofMillis(10)), "connectionTimeout");
    assertRejected(b -> b.statementTimeout(Duration.ofSeconds(-1)), "statementTimeout");
    assertRejected(b -> b.migrationLockTimeout(Duration.ZERO), "migrationLockTimeout");
    assertRejected(b -> b.idleTimeout(null), "idleTimeout", "must be set");
  }

  @Test
  void thePasswordNeverShowsInToString() {
    PostgresStore.Builder b =
        valid()
            .jdbcUrl(URL + "?user=x&password=url-secret&sslpassword=key-secret&ssl=true")
            .user("pgetl")
            .password("explicit-secret");
    PostgresStoreConfig c = b.config();

    for (String text : new String[] {c.toString(), b.toString()}) {
      assertThat(text)
          .doesNotContain("url-secret")
          .doesNotContain("key-secret")
          .doesNotContain("explicit-secret")
          .contains("pgetl")
          .contains("db.example.com")
          .contains("ssl=true");
    }
  }

  @Test
  void aBadUrlIsReportedWithoutItsPassword() {
    assertRejected(b -> b.jdbcUrl("jdbc:mysql://h/db?password=hunter2"), "password=***");
    assertThatThrownBy(() -> valid().jdbcUrl("jdbc:mysql://h/db?password=hunter2").config())
        .hasMessageNotContaining("hunter2");
  }
}
