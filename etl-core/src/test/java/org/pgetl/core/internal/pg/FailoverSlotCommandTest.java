package org.pgetl.core.internal.pg;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;
import org.pgetl.PipelineConfig;
import org.pgetl.error.ErrorKind;
import org.pgetl.error.EtlException;

class FailoverSlotCommandTest {
  @Test
  void ordinarySlotsKeepTheSyntaxEveryServerReads() {
    assertThat(
            ReplicationConnection.createSlotCommand(
                "pgetl_apply_p", SnapshotMode.NOEXPORT_SNAPSHOT, false))
        .isEqualTo("CREATE_REPLICATION_SLOT \"pgetl_apply_p\" LOGICAL pgoutput NOEXPORT_SNAPSHOT");
    assertThat(
            ReplicationConnection.createSlotCommand(
                "pgetl_sync_p_1", SnapshotMode.USE_SNAPSHOT, false))
        .endsWith("LOGICAL pgoutput USE_SNAPSHOT");
  }

  @Test
  void temporarySlotsSayTemporaryBeforeLogical() {
    assertThat(
            ReplicationConnection.createSlotCommand(
                "pgetl_apply_p", SnapshotMode.NOEXPORT_SNAPSHOT, true, false))
        .isEqualTo(
            "CREATE_REPLICATION_SLOT \"pgetl_apply_p\" TEMPORARY LOGICAL pgoutput NOEXPORT_SNAPSHOT");
    assertThat(
            ReplicationConnection.createSlotCommand(
                "pgetl_sync_p_1", SnapshotMode.USE_SNAPSHOT, true, false))
        .isEqualTo(
            "CREATE_REPLICATION_SLOT \"pgetl_sync_p_1\" TEMPORARY LOGICAL pgoutput USE_SNAPSHOT");
  }

  @Test
  void failoverSlotsUseTheOptionListOfPostgres17() {
    assertThat(
            ReplicationConnection.createSlotCommand(
                "pgetl_apply_p", SnapshotMode.NOEXPORT_SNAPSHOT, true))
        .isEqualTo(
            "CREATE_REPLICATION_SLOT \"pgetl_apply_p\" LOGICAL pgoutput"
                + " (SNAPSHOT 'nothing', FAILOVER)");
    assertThat(ReplicationConnection.createSlotCommand("s", SnapshotMode.USE_SNAPSHOT, true))
        .endsWith("(SNAPSHOT 'use', FAILOVER)");
    assertThat(ReplicationConnection.createSlotCommand("s", SnapshotMode.EXPORT_SNAPSHOT, true))
        .endsWith("(SNAPSHOT 'export', FAILOVER)");
  }

  @Test
  void failoverSlotsBeforePostgres17AreAConfigErrorNamingSettingAndVersion() {
    assertThat(new ServerVersion(170006).supportsFailoverSlots()).isTrue();
    assertThat(new ServerVersion(160010).supportsFailoverSlots()).isFalse();
    new ServerVersion(170006).requireFailoverSlots(true);
    new ServerVersion(130022).requireFailoverSlots(false);
    assertThatThrownBy(() -> new ServerVersion(160010).requireFailoverSlots(true))
        .isInstanceOf(EtlException.class)
        .satisfies(e -> assertThat(((EtlException) e).kind()).isEqualTo(ErrorKind.CONFIG_ERROR))
        .hasMessageContaining("failoverSlots needs PostgreSQL 17 or later")
        .hasMessageContaining("PostgreSQL 16.10");
  }

  @Test
  void autoIsAFailoverSlotFromSeventeenOnAndNeverATemporaryOne() {
    PipelineConfig.FailoverSlots auto = PipelineConfig.FailoverSlots.AUTO;
    assertThat(new ServerVersion(170006).failoverSlots(auto, false)).isTrue();
    assertThat(new ServerVersion(170006).failoverSlots(auto, true)).isFalse();
    assertThat(new ServerVersion(160010).failoverSlots(auto, false)).isFalse();
    assertThat(new ServerVersion(160010).failoverSlots(PipelineConfig.FailoverSlots.OFF, false))
        .isFalse();
    assertThat(new ServerVersion(180001).failoverSlots(PipelineConfig.FailoverSlots.ON, false))
        .isTrue();
    assertThatThrownBy(
            () -> new ServerVersion(160010).failoverSlots(PipelineConfig.FailoverSlots.ON, false))
        .hasMessageContaining("failoverSlots needs PostgreSQL 17 or later");
  }
}
