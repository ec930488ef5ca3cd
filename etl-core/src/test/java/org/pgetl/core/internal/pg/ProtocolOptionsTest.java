package org.pgetl.core.internal.pg;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.pgetl.core.internal.decode.StreamingMode;
import org.pgetl.error.ErrorKind;
import org.pgetl.error.EtlException;
import org.pgetl.model.Lsn;

class ProtocolOptionsTest {
  private static final StreamOptions BASE = StreamOptions.of("s", Lsn.ZERO, List.of("pub"));

  @Test
  void maxProtoVersionFollowsServerMajor() {
    assertThat(new ServerVersion(130022).maxProtoVersion()).isEqualTo(1);
    assertThat(new ServerVersion(140019).maxProtoVersion()).isEqualTo(2);
    assertThat(new ServerVersion(150014).maxProtoVersion()).isEqualTo(3);
    assertThat(new ServerVersion(160010).maxProtoVersion()).isEqualTo(4);
    assertThat(new ServerVersion(180001).maxProtoVersion()).isEqualTo(4);
    assertThat(new ServerVersion(170006)).hasToString("17.6");
  }

  @Test
  void protoVersionZeroMeansServerMaxAndLowerMayBeAsked() {
    assertThat(BASE.resolveProtoVersion(new ServerVersion(170006))).isEqualTo(4);
    assertThat(BASE.withProtoVersion(1).resolveProtoVersion(new ServerVersion(170006)))
        .isEqualTo(1);
    assertThat(BASE.resolveProtoVersion(new ServerVersion(140019))).isEqualTo(2);
  }

  @Test
  void optionsNeedingANewerServerAreConfigErrors() {
    assertThatThrownBy(
            () -> BASE.withProtoVersion(3).resolveProtoVersion(new ServerVersion(140019)))
        .isInstanceOf(EtlException.class)
        .satisfies(e -> assertThat(((EtlException) e).kind()).isEqualTo(ErrorKind.CONFIG_ERROR))
        .hasMessageContaining("proto_version 3 needs a newer server than 14.19");
    assertThatThrownBy(() -> BASE.withBinary(true).resolveProtoVersion(new ServerVersion(130022)))
        .hasMessageContaining("need PostgreSQL 14");
    assertThatThrownBy(
            () ->
                BASE.withProtoVersion(1)
                    .withStreaming(StreamingMode.ON)
                    .resolveProtoVersion(new ServerVersion(170006)))
        .hasMessageContaining("proto_version 2 or later");
    assertThatThrownBy(
            () ->
                BASE.withStreaming(StreamingMode.PARALLEL)
                    .resolveProtoVersion(new ServerVersion(150014)))
        .hasMessageContaining("parallel streaming needs proto_version 4");
    assertThat(
            BASE.withStreaming(StreamingMode.PARALLEL)
                .resolveProtoVersion(new ServerVersion(160010)))
        .isEqualTo(4);
  }

  @Test
  void publicationNamesAreQuotedIdentifiers() {
    StreamOptions o = StreamOptions.of("s", Lsn.ZERO, List.of("pub", "My \"Pub\", it's"));
    assertThat(o.publicationNamesOption()).isEqualTo("\"pub\",\"My \"\"Pub\"\", it's\"");
  }

  @Test
  void optionsAreValidated() {
    assertThatThrownBy(() -> StreamOptions.of("s", Lsn.ZERO, List.of()))
        .hasMessageContaining("publicationNames must not be empty");
    assertThatThrownBy(() -> StreamOptions.of("Bad", Lsn.ZERO, List.of("p")))
        .hasMessageContaining("slot name");
    assertThatThrownBy(() -> BASE.withProtoVersion(5)).hasMessageContaining("0..4, was 5");
    assertThatThrownBy(() -> BASE.withStatusInterval(Duration.ZERO))
        .hasMessageContaining("statusInterval must be > 0");
  }

  @Test
  void statusIntervalStaysWellInsideWalSenderTimeout() {
    assertThat(
            ReplicationConnection.effectiveStatusInterval(
                Duration.ofSeconds(10), Duration.ofSeconds(60)))
        .isEqualTo(Duration.ofSeconds(10));
    assertThat(
            ReplicationConnection.effectiveStatusInterval(
                Duration.ofSeconds(10), Duration.ofSeconds(15)))
        .isEqualTo(Duration.ofSeconds(5));
    assertThat(ReplicationConnection.effectiveStatusInterval(Duration.ofSeconds(10), Duration.ZERO))
        .isEqualTo(Duration.ofSeconds(10));
    assertThat(
            ReplicationConnection.effectiveStatusInterval(
                Duration.ofSeconds(10), Duration.ofMillis(30)))
        .isEqualTo(Duration.ofMillis(100));
  }

  @Test
  void parsesTimeSettingsAsShowPrintsThem() {
    assertThat(GucDurations.parse("x", "1min")).isEqualTo(Duration.ofMinutes(1));
    assertThat(GucDurations.parse("x", "60s")).isEqualTo(Duration.ofSeconds(60));
    assertThat(GucDurations.parse("x", "500ms")).isEqualTo(Duration.ofMillis(500));
    assertThat(GucDurations.parse("x", "250")).isEqualTo(Duration.ofMillis(250));
    assertThat(GucDurations.parse("x", "2h")).isEqualTo(Duration.ofHours(2));
    assertThat(GucDurations.parse("x", "1d")).isEqualTo(Duration.ofDays(1));
    assertThat(GucDurations.parse("x", "10us")).isEqualTo(Duration.ofNanos(10_000));
    assertThat(GucDurations.parse("x", "0")).isEqualTo(Duration.ZERO);
    assertThat(GucDurations.parse("x", "-1")).isEqualTo(Duration.ZERO);
    assertThatThrownBy(() -> GucDurations.parse("wal_sender_timeout", "soon"))
        .hasMessageContaining("could not read wal_sender_timeout: 'soon' is not a time");
    assertThatThrownBy(() -> GucDurations.parse("x", "5 fortnights"))
        .hasMessageContaining("is not a time");
  }

  @Test
  void idleBackoffSpinsThenDoublesUpToTheMaximum() {
    IdleBackoff b = IdleBackoff.DEFAULT;
    assertThat(b.parkNanos(0)).isZero();
    assertThat(b.parkNanos(2)).isZero();
    assertThat(b.parkNanos(3)).isEqualTo(20_000);
    assertThat(b.parkNanos(4)).isEqualTo(40_000);
    assertThat(b.parkNanos(8)).isEqualTo(640_000);
    assertThat(b.parkNanos(9)).isEqualTo(1_000_000);
    assertThat(b.parkNanos(Integer.MAX_VALUE)).isEqualTo(1_000_000);
  }
}
