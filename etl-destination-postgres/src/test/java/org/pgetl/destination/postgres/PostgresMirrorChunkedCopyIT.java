package org.pgetl.destination.postgres;

import static org.assertj.core.api.Assertions.assertThat;
import static org.pgetl.testing.destination.Scenario.await;
import static org.pgetl.testing.destination.Scenario.col;
import static org.pgetl.testing.destination.Scenario.full;
import static org.pgetl.testing.destination.Scenario.key;
import static org.pgetl.testing.destination.Scenario.keyed;
import static org.pgetl.testing.destination.Scenario.partial;
import static org.pgetl.testing.destination.Scenario.sendEvents;

import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.pgetl.destination.AsyncResult;
import org.pgetl.destination.AsyncResult.Outcome;
import org.pgetl.destination.Destination;
import org.pgetl.destination.TableCopyBatchId;
import org.pgetl.destination.TableCopyWrite;
import org.pgetl.error.ErrorKind;
import org.pgetl.model.ReplicatedTableSchema;
import org.pgetl.model.TableRow;
import org.pgetl.testing.destination.Scenario;
import org.pgetl.testkit.TestDatabase;
import org.pgetl.testkit.WithPostgres;

/**
 * {@link PostgresMirrorDestination} given a table copied in chunks, the way the engine copies a
 * large table: chunk reads whose batches are numbered by read, each ended by a {@code ChunkEnd},
 * and the table's changes applied between them.
 */
@WithPostgres
@Timeout(value = 3, unit = TimeUnit.MINUTES)
class PostgresMirrorChunkedCopyIT {

  private static ReplicatedTableSchema table(long oid, String schema) {
    return keyed(
        oid,
        schema,
        "t",
        col("id", 23, "integer", 1, 1),
        col("v", 25, "text", 2, 0),
        col("w", 25, "text", 3, 0));
  }

  private static PostgresMirrorDestination started(TestDatabase db, Scenario.Context ctx) {
    PostgresMirrorDestination d = new PostgresMirrorDestination(Jdbc.config(db), 3);
    d.startup(ctx);
    return d;
  }

