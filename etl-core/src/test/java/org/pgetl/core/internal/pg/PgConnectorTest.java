package org.pgetl.core.internal.pg;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.time.Duration;
import java.util.Properties;
import org.junit.jupiter.api.Test;
import org.pgetl.PgConnectionConfig;
import org.pgetl.PgConnectionConfig.SslMode;

class PgConnectorTest {
  private static final PgConnectionConfig CONFIG =
      PgConnectionConfig.builder()
          .host("db.local")
          .port(6543)
          .database("my db")
          .user("etl")
          .password("pw")
          .sslMode(SslMode.VERIFY_FULL)
          .sslRootCert(Path.of("/certs/root.crt"))
          .sslCert(Path.of("/certs/client.crt"))
          .sslKey(Path.of("/certs/client.pk8"))
          .connectTimeout(Duration.ofMillis(2500))
          .build();

  @Test
  void plainConnectionCarriesSessionSettingsAndBoundedTimeouts() {
    Properties p =
        new PgConnector(CONFIG).plainProperties("pgetl:catalog:p1", SessionTimeouts.BOUNDED);
    assertThat(p.getProperty("options"))
        .isEqualTo(
            "-c DateStyle=ISO -c IntervalStyle=postgres -c extra_float_digits=3"
                + " -c client_encoding=UTF8 -c TimeZone=UTC -c lc_monetary=C -c bytea_output=hex"
                + " -c statement_timeout=30000 -c lock_timeout=10000"
                + " -c idle_in_transaction_session_timeout=60000");
    assertThat(p.getProperty("replication")).isNull();
    assertThat(p.getProperty("ApplicationName")).isEqualTo("pgetl:catalog:p1");
    assertThat(p.getProperty("user")).isEqualTo("etl");
    assertThat(p.getProperty("assumeMinServerVersion")).isEqualTo("10");
    assertThat(p.getProperty("connectTimeout")).isEqualTo("3");
    assertThat(p.getProperty("tcpKeepAlive")).isEqualTo("true");
  }

  @Test
  void replicationConnectionUsesSimpleProtocolAndNoTimeouts() {
    Properties p = new PgConnector(CONFIG).replicationProperties("pgetl:apply:p1");
    assertThat(p.getProperty("replication")).isEqualTo("database");
    assertThat(p.getProperty("preferQueryMode")).isEqualTo("simple");
    assertThat(p.getProperty("options"))
        .contains("-c TimeZone=UTC")
        .contains("-c lc_monetary=C")
        .endsWith(
            "-c statement_timeout=0 -c lock_timeout=0 -c idle_in_transaction_session_timeout=0");
  }

  @Test
  void tlsSettingsMapToDriverProperties() {
    Properties p = new PgConnector(CONFIG).replicationProperties("x");
    assertThat(p.getProperty("sslmode")).isEqualTo("verify-full");
    assertThat(p.getProperty("sslrootcert")).isEqualTo("/certs/root.crt");
    assertThat(p.getProperty("sslcert")).isEqualTo("/certs/client.crt");
    assertThat(p.getProperty("sslkey")).isEqualTo("/certs/client.pk8");
    Properties plain =
        new PgConnector(
                CONFIG.toBuilder()
                    .sslMode(SslMode.DISABLE)
                    .sslRootCert(null)
                    .sslCert(null)
                    .sslKey(null)
                    .build())
            .plainProperties("x", SessionTimeouts.BOUNDED);
    assertThat(plain.getProperty("sslmode")).isEqualTo("disable");
    assertThat(plain.getProperty("sslrootcert")).isNull();
  }

  @Test
  void urlHasNoCredentialsAndEncodesTheDatabase() {
    assertThat(new PgConnector(CONFIG).url()).isEqualTo("jdbc:postgresql://db.local:6543/my%20db");
    PgConnectionConfig v6 = CONFIG.toBuilder().host("::1").build();
    assertThat(new PgConnector(v6).url()).startsWith("jdbc:postgresql://[::1]:6543/");
  }

  @Test
  void severalHostsAreListedInTheUrlAndOnlyAPrimaryIsAccepted() {
    PgConnector connector =
        new PgConnector(
            CONFIG.toBuilder().addHost("standby.local", 6544).addHost("::1", 6545).build());
    assertThat(connector.url())
        .isEqualTo("jdbc:postgresql://db.local:6543,standby.local:6544,[::1]:6545/my%20db");
    assertThat(
            connector.plainProperties("x", SessionTimeouts.BOUNDED).getProperty("targetServerType"))
        .isEqualTo("primary");
    assertThat(connector.replicationProperties("x").getProperty("targetServerType"))
        .isEqualTo("primary");
    assertThat(new PgConnector(CONFIG).replicationProperties("x").getProperty("targetServerType"))
        .isEqualTo("any");
  }

  @Test
  void applicationNameIsClamped() {
    Properties p = new PgConnector(CONFIG).replicationProperties("pgetl:sync:" + "x".repeat(80));
    assertThat(p.getProperty("ApplicationName")).hasSize(63);
  }
}
