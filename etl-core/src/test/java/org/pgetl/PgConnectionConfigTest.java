package org.pgetl;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.pgetl.PgConnectionConfig.HostPort;
import org.pgetl.PgConnectionConfig.SslMode;
import org.pgetl.PgConnectionConfig.TargetServerType;
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
    assertThat(c.toString()).doesNotContain("s3cr3t-Pa55").contains("password=***");
    assertThat(valid().password(null).build().toString()).contains("password=null");
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
    assertThatThrownBy(() -> PgConnectionConfig.fromJdbcUrl("postgresql://h1,,h2/d?user=u"))
        .hasMessageContaining("url has an empty entry in its host list");
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

  @Test
  void oneHostAcceptsAnyServerAndKeepsItsUrlsAsBefore() {
    PgConnectionConfig c = valid().build();
    assertThat(c.hosts()).containsExactly(new HostPort("db.example.com", 5432));
    assertThat(c.targetServerType()).isEqualTo(TargetServerType.ANY);
    assertThat(c.jdbcUrl())
        .isEqualTo(
            "jdbc:postgresql://db.example.com:5432/app?sslmode=prefer&connectTimeout=10"
                + "&tcpKeepAlive=true");
  }

  @Test
  void severalHostsGoToThePrimaryAndEveryDescriptionListsThem() {
    PgConnectionConfig c = valid().port(5433).addHost("standby.example.com", 5434).build();
    assertThat(c.hosts())
        .containsExactly(
            new HostPort("db.example.com", 5433), new HostPort("standby.example.com", 5434));
    assertThat(c.host()).isEqualTo("db.example.com");
    assertThat(c.port()).isEqualTo(5433);
    assertThat(c.targetServerType()).isEqualTo(TargetServerType.PRIMARY);
    assertThat(c.describe())
        .isEqualTo("postgresql://db.example.com:5433,standby.example.com:5434/app");
    assertThat(c.jdbcUrl())
        .startsWith(
            "jdbc:postgresql://db.example.com:5433,standby.example.com:5434/app?sslmode=prefer"
                + "&targetServerType=primary&");
    assertThat(c.toString())
        .contains("hosts=db.example.com:5433,standby.example.com:5434")
        .contains("targetServerType=primary")
        .doesNotContain("s3cr3t-Pa55");
    assertThat(c.describe() + c.jdbcUrl()).doesNotContain("s3cr3t-Pa55").doesNotContain("etl");
  }

  @Test
  void severalHostsRefuseAStandbyTarget() {
    assertThatThrownBy(
            () -> valid().addHost("h2", 5432).targetServerType(TargetServerType.ANY).build())
        .isInstanceOf(EtlException.class)
        .satisfies(e -> assertThat(((EtlException) e).kind()).isEqualTo(ErrorKind.CONFIG_ERROR))
        .hasMessageContaining(
            "source.targetServerType must be primary when several hosts are given")
        .hasMessageContaining("was any");
    PgConnectionConfig one = valid().targetServerType(TargetServerType.PRIMARY).build();
    assertThat(one.targetServerType()).isEqualTo(TargetServerType.PRIMARY);
    assertThat(one.jdbcUrl()).contains("&targetServerType=primary&");
  }

  @Test
  void furtherHostsAreValidatedByTheirPlaceInTheList() {
    assertThatThrownBy(() -> valid().addHost("h2", 5432).addHost("h3", 0).build())
        .hasMessageContaining("source.hosts[2].port must be in 1..65535, was 0");
    assertThatThrownBy(() -> valid().addHost(" ", 5432).build())
        .hasMessageContaining("source.hosts[1].host must not be empty");
    assertThatThrownBy(() -> valid().addHost("a b", 5432).build())
        .hasMessageContaining("source.hosts[1].host must be one host name");
    assertThatThrownBy(() -> valid().addHost("DB.example.com", 5432).build())
        .hasMessageContaining("source.hosts must not list DB.example.com:5432 twice");
    assertThat(valid().addHost("db.example.com", 5433).build().hosts()).hasSize(2);
  }

  @Test
  void toBuilderKeepsTheHostListAndTheDefaultTarget() {
    PgConnectionConfig c = valid().addHost("h2", 6000).addHost("::1", 6001).build();
    assertThat(c.toBuilder().build()).isEqualTo(c).hasSameHashCodeAs(c);
    PgConnectionConfig single = c.toBuilder().additionalHosts(List.of()).build();
    assertThat(single.hosts()).hasSize(1);
    assertThat(single.targetServerType()).isEqualTo(TargetServerType.ANY);
    assertThat(single).isNotEqualTo(c);
    PgConnectionConfig grown = valid().build().toBuilder().addHost("h2", 5432).build();
    assertThat(grown.targetServerType()).isEqualTo(TargetServerType.PRIMARY);
  }

  @Test
  void parsesPgjdbcMultiHostUrl() {
    PgConnectionConfig c =
        PgConnectionConfig.fromJdbcUrl(
            "jdbc:postgresql://h1:5432,h2:5433/orders?user=etl&password=pw&targetServerType=primary");
    assertThat(c.hosts()).containsExactly(new HostPort("h1", 5432), new HostPort("h2", 5433));
    assertThat(c.database()).isEqualTo("orders");
    assertThat(c.targetServerType()).isEqualTo(TargetServerType.PRIMARY);
    assertThat(PgConnectionConfig.fromJdbcUrl(c.jdbcUrl() + "&user=etl"))
        .isEqualTo(c.toBuilder().password(null).build());
  }

  @Test
  void parsesLibpqMultiHostUrlWithDefaultPortsAndIpv6() {
    PgConnectionConfig c =
        PgConnectionConfig.fromJdbcUrl(
            "postgresql://etl:p%40ss@h1,[::1]:5433,h3:7/db?target_session_attrs=read-write");
    assertThat(c.hosts())
        .containsExactly(
            new HostPort("h1", 5432), new HostPort("::1", 5433), new HostPort("h3", 7));
    assertThat(c.user()).isEqualTo("etl");
    assertThat(c.password()).isEqualTo("p@ss");
    assertThat(c.describe()).isEqualTo("postgresql://h1:5432,[::1]:5433,h3:7/db");
    assertThat(c.targetServerType()).isEqualTo(TargetServerType.PRIMARY);
  }

  @Test
  void multiHostUrlErrorsNameTheEntryAndHideThePassword() {
    assertThatThrownBy(() -> PgConnectionConfig.fromJdbcUrl("postgresql://u:hunter22@h1,h2:x/d"))
        .hasMessageContaining("hosts[1].port must be a number")
        .satisfies(e -> assertThat(e.getMessage()).doesNotContain("hunter22"));
    assertThatThrownBy(() -> PgConnectionConfig.fromJdbcUrl("postgresql://u:hunter22@h1,/d"))
        .hasMessageContaining("empty entry in its host list")
        .satisfies(e -> assertThat(e.getMessage()).doesNotContain("hunter22"));
    assertThatThrownBy(() -> PgConnectionConfig.fromJdbcUrl("postgresql://h1,h2:99999/d?user=u"))
        .hasMessageContaining("source.hosts[1].port must be in 1..65535, was 99999");
    assertThatThrownBy(
            () ->
                PgConnectionConfig.fromJdbcUrl("postgresql://h1,h2/d?user=u&targetServerType=any"))
        .hasMessageContaining("source.targetServerType must be primary");
    assertThatThrownBy(
            () ->
                PgConnectionConfig.fromJdbcUrl(
                    "postgresql://h1,h2/d?user=u&targetServerType=secondary"))
        .hasMessageContaining("source.targetServerType must be any or primary")
        .hasMessageContaining("was 'secondary'");
  }
}
