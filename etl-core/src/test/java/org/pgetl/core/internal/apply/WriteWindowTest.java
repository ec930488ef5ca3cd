package org.pgetl.core.internal.apply;

import static org.assertj.core.api.Assertions.assertThat;
import static org.quicktheories.generators.SourceDSL.booleans;
import static org.quicktheories.generators.SourceDSL.integers;
import static org.quicktheories.generators.SourceDSL.lists;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.pgetl.destination.AsyncResult;
import org.pgetl.destination.WriteDurability;
import org.pgetl.error.ErrorKind;
import org.pgetl.error.EtlException;
import org.pgetl.model.Lsn;
import org.pgetl.testing.Theories;
import org.quicktheories.core.Gen;

class WriteWindowTest {

  private final WriteWindow window = new WriteWindow(4, () -> {});

  private AsyncResult dispatch(long commitEnd) {
    AsyncResult r = AsyncResult.create();
    window.track(r, commitEnd == 0 ? null : Lsn.of(commitEnd), WriteDurability.MAY_DEFER);
    return r;
  }

  @Test
  void durableAdvancesToTheWritesCommitLsn() {
    AsyncResult r = dispatch(100);
    assertThat(window.inFlight()).isEqualTo(1);
    r.durable();
    assertThat(window.poll().durableAdvancedTo()).isEqualTo(Lsn.of(100));
    assertThat(window.isClear()).isTrue();
  }

  @Test
  void acceptedIsCarriedUntilALaterDurable() {
    AsyncResult a = dispatch(100);
    AsyncResult b = dispatch(0); // a batch without a commit
    a.accepted();
    assertThat(window.poll().durableAdvancedTo()).isNull();
    assertThat(window.hasAcceptedNotDurable()).isTrue();
    assertThat(window.isClear()).isFalse();
    b.durable();
    assertThat(window.poll().durableAdvancedTo()).isEqualTo(Lsn.of(100));
    assertThat(window.isClear()).isTrue();
  }

  @Test
  void durableNeverCoversAnEarlierUnansweredWrite() {
    AsyncResult a = dispatch(100);
    AsyncResult b = dispatch(200);
    b.durable();
    assertThat(window.poll().durableAdvancedTo()).isNull();
    a.accepted(); // answered after b's durable: b's durable does not cover it
    assertThat(window.poll().durableAdvancedTo()).isNull();
    AsyncResult c = dispatch(300);
    c.durable();
    assertThat(window.poll().durableAdvancedTo()).isEqualTo(Lsn.of(300));
  }

  /**
   * Regression: answers were applied in the order their callbacks ran. A durable answer given while
   * an earlier write was still unanswered, whose callback was late, was taken as covering that
   * write's accepted answer, which the destination gave only afterwards: progress passed data that
   * was only accepted.
   */
  @Test
  void anAcceptedAnswerGivenAfterALaterWritesDurableIsNotCoveredByItWhateverTheCallbackOrder()
      throws Exception {
    AsyncResult a = AsyncResult.create();
    AsyncResult b = AsyncResult.create();
    java.util.concurrent.CountDownLatch release = new java.util.concurrent.CountDownLatch(1);
    Runnable stall =
        () -> {
          try {
            release.await();
          } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
          }
        };
    window.track(a, Lsn.of(100), WriteDurability.MAY_DEFER);
    // one of the two stalls runs before the window's own callback, whatever order the future runs
    // its callbacks in
    b.completion().thenRun(stall);
    window.track(b, Lsn.of(200), WriteDurability.MAY_DEFER);
    b.completion().thenRun(stall);

    Thread answerer = new Thread(b::durable, "answers-b");
    answerer.start();
    org.awaitility.Awaitility.await().until(b::isAnswered);
    a.accepted(); // after b's durable: b does not cover it
    assertThat(window.poll().durableAdvancedTo()).isNull();
    release.countDown();
    answerer.join();
    assertThat(window.poll().durableAdvancedTo()).isNull();
    assertThat(window.hasAcceptedNotDurable()).isTrue();

