package org.pgetl.core.internal.preflight;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;
import org.pgetl.error.ErrorKind;
import org.pgetl.error.RetryDirective;
import org.pgetl.model.Lsn;
import org.pgetl.model.TableId;
import org.pgetl.store.PipelineStore.TableRequest;
import org.pgetl.store.TableState;

class PreflightMessagesTest {
  private static final PreflightMessages.Resource SLOTS = PreflightRunner.SLOTS;

  @Test
  void enoughFreeSlotsPassAndSayWhatIsNeeded() {
    CheckResult c = PreflightMessages.capacity(SLOTS, 10, 3, 0, 1, 7, 4);
    assertThat(c.outcome()).isEqualTo(CheckResult.Outcome.PASSED);
    assertThat(c.summary())
        .isEqualTo(
            "replication slots: 5 needed (the apply slot and 4 table-sync workers), 7 of"
                + " max_replication_slots = 10 free");
  }

  @Test
  void oneFreeSlotForTwoNeededSaysHowManyAreFreeAndWhatToRaise() {
    CheckResult c = PreflightMessages.capacity(SLOTS, 1, 0, 0, 1, 1, 4);
    assertThat(c.outcome()).isEqualTo(CheckResult.Outcome.FAILED);
    assertThat(c.failure().kind()).isEqualTo(ErrorKind.SOURCE_CONFIGURATION_LIMIT_EXCEEDED);
    assertThat(c.failure().description())
        .isEqualTo(
            "the pipeline needs 2 replication slots (the apply slot and 1 table-sync worker), but"
                + " only 1 of max_replication_slots = 1 is free (0 in use): raise"
                + " max_replication_slots to at least 2 (a server restart)");
    assertThat(c.summary()).isEqualTo(c.failure().description());
  }

  @Test
  void whenSlotsAreTakenTheFixAlsoSaysHowManyToFree() {
    CheckResult c = PreflightMessages.capacity(SLOTS, 3, 3, 0, 1, 1, 4);
    assertThat(c.failure().description())
        .endsWith(
            "raise max_replication_slots to at least 5 (a server restart), or free 2 of the 3 in use");
  }

  @Test
  void whenFewerWorkersWouldFitTheFixNamesMaxTableSyncWorkers() {
    CheckResult c = PreflightMessages.capacity(SLOTS, 8, 5, 0, 1, 20, 4);
    assertThat(c.failure().description())
        .contains("needs 5 replication slots")
        .contains("only 3 of max_replication_slots = 8 are free (5 in use)")
        .endsWith(
            "set maxTableSyncWorkers to 2 (copies fewer tables at once), or raise"
                + " max_replication_slots to at least 10 (a server restart)");
  }

  @Test
  void anExistingApplySlotAndLeftoverSyncSlotsCountAsAvailable() {
    // 4 in use of 4, two of them leftovers of this pipeline that the start drops first
    CheckResult c = PreflightMessages.capacity(SLOTS, 4, 4, 2, 0, 2, 4);
    assertThat(c.outcome()).isEqualTo(CheckResult.Outcome.PASSED);
    assertThat(c.summary()).contains("2 needed (2 table-sync workers; the apply slot exists)");
  }

  @Test
  void nothingToCopyNeedsOnlyTheApplyWorker() {
    CheckResult senders = PreflightMessages.capacity(PreflightRunner.SENDERS, 1, 0, 0, 1, 0, 4);
    assertThat(senders.outcome()).isEqualTo(CheckResult.Outcome.PASSED);
    assertThat(senders.summary())
        .isEqualTo(
            "WAL senders: 1 needed (the apply stream and 0 table-sync workers), 1 of"
                + " max_wal_senders = 1 free");
  }

  @Test
  void tablesToCopyAreNewOnesUnfinishedOnesAndTimedRetries() {
    Map<TableId, TableState> states =
        Map.of(
            new TableId(2), TableState.INIT,
            new TableId(3), TableState.READY,
            new TableId(4), new TableState.SyncDone(Lsn.parse("0/10")),
            new TableId(5),
                new TableState.Errored(
                    ErrorKind.DESTINATION_TIMEOUT,
                    "slow",
                    "wait",
                    RetryDirective.TIMED,
                    Instant.EPOCH,
                    1),
            new TableId(6),
                new TableState.Errored(
                    ErrorKind.DESTINATION_ERROR, "bad", "fix it", RetryDirective.MANUAL));
    List<TableId> published = IntStream.rangeClosed(1, 6).mapToObj(TableId::new).toList();
    // 1 (new), 2 (init), 5 (timed retry)
    assertThat(PreflightRunner.tablesToCopy(published, states, List.of())).isEqualTo(3);
    // and the ones an operator asked for: 3 copied again, 6 retried; a retry of 4 is ignored
    List<TableRequest> requests =
        List.of(
            new TableRequest(1, new TableId(3), TableRequest.Action.RESYNC, "op", Instant.EPOCH),
            new TableRequest(2, new TableId(6), TableRequest.Action.RETRY, "op", Instant.EPOCH),
            new TableRequest(3, new TableId(4), TableRequest.Action.RETRY, "op", Instant.EPOCH));
    assertThat(PreflightRunner.tablesToCopy(published, states, requests)).isEqualTo(5);
  }

  @Test
  void aTableWithoutPrimaryKeyGetsThreeFixes() {
    assertThat(PreflightMessages.replicaIdentityProblem("public.t", 'd', false, false))
        .isEqualTo(
            "table public.t has no primary key: add one (ALTER TABLE public.t ADD PRIMARY KEY"
                + " (...)), or run ALTER TABLE public.t REPLICA IDENTITY FULL or ALTER TABLE"
                + " public.t REPLICA IDENTITY USING INDEX <a unique index>");
    assertThat(PreflightMessages.replicaIdentityProblem("public.t", 'd', true, false)).isNull();
    assertThat(PreflightMessages.replicaIdentityProblem("public.t", 'f', false, false)).isNull();
  }

  @Test
  void replicaIdentityNothingAndAGoneIndexAreNamed() {
    assertThat(PreflightMessages.replicaIdentityProblem("public.t", 'n', true, false))
        .isEqualTo(
            "table public.t has REPLICA IDENTITY NOTHING: run ALTER TABLE public.t REPLICA"
                + " IDENTITY DEFAULT (its primary key), or ALTER TABLE public.t REPLICA IDENTITY"
                + " FULL");
    assertThat(PreflightMessages.replicaIdentityProblem("public.t", 'n', false, false))
        .startsWith("table public.t has REPLICA IDENTITY NOTHING and no primary key: run")
        .contains("REPLICA IDENTITY FULL")
        .contains("add a primary key");
    assertThat(PreflightMessages.replicaIdentityProblem("public.t", 'i', false, false))
        .startsWith("the replica identity index of table public.t is gone: run ALTER TABLE")
        .contains("USING INDEX <a unique index>")
        .doesNotContain("DEFAULT");
    assertThat(PreflightMessages.replicaIdentityProblem("public.t", 'i', true, true)).isNull();
  }

  @Test
  void longListsNameTenAndCountTheRest() {
    List<String> names = IntStream.rangeClosed(1, 12).mapToObj(i -> "t" + i).toList();
    assertThat(PreflightMessages.listed(names))
        .isEqualTo("t1, t2, t3, t4, t5, t6, t7, t8, t9, t10 and 2 more");
    assertThat(PreflightMessages.listed(List.of("a", "b"))).isEqualTo("a, b");
  }
}