  /**
   * The whole chunked call sequence on one instance: changes to keys the mirror does not hold yet
   * are skipped, inserts and copied rows replace the row of their key, a chunk read twice (the
   * first read cut short) ends as its second read, and the Finish relies on the ChunkEnds. After
   * the Finish, an update of a missing row is applied as for any table again.
   */
  @Test
  void aTableCopiedInChunksWhileItsChangesStreamEndsAsTheSource(TestDatabase db) {
    ReplicatedTableSchema t = table(19300, "chunked");
    UUID attempt = UUID.randomUUID();
    PostgresMirrorDestination d = started(db, new Scenario.Context());
    try {
      assertThat(d.supportsChunkedCopy()).isTrue();
      Scenario.drop(d, t, attempt);

      // chunk 0 (keys 1..5), one read of two batches
      batch(d, t, attempt, 0, rows(1, 4, "c0"));
      batch(d, t, attempt, 1, rows(4, 6, "c0"));
      sendEvents(
          d,
          new Scenario.Tx(0x1000, 1)
              .insert(t, TableRow.of(7, "event 7", "w")) // chunk 1 copies key 7 too
              .update(t, full(8, "not held", "w"), null) // skipped: key 8 is not held
              .update(t, full(11, "not held", "w"), null) // skipped (and gone from chunk 1)
              .update(t, partial(3, new int[] {2}, 9, "not held"), null) // skipped
              .delete(t, key(10)) // skipped
              .update(t, full(2, "updated 2", "w2u"), null) // held: applied
              .end());
      assertThat(db.queryRows("SELECT id, v FROM chunked.t WHERE id > 5"))
          .as("only the insert of a key not held yet is written")
          .containsExactly(List.of("7", "event 7"));
      chunkEnd(d, t, attempt, 0, 0, 2, 5);

      // chunk 1 (keys 6..10): a first read cut short after its first batch ...
      batch(d, t, attempt, 2, rows(6, 9, "r1"));
      // ... and a second read with new batch ids; key 8 was deleted at the source in between
      batch(
          d,
          t,
          attempt,
          10,
          List.of(TableRow.of(6, "r2-6", "w6"), row(7, "r2"), TableRow.of(9, "r2-9", "w9")));
      batch(d, t, attempt, 11, List.of(row(10, "r2")));
      batch(d, t, attempt, 11, List.of(TableRow.of(10, "replayed", "w"))); // a replay: skipped
      AsyncResult missing = AsyncResult.create();
      d.writeTableRows(t, new TableCopyWrite.ChunkEnd(attempt, 1, 10, 3, 5), missing);
      Outcome o = await(missing);
      assertThat(o.kind())
          .as("a ChunkEnd counting a batch not stored")
          .isEqualTo(Outcome.Kind.FAILED);
      assertThat(o.error().kind()).isEqualTo(ErrorKind.DESTINATION_ERROR);
      chunkEnd(d, t, attempt, 1, 10, 2, 4);

      sendEvents(
          d,
          new Scenario.Tx(0x2000, 2)
              .delete(t, key(8)) // the row the first read of chunk 1 copied
              .insert(t, TableRow.of(3, "inserted 3", "w")) // held: replaced
              .update(t, full(60, "moved 6", "w60"), key(6)) // a key change of a held row
              .update(t, full(98, "moved 99", "w98"), key(99)) // old key not held, every value
              .update(t, partial(3, new int[] {2}, 96, "moved 97"), key(97)) // not every value
              .update(t, partial(3, new int[] {2}, 5, "moved 4"), key(4)) // onto a held key
              .end());
      Scenario.finish(d, t, attempt, 4, 9);

      assertThat(db.queryRows("SELECT id, v, w FROM chunked.t ORDER BY id"))
          .containsExactly(
              List.of("1", "c0-1", "w1"),
              List.of("2", "updated 2", "w2u"),
              List.of("3", "inserted 3", "w"),
              List.of("5", "moved 4", "w4"),
              List.of("7", "r2-7", "w7"),
              List.of("9", "r2-9", "w9"),
              List.of("10", "r2-10", "w10"),
              List.of("60", "moved 6", "w60"),
              List.of("98", "moved 99", "w98"));
      assertThat(
              db.queryRows(
                  "SELECT chunk, first_batch, batch_count, row_count FROM _pgetl.mirror_copy_chunks"
                      + " WHERE table_oid = 19300 ORDER BY chunk"))
          .containsExactly(List.of("0", "0", "2", "5"), List.of("1", "10", "2", "4"));
      assertThat(
              db.queryRows(
                  "SELECT finished, batch_count, row_count FROM _pgetl.mirror_copy_attempts"
                      + " WHERE table_oid = 19300"))
          .containsExactly(List.of("t", "4", "9"));

      // the copy is finished: a full update of a missing row inserts it, as for any table
      sendEvents(
          d,
          new Scenario.Tx(0x3000, 3)
              .update(t, full(50, "late", "w50"), null)
              .update(t, partial(3, new int[] {2}, 51, "partial"), null) // skipped with a warning
              .end());
    } finally {
      d.shutdown();
    }
    assertThat(db.queryRows("SELECT id, v, w FROM chunked.t WHERE id IN (50, 51)"))
        .containsExactly(List.of("50", "late", "w50"));
  }