    AsyncResult c = dispatch(300);
    c.durable(); // given after a's accepted: covers it
    assertThat(window.poll().durableAdvancedTo()).isEqualTo(Lsn.of(300));
    assertThat(window.isClear()).isTrue();
  }

  @Test
  void requireDurableAnsweredAcceptedIsAContractViolation() {
    AsyncResult r = AsyncResult.create();
    window.track(r, Lsn.of(5), WriteDurability.REQUIRE_DURABLE);
    r.accepted();
    WriteWindow.Progress p = window.poll();
    assertThat(p.failure()).isNotNull();
    assertThat(p.failure().kind()).isEqualTo(ErrorKind.DESTINATION_CONTRACT_VIOLATION);
  }

  @Test
  void failureAndShutdownAreReported() {
    AsyncResult a = dispatch(1);
    a.fail(new EtlException(ErrorKind.DESTINATION_TIMEOUT, "slow"));
    assertThat(window.poll().failure().kind()).isEqualTo(ErrorKind.DESTINATION_TIMEOUT);
    WriteWindow w = new WriteWindow(1, () -> {});
    AsyncResult b = AsyncResult.create();
    w.track(b, Lsn.of(2), WriteDurability.MAY_DEFER);
    b.shutdown();
    assertThat(w.poll().abandoned()).isTrue();
  }

  @Test
  void capacityCountsOnlyUnansweredWrites() {
    WriteWindow w = new WriteWindow(1, () -> {});
    AsyncResult a = AsyncResult.create();
    w.track(a, Lsn.of(1), WriteDurability.MAY_DEFER);
    assertThat(w.isFull()).isTrue();
    a.accepted();
    w.poll();
    assertThat(w.isFull()).isFalse();
  }

  /** One step of a random schedule: dispatch a write, or answer the i-th unanswered one. */
  record Step(boolean dispatch, boolean hasCommit, int pick, boolean durable) {}

  private static Gen<List<Step>> schedules() {
    Gen<Step> step =
        booleans()
            .all()
            .zip(
                booleans().all(),
                integers().between(0, 7),
                booleans().all(),
                (dispatch, hasCommit, pick, durable) ->
                    new Step(dispatch, hasCommit, pick, durable));
    return lists().of(step).ofSizeBetween(1, 40);
  }

  /**
   * The window never reports a durable point beyond the reference definition, and reaches it once
   * everything is answered durable. A failing schedule is shrunk, then loses every step it can do
   * without.
   */
  @Test
  void neverAdvancesPastWhatIsKnownDurable() {
    Theories.checkSequence(
        Theories.qt(2000, Duration.ofSeconds(10)),
        schedules(),
        integers().between(1, 4),
        WriteWindowTest::checkSchedule);
  }

  private static void checkSchedule(List<Step> steps, int capacity) {
    WriteWindow w = new WriteWindow(capacity, () -> {});
    List<AsyncResult> results = new ArrayList<>();
    List<Long> lsns = new ArrayList<>();
    // reference: per write, answered kind and whether it is known durable
    List<String> answer = new ArrayList<>();
    List<Boolean> durable = new ArrayList<>();
    long nextLsn = 10;
    Lsn reported = Lsn.ZERO;
    for (Step s : steps) {
      List<Integer> unanswered = new ArrayList<>();
      for (int i = 0; i < results.size(); i++) {
        if (answer.get(i) == null) {
          unanswered.add(i);
        }
      }
      if (s.dispatch() && !w.isFull()) {
        AsyncResult r = AsyncResult.create();
        long lsn = s.hasCommit() ? nextLsn += 10 : 0;
        w.track(r, lsn == 0 ? null : Lsn.of(lsn), WriteDurability.MAY_DEFER);
        results.add(r);
        lsns.add(lsn);
        answer.add(null);
        durable.add(false);
      } else if (!unanswered.isEmpty()) {
        int i = unanswered.get(s.pick() % unanswered.size());
        if (s.durable()) {
          results.get(i).durable();
          answer.set(i, "D");
          durable.set(i, true);
          for (int j = 0; j < i; j++) {
            if ("A".equals(answer.get(j))) {
              durable.set(j, true);
            }
          }
        } else {
          results.get(i).accepted();
          answer.set(i, "A");
        }
      }
      WriteWindow.Progress p = w.poll();
      if (p.durableAdvancedTo() != null) {
        assertThat(p.durableAdvancedTo()).isGreaterThanOrEqualTo(reported);
        reported = p.durableAdvancedTo();
      }
      assertThat(w.inFlight()).isLessThanOrEqualTo(capacity);
      long bound = 0;
      for (int i = 0; i < results.size() && durable.get(i); i++) {
        bound = Math.max(bound, lsns.get(i));
      }
      assertThat(reported.value()).isLessThanOrEqualTo(bound);
    }
    // answer everything still open durable, then send a durable barrier (as the engine does): the
    // window must reach the greatest LSN and be clear
    for (AsyncResult r : results) {
      r.durable();
    }
    WriteWindow.Progress settled = w.poll();
    if (settled.durableAdvancedTo() != null) {
      reported = settled.durableAdvancedTo();
    }
    AsyncResult barrier = AsyncResult.create();
    w.track(barrier, null, WriteDurability.REQUIRE_DURABLE);
    barrier.durable();
    WriteWindow.Progress p = w.poll();
    if (p.durableAdvancedTo() != null) {
      reported = p.durableAdvancedTo();
    }
    long max = lsns.stream().mapToLong(Long::longValue).max().orElse(0);
    assertThat(reported.value()).isEqualTo(max);
    assertThat(w.isClear()).isTrue();
  }
}
