package org.pgetl.engine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;
import static org.pgetl.engine.PipelineHarness.WAIT;
import static org.pgetl.engine.PipelineHarness.awaitAllReady;
import static org.pgetl.engine.PipelineHarness.config;
import static org.pgetl.engine.PipelineHarness.name;
import static org.pgetl.engine.PipelineHarness.oid;
import static org.pgetl.engine.PipelineHarness.sourceRows;

import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.pgetl.Pipeline;
import org.pgetl.PipelineListener;
import org.pgetl.PipelineStatus;
import org.pgetl.error.ErrorKind;
import org.pgetl.error.EtlException;
import org.pgetl.error.RetryDirective;
import org.pgetl.model.TableId;
import org.pgetl.model.TableName;
import org.pgetl.store.MemoryStore;
import org.pgetl.store.TableState;
import org.pgetl.testkit.TestDatabase;
import org.pgetl.testkit.WithPostgres;
import org.pgetl.testkit.destination.DestinationOperation;
import org.pgetl.testkit.destination.FaultyDestination;
import org.pgetl.testkit.destination.RecordingDestination;

/** Copying one table again, retrying an errored one, and listening to what happens. */
@WithPostgres
@Timeout(value = 4, unit = TimeUnit.MINUTES)
class ResyncIT {

  /** Updates three tables from a background thread until stopped. */
  private static Thread load(TestDatabase db, AtomicBoolean stop, AtomicInteger n) {
    Thread t =
        new Thread(
            () -> {
              while (!stop.get()) {
                int i = n.incrementAndGet();
                db.execute(
                    "UPDATE ra SET v = " + i + " WHERE id = " + (1 + i % 500),
                    "UPDATE rb SET v = " + i + " WHERE id = " + (1 + i % 500),
                    "INSERT INTO rc VALUES (" + (1000 + i) + ", " + i + ")");
              }
            });
    t.start();
    return t;
  }

  /**
   * One of three tables copied again under load: the others keep streaming (their changes keep
   * arriving while it copies), the destination is told with dropTableForCopy, all three converge.
   */
  @Test
  void resyncingOneOfThreeTablesUnderLoadConvergesWhileTheOthersStream(TestDatabase db)
      throws Exception {
    for (String t : List.of("ra", "rb", "rc")) {
      db.execute(
          "CREATE TABLE " + t + " (id int PRIMARY KEY, v int)",
          "INSERT INTO " + t + " SELECT g, 0 FROM generate_series(1, 500) g");
    }
    db.execute("CREATE PUBLICATION pub_r3 FOR TABLE ra, rb, rc");
    TableId rb = oid(db, "rb");
    MemoryStore store = new MemoryStore("r3");
    RecordingDestination dest = RecordingDestination.create();
    List<String> transitions = new CopyOnWriteArrayList<>();
    AtomicBoolean stop = new AtomicBoolean();
    AtomicInteger n = new AtomicInteger();
    Thread load = null;
    try (Pipeline p = Pipeline.create(config(db, "r3", "pub_r3").build(), store, dest)) {
      p.addListener(
          new PipelineListener() {
            @Override
            public void tableStateChanged(
                TableId table, TableName tableName, TableState from, TableState to) {
              if (table.equals(rb) && to != null) {
                transitions.add(to.type().name());
              }
            }
          });
      p.start();
      awaitAllReady(store, 3);
      load = load(db, stop, n);
      await().atMost(WAIT).until(() -> n.get() > 20);
      int dropsBefore = dest.count(DestinationOperation.DROP_TABLE_FOR_COPY, name("rb"));
      int raEventsBefore = dest.events(name("ra")).size();
      transitions.clear();
      p.resyncTable(name("rb"));
      await()
          .atMost(WAIT)
          .until(
              () -> dest.count(DestinationOperation.DROP_TABLE_FOR_COPY, name("rb")) > dropsBefore);
      // the others kept streaming meanwhile
      await().atMost(WAIT).until(() -> dest.events(name("ra")).size() > raEventsBefore);
      await().atMost(WAIT).until(() -> transitions.contains("READY"));
      stop.set(true);
      load.join();
      db.execute("INSERT INTO ra VALUES (-1, -1)");
      for (String t : List.of("ra", "rb", "rc")) {
        dest.awaitRowsEqual(name(t), sourceRows(db, t), WAIT);
      }
      awaitAllReady(store, 3);
      assertThat(transitions)
          .containsSubsequence("INIT", "DATA_SYNC", "FINISHED_COPY", "SYNC_DONE", "READY");
      assertThat(store.tableRequests()).isEmpty();
      assertThat(dest.violations()).isEmpty();
    } finally {
      stop.set(true);
      if (load != null) {
        load.join();
      }
    }
  }

