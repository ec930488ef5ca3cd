package org.pgetl.store.postgres;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.function.UnaryOperator;
import org.junit.jupiter.api.Test;
import org.pgetl.PgConnectionConfig;
import org.pgetl.error.ErrorKind;
import org.pgetl.error.EtlException;

class PostgresStoreConfigTest {
  private static final String URL = "jdbc:postgresql://db.example.com:5432/app?user=pgetl";

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
    assertThat(c.connection().user()).isEqualTo("pgetl");
    assertThat(c.connection().password()).isNull();
    assertThat(c.connection().host()).isEqualTo("db.example.com");
    assertThat(c.connection().database()).isEqualTo("app");
  }

  @Test
  void aConnectionConfigIsTakenWholeAndTheBuildersRoleWinsOverIt() {
    PgConnectionConfig source =
        PgConnectionConfig.builder()
            .host("src.example.com")
            .database("shop")
            .user("replicator")
            .password("source-secret")
            .sslMode(PgConnectionConfig.SslMode.VERIFY_FULL)
            .connectTimeout(Duration.ofSeconds(3))
            .build();
    assertThat(PostgresStore.builder().connection(source).pipelineId("p").config().connection())
        .isEqualTo(source);

    PgConnectionConfig asStoreRole =
        PostgresStore.builder()
            .connection(source)
            .user("store_owner")
            .password("store-secret")
            .pipelineId("p")
            .config()
            .connection();
    assertThat(asStoreRole.user()).isEqualTo("store_owner");
    assertThat(asStoreRole.password()).isEqualTo("store-secret");
    assertThat(asStoreRole.sslMode()).isEqualTo(PgConnectionConfig.SslMode.VERIFY_FULL);
    assertThat(asStoreRole.connectTimeout()).isEqualTo(Duration.ofSeconds(3));
  }

  @Test
  void aUrlIsReadLikeTheSourcesIncludingTheLibpqForm() {
    PgConnectionConfig fromUrl =
        PostgresStore.builder()
            .jdbcUrl("postgresql://ops:pw@h1:5433,h2/state?sslmode=require&connect_timeout=4")
            .pipelineId("p")
            .config()
            .connection();
    assertThat(fromUrl)
        .isEqualTo(
            PgConnectionConfig.fromJdbcUrl(
                "postgresql://ops:pw@h1:5433,h2/state?sslmode=require&connect_timeout=4"));
    assertThat(fromUrl.hosts()).hasSize(2);
    assertThat(fromUrl.user()).isEqualTo("ops");
  }

  @Test
  void aParameterTheConnectionDoesNotKnowIsRejectedAndNamed() {
    assertRejected(
        b -> b.jdbcUrl(URL + "&prepareThreshold=0"),
        "invalid postgres store setting: jdbcUrl:",
        "'prepareThreshold' is not supported");
    assertRejected(
        b -> b.jdbcUrl(URL + "&sslmode=verify-everything"), "jdbcUrl", "sslMode", "verify-full");
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
    assertRejected(b -> b.jdbcUrl(null), "connection must be set");
    assertRejected(b -> b.connection(null), "connection must be set");
    assertRejected(b -> b.pipelineId(" "), "pipelineId", "must be set");
    assertRejected(b -> b.schema(null), "schema", "must be set");
    assertRejected(b -> b.user(""), "jdbcUrl: user must not be empty");
    assertRejected(
        b -> b.jdbcUrl("jdbc:postgresql://db.example.com/app"), "jdbcUrl: user must not be empty");
  }

  @Test
  void onlyPostgresqlUrlsAreAccepted() {
    assertRejected(b -> b.jdbcUrl("jdbc:mysql://h/db"), "jdbcUrl", "jdbc:postgresql://");
    assertRejected(
        b -> b.jdbcUrl("jdbc:postgresql://h:notaport/db?user=u"), "jdbcUrl", "port", "number");
    assertThat(
            valid().jdbcUrl("jdbc:postgresql://h1:5432,h2:5433/db?sslmode=require&user=u").config())
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
            .jdbcUrl(URL + "&password=url-secret&ssl=true")
            .user("pgetl")
            .password("explicit-secret");
    PostgresStoreConfig c = b.config();

    for (String text : new String[] {c.toString(), b.toString()}) {
      assertThat(text)
          .doesNotContain("url-secret")
          .doesNotContain("explicit-secret")
          .contains("pgetl")
          .contains("db.example.com");
    }
    assertThat(c.toString()).contains("sslMode=verify-full");
    assertThatThrownBy(() -> valid().jdbcUrl(URL + "&sslpassword=key-secret").config())
        .hasMessageContaining("sslpassword")
        .hasMessageNotContaining("key-secret");
  }

  @Test
  void aBadUrlIsReportedWithoutItsPassword() {
    assertRejected(b -> b.jdbcUrl("jdbc:mysql://h/db?password=hunter2"), "password=***");
    assertThatThrownBy(() -> valid().jdbcUrl("jdbc:mysql://h/db?password=hunter2").config())
        .hasMessageNotContaining("hunter2");
  }
}
