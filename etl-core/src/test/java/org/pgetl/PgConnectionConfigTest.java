package org.pgetl;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Path;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.pgetl.PgConnectionConfig.SslMode;
import org.pgetl.error.ErrorKind;
import org.pgetl.error.EtlException;

class PgConnectionConfigTest {
  private static PgConnectionConfig.Builder valid() {
    return PgConnectionConfig.builder()
        .host("db.example.com")
        .database("app")
        .user("etl")
        .password("s3cr3t-Pa55");
  }

  @Test
  void defaultsAreApplied() {
    PgConnectionConfig c = valid().build();
    assertThat(c.port()).isEqualTo(5432);
    assertThat(c.sslMode()).isEqualTo(SslMode.PREFER);
    assertThat(c.connectTimeout()).isEqualTo(Duration.ofSeconds(10));
    assertThat(c.tcpKeepAlive()).isTrue();
    assertThat(c.sslRootCert()).isNull();
  }

  @Test
  void portOutOfRangeNamesFieldAndConstraint() {
    assertThatThrownBy(() -> valid().port(0).build())
        .isInstanceOf(EtlException.class)
        .satisfies(e -> assertThat(((EtlException) e).kind()).isEqualTo(ErrorKind.CONFIG_ERROR))
        .hasMessageContaining("source.port must be in 1..65535, was 0");
    assertThatThrownBy(() -> valid().port(65536).build())
        .hasMessageContaining("source.port must be in 1..65535, was 65536");
  }

  @Test
  void requiredFieldsAreNamed() {
    assertThatThrownBy(() -> valid().host(" ").build())
        .hasMessageContaining("source.host must not be empty");
    assertThatThrownBy(() -> valid().database(null).build())
        .hasMessageContaining("source.database must not be empty");
    assertThatThrownBy(() -> valid().user("").build())
        .hasMessageContaining("source.user must not be empty");
    assertThatThrownBy(() -> valid().host("a,b").build())
        .hasMessageContaining("source.host must be one host");
  }

  @Test
  void connectTimeoutMustBePositiveAndBounded() {
    assertThatThrownBy(() -> valid().connectTimeout(Duration.ZERO).build())
        .hasMessageContaining("source.connectTimeout must be > 0, was PT0S");
    assertThatThrownBy(() -> valid().connectTimeout(Duration.ofSeconds(-1)).build())
        .hasMessageContaining("source.connectTimeout must be > 0");
    assertThatThrownBy(() -> valid().connectTimeout(Duration.ofHours(2)).build())
        .hasMessageContaining("source.connectTimeout must be <= PT1H, was PT2H");
  }

  @Test
  void clientCertificateAndKeyGoTogether() {
    assertThatThrownBy(() -> valid().sslCert(Path.of("client.crt")).build())
        .hasMessageContaining("source.sslCert and sslKey must be set together");
    assertThatThrownBy(
            () -> valid().sslMode(SslMode.DISABLE).sslRootCert(Path.of("root.crt")).build())
        .hasMessageContaining("need sslMode other than disable");
    PgConnectionConfig c =
        valid().sslCert(Path.of("client.crt")).sslKey(Path.of("client.pk8")).build();
    assertThat(c.sslKey()).isEqualTo(Path.of("client.pk8"));
  }

  @Test
  void passwordNeverInToStringOrValidationMessages() {
    PgConnectionConfig c = valid().build();
    assertThat(c.toString()).doesNotContain("s3cr3t-Pa55").contains("password=<redacted>");
    assertThat(valid().password(null).build().toString()).contains("password=<unset>");
    assertThatThrownBy(() -> valid().port(-5).build())
        .satisfies(e -> assertThat(e.getMessage()).doesNotContain("s3cr3t-Pa55"));
    assertThat(c.describe()).isEqualTo("postgresql://db.example.com:5432/app");
  }

  @Test
  void toBuilderRoundTripsAndChangesOneField() {
    PgConnectionConfig c =
        valid()
            .port(6543)
            .sslMode(SslMode.VERIFY_FULL)
            .sslRootCert(Path.of("/etc/ssl/root.crt"))
            .connectTimeout(Duration.ofSeconds(3))
            .tcpKeepAlive(false)
            .build();
    assertThat(c.toBuilder().build()).isEqualTo(c).hasSameHashCodeAs(c);
    PgConnectionConfig other = c.toBuilder().database("other").build();
    assertThat(other.database()).isEqualTo("other");
    assertThat(other.port()).isEqualTo(6543);
    assertThat(other).isNotEqualTo(c);
  }

