package org.pgetl.destination;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.RepeatedTest;
import org.junit.jupiter.api.Test;
import org.pgetl.destination.AsyncResult.Outcome;
import org.pgetl.error.ErrorKind;
import org.pgetl.error.EtlException;

class AsyncResultTest {

  @Test
  void theFirstAnswerWinsAndLaterOnesReturnFalse() throws Exception {
    AsyncResult r = AsyncResult.create();
    assertThat(r.isAnswered()).isFalse();
    assertThat(r.outcome()).isEmpty();
    assertThat(r.accepted()).isTrue();
    assertThat(r.durable()).isFalse();
    assertThat(r.fail(new EtlException(ErrorKind.DESTINATION_ERROR, "x"))).isFalse();
    assertThat(r.shutdown()).isFalse();
    assertThat(r.send(Outcome.DURABLE)).isFalse();
    assertThat(r.outcome()).contains(Outcome.ACCEPTED);
    assertThat(r.await(Duration.ZERO)).contains(Outcome.ACCEPTED);
  }

  @Test
  void awaitTimesOutWhileUnansweredAndReturnsTheAnswerFromAnotherThread() throws Exception {
    AsyncResult r = AsyncResult.create();
    assertThat(r.await(Duration.ofMillis(20))).isEmpty();
    Thread t = new Thread(r::durable);
    t.start();
    assertThat(r.await(Duration.ofSeconds(10))).contains(Outcome.DURABLE);
    t.join();
  }

  @Test
  void completionStageSeesTheAnswer() throws Exception {
    AsyncResult r = AsyncResult.create();
    AtomicReference<Outcome> seen = new AtomicReference<>();
    CountDownLatch done = new CountDownLatch(1);
    r.completion()
        .thenAccept(
            o -> {
              seen.set(o);
              done.countDown();
            });
    EtlException e = new EtlException(ErrorKind.DESTINATION_TIMEOUT, "slow");
    r.fail(e);
    done.await();
    assertThat(seen.get().kind()).isEqualTo(Outcome.Kind.FAILED);
    assertThat(seen.get().error()).isSameAs(e);
  }

  /** Many threads answer at once: exactly one wins, every other call returns false. */
  @RepeatedTest(50)
  void exactlyOneOfManyConcurrentAnswersWins() throws Exception {
    int threads = 16;
    AsyncResult r = AsyncResult.create();
    CyclicBarrier start = new CyclicBarrier(threads);
    AtomicInteger winners = new AtomicInteger();
    List<Outcome> offered = new ArrayList<>();
    List<Thread> all = new ArrayList<>();
    AtomicReference<Outcome> winner = new AtomicReference<>();
    for (int i = 0; i < threads; i++) {
      Outcome o =
          switch (i % 4) {
            case 0 -> Outcome.ACCEPTED;
            case 1 -> Outcome.DURABLE;
            case 2 -> Outcome.SHUTDOWN;
            default -> Outcome.failed(new EtlException(ErrorKind.DESTINATION_ERROR, "t" + i));
          };
      offered.add(o);
      Thread t =
          new Thread(
              () -> {
                try {
                  start.await();
                } catch (Exception e) {
                  throw new IllegalStateException(e);
                }
                if (r.send(o)) {
                  winners.incrementAndGet();
                  winner.set(o);
                }
              });
      all.add(t);
      t.start();
    }
    for (Thread t : all) {
      t.join();
    }
    assertThat(winners.get()).isEqualTo(1);
    assertThat(r.outcome()).contains(winner.get());
    assertThat(offered).contains(winner.get());
  }
}
