package org.pgetl.examples.destination;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.pgetl.destination.duckdb.DuckDbDestination;
import org.pgetl.examples.destination.CanonicalTables.Col;
import org.pgetl.examples.destination.CanonicalTables.Kind;
import org.pgetl.testkit.TestDatabase;
import org.pgetl.testkit.WithPostgres;

/**
 * A pipeline into {@link DuckDbDestination}: copy under a concurrent workload, a column added while
 * streaming, a restart in the middle (a new destination over the same file), and the file equal to
 * the source at the end.
 */
@WithPostgres
@Timeout(value = 5, unit = TimeUnit.MINUTES)
class DuckDbPipelineIT {
  @TempDir Path dir;

  @Test
  void mirrorsTheSourceThroughCopyStreamingSchemaChangeAndRestart(TestDatabase db)
      throws Exception {
    Path file = dir.resolve("story.duckdb");
    ReplicationStory story = new ReplicationStory(db, "duckdb_story");
    ReplicationStory.Seen seen = story.run(() -> new DuckDbDestination(file));

    assertThat(seen.partialUpdates()).as("partial updates delivered").isPositive();
    assertThat(seen.relationsWithAddedColumn()).as("schema changes delivered").isPositive();
    List<CanonicalTables.Table> tables = new ArrayList<>();
    try (Connection c = DriverManager.getConnection("jdbc:duckdb:" + file)) {
      for (Map.Entry<String, List<Col>> t : ReplicationStory.TABLES.entrySet()) {
        String select =
            CanonicalTables.select(
                t.getValue(),
                col ->
                    col.kind() == Kind.TIMESTAMPTZ
                        ? "epoch_us(\"" + col.name() + "\")"
                        : "\"" + col.name() + "\"");
        tables.add(
            CanonicalTables.read(
                c, t.getKey(), "SELECT " + select + " FROM public." + t.getKey(), t.getValue()));
      }
    }
    story.assertSameAsSource(CanonicalTables.byName(tables));
  }
}
