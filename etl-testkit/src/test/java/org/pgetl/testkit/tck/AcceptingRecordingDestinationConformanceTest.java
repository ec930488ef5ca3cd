package org.pgetl.testkit.tck;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.pgetl.model.ReplicatedTableSchema;
import org.pgetl.testkit.destination.RecordingDestination;
import org.pgetl.testkit.destination.RecordingDestination.Answering;

/**
 * The conformance kit passes on {@link RecordingDestination} answering accepted and confirming
 * durability on barriers.
 */
class AcceptingRecordingDestinationConformanceTest
    extends DestinationConformanceTests<RecordingDestination> {

  @Override
  protected RecordingDestination newDestination() {
    return RecordingDestination.builder().answering(Answering.ACCEPTED).build();
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
