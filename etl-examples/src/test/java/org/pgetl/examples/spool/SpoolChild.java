package org.pgetl.examples.spool;

import com.sun.management.GarbageCollectionNotificationInfo;
import java.lang.management.GarbageCollectorMXBean;
import java.lang.management.ManagementFactory;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Locale;
import java.util.Properties;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicLong;
import javax.management.NotificationEmitter;
import javax.management.openmbean.CompositeData;
import org.pgetl.PgConnectionConfig;
import org.pgetl.Pipeline;
import org.pgetl.PipelineConfig;
import org.pgetl.core.internal.apply.EventSizes;
import org.pgetl.destination.AsyncResult;
import org.pgetl.destination.Destination;
import org.pgetl.destination.StreamId;
import org.pgetl.destination.TableCopyWrite;
import org.pgetl.destination.WriteDurability;
import org.pgetl.destination.postgres.PostgresMirrorDestination;
import org.pgetl.examples.ChildProcess;
import org.pgetl.model.Event;
import org.pgetl.model.Lsn;
import org.pgetl.model.ReplicatedTableSchema;
import org.pgetl.model.TableRow;
import org.pgetl.model.UpdatedRow;
import org.pgetl.store.MemoryStore;
import org.pgetl.store.PipelineStore;
import org.pgetl.store.TableState;

/**
 * A pipeline in a process of its own, for the tests of large streamed transactions: {@link
 * LargeTransactionIT} runs it with a small heap into a {@link CheckingDestination} that counts and
 * checks what arrives without keeping it, {@link StreamedTransactionCrashIT} kills it while it
 * spools and restarts it into a {@link PostgresMirrorDestination}.
 *
 * <p>Its one argument is a properties file: {@code host}, {@code port}, {@code user}, {@code
 * password}, {@code source} (database), {@code pipeline}, {@code publication}, {@code spool} (the
 * spool directory), {@code batchMaxBytes}, and {@code target} (a database: mirror into it, with the
 * state in a {@code PostgresStore} in the source) or none (check into a {@code MemoryStore}). It
 * prints {@value #READY} once every table is Ready, a {@value #COMMIT} line after each large
 * transaction in check mode, and {@value #FAILED} when the pipeline stops by itself.
 */
public final class SpoolChild {
  static final String READY = "spool-child: ready";
  static final String COMMIT = "spool-child: commit";
  static final String FAILED = "spool-child: failed";

  private SpoolChild() {}

  /**
   * Runs the pipeline until the process is killed or ends.
   *
   * @param args the properties file
   * @throws Exception when the settings cannot be read or the pipeline cannot start
   */
  public static void main(String[] args) throws Exception {
    ChildProcess.exitWithTheParent("spool-child-parent-watch");
    HeapWatch heap = HeapWatch.start();
    Properties p = ChildProcess.settings(Path.of(args[0]));
    PgConnectionConfig source = ChildProcess.connection(p, p.getProperty("source"));
    long batchMaxBytes = Long.parseLong(p.getProperty("batchMaxBytes"));
    PipelineConfig config =
        PipelineConfig.builder()
            .pipelineId(p.getProperty("pipeline"))
            .publication(p.getProperty("publication"))
            .source(source)
            .pgoutputStreaming(true)
            .spoolDirectory(Path.of(p.getProperty("spool")))
            .batchMaxBytes(batchMaxBytes)
            .batchMaxFill(Duration.ofMillis(200))
            .statusInterval(Duration.ofSeconds(1))
            .retryDelay(Duration.ofMillis(500))
            .shutdownTimeout(Duration.ofSeconds(10))
            .build();
    String target = p.getProperty("target");
    PipelineStore store;
    Destination destination;
    if (target == null) {
      store = new MemoryStore(config.pipelineId());
      destination = new CheckingDestination(batchMaxBytes, heap);
    } else {
      ChildProcess.Mirror mirror = ChildProcess.mirror(p, config.pipelineId());
      store = mirror.store();
      destination = mirror.destination();
    }
    Pipeline pipeline = Pipeline.create(config, store, destination);
    pipeline.start();
    boolean ready = false;
    while (!pipeline.awaitTermination(Duration.ofMillis(100))) {
      if (!ready && allReady(store)) {
        ready = true;
        System.out.println(READY);
      }
    }
    System.out.println(FAILED + ": " + pipeline.failure().map(String::valueOf).orElse("stopped"));
    System.out.flush();
    Runtime.getRuntime().halt(3);
  }

  private static boolean allReady(PipelineStore store) {
    var states = store.tableStates();
    return !states.isEmpty()
        && states.values().stream().allMatch(s -> s.type() == TableState.Type.READY);
  }

  /**
   * Answers durable at once and keeps no row: per transaction it counts inserts and updates, sums
   * their ids, checks every value against what the test wrote ({@code v = 'row ' || id}, {@code n =
   * id * 7 % 1000}; an update adds 1 to {@code n} and sets {@code v = 'upd ' || id}) and that the
   * changes come in transaction order; per call it measures the size the engine counts.
   */
  static final class CheckingDestination implements Destination {
    private final long batchMaxBytes;
    private final HeapWatch heap;
    private Lsn tx;
    private long lastOrdinal;
    private long lastInsertId;
    private long inserts;
    private long updates;
    private long idSum;
    private long mismatches;
    private long outOfOrder;
    private long largestCall;
    private long largestCallBytes;
    private long overLimit;
    private long calls;

