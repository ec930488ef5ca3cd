package org.pgetl.testkit.tck;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.pgetl.model.ReplicatedTableSchema;
import org.pgetl.testkit.destination.RecordingDestination;

/** The conformance kit passes on {@link RecordingDestination} answering durable at once. */
class RecordingDestinationConformanceTest
    extends DestinationConformanceTests<RecordingDestination> {

  @Override
  protected RecordingDestination newDestination() {
    return RecordingDestination.create();
  }

  @Override
  protected List<List<Object>> contents(
      RecordingDestination destination, ReplicatedTableSchema table) {
    return destination.rows(table.id());
  }

  @AfterEach
  void theKitKeptTheDestinationContract() {
    assertThat(destination().violations()).isEmpty();
    assertThat(destination().anomalies()).isEmpty();
  }
}
