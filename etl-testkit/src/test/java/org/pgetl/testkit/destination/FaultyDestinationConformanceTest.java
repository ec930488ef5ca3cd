package org.pgetl.testkit.destination;

import java.time.Duration;
import java.util.List;
import org.pgetl.model.ReplicatedTableSchema;
import org.pgetl.testkit.tck.DestinationConformanceTests;

/**
 * The conformance kit passes on a {@link FaultyDestination} whose only faults delay answers: the
 * wrapper forwards everything else unchanged, and a late answer is still an answer. (Also shows
 * that the kit runs from another package, as a destination author's test does.)
 */
class FaultyDestinationConformanceTest extends DestinationConformanceTests<FaultyDestination> {

  @Override
  protected FaultyDestination newDestination() {
    FaultyDestination faulty = FaultyDestination.wrap(RecordingDestination.create());
    faulty.on(DestinationOperation.WRITE_EVENTS).always().delay(Duration.ofMillis(2));
    faulty.on(DestinationOperation.FINISH).always().delay(Duration.ofMillis(5));
    return faulty;
  }

  @Override
  protected List<List<Object>> contents(
      FaultyDestination destination, ReplicatedTableSchema table) {
    return ((RecordingDestination) destination.delegate()).rows(table.id());
  }
}
