package org.pgetl.examples.destination;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.apache.hadoop.conf.Configuration;
import org.apache.iceberg.CatalogUtil;
import org.apache.iceberg.catalog.Catalog;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.data.IcebergGenerics;
import org.apache.iceberg.data.Record;
import org.apache.iceberg.io.CloseableIterable;
import org.apache.iceberg.types.Types;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.pgetl.destination.iceberg.IcebergDestination;
import org.pgetl.examples.destination.CanonicalTables.Col;
import org.pgetl.testkit.TestDatabase;
import org.pgetl.testkit.WithPostgres;

/**
 * A pipeline into {@link IcebergDestination} (a filesystem catalog, upsert mode): copy under a
 * concurrent workload with partial (unchanged TOAST) updates, a column added while streaming, a
 * REPLICA IDENTITY FULL table with equal rows, a restart in the middle (a new destination over the
 * same warehouse), and every Iceberg table, read back with Iceberg's generic reader, equal to the
 * source at the end.
 */
@WithPostgres
@Timeout(value = 5, unit = TimeUnit.MINUTES)
class IcebergPipelineIT {
  @TempDir Path dir;

  @Test
  void theIcebergTablesEqualTheSourceAfterCopyStreamingSchemaChangeAndRestart(TestDatabase db)
      throws Exception {
    Path warehouse = dir.resolve("warehouse");
    ReplicationStory story = new ReplicationStory(db, "iceberg_story");
    ReplicationStory.Seen seen =
        story.run(
            () ->
                IcebergDestination.hadoop(warehouse)
                    .commitInterval(Duration.ofMillis(500))
                    .build());

    assertThat(seen.partialUpdates()).as("partial updates delivered").isPositive();
    assertThat(seen.relationsWithAddedColumn()).as("schema changes delivered").isPositive();
    Catalog catalog =
        CatalogUtil.buildIcebergCatalog(
            "reader",
            Map.of("type", "hadoop", "warehouse", warehouse.toUri().toString()),
            new Configuration());
    List<CanonicalTables.Table> tables = new ArrayList<>();
    for (Map.Entry<String, List<Col>> t : ReplicationStory.TABLES.entrySet()) {
      tables.add(
          CanonicalTables.fromMaps(
              t.getKey(), read(catalog, TableIdentifier.of("public", t.getKey())), t.getValue()));
    }
    story.assertSameAsSource(CanonicalTables.byName(tables));
  }

  /** Every row of a table as a map of its top-level fields. */
  static List<Map<String, Object>> read(Catalog catalog, TableIdentifier id) {
    List<Map<String, Object>> rows = new ArrayList<>();
    var table = catalog.loadTable(id);
    try (CloseableIterable<Record> rs = IcebergGenerics.read(table).build()) {
      for (Record r : rs) {
        Map<String, Object> m = new HashMap<>();
        for (Types.NestedField f : table.schema().columns()) {
          m.put(f.name(), r.getField(f.name()));
        }
        rows.add(m);
      }
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    return rows;
  }
}
