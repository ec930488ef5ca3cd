package org.pgetl.core.internal.pg;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.sql.Connection;
import java.util.TimeZone;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.pgetl.PgConnectionConfig;
import org.pgetl.PgConnectionConfig.SslMode;
import org.pgetl.error.ErrorKind;
import org.pgetl.error.EtlException;

@Timeout(value = 120, unit = TimeUnit.SECONDS)
class ConnectorIT {
  private static PgConnectionConfig config;
  private static PgConnector connector;
  private static Connection admin;

  @BeforeAll
  static void setUp() throws Exception {
    config = TestSource.freshDatabase("pgetl_connector_it");
    connector = new PgConnector(config);
    admin = TestSource.open(config);
  }

  @AfterAll
  static void tearDown() throws Exception {
    if (admin != null) {
      admin.close();
    }
  }

  private static String settings(Connection c) throws Exception {
    return TestSource.queryString(
        c,
        "SELECT concat_ws('|', current_setting('DateStyle'), current_setting('IntervalStyle'),"
            + " current_setting('extra_float_digits'), current_setting('client_encoding'),"
            + " current_setting('TimeZone'), current_setting('lc_monetary'),"
            + " current_setting('statement_timeout'), current_setting('lock_timeout'),"
            + " current_setting('idle_in_transaction_session_timeout'))");
  }

  private static String applicationNameSeenByServer(Connection c) throws Exception {
    String pid = TestSource.queryString(c, "SELECT pg_backend_pid()");
    return TestSource.queryString(
        admin, "SELECT application_name FROM pg_stat_activity WHERE pid = " + pid);
  }

  @Test
  void sessionSettingsAreDeterministicWhateverTheJvmTimeZone() throws Exception {
    TimeZone jvm = TimeZone.getDefault();
    TimeZone.setDefault(TimeZone.getTimeZone("Asia/Kolkata"));
    try (Connection plain = connector.openPlain("pgetl:catalog:connector_it");
        ReplicationConnection repl = connector.openReplication("pgetl:apply:connector_it")) {
      assertThat(settings(plain)).isEqualTo("ISO, MDY|postgres|3|UTF8|UTC|C|30s|10s|1min");
      assertThat(settings(repl.jdbc())).isEqualTo("ISO, MDY|postgres|3|UTF8|UTC|C|0|0|0");
    } finally {
      TimeZone.setDefault(jvm);
    }
  }

  @Test
  void applicationNamesAreVisibleAndClamped() throws Exception {
    String longName = "pgetl:sync:" + "p".repeat(60) + ":16384";
    try (Connection plain = connector.openPlain("pgetl:catalog:connector_it");
        Connection clamped = connector.openPlain(longName);
        ReplicationConnection repl = connector.openReplication("pgetl:apply:connector_it")) {
      assertThat(applicationNameSeenByServer(plain)).isEqualTo("pgetl:catalog:connector_it");
      assertThat(applicationNameSeenByServer(clamped))
          .isEqualTo(ApplicationNames.clamp(longName))
          .hasSize(63);
      assertThat(applicationNameSeenByServer(repl.jdbc())).isEqualTo("pgetl:apply:connector_it");
      assertThat(repl.applicationName()).isEqualTo("pgetl:apply:connector_it");
      String backendType =
          TestSource.queryString(
              admin,
              "SELECT backend_type FROM pg_stat_activity"
                  + " WHERE application_name = 'pgetl:apply:connector_it'");
      assertThat(backendType).isEqualTo("walsender");
    }
  }

  @Test
  void wrongPasswordIsAnAuthenticationErrorWithoutThePassword() {
    String wrong = "definitely-not-it-42";
    PgConnector bad = new PgConnector(config.toBuilder().password(wrong).build());
    assertThatThrownBy(() -> bad.openPlain("pgetl:catalog:connector_it"))
        .isInstanceOf(EtlException.class)
        .satisfies(
            e -> {
              EtlException ee = (EtlException) e;
              assertThat(ee.kind()).isEqualTo(ErrorKind.SOURCE_AUTHENTICATION_ERROR);
              assertThat(ee.detail()).startsWith("SQLSTATE 28P01");
              assertThat(ee.getMessage()).doesNotContain(wrong).contains(config.user());
            });
    assertThatThrownBy(() -> bad.openReplication("pgetl:apply:connector_it"))
        .satisfies(
            e ->
                assertThat(((EtlException) e).kind())
                    .isEqualTo(ErrorKind.SOURCE_AUTHENTICATION_ERROR));
  }

