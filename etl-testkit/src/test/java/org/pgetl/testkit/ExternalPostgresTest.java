package org.pgetl.testkit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

class ExternalPostgresTest {

  @Test
  void readsCoordinatesAndKeepsOnlyNonSecretParameters() {
    ExternalPostgres pg =
        ExternalPostgres.fromUrl(
            "jdbc:postgresql://db.example:6543/admin?user=alice&password=s3cret&sslmode=require",
            "test");

    assertThat(pg.host()).isEqualTo("db.example");
    assertThat(pg.port()).isEqualTo(6543);
    assertThat(pg.superuser()).isEqualTo("alice");
    assertThat(pg.password()).isEqualTo("s3cret");
    assertThat(pg.jdbcUrl("my db"))
        .isEqualTo("jdbc:postgresql://db.example:6543/my%20db?sslmode=require");
    assertThat(pg.toString()).doesNotContain("s3cret");
  }

  @Test
  void defaultsPortAndDatabase() {
    ExternalPostgres pg =
        ExternalPostgres.fromUrl("jdbc:postgresql://localhost/?user=a&password=b", "test");
    assertThat(pg.port()).isEqualTo(5432);
    assertThat(pg.jdbcUrl("x")).isEqualTo("jdbc:postgresql://localhost:5432/x");
  }

  @Test
  void urlWithoutCredentialsIsRejected() {
    assertThatThrownBy(() -> ExternalPostgres.fromUrl("jdbc:postgresql://h/db", "VAR"))
        .isInstanceOf(TestkitException.class)
        .hasMessageContaining("VAR must carry the credentials")
        .hasMessageContaining("?user=...&password=...");
  }

  @Test
  void nonPostgresUrlIsRejected() {
    assertThatThrownBy(() -> ExternalPostgres.fromUrl("postgres://h/db", "VAR"))
        .isInstanceOf(TestkitException.class)
        .hasMessageContaining("VAR is not a PostgreSQL JDBC URL");
  }
}
