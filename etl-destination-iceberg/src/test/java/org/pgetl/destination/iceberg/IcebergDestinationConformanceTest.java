package org.pgetl.destination.iceberg;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.io.TempDir;
import org.pgetl.model.ReplicatedTableSchema;
import org.pgetl.testkit.tck.DestinationConformanceTests;

/**
 * The conformance kit on {@link IcebergDestination} with a filesystem catalog: contents are read
 * back with Iceberg's generic reader through a catalog of their own, and a restart is a new
 * instance over the same warehouse.
 */
class IcebergDestinationConformanceTest extends DestinationConformanceTests<IcebergDestination> {
  @TempDir Path dir;

  @Override
  protected IcebergDestination newDestination() {
    // a short interval: the kit waits for each barrier's answer
    return IcebergDestination.hadoop(dir).commitInterval(Duration.ofMillis(50)).build();
  }

  @Override
  protected IcebergDestination restart(IcebergDestination previous) {
    return newDestination();
  }

  @Override
  protected List<List<@Nullable Object>> contents(
      IcebergDestination destination, ReplicatedTableSchema table) {
    return IcebergReader.hadoop(dir).rows(table);
  }
}
