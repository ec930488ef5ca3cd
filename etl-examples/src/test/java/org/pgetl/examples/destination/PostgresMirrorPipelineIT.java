package org.pgetl.examples.destination;

import static org.assertj.core.api.Assertions.assertThat;

import java.sql.Connection;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.pgetl.destination.postgres.PostgresMirrorDestination;
import org.pgetl.testkit.TestDatabase;
import org.pgetl.testkit.WithPostgres;

/**
 * A pipeline into {@link PostgresMirrorDestination} (a second database on the same server): copy
 * under a concurrent workload, a column added while streaming, a restart in the middle, and the
 * mirror equal to the source at the end.
 */
@WithPostgres
@Timeout(value = 5, unit = TimeUnit.MINUTES)
class PostgresMirrorPipelineIT {

  @Test
  void mirrorsTheSourceThroughCopyStreamingSchemaChangeAndRestart(TestDatabase db)
      throws Exception {
    String mirrorName = db.name() + "_mirror";
    db.server().createDatabase(mirrorName);
    try {
      TestDatabase mirror = new TestDatabase(db.server(), mirrorName);
      ReplicationStory story = new ReplicationStory(db, "mirror_story");
      ReplicationStory.Seen seen =
          story.run(() -> new PostgresMirrorDestination(Jdbc.config(mirror), 2));

      assertThat(seen.partialUpdates()).as("partial updates delivered").isPositive();
      assertThat(seen.relationsWithAddedColumn()).as("schema changes delivered").isPositive();
      try (Connection c = mirror.connect()) {
        story.assertSameAsSource(ReplicationStory.postgresTables(c));
      }
      String columnTypes =
          "SELECT string_agg(attname || ' ' || format_type(atttypid, atttypmod), ', '"
              + " ORDER BY attnum) FROM pg_attribute WHERE attrelid = 'public.accounts'::regclass"
              + " AND attnum > 0 AND NOT attisdropped";
      assertThat(mirror.queryString(columnTypes)).isEqualTo(db.queryString(columnTypes));
      assertThat(mirror.queryString("SELECT count(*) FROM _pgetl.mirror_tables")).isEqualTo("4");
    } finally {
      db.server().dropDatabase(mirrorName);
    }
  }
}