  @Test
  void unreachableServerIsAConnectionFailure() {
    PgConnector nowhere = new PgConnector(config.toBuilder().host("127.0.0.1").port(1).build());
    assertThatThrownBy(() -> nowhere.openPlain("pgetl:catalog:connector_it"))
        .isInstanceOf(EtlException.class)
        .satisfies(
            e ->
                assertThat(((EtlException) e).kind())
                    .isEqualTo(ErrorKind.SOURCE_CONNECTION_FAILED));
  }

  @Test
  void aFirstHostThatRefusesConnectionsIsSkippedByEveryKindOfConnection() throws Exception {
    int dead = freePort();
    PgConnectionConfig twoHosts =
        config.toBuilder()
            .host("127.0.0.1")
            .port(dead)
            .addHost(config.host(), config.port())
            .build();
    PgConnector multi = new PgConnector(twoHosts);
    try (Connection plain = multi.openPlain("pgetl:catalog:connector_it_multi");
        ReplicationConnection repl = multi.openReplication("pgetl:apply:connector_it_multi")) {
      assertThat(TestSource.queryString(plain, "SELECT inet_server_port()::text"))
          .isEqualTo(Integer.toString(config.port()));
      assertThat(TestSource.queryString(plain, "SELECT pg_is_in_recovery()::text"))
          .isEqualTo("false");
      assertThat(applicationNameSeenByServer(repl.jdbc()))
          .isEqualTo("pgetl:apply:connector_it_multi");
      assertThat(repl.serverVersion().atLeast(ServerVersion.MIN_SUPPORTED_MAJOR)).isTrue();
    }
  }

  @Test
  void noReachableHostIsAConnectionFailureThatListsEveryHost() throws Exception {
    int first = freePort();
    int second = freePort();
    PgConnector nowhere =
        new PgConnector(
            config.toBuilder().host("127.0.0.1").port(first).addHost("127.0.0.1", second).build());
    assertThatThrownBy(() -> nowhere.openReplication("pgetl:apply:connector_it"))
        .isInstanceOf(EtlException.class)
        .satisfies(
            e -> {
              EtlException ee = (EtlException) e;
              assertThat(ee.kind()).isEqualTo(ErrorKind.SOURCE_CONNECTION_FAILED);
              assertThat(ee.getMessage())
                  .contains("postgresql://127.0.0.1:" + first + ",127.0.0.1:" + second + "/");
            });
  }

  /** Returns a port nothing listens on (free a moment ago, on the loopback address). */
  private static int freePort() throws java.io.IOException {
    try (java.net.ServerSocket s =
        new java.net.ServerSocket(0, 1, java.net.InetAddress.getByName("127.0.0.1"))) {
      return s.getLocalPort();
    }
  }

  @Test
  void requiringTlsFromAServerWithoutTlsIsATlsError() throws Exception {
    if ("on".equals(TestSource.queryString(admin, "SHOW ssl"))) {
      return; // this server speaks TLS; the failure under test needs one that does not
    }
    PgConnector tls = new PgConnector(config.toBuilder().sslMode(SslMode.REQUIRE).build());
    assertThatThrownBy(() -> tls.openPlain("pgetl:catalog:connector_it"))
        .isInstanceOf(EtlException.class)
        .satisfies(e -> assertThat(((EtlException) e).kind()).isEqualTo(ErrorKind.TLS_ERROR));
  }

  @Test
  void importingAnUnknownSnapshotIsSnapshotTooOld() {
    assertThatThrownBy(() -> connector.openSnapshotChild("pgetl:copy:x", "00000009-00000009-1"))
        .isInstanceOf(EtlException.class)
        .satisfies(
            e ->
                assertThat(((EtlException) e).kind()).isEqualTo(ErrorKind.SOURCE_SNAPSHOT_TOO_OLD));
  }
}
