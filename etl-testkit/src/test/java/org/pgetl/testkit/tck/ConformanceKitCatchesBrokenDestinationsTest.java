package org.pgetl.testkit.tck;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.platform.engine.discovery.DiscoverySelectors.selectClass;

import java.util.Map;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;
import org.junit.platform.engine.TestExecutionResult;
import org.junit.platform.engine.support.descriptor.MethodSource;
import org.junit.platform.testkit.engine.EngineExecutionResults;
import org.junit.platform.testkit.engine.EngineTestKit;
import org.junit.platform.testkit.engine.Event;

/**
 * The conformance kit's checks can fail: each deliberately broken destination of {@link
 * BrokenDestinations} fails exactly the kit tests that cover what it breaks.
 */
class ConformanceKitCatchesBrokenDestinationsTest {

  /** Runs the kit on a broken destination; returns the failed test methods and their errors. */
  private static Map<String, Throwable> failures(Class<?> kit) {
    EngineExecutionResults results =
        EngineTestKit.engine("junit-jupiter").selectors(selectClass(kit)).execute();
    assertThat(results.testEvents().started().count())
        .as("kit tests run on " + kit.getSimpleName())
        .isEqualTo(25);
    Map<String, Throwable> failed = new TreeMap<>();
    results.testEvents().failed().stream()
        .forEach(
            (Event e) -> {
              String method =
                  e.getTestDescriptor()
                      .getSource()
                      .map(s -> ((MethodSource) s).getMethodName())
                      .orElseThrow();
              Throwable error =
                  e.getPayload(TestExecutionResult.class)
                      .flatMap(TestExecutionResult::getThrowable)
                      .orElseThrow();
              failed.put(method, error);
            });
    return failed;
  }

  @Test
  void answeringAcceptedThenDurableFailsTheDurabilityCheck() {
    Map<String, Throwable> failed = failures(BrokenDestinations.AnswersTwice.class);

    assertThat(failed)
        .containsKeys(
            "requireDurableWritesAreAnsweredDurable",
            "severalWritesInFlightOnOneStream",
            "insertUpdateDeleteByKey");
    assertThat(failed.values())
        .allSatisfy(
            e ->
                assertThat(e)
                    .hasMessageContaining("was answered ACCEPTED")
                    .hasMessageContaining("REQUIRE_DURABLE write must be answered durable()"));
  }

  @Test
  void acceptingTheFinishBarrierFails() {
    Map<String, Throwable> failed = failures(BrokenDestinations.AcceptsFinish.class);

    assertThat(failed)
        .containsKeys("emptyTableGetsOnlyTheFinishBarrier", "insertUpdateDeleteByKey");
    assertThat(failed.values())
        .allSatisfy(
            e -> assertThat(e).hasMessageContaining("Finish barrier must be answered durable()"));
  }

  @Test
  void acceptingARequireDurableWriteFails() {
    Map<String, Throwable> failed = failures(BrokenDestinations.AcceptsRequireDurable.class);

    assertThat(failed).containsKey("requireDurableWritesAreAnsweredDurable");
    assertThat(failed.values())
        .allSatisfy(
            e -> assertThat(e).hasMessageContaining("REQUIRE_DURABLE write must be answered"));
  }

  @Test
  void duplicatingOnReplayFailsTheReplayTests() {
    Map<String, Throwable> failed = failures(BrokenDestinations.DuplicatesOnReplay.class);

    assertThat(failed)
        .containsOnlyKeys(
            "redeliveredCopyBatchesDoNotDuplicateRows",
            "replayedEventsDoNotDuplicateRows",
            "replayedEventsAfterRestartDoNotDuplicateRows");
    assertThat(failed.get("replayedEventsDoNotDuplicateRows"))
        .hasMessageContaining("rows of tck.log");
  }

  @Test
  void deduplicatingOnOneKeyForAllTablesLosesTheLaggingStream() {
    Map<String, Throwable> failed = failures(BrokenDestinations.DeduplicatesAcrossTables.class);

    assertThat(failed).containsKey("eventsOfTwoStreamsConcurrently");
    // whichever stream ends up behind loses events: the lagging one, or — when it overtakes the
    // other — the first one
    assertThat(failed.get("eventsOfTwoStreamsConcurrently").getMessage())
        .containsAnyOf("rows of tck.other", "rows of tck.items");
  }

  @Test
  void neverAnsweringTheBarrierFails() {
    Map<String, Throwable> failed = failures(BrokenDestinations.NeverAnswersFinish.class);

    assertThat(failed).containsKey("emptyTableGetsOnlyTheFinishBarrier");
    assertThat(failed.get("emptyTableGetsOnlyTheFinishBarrier"))
        .hasMessageContaining("was not answered within 500 ms");
  }

  @Test
  void blockingTheCallerFails() {
    Map<String, Throwable> failed = failures(BrokenDestinations.SlowToReturn.class);

    assertThat(failed).containsKey("requireDurableWritesAreAnsweredDurable");
    assertThat(failed.get("requireDurableWritesAreAnsweredDurable"))
        .hasMessageContaining("ms to return (bound 100 ms)");
  }

  @Test
  void nullingMissingToastColumnsFails() {
    Map<String, Throwable> failed = failures(BrokenDestinations.NullsMissingColumns.class);

    assertThat(failed).containsOnlyKeys("partialUpdateKeepsMissingColumns");
  }

  @Test
  void ignoringTruncateFails() {
    Map<String, Throwable> failed = failures(BrokenDestinations.IgnoresTruncate.class);

    assertThat(failed)
        .containsOnlyKeys(
            "truncateClearsTheNamedTables",
            "tableWithoutReplicaIdentityAppendsEqualRowsAndTruncates",
            "tableWithoutColumnsKeepsItsRowCount");
  }

  @Test
  void keepingAnEarlierCopyAttemptFails() {
    Map<String, Throwable> failed = failures(BrokenDestinations.KeepsEarlierAttempts.class);

    assertThat(failed)
        .containsKeys(
            "dropTableForCopyRemovesAnEarlierAttempt", "copyAfterRestartStartsAgainFromScratch");
  }

  @Test
  void applyingLateWorkOfAnAbandonedAttemptFails() {
    Map<String, Throwable> failed = failures(BrokenDestinations.AppliesStaleWork.class);

    assertThat(failed)
        .containsOnlyKeys(
            "aLateBatchOfAnAbandonedAttemptIsNotApplied",
            "aLateWriteOfAnAbandonedCatchUpStreamIsNotApplied");
  }

  @Test
  void abandoningWorkWithoutAShutdownFails() {
    Map<String, Throwable> failed = failures(BrokenDestinations.AbandonsCopies.class);

    assertThat(failed).containsKey("copyWritesEveryRowOfATable");
    assertThat(failed.get("copyWritesEveryRowOfATable"))
        .hasMessageContaining("answered shutdown() although no shutdown was under way");
  }

  @Test
  void throwingFromAWriteFails() {
    Map<String, Throwable> failed = failures(BrokenDestinations.RejectsEvents.class);

    assertThat(failed).containsKey("requireDurableWritesAreAnsweredDurable");
    assertThat(failed.get("requireDurableWritesAreAnsweredDurable"))
        .hasMessageContaining("threw")
        .hasMessageContaining("DESTINATION_ERROR");
  }

  @Test
  void losingDataOnRestartFails() {
    Map<String, Throwable> failed = failures(BrokenDestinations.ForgetsOnRestart.class);

    assertThat(failed)
        .containsOnlyKeys(
            "durableDataSurvivesARestart", "replayedEventsAfterRestartDoNotDuplicateRows");
  }
}
