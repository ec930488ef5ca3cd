package org.pgetl;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

class ShutdownTest {

  @Test
  void requestIsIdempotentAndObservable() throws Exception {
    Shutdown s = new Shutdown();
    assertThat(s.isRequested()).isFalse();
    assertThat(s.awaitRequested(Duration.ofMillis(10))).isFalse();
    assertThat(s.request()).isTrue();
    assertThat(s.request()).isFalse();
    assertThat(s.isRequested()).isTrue();
    assertThat(s.awaitRequested(Duration.ZERO)).isTrue();
    AtomicInteger late = new AtomicInteger();
    s.whenRequested().thenRun(late::incrementAndGet);
    assertThat(late.get()).isEqualTo(1);
  }

  @Test
  void manyWaitingThreadsAllSeeOneRequest() throws Exception {
    Shutdown s = new Shutdown();
    int waiters = 32;
    CountDownLatch ready = new CountDownLatch(waiters);
    AtomicInteger woke = new AtomicInteger();
    AtomicInteger callbacks = new AtomicInteger();
    List<Thread> threads = new ArrayList<>();
    for (int i = 0; i < waiters; i++) {
      s.whenRequested().thenRun(callbacks::incrementAndGet);
      Thread t =
          new Thread(
              () -> {
                ready.countDown();
                try {
                  if (s.awaitRequested(Duration.ofMinutes(1))) {
                    woke.incrementAndGet();
                  }
                } catch (InterruptedException e) {
                  Thread.currentThread().interrupt();
                }
              });
      threads.add(t);
      t.start();
    }
    ready.await();
    // several requesters at once: one request counts
    AtomicInteger firsts = new AtomicInteger();
    List<Thread> requesters = new ArrayList<>();
    for (int i = 0; i < 8; i++) {
      Thread t =
          new Thread(
              () -> {
                if (s.request()) {
                  firsts.incrementAndGet();
                }
              });
      requesters.add(t);
      t.start();
    }
    for (Thread t : requesters) {
      t.join();
    }
    for (Thread t : threads) {
      t.join();
    }
    assertThat(firsts.get()).isEqualTo(1);
    assertThat(woke.get()).isEqualTo(waiters);
    assertThat(callbacks.get()).isEqualTo(waiters);
  }
}
