package org.pgetl.destination.duckdb;

import static org.assertj.core.api.Assertions.assertThat;
import static org.pgetl.testing.destination.Scenario.await;
import static org.pgetl.testing.destination.Scenario.col;
import static org.pgetl.testing.destination.Scenario.full;
import static org.pgetl.testing.destination.Scenario.key;
import static org.pgetl.testing.destination.Scenario.keyed;
import static org.pgetl.testing.destination.Scenario.partial;
import static org.pgetl.testing.destination.Scenario.sendEvents;
import static org.pgetl.testing.destination.SqlRows.query;

import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.pgetl.destination.AsyncResult;
import org.pgetl.destination.AsyncResult.Outcome;
import org.pgetl.destination.Destination;
import org.pgetl.destination.TableCopyBatchId;
import org.pgetl.destination.TableCopyWrite;
import org.pgetl.error.ErrorKind;
import org.pgetl.model.ReplicatedTableSchema;
import org.pgetl.model.TableRow;
import org.pgetl.testing.destination.Scenario;

/**
 * {@link DuckDbDestination} given a table copied in chunks, the way the engine copies a large
 * table: chunk reads whose batches are numbered by read, each ended by a {@code ChunkEnd}, and the
 * table's changes applied between them.
 */
@Timeout(120)
class DuckDbChunkedCopyTest {
  private static final ReplicatedTableSchema T =
      keyed(
          19300,
          "chunked",
          "t",
          col("id", 23, "integer", 1, 1),
          col("v", 25, "text", 2, 0),
          col("w", 25, "text", 3, 0));

  @TempDir Path dir;

  private static DuckDbDestination started(Path file, Scenario.Context ctx) {
    DuckDbDestination d = new DuckDbDestination(file);
    d.startup(ctx);
    return d;
  }

  /**
   * The whole chunked call sequence: changes to keys the file does not hold yet are skipped,
   * inserts and copied rows replace the row of their key, a chunk read twice (the first read cut
   * short) ends as its second read, and the Finish relies on the ChunkEnds. After the Finish, an
   * update of a missing row is applied as for any table again.
   */
  @Test
  void aTableCopiedInChunksWhileItsChangesStreamEndsAsTheSource() throws Exception {
    Path file = dir.resolve("chunked.duckdb");
    UUID attempt = UUID.randomUUID();
    DuckDbDestination d = started(file, new Scenario.Context());
    try {
      assertThat(d.supportsChunkedCopy()).isTrue();
      Scenario.drop(d, T, attempt);

      // chunk 0 (keys 1..5), one read of two batches
      batch(d, attempt, 0, rows(1, 4, "c0"));
      batch(d, attempt, 1, rows(4, 6, "c0"));
      sendEvents(
          d,
          new Scenario.Tx(0x1000, 1)
              .insert(T, TableRow.of(7, "event 7", "w")) // chunk 1 copies key 7 too
              .update(T, full(8, "not held", "w"), null) // skipped: key 8 is not held
              .update(T, full(11, "not held", "w"), null) // skipped (and gone from chunk 1)
              .update(T, partial(3, new int[] {2}, 9, "not held"), null) // skipped
              .delete(T, key(10)) // skipped
              .update(T, full(2, "updated 2", "w2u"), null) // held: applied
              .end());
      chunkEnd(d, attempt, 0, 0, 2, 5);

      // chunk 1 (keys 6..10): a first read cut short after its first batch ...
      batch(d, attempt, 2, rows(6, 9, "r1"));
      // ... and a second read with new batch ids; key 8 was deleted at the source in between
      batch(
          d,
          attempt,
          10,
          List.of(TableRow.of(6, "r2-6", "w6"), row(7, "r2"), TableRow.of(9, "r2-9", "w9")));
      batch(d, attempt, 11, List.of(row(10, "r2")));
      batch(d, attempt, 11, List.of(TableRow.of(10, "replayed", "w"))); // a replay: skipped
      AsyncResult missing = AsyncResult.create();
      d.writeTableRows(T, new TableCopyWrite.ChunkEnd(attempt, 1, 10, 3, 5), missing);
      Outcome o = await(missing);
      assertThat(o.kind())
          .as("a ChunkEnd counting a batch not stored")
          .isEqualTo(Outcome.Kind.FAILED);
      assertThat(o.error().kind()).isEqualTo(ErrorKind.DESTINATION_ERROR);
      chunkEnd(d, attempt, 1, 10, 2, 4);

      sendEvents(
          d,
          new Scenario.Tx(0x2000, 2)
              .delete(T, key(8)) // the row the first read of chunk 1 copied
              .insert(T, TableRow.of(3, "inserted 3", "w")) // held: replaced
              .update(T, full(60, "moved 6", "w60"), key(6)) // a key change of a held row
              .update(T, full(98, "moved 99", "w98"), key(99)) // old key not held, every value
              .update(T, partial(3, new int[] {2}, 96, "moved 97"), key(97)) // not every value
              .update(T, partial(3, new int[] {2}, 5, "moved 4"), key(4)) // onto a held key
              .end());
      Scenario.finish(d, T, attempt, 4, 9);

      // the copy is finished: a full update of a missing row inserts it, as for any table
      sendEvents(
          d,
          new Scenario.Tx(0x3000, 3)
              .update(T, full(50, "late", "w50"), null)
              .update(T, partial(3, new int[] {2}, 51, "partial"), null) // skipped with a warning
              .end());
    } finally {
      d.shutdown();
    }
    try (Connection c = DriverManager.getConnection("jdbc:duckdb:" + file)) {
      assertThat(query(c, "SELECT id, v, w FROM chunked.chunked.t ORDER BY id"))
          .containsExactly(
              "1|c0-1|w1",
              "2|updated 2|w2u",
              "3|inserted 3|w",
              "5|moved 4|w4",
              "7|r2-7|w7",
              "9|r2-9|w9",
              "10|r2-10|w10",
              "50|late|w50",
              "60|moved 6|w60",
              "98|moved 99|w98");
      assertThat(
              query(
                  c,
                  "SELECT chunk, first_batch, batch_count, row_count FROM _pgetl.copy_chunks"
                      + " ORDER BY chunk"))
          .containsExactly("0|0|2|5", "1|10|2|4");
      assertThat(query(c, "SELECT finished, batch_count, row_count FROM _pgetl.copy_attempts"))
          .containsExactly("true|4|9");
    }
  }

