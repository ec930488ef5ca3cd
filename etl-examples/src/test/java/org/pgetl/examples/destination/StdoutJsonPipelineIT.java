package org.pgetl.examples.destination;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.StringWriter;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.pgetl.examples.destination.CanonicalTables.Col;
import org.pgetl.testkit.TestDatabase;
import org.pgetl.testkit.WithPostgres;

/**
 * A pipeline into {@link StdoutJsonDestination}: the lines of both runs (before and after a restart
 * in the middle of the workload) are parsed back by a consumer that deduplicates on the keys the
 * lines carry, and the tables it rebuilds equal the source.
 */
@WithPostgres
@Timeout(value = 5, unit = TimeUnit.MINUTES)
class StdoutJsonPipelineIT {

  @Test
  void linesRebuildTheSourceThroughCopyStreamingSchemaChangeAndRestart(TestDatabase db)
      throws Exception {
    StringWriter out = new StringWriter(); // synchronized; each run writes from its own thread
    ReplicationStory story = new ReplicationStory(db, "json_story");
    ReplicationStory.Seen seen = story.run(() -> new StdoutJsonDestination(out));

    assertThat(seen.partialUpdates()).as("partial updates delivered").isPositive();
    assertThat(seen.relationsWithAddedColumn()).as("schema changes delivered").isPositive();
    JsonLinesReader reader = new JsonLinesReader();
    reader.read(out.toString());
    List<CanonicalTables.Table> tables = new ArrayList<>();
    for (Map.Entry<String, List<Col>> t : ReplicationStory.TABLES.entrySet()) {
      tables.add(
          CanonicalTables.fromMaps(
              t.getKey(), reader.rows(story.tableOid(t.getKey())), t.getValue()));
    }
    story.assertSameAsSource(CanonicalTables.byName(tables));
  }
}