  @Test
  void parsesJdbcUrl() {
    PgConnectionConfig c =
        PgConnectionConfig.fromJdbcUrl(
            "jdbc:postgresql://db.local:6432/orders?user=etl&password=p%40ss%2Bw&sslmode=verify-full"
                + "&sslrootcert=/certs/root.crt&connectTimeout=7&tcpKeepAlive=false");
    assertThat(c.host()).isEqualTo("db.local");
    assertThat(c.port()).isEqualTo(6432);
    assertThat(c.database()).isEqualTo("orders");
    assertThat(c.user()).isEqualTo("etl");
    assertThat(c.password()).isEqualTo("p@ss+w");
    assertThat(c.sslMode()).isEqualTo(SslMode.VERIFY_FULL);
    assertThat(c.sslRootCert()).isEqualTo(Path.of("/certs/root.crt"));
    assertThat(c.connectTimeout()).isEqualTo(Duration.ofSeconds(7));
    assertThat(c.tcpKeepAlive()).isFalse();
  }

  @Test
  void parsesLibpqUrlWithUserInfoIpv6AndDefaultPort() {
    PgConnectionConfig c =
        PgConnectionConfig.fromJdbcUrl("postgresql://etl:pa+ss@[::1]/my%20db?sslmode=require");
    assertThat(c.host()).isEqualTo("::1");
    assertThat(c.port()).isEqualTo(5432);
    assertThat(c.database()).isEqualTo("my db");
    assertThat(c.user()).isEqualTo("etl");
    assertThat(c.password()).isEqualTo("pa+ss");
    assertThat(c.sslMode()).isEqualTo(SslMode.REQUIRE);
    assertThat(c.describe()).isEqualTo("postgresql://[::1]:5432/my db");

    PgConnectionConfig p = PgConnectionConfig.fromJdbcUrl("postgres://u@h:1/d?ssl=true");
    assertThat(p.sslMode()).isEqualTo(SslMode.VERIFY_FULL);
    assertThat(p.password()).isNull();
  }

  @Test
  void urlErrorsNeverShowThePassword() {
    assertThatThrownBy(
            () ->
                PgConnectionConfig.fromJdbcUrl(
                    "jdbc:postgresql://h:abc/d?user=u&password=hunter22"))
        .hasMessageContaining("port must be a number")
        .satisfies(e -> assertThat(e.getMessage()).doesNotContain("hunter22"));
    assertThatThrownBy(
            () -> PgConnectionConfig.fromJdbcUrl("postgresql://u:hunter22@h/d?applicationName=x"))
        .hasMessageContaining("url parameter 'applicationName' is not supported")
        .satisfies(e -> assertThat(e.getMessage()).doesNotContain("hunter22"));
    assertThatThrownBy(() -> PgConnectionConfig.fromJdbcUrl("mysql://u:hunter22@h/d"))
        .hasMessageContaining("url must start with")
        .satisfies(e -> assertThat(e.getMessage()).doesNotContain("hunter22"));
    assertThatThrownBy(() -> PgConnectionConfig.fromJdbcUrl("postgresql://h1,h2/d?user=u"))
        .hasMessageContaining("exactly one host");
    assertThatThrownBy(() -> PgConnectionConfig.fromJdbcUrl("postgresql://h/?user=u"))
        .hasMessageContaining("source.database must not be empty");
    assertThatThrownBy(() -> PgConnectionConfig.fromJdbcUrl("postgresql://h/d?user=u&sslmode=on"))
        .hasMessageContaining("sslMode must be one of");
    assertThatThrownBy(() -> PgConnectionConfig.fromJdbcUrl("postgresql://h/d%4?user=u"))
        .hasMessageContaining("invalid percent escape");
  }

  @Test
  void decodesMultiBytePercentEscapesNextToLiteralNonAscii() {
    PgConnectionConfig c =
        PgConnectionConfig.fromJdbcUrl("postgresql://h/d?user=%C3%A9t%C3%A9&password=ééé%E2%82%AC");
    assertThat(c.user()).isEqualTo("été");
    assertThat(c.password()).isEqualTo("ééé€");
  }

  @Test
  void redactsBothPasswordForms() {
    assertThat(PgConnectionConfig.redactUrl("postgresql://u:pw@h/d?password=x&user=u"))
        .isEqualTo("postgresql://u:***@h/d?password=***&user=u");
  }
}