  /** An errored table retried on request converges; a listener sees the error and the stop. */
  @Test
  void retryingAnErroredTableConvergesAndTheListenerSeesItAll(TestDatabase db) throws Exception {
    db.execute(
        "CREATE TABLE flaky (id int PRIMARY KEY, v int)",
        "INSERT INTO flaky SELECT g, 0 FROM generate_series(1, 100) g",
        "CREATE PUBLICATION pub_flaky FOR TABLE flaky");
    TableId flaky = oid(db, "flaky");
    MemoryStore store = new MemoryStore("flaky_retry");
    RecordingDestination recording = RecordingDestination.create();
    FaultyDestination faulty = FaultyDestination.wrap(recording);
    faulty
        .on(DestinationOperation.WRITE_TABLE_ROWS)
        .times(1)
        .fail(ErrorKind.DESTINATION_SCHEMA_ERROR);
    List<String> seen = new CopyOnWriteArrayList<>();
    List<EtlException> errors = new CopyOnWriteArrayList<>();
    List<Optional<EtlException>> stops = new ArrayList<>();
    Pipeline p = Pipeline.create(config(db, "flaky_retry", "pub_flaky").build(), store, faulty);
    p.addListener(
        new PipelineListener() {
          @Override
          public void tableStateChanged(
              TableId table, TableName tableName, TableState from, TableState to) {
            seen.add(to == null ? "gone" : to.type().name());
          }

          @Override
          public void errorRecorded(EtlException error) {
            errors.add(error);
          }

          @Override
          public void phaseChanged(PipelineStatus.Phase from, PipelineStatus.Phase to) {
            seen.add("phase " + to);
          }

          @Override
          public void stopped(Optional<EtlException> failure) {
            synchronized (stops) {
              stops.add(failure);
            }
          }
        });
    p.start();
    PipelineHarness.awaitState(store, flaky, TableState.Type.ERRORED);
    TableState.Errored errored = (TableState.Errored) store.tableState(flaky).orElseThrow();
    assertThat(errored.retry()).isEqualTo(RetryDirective.MANUAL);
    assertThat(p.status().tables().get(flaky).state()).isInstanceOf(TableState.Errored.class);
    p.retryTable(name("flaky"));
    awaitAllReady(store, 1);
    db.execute("UPDATE flaky SET v = 1");
    recording.awaitRowsEqual(name("flaky"), sourceRows(db, "flaky"), WAIT);
    assertThat(p.status().tables().get(flaky).rowsCopied()).isEqualTo(100);
    p.close();

    await().atMost(WAIT).until(() -> !stops.isEmpty());
    assertThat(stops).containsExactly(Optional.empty());
    assertThat(errors).anyMatch(e -> e.kind() == ErrorKind.DESTINATION_SCHEMA_ERROR);
    assertThat(seen)
        .containsSubsequence(
            "DATA_SYNC", "ERRORED", "DATA_SYNC", "FINISHED_COPY", "SYNC_DONE", "READY")
        .containsSubsequence("phase STOPPING", "phase STOPPED");
  }
}
