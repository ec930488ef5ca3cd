package org.pgetl.testkit.tck;

import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import org.junit.jupiter.api.AfterAll;
import org.pgetl.model.ReplicatedTableSchema;
import org.pgetl.testkit.destination.RecordingDestination;
import org.pgetl.testkit.destination.RecordingDestination.Answering;

/**
 * The conformance kit passes on {@link RecordingDestination} answering accepted from another thread
 * (two answer threads, so answers of one stream may even overtake each other).
 */
class AsyncRecordingDestinationConformanceTest
    extends DestinationConformanceTests<RecordingDestination> {
  private static final ExecutorService ANSWERS =
      Executors.newFixedThreadPool(
          2,
          r -> {
            Thread t = new Thread(r, "pgetl-test-answers");
            t.setDaemon(true);
            return t;
          });

  @AfterAll
  static void stopAnswering() {
    ANSWERS.shutdownNow();
  }

  @Override
  protected RecordingDestination newDestination() {
    return RecordingDestination.builder()
        .answering(Answering.ACCEPTED)
        .answerExecutor(ANSWERS)
        .build();
  }

  @Override
  protected List<List<Object>> contents(
      RecordingDestination destination, ReplicatedTableSchema table) {
    return destination.rows(table.id());
  }
}