  /**
   * A restart in the middle of a chunked copy: the open attempt is kept in the file, so a new
   * instance continues it (no new drop) by the same rules.
   */
  @Test
  void aRestartedInstanceContinuesTheOpenChunkedCopy() throws SQLException {
    Path file = dir.resolve("restart.duckdb");
    UUID attempt = UUID.randomUUID();
    Scenario.Context ctx = new Scenario.Context();
    DuckDbDestination first = started(file, ctx);
    try {
      Scenario.drop(first, T, attempt);
      batch(first, attempt, 0, rows(1, 4, "c0"));
      chunkEnd(first, attempt, 0, 0, 1, 3);
      batch(first, attempt, 1, rows(4, 6, "r1")); // chunk 1's first read, cut short
    } finally {
      first.shutdown();
    }
    DuckDbDestination second = started(file, ctx);
    try {
      sendEvents(
          second,
          new Scenario.Tx(0x2000, 2)
              .update(T, full(9, "not held", "w"), null) // skipped: the attempt is still open
              .insert(T, TableRow.of(4, "event 4", "w"))
              .end());
      batch(second, attempt, 1, rows(4, 6, "replayed")); // stored before the restart: skipped
      batch(second, attempt, 5, rows(4, 7, "r2")); // chunk 1's second read
      chunkEnd(second, attempt, 1, 5, 1, 3);
      Scenario.finish(second, T, attempt, 2, 6);
    } finally {
      second.shutdown();
    }
    try (Connection c = DriverManager.getConnection("jdbc:duckdb:" + file)) {
      assertThat(query(c, "SELECT id, v FROM restart.chunked.t ORDER BY id"))
          .containsExactly("1|c0-1", "2|c0-2", "3|c0-3", "4|r2-4", "5|r2-5", "6|r2-6");
    }
  }

  // --- helpers

  private static TableRow row(int id, String read) {
    return TableRow.of(id, read + "-" + id, "w" + id);
  }

  private static List<TableRow> rows(int from, int to, String read) {
    List<TableRow> rows = new ArrayList<>();
    for (int i = from; i < to; i++) {
      rows.add(row(i, read));
    }
    return rows;
  }

  private static void batch(Destination d, UUID attempt, long seq, List<TableRow> rows) {
    AsyncResult r = AsyncResult.create();
    d.writeTableRows(T, new TableCopyWrite.Batch(new TableCopyBatchId(attempt, seq), rows), r);
    Scenario.assertDurable(r);
  }

  private static void chunkEnd(
      Destination d, UUID attempt, int chunk, long firstBatch, long batches, long rows) {
    AsyncResult r = AsyncResult.create();
    d.writeTableRows(T, new TableCopyWrite.ChunkEnd(attempt, chunk, firstBatch, batches, rows), r);
    Scenario.assertDurable(r);
  }
}
