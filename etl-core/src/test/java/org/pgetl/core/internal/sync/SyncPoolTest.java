package org.pgetl.core.internal.sync;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.pgetl.core.internal.engine.StopSignal;
import org.pgetl.core.internal.time.Ticker;
import org.pgetl.model.TableId;
import org.pgetl.store.MemoryStore;

/** The table-sync pool runs every table's work on a fixed set of named threads. */
class SyncPoolTest {
  private static final int WORKERS = 4;
  private static final int TABLES = 200;
  private static final String PIPELINE = "pool_test";

  @Test
  void twoHundredTablesRunOnAtMostMaxTableSyncWorkersNamedThreads() throws InterruptedException {
    // the pool is given what it uses: no generation context, no configuration
    StopSignal generationStop = new StopSignal(Ticker.system());
    CountDownLatch firstWave = new CountDownLatch(WORKERS);
    CountDownLatch release = new CountDownLatch(1);
    CountDownLatch done = new CountDownLatch(TABLES);
    AtomicInteger running = new AtomicInteger();
    AtomicInteger mostAtOnce = new AtomicInteger();
    Map<TableId, String> nameWhileRunning = new ConcurrentHashMap<>();
    Set<Thread> threads = ConcurrentHashMap.newKeySet();
    SyncPool pool =
        new SyncPool(
            PIPELINE,
            WORKERS,
            generationStop,
            new TableStateMachine(new MemoryStore(PIPELINE)),
            Ticker.system(),
            (table, priorAttempts, stop) -> {
              int now = running.incrementAndGet();
              mostAtOnce.accumulateAndGet(now, Math::max);
              threads.add(Thread.currentThread());
              nameWhileRunning.put(table, Thread.currentThread().getName());
              firstWave.countDown();
              try {
                // the first tasks hold their threads until every table is queued
                release.await(30, TimeUnit.SECONDS);
              } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
              } finally {
                running.decrementAndGet();
                done.countDown();
              }
            });

    for (int i = 0; i < TABLES; i++) {
      pool.spawn(new TableId(20_000 + i), 0);
    }
    assertThat(firstWave.await(30, TimeUnit.SECONDS)).isTrue();
    // the pool starts its threads as tasks are queued: they all exist by now
    Set<String> poolThreads = liveThreadNames("pgetl-sync-" + PIPELINE + "-");
    assertThat(poolThreads).hasSize(WORKERS);
    assertThat(running.get()).isEqualTo(WORKERS);

    release.countDown();
    assertThat(done.await(30, TimeUnit.SECONDS)).isTrue();
    assertThat(nameWhileRunning).hasSize(TABLES);
    nameWhileRunning.forEach(
        (table, name) -> assertThat(name).isEqualTo("pgetl-sync-" + PIPELINE + "-" + table));
    assertThat(mostAtOnce.get()).isEqualTo(WORKERS);
    assertThat(threads).hasSize(WORKERS);
    assertThat(threads).allMatch(Thread::isDaemon);

    generationStop.request(StopSignal.Mode.DRAIN);
    assertThat(pool.awaitAll(System.nanoTime() + Duration.ofSeconds(10).toNanos())).isEmpty();
    // the pool has terminated; a thread may still be on its way out of run(): wait for it
    for (Thread t : threads) {
      t.join(Duration.ofSeconds(10).toMillis());
    }
    assertThat(liveThreadNames("pgetl-sync-" + PIPELINE + "-")).isEmpty();
    // between tables a thread goes back to its pool name (checked once the threads ended: a task's
    // latch counts down before its thread takes the pool name back)
    assertThat(threads.stream().map(Thread::getName))
        .allMatch(n -> n.matches("pgetl-sync-" + PIPELINE + "-[1-" + WORKERS + "]"));
  }

  private static Set<String> liveThreadNames(String prefix) {
    return Thread.getAllStackTraces().keySet().stream()
        .filter(Thread::isAlive)
        .map(Thread::getName)
        .filter(n -> n.startsWith(prefix))
        .collect(Collectors.toSet());
  }
}