    CheckingDestination(long batchMaxBytes, HeapWatch heap) {
      this.batchMaxBytes = batchMaxBytes;
      this.heap = heap;
    }

    @Override
    public String name() {
      return "checking";
    }

    @Override
    public void dropTableForCopy(ReplicatedTableSchema table, UUID attemptId, AsyncResult result) {
      result.durable();
    }

    @Override
    public void writeTableRows(
        ReplicatedTableSchema table, TableCopyWrite write, AsyncResult result) {
      result.durable();
    }

    @Override
    public synchronized void writeEvents(
        StreamId stream, List<Event> events, WriteDurability durability, AsyncResult result) {
      long bytes = 0;
      for (int i = 0; i < events.size() - 1; i++) {
        bytes += EventSizes.estimate(events.get(i));
      }
      if (!events.isEmpty() && bytes >= batchMaxBytes) {
        overLimit++;
      }
      largestCall = Math.max(largestCall, events.size());
      largestCallBytes = Math.max(largestCallBytes, bytes);
      calls++;
      for (Event e : events) {
        onEvent(e);
      }
      result.durable();
    }

    private void onEvent(Event e) {
      if (e instanceof Event.Begin) {
        tx = e.commitLsn();
        lastOrdinal = 0;
        lastInsertId = 0;
        inserts = 0;
        updates = 0;
        idSum = 0;
        mismatches = 0;
        outOfOrder = 0;
        return;
      }
      if (e instanceof Event.Commit) {
        if (inserts + updates >= 1000) {
          System.out.printf(
              Locale.ROOT,
              "%s %s inserts=%d updates=%d idSum=%d mismatches=%d outOfOrder=%d calls=%d"
                  + " largestCall=%d largestCallBytes=%d overLimit=%d peakHeapAfterGc=%d"
                  + " maxHeap=%d%n",
              COMMIT,
              e.commitLsn(),
              inserts,
              updates,
              idSum,
              mismatches,
              outOfOrder,
              calls,
              largestCall,
              largestCallBytes,
              overLimit,
              heap.peakAfterGc(),
              Runtime.getRuntime().maxMemory());
          System.out.flush();
        }
        return;
      }
      if (!(e instanceof Event.Insert) && !(e instanceof Event.Update)) {
        return;
      }
      if (!e.commitLsn().equals(tx) || e.txOrdinal() <= lastOrdinal) {
        outOfOrder++;
      }
      lastOrdinal = e.txOrdinal();
      if (e instanceof Event.Insert i) {
        TableRow row = i.row();
        long id = ((Number) row.get(0)).longValue();
        if (id != lastInsertId + 1) {
          outOfOrder++;
        }
        lastInsertId = id;
        inserts++;
        idSum += id;
        if (((Number) row.get(1)).longValue() != id * 7 % 1000
            || !("row " + id).equals(row.get(2))) {
          mismatches++;
        }
      } else {
        Event.Update u = (Event.Update) e;
        if (!(u.row() instanceof UpdatedRow.Full f)) {
          mismatches++;
          return;
        }
        long id = ((Number) f.row().get(0)).longValue();
        updates++;
        idSum += id;
        if (((Number) f.row().get(1)).longValue() != id * 7 % 1000 + 1
            || !("upd " + id).equals(f.row().get(2))) {
          mismatches++;
        }
      }
    }
  }

  /**
   * The greatest heap (heap pools only, not metaspace or code) in use right after a garbage
   * collection: the live data plus what a young collection left in the old generation.
   */
  static final class HeapWatch {
    private final AtomicLong peak = new AtomicLong();

    static HeapWatch start() {
      HeapWatch w = new HeapWatch();
      java.util.Set<String> heapPools = new java.util.HashSet<>();
      for (var pool : ManagementFactory.getMemoryPoolMXBeans()) {
        if (pool.getType() == java.lang.management.MemoryType.HEAP) {
          heapPools.add(pool.getName());
        }
      }
      for (GarbageCollectorMXBean gc : ManagementFactory.getGarbageCollectorMXBeans()) {
        ((NotificationEmitter) gc)
            .addNotificationListener(
                (n, handback) -> {
                  if (!n.getType()
                      .equals(GarbageCollectionNotificationInfo.GARBAGE_COLLECTION_NOTIFICATION)) {
                    return;
                  }
                  GarbageCollectionNotificationInfo info =
                      GarbageCollectionNotificationInfo.from((CompositeData) n.getUserData());
                  long used = 0;
                  for (var pool : info.getGcInfo().getMemoryUsageAfterGc().entrySet()) {
                    if (heapPools.contains(pool.getKey())) {
                      used += pool.getValue().getUsed();
                    }
                  }
                  w.peak.accumulateAndGet(used, Math::max);
                },
                null,
                null);
      }
      return w;
    }

    long peakAfterGc() {
      return peak.get();
    }
  }
}
