package org.pgetl.examples.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.pgetl.PipelineStatus;
import org.pgetl.error.ErrorKind;
import org.pgetl.error.EtlException;
import org.pgetl.error.RetryDirective;
import org.pgetl.model.Lsn;

@Timeout(30)
class ReplicateCommandTest {

  /**
   * Regression: {@code PipelineStatus.lifecycle()} is null until the pipeline read the lifecycle
   * row once (phase {@code STARTING}); the status line threw a NullPointerException, which ended
   * {@code pgetl replicate}.
   */
  @Test
  void aStatusLineIsPrintedBeforeTheLifecycleWasReadOnce() {
    PipelineStatus starting =
        new PipelineStatus(
            "cli",
            PipelineStatus.Phase.STARTING,
            null,
            Map.of(),
            Lsn.ZERO,
            -1,
            java.time.Duration.ZERO,
            null,
            List.of(),
            0,
            null);

    assertThat(ReplicateCommand.statusLine(starting, new SimpleMeterRegistry()))
        .startsWith("pgetl: starting, lifecycle not read yet, tables none yet");
  }

  /** A table copied in chunks shows its chunks, those kept by a resumed copy, and the time left. */
  @Test
  void aTableCopiedInChunksShowsItsChunksKeptAndTimeLeft() {
    PipelineStatus.TableStatus copying =
        new PipelineStatus.TableStatus(
            org.pgetl.model.TableName.parse("public.events"),
            org.pgetl.store.TableState.DATA_SYNC,
            1_200_000,
            new PipelineStatus.ChunkProgress(
                12,
                40,
                5,
                1_200_000,
                800L << 20,
                40.0 * (1 << 20),
                java.time.Duration.ofSeconds(560)));
    PipelineStatus status =
        new PipelineStatus(
            "cli",
            PipelineStatus.Phase.RUNNING,
            null,
            Map.of(new org.pgetl.model.TableId(1), copying),
            Lsn.ZERO,
            -1,
            java.time.Duration.ZERO,
            null,
            List.of(),
            0,
            null);

    assertThat(ReplicateCommand.statusLine(status, new SimpleMeterRegistry()))
        .contains(
            "tables 1 data_sync (copying in chunks: public.events 12/40 chunks (5 kept), about 560 s"
                + " left)");
    assertThat(Converters.size("1GiB")).isEqualTo(1L << 30);
    assertThat(Converters.size("64MiB")).isEqualTo(64L << 20);
    assertThat(Converters.size("512k")).isEqualTo(512L << 10);
    assertThat(Converters.size("0")).isZero();
    assertThat(Converters.size("never")).isEqualTo(Long.MAX_VALUE);
    org.assertj.core.api.Assertions.assertThatThrownBy(() -> Converters.size("1 parsec"))
        .hasMessageContaining("is not a size");
  }

  @Test
  void aStandbySaysWhichInstanceIsActive() {
    org.pgetl.store.PipelineStore.LeaseHolder holder =
        new org.pgetl.store.PipelineStore.LeaseHolder(
            "db1 pid 4242 (postgres-mirror)", 7, java.time.Instant.parse("2025-01-02T03:04:05Z"));
    PipelineStatus standby =
        new PipelineStatus(
            "shop",
            PipelineStatus.Phase.STANDBY,
            null,
            Map.of(),
            Lsn.ZERO,
            -1,
            java.time.Duration.ZERO,
            null,
            List.of(),
            0,
            holder);

    assertThat(ReplicateCommand.standbyLine("shop", holder))
        .isEqualTo(
            "pgetl: standby: pipeline shop is active in db1 pid 4242 (postgres-mirror) since"
                + " 2025-01-02T03:04:05Z, epoch 7; this instance takes over when it stops");
    assertThat(ReplicateCommand.statusLine(standby, new SimpleMeterRegistry()))
        .isEqualTo(
            "pgetl: standby, active elsewhere: db1 pid 4242 (postgres-mirror) since"
                + " 2025-01-02T03:04:05Z, epoch 7");
    assertThat(StoreDirectory.destinationOf(holder.holder())).contains("postgres-mirror");
    assertThat(StoreDirectory.destinationOf("no destination here")).isEmpty();
  }

  /**
   * The hint printed when a failure ends the command says what to do now: a kind the pipeline would
   * retry while it runs says to run the command again, never that it retries by itself.
   */
  @Test
  void theHintOfAFailureThatEndsTheCommandSaysToRunItAgain() {
    for (ErrorKind kind : ErrorKind.values()) {
      String line = ErrorReport.describe(new EtlException(kind, "it failed"));
      assertThat(line).as("%s", kind).contains(". hint: ");
      assertThat(line).as("%s", kind).doesNotContain("by itself");
      if (kind.directive() == RetryDirective.TIMED) {
        assertThat(line).as("%s", kind).contains("run the command again");
      }
    }
  }

  @Test
  void theLastErrorSaysHowLongAgoAndWhetherThePipelineRecoveredSince() {
    java.time.Instant at = java.time.Instant.parse("2026-01-02T03:04:05Z");
    String message = "STATE_STORE_ERROR: advancing the apply progress failed";
    PipelineStatus recovered =
        running(new PipelineStatus.LastError(message, at, true), null, message);
    assertThat(
            ReplicateCommand.statusLine(recovered, new SimpleMeterRegistry(), at.plusSeconds(41)))
        .endsWith(", last error 41 s ago (recovered): " + message);
    PipelineStatus current =
        running(new PipelineStatus.LastError(message, at, false), null, message);
    assertThat(ReplicateCommand.statusLine(current, new SimpleMeterRegistry(), at.plusSeconds(300)))
        .endsWith(", last error 5 min ago: " + message);
    assertThat(
            ReplicateCommand.statusLine(
                running(null, null), new SimpleMeterRegistry(), at.plusSeconds(1)))
        .doesNotContain("last error");
  }

  @Test
  void aStandbyThatHoldsThePipelineIsNamedInTheStatusLine() {
    String held =
        "held by standby slot pgetl_standby (no standby streams) of synchronized_standby_slots";
    assertThat(
            ReplicateCommand.statusLine(
                running(null, held), new SimpleMeterRegistry(), java.time.Instant.now()))
        .contains(", " + held);
  }

  @Test
  void aMissingSlotNamesTheFlagThatCopiesAgain() {
    for (ErrorKind kind :
        List.of(ErrorKind.REPLICATION_SLOT_NOT_FOUND, ErrorKind.REPLICATION_SLOT_INVALIDATED)) {
      assertThat(ErrorReport.describe(new EtlException(kind, "the apply slot is missing")))
          .contains("--on-missing-slot recopy")
          .contains("--failover-slots");
    }
  }

  private static PipelineStatus running(
      PipelineStatus.@org.jspecify.annotations.Nullable LastError last,
      @org.jspecify.annotations.Nullable String heldBy,
      String... errors) {
    return new PipelineStatus(
        "cli",
        PipelineStatus.Phase.RUNNING,
        org.pgetl.lifecycle.LifecycleState.ACTIVE,
        Map.of(),
        Lsn.ZERO,
        0,
        java.time.Duration.ZERO,
        null,
        List.of(errors),
        1,
        null,
        last,
        heldBy);
  }
}
