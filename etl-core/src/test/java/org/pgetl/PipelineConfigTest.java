package org.pgetl;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.List;
import java.util.function.UnaryOperator;
import org.junit.jupiter.api.Test;
import org.pgetl.error.ErrorKind;
import org.pgetl.error.EtlException;
import org.pgetl.model.TableName;

class PipelineConfigTest {
  private static final PgConnectionConfig SOURCE =
      PgConnectionConfig.builder()
          .host("db.example")
          .database("shop")
          .user("pgetl")
          .password("s3cret-Passw0rd")
          .build();

  private static PipelineConfig.Builder valid() {
    return PipelineConfig.builder().pipelineId("orders_1").publication("orders").source(SOURCE);
  }

  @Test
  void defaultsAreTheDocumentedConstants() {
    PipelineConfig c = valid().build();
    assertThat(c.batchMaxBytes()).isEqualTo(PipelineConfig.DEFAULT_BATCH_MAX_BYTES);
    assertThat(c.batchMaxFill()).isEqualTo(Duration.ofSeconds(1));
    assertThat(c.maxInFlightWrites()).isEqualTo(4);
    assertThat(c.maxTableSyncWorkers()).isEqualTo(4);
    assertThat(c.copyConnectionsPerTable()).isEqualTo(4);
    assertThat(c.copyMinBytesPerConnection()).isEqualTo(8L * 1024 * 1024);
    assertThat(c.invalidatedSlotBehavior()).isEqualTo(PipelineConfig.InvalidatedSlotBehavior.FAIL);
    assertThat(c.pgoutputBinary()).isFalse();
    assertThat(c.pgoutputStreaming()).isTrue();
    assertThat(c.spoolDirectory())
        .isEqualTo(java.nio.file.Path.of(System.getProperty("java.io.tmpdir"), "pgetl-spool"));
    assertThat(c.spoolMaxBytes()).isEqualTo(10L << 30);
    assertThat(c.temporarySlots()).isFalse();
    assertThat(c.tableCopy().shouldCopy(new TableName("public", "t"))).isTrue();
    assertThat(c.applySlotName()).isEqualTo("pgetl_apply_orders_1");
    assertThat(c.toBuilder().build()).isEqualTo(c);
    PipelineConfig temporary = c.toBuilder().temporarySlots(true).build();
    assertThat(temporary.toBuilder().build().temporarySlots()).isTrue();
  }

  @Test
  void failoverSlotsAreAutoByDefaultAndTheBooleanSetterMapsToOnAndOff() {
    assertThat(valid().build().failoverSlots()).isEqualTo(PipelineConfig.FailoverSlots.AUTO);
    PipelineConfig c = valid().failoverSlots(true).build();
    assertThat(c.failoverSlots()).isEqualTo(PipelineConfig.FailoverSlots.ON);
    assertThat(c.toBuilder().build()).isEqualTo(c);
    assertThat(c.toString()).contains("failoverSlots=ON");
    assertThat(valid().failoverSlots(false).build().failoverSlots())
        .isEqualTo(PipelineConfig.FailoverSlots.OFF);
    // auto gives way to temporary slots; only an explicit on conflicts with them
    assertThat(valid().temporarySlots(true).build().failoverSlots())
        .isEqualTo(PipelineConfig.FailoverSlots.AUTO);
  }

