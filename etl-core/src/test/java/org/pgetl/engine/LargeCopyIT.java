package org.pgetl.engine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.pgetl.engine.PipelineHarness.awaitAllReady;
import static org.pgetl.engine.PipelineHarness.config;
import static org.pgetl.engine.PipelineHarness.name;
import static org.pgetl.engine.PipelineHarness.sourceRows;
import static org.pgetl.engine.PipelineHarness.start;

import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.pgetl.Pipeline;
import org.pgetl.PipelineConfig;
import org.pgetl.model.TableRow;
import org.pgetl.store.MemoryStore;
import org.pgetl.store.PipelineStore;
import org.pgetl.testkit.TestDatabase;
import org.pgetl.testkit.WithPostgres;
import org.pgetl.testkit.destination.DestinationCall;
import org.pgetl.testkit.destination.DestinationOperation;
import org.pgetl.testkit.destination.RecordingDestination;

/**
 * A copy of a million rows with four connections, beside two small tables copied in parallel; the
 * destination must equal the source, and no copy batch holds more than the connection's share of
 * {@code batchMaxBytes}. It tests the engine, not the store, so it runs once.
 */
@WithPostgres
@Timeout(value = 4, unit = TimeUnit.MINUTES)
class LargeCopyIT {
  private static void exec(TestDatabase db, String... sql) {
    db.execute(sql);
  }

  @Test
  void copiesAMillionRowsWithFourConnectionsAndSeveralTablesInParallel(TestDatabase db) {
    exec(
        db,
        "CREATE TABLE big (id int8 PRIMARY KEY, qty int4, name text, price numeric(12,2),"
            + " created timestamptz, attrs jsonb)",
        "INSERT INTO big SELECT g, g % 500, 'customer ' || g, g * 1.25,"
            + " '2024-01-01'::timestamptz + g * interval '1 second', jsonb_build_object('g', g)"
            + " FROM generate_series(1, 1000000) g",
        "CREATE TABLE small_a (id int PRIMARY KEY, v text)",
        "INSERT INTO small_a SELECT g, 'a' || g FROM generate_series(1, 5000) g",
        "CREATE TABLE small_b (id int PRIMARY KEY, v text)",
        "INSERT INTO small_b SELECT g, 'b' || g FROM generate_series(1, 5000) g",
        "ANALYZE big",
        "CREATE PUBLICATION pub_big FOR TABLE big, small_a, small_b");
    PipelineStore store = new MemoryStore("big");
    RecordingDestination dest = RecordingDestination.create();
    PipelineConfig cfg = config(db, "big", "pub_big").copyConnectionsPerTable(4).build();
    try (Pipeline p = start(cfg, store, dest)) {
      awaitAllReady(store, 3);
      assertThat(dest.rowCount(name("big"))).isEqualTo(1_000_000);
      assertThat(dest.rows(name("big"))).isEqualTo(sourceRows(db, "big"));
      assertThat(dest.rows(name("small_a"))).isEqualTo(sourceRows(db, "small_a"));
      assertThat(dest.rows(name("small_b"))).isEqualTo(sourceRows(db, "small_b"));
      // four copy threads wrote the big table
      assertThat(
              dest.calls(DestinationOperation.WRITE_TABLE_ROWS).stream()
                  .filter(c -> c.touches(name("big")))
                  .map(c -> c.threadName())
                  .distinct()
                  .count())
          .isEqualTo(4);
      // the four connections share batchMaxBytes: a batch is cut once its decoded rows reach a
      // quarter of it, so only the row that crossed the budget may pass it
      long budget = cfg.batchMaxBytes() / 4;
      List<DestinationCall> batches =
          dest.calls(DestinationOperation.WRITE_TABLE_ROWS).stream()
              .filter(c -> c.touches(name("big")) && !c.rows().isEmpty())
              .toList();
      assertThat(batches).hasSizeGreaterThan(4);
      for (DestinationCall c : batches) {
        List<TableRow> rows = c.rows();
        long held = rows.stream().mapToLong(TableRow::sizeHintBytes).sum();
        assertThat(held - rows.get(rows.size() - 1).sizeHintBytes()).isLessThan(budget);
      }
      assertThat(dest.violations()).isEmpty();
    }
  }
}