  /**
   * A pipeline restart in the middle of a chunked copy: the open attempt and its chunks are kept in
   * the target, so a new instance continues the attempt (no new drop) by the same rules.
   */
  @Test
  void aRestartedInstanceContinuesTheOpenChunkedCopy(TestDatabase db) {
    ReplicatedTableSchema t = table(19301, "chunked_restart");
    UUID attempt = UUID.randomUUID();
    Scenario.Context ctx = new Scenario.Context();
    PostgresMirrorDestination first = started(db, ctx);
    try {
      Scenario.drop(first, t, attempt);
      batch(first, t, attempt, 0, rows(1, 4, "c0"));
      chunkEnd(first, t, attempt, 0, 0, 1, 3);
      batch(first, t, attempt, 1, rows(4, 6, "r1")); // chunk 1's first read, cut short
      sendEvents(
          first, new Scenario.Tx(0x1000, 1).update(t, full(2, "updated 2", "w"), null).end());
    } finally {
      first.shutdown();
    }

    PostgresMirrorDestination second = started(db, ctx);
    try {
      sendEvents(
          second,
          new Scenario.Tx(0x1000, 1).update(t, full(2, "replayed", "w"), null).end()); // skipped
      sendEvents(
          second,
          new Scenario.Tx(0x2000, 2)
              .update(t, full(9, "not held", "w"), null) // skipped: the attempt is still open
              .insert(t, TableRow.of(4, "event 4", "w"))
              .end());
      batch(second, t, attempt, 1, rows(4, 6, "replayed")); // stored before the restart: skipped
      batch(second, t, attempt, 5, rows(4, 7, "r2")); // chunk 1's second read
      chunkEnd(second, t, attempt, 1, 5, 1, 3);
      Scenario.finish(second, t, attempt, 2, 6);
      sendEvents(
          second, new Scenario.Tx(0x3000, 3).update(t, full(50, "after finish", "w"), null).end());
    } finally {
      second.shutdown();
    }
    assertThat(db.queryRows("SELECT id, v FROM chunked_restart.t ORDER BY id"))
        .containsExactly(
            List.of("1", "c0-1"),
            List.of("2", "updated 2"),
            List.of("3", "c0-3"),
            List.of("4", "r2-4"),
            List.of("5", "r2-5"),
            List.of("6", "r2-6"),
            List.of("50", "after finish"));
  }

  /**
   * A chunk read whose batches meet many rows already there: the batch falls back from the plain
   * COPY to an upsert through a staging table, in binary and in text format alike.
   */
  @Test
  void aLargeBatchMeetingRowsAlreadyThereIsUpsertedInEitherCopyFormat(TestDatabase db) {
    ReplicatedTableSchema binary = table(19302, "chunked_upsert");
    ReplicatedTableSchema text =
        keyed(
            19303,
            "chunked_upsert",
            "u",
            col("id", 23, "integer", 1, 1),
            col("p", 600, "point", 2, 0)); // no binary encoder for its values: text COPY
    PostgresMirrorDestination d = started(db, new Scenario.Context());
    try {
      UUID a = UUID.randomUUID();
      Scenario.drop(d, binary, a);
      batch(d, binary, a, 0, rows(0, 5_000, "first"));
      batch(d, binary, a, 7, rows(2_500, 7_500, "second"));
      chunkEnd(d, binary, a, 0, 7, 1, 5_000);
      Scenario.finish(d, binary, a, 1, 5_000);

      UUID b = UUID.randomUUID();
      Scenario.drop(d, text, b);
      batch(d, text, b, 0, List.of(TableRow.of(1, "(1,1)"), TableRow.of(2, "(2,2)")));
      batch(d, text, b, 1, List.of(TableRow.of(2, "(2,20)"), TableRow.of(3, "(3,3)")));
      chunkEnd(d, text, b, 0, 1, 1, 2);
      Scenario.finish(d, text, b, 1, 2);
    } finally {
      d.shutdown();
    }
    assertThat(
            db.queryRows(
                "SELECT count(*), count(*) FILTER (WHERE v LIKE 'first-%'),"
                    + " count(*) FILTER (WHERE v LIKE 'second-%') FROM chunked_upsert.t"))
        .containsExactly(List.of("7500", "2500", "5000"));
    assertThat(db.queryRows("SELECT id, p::text FROM chunked_upsert.u ORDER BY id"))
        .containsExactly(List.of("1", "(1,1)"), List.of("2", "(2,20)"), List.of("3", "(3,3)"));
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

  private static void batch(
      Destination d, ReplicatedTableSchema t, UUID attempt, long seq, List<TableRow> rows) {
    AsyncResult r = AsyncResult.create();
    d.writeTableRows(t, new TableCopyWrite.Batch(new TableCopyBatchId(attempt, seq), rows), r);
    Scenario.assertDurable(r);
  }

  private static void chunkEnd(
      Destination d,
      ReplicatedTableSchema t,
      UUID attempt,
      int chunk,
      long firstBatch,
      long batches,
      long rows) {
    AsyncResult r = AsyncResult.create();
    d.writeTableRows(t, new TableCopyWrite.ChunkEnd(attempt, chunk, firstBatch, batches, rows), r);
    Scenario.assertDurable(r);
  }
}