  @Test
  void theConstructorsOfEarlierReleasesStillBuildTheSameConfiguration() {
    PipelineConfig c = valid().failoverSlots(true).requireReplicaIdentity(true).build();
    PipelineConfig old =
        new PipelineConfig(
            c.pipelineId(),
            c.publication(),
            c.source(),
            c.batchMaxBytes(),
            c.batchMaxFill(),
            c.maxInFlightWrites(),
            c.maxTableSyncWorkers(),
            c.copyConnectionsPerTable(),
            c.retryDelay(),
            c.retryMaxDelay(),
            c.retryBackoffMultiplier(),
            c.retryMaxAttempts(),
            c.tableCopy(),
            c.invalidatedSlotBehavior(),
            c.pgoutputBinary(),
            c.pgoutputStreaming(),
            c.spoolDirectory(),
            c.spoolMaxBytes(),
            c.statusInterval(),
            c.shutdownTimeout(),
            c.lifecyclePollInterval(),
            c.publicationRefreshInterval(),
            c.instanceMode(),
            c.leaseCheckInterval(),
            c.takeoverDelay(),
            c.temporarySlots(),
            true,
            true);
    assertThat(old).isEqualTo(c);
    PipelineConfig beforeMinBytes =
        new PipelineConfig(
            c.pipelineId(),
            c.publication(),
            c.source(),
            c.batchMaxBytes(),
            c.batchMaxFill(),
            c.maxInFlightWrites(),
            c.maxTableSyncWorkers(),
            c.copyConnectionsPerTable(),
            c.retryDelay(),
            c.retryMaxDelay(),
            c.retryBackoffMultiplier(),
            c.retryMaxAttempts(),
            c.tableCopy(),
            c.invalidatedSlotBehavior(),
            c.pgoutputBinary(),
            c.pgoutputStreaming(),
            c.spoolDirectory(),
            c.spoolMaxBytes(),
            c.statusInterval(),
            c.shutdownTimeout(),
            c.lifecyclePollInterval(),
            c.publicationRefreshInterval(),
            c.instanceMode(),
            c.leaseCheckInterval(),
            c.takeoverDelay(),
            c.temporarySlots(),
            c.failoverSlots(),
            c.requireReplicaIdentity());
    assertThat(beforeMinBytes).isEqualTo(c);
    PipelineConfig older =
        new PipelineConfig(
            c.pipelineId(),
            c.publication(),
            c.source(),
            c.batchMaxBytes(),
            c.batchMaxFill(),
            c.maxInFlightWrites(),
            c.maxTableSyncWorkers(),
            c.copyConnectionsPerTable(),
            c.retryDelay(),
            c.retryMaxDelay(),
            c.retryBackoffMultiplier(),
            c.retryMaxAttempts(),
            c.tableCopy(),
            c.invalidatedSlotBehavior(),
            c.pgoutputBinary(),
            c.pgoutputStreaming(),
            c.spoolDirectory(),
            c.spoolMaxBytes(),
            c.statusInterval(),
            c.shutdownTimeout(),
            c.lifecyclePollInterval(),
            c.publicationRefreshInterval(),
            c.instanceMode(),
            c.leaseCheckInterval(),
            c.takeoverDelay(),
            c.temporarySlots(),
            false);
    assertThat(older.failoverSlots()).isEqualTo(PipelineConfig.FailoverSlots.OFF);
    assertThat(older.requireReplicaIdentity()).isFalse();
  }

  @Test
  void theSourcePasswordNeverAppearsInToString() {
    PipelineConfig c = valid().build();
    assertThat(c.toString()).doesNotContain("s3cret").contains("db.example");
    assertThat(c.source().toString()).doesNotContain("s3cret");
  }

  private static void rejects(UnaryOperator<PipelineConfig.Builder> change, String message) {
    assertThatThrownBy(() -> change.apply(valid()).build())
        .isInstanceOf(EtlException.class)
        .hasMessageContaining(message)
        .satisfies(e -> assertThat(((EtlException) e).kind()).isEqualTo(ErrorKind.CONFIG_ERROR));
  }

  @Test
  void invalidValuesNameTheFieldAndTheConstraint() {
    rejects(b -> b.batchMaxBytes(0), "batch.maxBytes must be > 0, was 0");
    rejects(b -> b.batchMaxFill(Duration.ZERO), "batch.maxFill must be > 0, was PT0S");
    rejects(b -> b.maxInFlightWrites(0), "maxInFlightWrites must be > 0, was 0");
    rejects(b -> b.maxTableSyncWorkers(-1), "maxTableSyncWorkers must be > 0, was -1");
    rejects(b -> b.copyConnectionsPerTable(65), "copyConnectionsPerTable must be <= 64, was 65");
    rejects(b -> b.copyMinBytesPerConnection(-1), "copyMinBytesPerConnection must be >= 0, was -1");
    rejects(
        b -> b.retryDelay(Duration.ofMinutes(10)), "retry.maxDelay must be >= retry.delay (PT10M)");
    rejects(b -> b.retryBackoffMultiplier(0.5), "retry.backoffMultiplier must be >= 1.0, was 0.5");
    rejects(b -> b.retryMaxAttempts(-1), "retry.maxAttempts must be >= 0, was -1");
    rejects(
        b -> b.temporarySlots(true).failoverSlots(true),
        "temporarySlots and failoverSlots exclude each other");
    rejects(b -> b.pipelineId("Orders-1"), "pipelineId must be 1-40 characters of [a-z0-9_]");
    rejects(b -> b.pipelineId(null), "pipelineId must be set");
    rejects(b -> b.publication(" "), "publication must be set");
    rejects(b -> b.publication("p".repeat(64)), "publication must be at most 63 bytes");
    rejects(b -> b.source(null), "source must be set");
    rejects(b -> b.statusInterval(Duration.ofSeconds(-1)), "statusInterval must be > 0");
    rejects(b -> b.spoolMaxBytes(0), "spoolMaxBytes must be > 0, was 0");
    rejects(b -> b.spoolDirectory(null), "spoolDirectory must be set");
  }

  @Test
  void tableCopySelections() {
    TableName a = new TableName("public", "a");
    TableName b = new TableName("public", "b");
    assertThat(TableCopySelection.none().shouldCopy(a)).isFalse();
    assertThat(TableCopySelection.only(List.of(a)).shouldCopy(a)).isTrue();
    assertThat(TableCopySelection.only(List.of(a)).shouldCopy(b)).isFalse();
    assertThat(TableCopySelection.except(List.of(a)).shouldCopy(a)).isFalse();
    assertThat(TableCopySelection.except(List.of(a)).shouldCopy(b)).isTrue();
  }
}
