package org.pgetl.engine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.pgetl.engine.PipelineHarness.WAIT;
import static org.pgetl.engine.PipelineHarness.awaitAllReady;
import static org.pgetl.engine.PipelineHarness.config;
import static org.pgetl.engine.PipelineHarness.name;
import static org.pgetl.engine.PipelineHarness.oid;
import static org.pgetl.engine.PipelineHarness.sourceRows;
import static org.pgetl.engine.PipelineHarness.start;

import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.pgetl.Pipeline;
import org.pgetl.PipelineStatus;
import org.pgetl.destination.StreamId;
import org.pgetl.error.ErrorKind;
import org.pgetl.error.EtlException;
import org.pgetl.model.TableId;
import org.pgetl.store.MemoryStore;
import org.pgetl.store.TableState;
import org.pgetl.testkit.TestDatabase;
import org.pgetl.testkit.WithPostgres;
import org.pgetl.testkit.destination.DestinationOperation;
import org.pgetl.testkit.destination.FaultyDestination;
import org.pgetl.testkit.destination.RecordingDestination;

/**
 * An {@link Error} (out of memory, stack overflow, a linkage error) in pgetl or in destination code
 * is no table's fault and leaves nothing consistent: it fails the pipeline visibly, and never
 * counts as a finished copy or restarts workers in a loop.
 */
@WithPostgres
@Timeout(value = 3, unit = TimeUnit.MINUTES)
class WorkerErrorsIT {

  /**
   * Regression: a copy thread killed by an Error counted as a finished copy (table Ready, rows
   * missing).
   */
  @Test
  void anErrorInACopyThreadFailsThePipelineAndTheTableIsNeverReady(TestDatabase db)
      throws Exception {
    db.execute(
        "CREATE TABLE oom (id int PRIMARY KEY, v text)",
        "INSERT INTO oom SELECT g, repeat('x', 200) FROM generate_series(1, 3000) g",
        "CREATE PUBLICATION pub_oom FOR TABLE oom");
    TableId table = oid(db, "oom");
    MemoryStore store = new MemoryStore("oom");
    RecordingDestination recording = RecordingDestination.create();
    FaultyDestination faulty = FaultyDestination.wrap(recording);
    faulty
        .on(DestinationOperation.WRITE_TABLE_ROWS)
        .matching(c -> c.batchId().sequence() == 2)
        .throwing(() -> new StackOverflowError("injected into a copy batch"));
    Pipeline p =
        start(config(db, "oom", "pub_oom").batchMaxBytes(16 * 1024).build(), store, faulty);
    assertThat(p.awaitTermination(WAIT)).isTrue();

    assertThat(p.status().phase()).isEqualTo(PipelineStatus.Phase.FAILED);
    assertThat(p.failure()).get().extracting(EtlException::kind).isEqualTo(ErrorKind.WORKER_PANIC);
    assertThat(p.failure().get()).hasStackTraceContaining("injected into a copy batch");
    // the copy did not finish: the table stays where a restart copies it again
    assertThat(store.tableState(table))
        .get()
        .extracting(TableState::type)
        .isEqualTo(TableState.Type.DATA_SYNC);
    assertThat(recording.count(DestinationOperation.FINISH)).isZero();

    try (Pipeline again = start(config(db, "oom", "pub_oom").build(), store, recording)) {
      awaitAllReady(store, 1);
      recording.awaitRowsEqual(name("oom"), sourceRows(db, "oom"), WAIT);
    }
  }

  /**
   * Regression: an Error in the apply worker made the supervisor start generation after generation.
   */
  @Test
  void anErrorInTheApplyWorkerFailsThePipelineOnce(TestDatabase db) throws Exception {
    db.execute(
        "CREATE TABLE apply_oom (id int PRIMARY KEY)",
        "CREATE PUBLICATION pub_apply_oom FOR TABLE apply_oom");
    MemoryStore store = new MemoryStore("apply_oom");
    RecordingDestination recording = RecordingDestination.create();
    FaultyDestination faulty = FaultyDestination.wrap(recording);
    faulty
        .on(DestinationOperation.WRITE_EVENTS)
        .always()
        .matching(c -> c.stream().equals(StreamId.APPLY))
        .throwing(() -> new OutOfMemoryError("injected into writeEvents"));
    Pipeline p = start(config(db, "apply_oom", "pub_apply_oom").build(), store, faulty);
    awaitAllReady(store, 1);
    db.execute("INSERT INTO apply_oom VALUES (1)");
    assertThat(p.awaitTermination(WAIT)).isTrue();

    assertThat(p.status().phase()).isEqualTo(PipelineStatus.Phase.FAILED);
    assertThat(p.failure()).get().extracting(EtlException::kind).isEqualTo(ErrorKind.WORKER_PANIC);
    assertThat(p.failure().get()).hasStackTraceContaining("injected into writeEvents");
    // one apply stream tried once: no loop of generations
    assertThat(faulty.armedFaults().get(0).hits()).isEqualTo(1);
    assertThat(recording.shutdownCount()).isEqualTo(1);
  }
}
