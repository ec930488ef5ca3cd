package org.pgetl.examples.destination;

import java.io.IOException;
import java.io.OutputStreamWriter;
import java.io.PrintStream;
import java.io.UncheckedIOException;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.UUID;
import org.jspecify.annotations.Nullable;
import org.pgetl.destination.AsyncResult;
import org.pgetl.destination.Destination;
import org.pgetl.destination.StreamId;
import org.pgetl.destination.TableCopyWrite;
import org.pgetl.destination.WriteDurability;
import org.pgetl.destination.internal.RowKey;
import org.pgetl.destination.internal.SerialWriter;
import org.pgetl.error.ErrorKind;
import org.pgetl.error.EtlException;
import org.pgetl.model.ColumnSchema;
import org.pgetl.model.Event;
import org.pgetl.model.OldRow;
import org.pgetl.model.ReplicatedTableSchema;
import org.pgetl.model.TableId;
import org.pgetl.model.TableRow;
import org.pgetl.model.UpdatedRow;

/**
 * A destination that prints one JSON object per line for every copied row and every event: the
 * smallest complete {@link Destination}, and a change feed another program can read from a pipe.
 *
 * <h2>Answers and idempotency</h2>
 *
 * Every call is handed to one writer thread ({@code pgetl-stdout-json}) and returns at once. The
 * thread writes the call's lines, flushes, and only then answers {@code durable()}: "durable" here
 * means "handed to the operating system", which is what a pipe can offer. A write error answers
 * {@code fail(DESTINATION_ERROR)}. An empty {@code REQUIRE_DURABLE} barrier is answered after every
 * earlier write was flushed.
 *
 * <p>Output is at-least-once, like delivery: after a restart the pipeline sends again what was not
 * confirmed durable, and this destination prints it again. Each line carries the key a reader
 * deduplicates on: {@code "batch"} and {@code "batch_row"} for copied rows (skip a row whose batch
 * id and index in the batch were seen) and {@code "seq"} for events (per table, skip an event whose
 * {@code seq} is not greater than the last one applied; {@code seq} strings sort like the keys). A
 * {@code relation} line carries the {@code seq} of the change after it: apply it when its {@code
 * seq} is new, but do not count it as applied, or that change would be skipped. A {@code
 * drop_table_for_copy} line tells the reader to forget the table's rows, batch ids and last {@code
 * seq}; it names the copy attempt that follows ({@code "attempt"}), and every {@code copy} line's
 * {@code batch} starts with the attempt it belongs to.
 *
 * <h2>Copy attempts</h2>
 *
 * A copy batch of an abandoned attempt can still arrive after the next attempt's drop (the engine
 * waits for in-flight answers only up to its shutdown timeout). The writer thread remembers, per
 * table, the attempt the last {@code drop_table_for_copy} named, and prints nothing for a batch or
 * a {@code Finish} of another attempt (it still answers {@code durable()}: the engine must not wait
 * for it). A write of the catch-up stream of another attempt ({@code StreamId.tableSync} naming it)
 * prints nothing either. A reader that starts in the middle of the output can apply the same rule:
 * skip {@code copy} lines whose batch is not of the attempt the table's last drop line named. The
 * {@code copy_finished} line ends an attempt and says how many batches and rows it sent. Every
 * answer is {@code durable()}, so nothing is deferred and no state is kept per {@code StreamId}.
 *
 * <h2>Tables copied in chunks</h2>
 *
 * The destination is append-only, so it accepts the chunked copy of large tables ({@link
 * #supportsChunkedCopy()}): it prints every row and change as it comes. Such a table gets one
 * {@code drop_table_for_copy} line, then the {@code copy} lines of its chunks, each chunk read
 * ended by a {@code copy_chunk_end} line (answered {@code durable()} once flushed, like every line
 * before it), while the table's change lines come at the same time; the {@code copy_finished} line
 * ends the copy. A chunk read again after a restart prints its rows again, with new batch ids. A
 * reader that keeps the last row per key (the drop line's {@code "key"} names the key columns) sees
 * the source's table: between the table's drop and {@code copy_finished} lines, a {@code copy} or
 * {@code insert} line replaces the row of its key, an {@code update} or {@code delete} line of a
 * key it does not hold is skipped (an {@code update} that moves a row to another key and has no
 * {@code "missing"} columns is written under its new key), and a row that moves onto a key it holds
 * replaces that row.
 *
 * <h2>Lines</h2>
 *
 * <pre>
 * {"kind":"drop_table_for_copy","table":"public.t","table_id":16384,"attempt":"&lt;uuid&gt;","key":["id"]}
 * {"kind":"copy","table":"public.t","table_id":16384,"batch":"&lt;uuid&gt;#0","batch_row":0,"row":{"id":1,"name":"a"}}
 * {"kind":"copy_chunk_end","table":"public.t","table_id":16384,"attempt":"&lt;uuid&gt;","chunk":0,"first_batch":0,"batches":1,"rows":1}
 * {"kind":"copy_finished","table":"public.t","table_id":16384,"attempt":"&lt;uuid&gt;","batches":1,"rows":1}
 * {"kind":"begin","seq":"...","commit_lsn":"0/16B3748","start_lsn":"0/16B3700","xid":740,"commit_time":"2024-05-01T10:00:00Z"}
 * {"kind":"relation", ...,"table":"public.t","table_id":16384,"identity":"PRIMARY_KEY","columns":[{"name":"id","type":"integer","type_oid":23,"attnum":1,"primary_key":true,"nullable":false}]}
 * {"kind":"insert", ...,"table":"public.t","table_id":16384,"row":{...}}
 * {"kind":"update", ...,"row":{...},"missing":["doc"],"old_key":{"id":1}}      (or "old_row":{...})
 * {"kind":"delete", ...,"old_key":{"id":1}}                                   (or "old_row":{...})
 * {"kind":"truncate", ...,"tables":["public.t"],"table_ids":[16384],"cascade":false,"restart_identity":false}
 * {"kind":"message", ...,"transactional":true,"prefix":"audit","content":"\\x6869"}
 * {"kind":"commit", ...,"end_lsn":"0/16B3790","commit_time":"2024-05-01T10:00:00Z"}
 * </pre>
 *
 * Every event line has {@code kind}, {@code seq} (the {@link
 * org.pgetl.model.EventSequenceKey#toString() sequence key}, {@code commitLsn/txOrdinal} as two
 * 16-digit hexadecimal numbers), {@code commit_lsn}, {@code start_lsn} (LSNs as PostgreSQL prints
 * them). A partial update lists its unchanged TOAST columns in {@code "missing"} and leaves them
 * out of {@code "row"}: keep their current values.
 *
 * <h2>Values</h2>
 *
 * <table>
 *   <caption>JSON form of each Java value type</caption>
 *   <tr><th>Java type (PostgreSQL type)</th><th>JSON</th></tr>
 *   <tr><td>null</td><td>{@code null}</td></tr>
 *   <tr><td>Boolean</td><td>{@code true} / {@code false}</td></tr>
 *   <tr><td>Short, Integer, Long</td><td>number</td></tr>
 *   <tr><td>Float, Double</td><td>number ({@code 1.5}, {@code 1.0E20}); {@code "NaN"},
 *       {@code "Infinity"}, {@code "-Infinity"} as strings</td></tr>
 *   <tr><td>PgNumeric</td><td>number with the exact digits and scale ({@code 1.50}); {@code "NaN"},
 *       {@code "Infinity"}, {@code "-Infinity"} as strings</td></tr>
 *   <tr><td>String (text, varchar, json, jsonb, unknown types)</td><td>string (json documents
 *       too: their text)</td></tr>
 *   <tr><td>byte[] (bytea)</td><td>string in PostgreSQL's hex form, {@code "\\x00ff"}</td></tr>
 *   <tr><td>UUID</td><td>string</td></tr>
 *   <tr><td>LocalDate (date)</td><td>{@code "2024-01-31"}; ISO-8601 astronomical years for BC
 *       ({@code "-0043-03-15"} is 44 BC); {@code "infinity"}, {@code "-infinity"}</td></tr>
 *   <tr><td>LocalTime (time)</td><td>{@code "10:15:30.5"}; {@code "24:00:00"}</td></tr>
 *   <tr><td>OffsetTime (timetz)</td><td>{@code "10:15:30+02:00"}, {@code "10:15:30Z"}</td></tr>
 *   <tr><td>LocalDateTime (timestamp)</td><td>{@code "2024-01-31T10:15:30.123456"};
 *       {@code "infinity"}, {@code "-infinity"}</td></tr>
 *   <tr><td>Instant (timestamptz)</td><td>{@code "2024-01-31T10:15:30Z"} (UTC);
 *       {@code "infinity"}, {@code "-infinity"}</td></tr>
 *   <tr><td>PgInterval</td><td>ISO-8601 duration with a sign per part, as PostgreSQL's
 *       {@code iso_8601} style: {@code "P1Y2M3DT4H5M6.789S"}, {@code "P-1M"}, {@code "PT0S"}</td></tr>
 *   <tr><td>PgArray</td><td>nested arrays, one level per dimension, NULL elements as
 *       {@code null}: {@code [[1,null],[3,4]]}; with lower bounds other than 1:
 *       {@code {"lower_bounds":[0],"values":[1,2]}}</td></tr>
 * </table>
 *
 * <p>Strings are escaped by hand ({@code "}, {@code \}, control characters, U+2028/U+2029, lone
 * surrogates); the output is UTF-8 when writing to a {@link PrintStream}.
 */
public final class StdoutJsonDestination implements Destination {
  private static final Duration SHUTDOWN_WAIT = Duration.ofSeconds(30);

  private final Writer out;
  private final @Nullable PrintStream errorCheck;
  private final SerialWriter writer;

  // the attempt each table's last drop named; used on the writer thread only
  private final Map<TableId, UUID> attempts = new HashMap<>();

  /** Creates a destination that prints to {@link System#out}. */
  public StdoutJsonDestination() {
    this(System.out);
  }

  /**
   * Creates a destination that prints UTF-8 lines to a stream. The stream is flushed after each
   * write and never closed.
   *
   * @param out the stream
   */
  public StdoutJsonDestination(PrintStream out) {
    this(new OutputStreamWriter(Objects.requireNonNull(out, "out"), StandardCharsets.UTF_8), out);
  }

  /**
   * Creates a destination that writes lines to a writer. The writer is flushed after each write and
   * never closed.
   *
   * @param out the writer
   */
  public StdoutJsonDestination(Writer out) {
    this(Objects.requireNonNull(out, "out"), null);
  }

  private StdoutJsonDestination(Writer out, @Nullable PrintStream errorCheck) {
    this.out = out;
    this.errorCheck = errorCheck;
    this.writer =
        new SerialWriter(
            "pgetl-stdout-json",
            e ->
                new EtlException(
                    ErrorKind.DESTINATION_ERROR,
                    "writing JSON lines failed",
                    String.valueOf(e.getMessage()),
                    e));
  }

  /**
   * Returns {@code stdout-json}.
   *
   * @return the name
   */
  @Override
  public String name() {
    return "stdout-json";
  }

  /**
   * Prints a {@code drop_table_for_copy} line (the reader forgets what it holds of the table) and
   * makes {@code attemptId} the table's current copy attempt.
   *
   * @param table the table
   * @param attemptId the copy attempt that follows
   * @param result answered {@code durable()} once the line is flushed
   */
  @Override
  public void dropTableForCopy(ReplicatedTableSchema table, UUID attemptId, AsyncResult result) {
    Objects.requireNonNull(attemptId, "attemptId");
    writer.submit(
        result,
        () -> {
          attempts.put(table.id(), attemptId);
          print(
              tableLine("drop_table_for_copy", table)
                  .field("attempt", attemptId.toString())
                  .rawField("key", keyNames(table))
                  .end());
        });
  }

  /**
   * Prints one {@code copy} line per row of a batch, a {@code copy_chunk_end} line or a {@code
   * copy_finished} line; prints nothing for a batch or barrier of an attempt that a later drop
   * abandoned.
   *
   * @param table the table
   * @param write the batch or the barrier
   * @param result answered {@code durable()} once the lines are flushed
   */
  @Override
  public void writeTableRows(
      ReplicatedTableSchema table, TableCopyWrite write, AsyncResult result) {
    writer.submit(
        result,
        () -> {
          UUID current = attempts.get(table.id());
          if (write instanceof TableCopyWrite.Finish finish) {
            if (current == null || current.equals(finish.attemptId())) {
              print(
                  tableLine("copy_finished", table)
                      .field("attempt", finish.attemptId().toString())
                      .field("batches", finish.batches())
                      .field("rows", finish.rows())
                      .end());
            }
            return;
          }
          if (write instanceof TableCopyWrite.ChunkEnd end) {
            // answered once flushed, after the read's batches: they were flushed before it
            if (current == null || current.equals(end.attemptId())) {
              print(
                  tableLine("copy_chunk_end", table)
                      .field("attempt", end.attemptId().toString())
                      .field("chunk", end.chunk())
                      .field("first_batch", end.firstBatch())
                      .field("batches", end.batches())
                      .field("rows", end.rows())
                      .end());
            }
            return;
          }
          TableCopyWrite.Batch batch = (TableCopyWrite.Batch) write;
          if (current != null && !current.equals(batch.id().attemptId())) {
            return; // a late batch of an abandoned attempt: its rows must not be applied
          }
          StringBuilder lines = new StringBuilder();
          for (int i = 0; i < batch.rows().size(); i++) {
            TableRow row = batch.rows().get(i);
            lines.append(
                tableLine("copy", table)
                    .field("batch", batch.id().toString())
                    .field("batch_row", i)
                    .rawField("row", row(table, row::get, table.columnCount()))
                    .end());
          }
          print(lines);
        });
  }

  /**
   * Prints one line per event; an empty barrier prints nothing.
   *
   * @param events the events, in stream order
   * @param durability ignored: every answer is {@code durable()}
   * @param result answered {@code durable()} once the lines are flushed
   */
  @Override
  public void writeEvents(
      StreamId stream, List<Event> events, WriteDurability durability, AsyncResult result) {
    writer.submit(
        result,
        () -> {
          if (isStale(stream)) {
            return; // the catch-up stream of an abandoned attempt: its changes must not be applied
          }
          StringBuilder lines = new StringBuilder();
          for (Event event : events) {
            lines.append(eventLine(event));
          }
          print(lines);
        });
  }

  /**
   * Returns true: an append-only output can take a table copied in chunks, since a reader that
   * keeps the last row per key sees the source's table (see "Tables copied in chunks" above).
   *
   * @return true
   */
  @Override
  public boolean supportsChunkedCopy() {
    return true;
  }

  /**
   * Tells whether a write comes from the catch-up stream of a copy attempt that a later drop
   * abandoned. Runs on the writer thread.
   */
  private boolean isStale(StreamId stream) {
    if (stream.kind() != StreamId.Kind.TABLE_SYNC) {
      return false;
    }
    UUID current = attempts.get(stream.table());
    return current != null && !current.equals(stream.copyAttempt());
  }

  /**
   * Stops the writer thread: the write in progress finishes and is flushed, writes not started yet
   * are answered {@code shutdown()}. The stream is not closed.
   */
  @Override
  public void shutdown() {
    writer.close(SHUTDOWN_WAIT);
  }

  // --- lines

  private void print(CharSequence lines) throws IOException {
    if (lines.length() == 0) {
      return;
    }
    out.append(lines);
    out.flush();
    if (errorCheck != null && errorCheck.checkError()) {
      throw new UncheckedIOException(new IOException("the output stream reported an error"));
    }
  }

  private static JsonLine tableLine(String kind, ReplicatedTableSchema table) {
    return new JsonLine()
        .field("kind", kind)
        .field("table", table.name().toString())
        .field("table_id", table.id().oid());
  }

  private static String eventLine(Event e) {
    JsonLine line =
        new JsonLine()
            .field("kind", e.kind().name().toLowerCase(java.util.Locale.ROOT))
            .field("seq", e.sequenceKey().toString())
            .field("commit_lsn", e.commitLsn().toString())
            .field("start_lsn", e.startLsn().toString());
    if (e.table() != null) {
      line.field("table", e.table().name().toString()).field("table_id", e.table().id().oid());
    }
    if (e instanceof Event.Begin b) {
      line.field("xid", b.xid()).field("commit_time", b.commitTime().toString());
    } else if (e instanceof Event.Commit c) {
      line.field("end_lsn", c.endLsn().toString()).field("commit_time", c.commitTime().toString());
    } else if (e instanceof Event.Relation r) {
      line.field("identity", r.table().identity().name()).rawField("columns", columns(r.table()));
    } else if (e instanceof Event.Insert i) {
      line.rawField("row", row(i.table(), i.row()::get, i.table().columnCount()));
    } else if (e instanceof Event.Update u) {
      update(line, u);
    } else if (e instanceof Event.Delete d) {
      oldRow(line, d.table(), d.oldRow());
    } else if (e instanceof Event.Truncate t) {
      truncate(line, t);
    } else if (e instanceof Event.Message m) {
      StringBuilder content = new StringBuilder();
      JsonLine.value(content, m.content());
      line.field("transactional", m.transactional())
          .field("prefix", m.prefix())
          .rawField("content", content);
    } else {
      throw new IllegalArgumentException("unknown event kind " + e.kind());
    }
    return line.end();
  }

  private static void update(JsonLine line, Event.Update u) {
    UpdatedRow row = u.row();
    StringBuilder missing = new StringBuilder("[");
    StringBuilder present = new StringBuilder("{");
    for (int i = 0; i < row.columnCount(); i++) {
      String name = u.table().columns().get(i).name();
      if (row.isPresent(i)) {
        present.append(present.length() > 1 ? "," : "");
        JsonLine.string(present, name);
        JsonLine.value(present.append(':'), row.get(i));
      } else {
        JsonLine.string(missing.append(missing.length() > 1 ? "," : ""), name);
      }
    }
    line.rawField("row", present.append('}'));
    if (row instanceof UpdatedRow.Partial) {
      line.rawField("missing", missing.append(']'));
    }
    if (u.oldRow() != null) {
      oldRow(line, u.table(), u.oldRow());
    }
  }

  private static void oldRow(JsonLine line, ReplicatedTableSchema table, OldRow old) {
    TableRow values = old.row();
    if (old instanceof OldRow.Full) {
      line.rawField("old_row", row(table, values::get, values.size()));
      return;
    }
    int[] key = table.identityColumnIndexes();
    StringBuilder sb = new StringBuilder("{");
    for (int k = 0; k < values.size(); k++) {
      String name = k < key.length ? table.columns().get(key[k]).name() : "key_" + k;
      JsonLine.string(sb.append(k == 0 ? "" : ","), name);
      JsonLine.value(sb.append(':'), values.get(k));
    }
    line.rawField("old_key", sb.append('}'));
  }

  private static void truncate(JsonLine line, Event.Truncate t) {
    StringBuilder names = new StringBuilder("[");
    StringBuilder ids = new StringBuilder("[");
    for (ReplicatedTableSchema table : t.tables()) {
      JsonLine.string(names.append(names.length() > 1 ? "," : ""), table.name().toString());
      ids.append(ids.length() > 1 ? "," : "").append(table.id().oid());
    }
    line.rawField("tables", names.append(']'))
        .rawField("table_ids", ids.append(']'))
        .field("cascade", t.cascade())
        .field("restart_identity", t.restartIdentity());
  }

  private static StringBuilder row(
      ReplicatedTableSchema table,
      java.util.function.IntFunction<@Nullable Object> value,
      int count) {
    StringBuilder sb = new StringBuilder("{");
    for (int i = 0; i < count; i++) {
      JsonLine.string(sb.append(i == 0 ? "" : ","), table.columns().get(i).name());
      JsonLine.value(sb.append(':'), value.apply(i));
    }
    return sb.append('}');
  }

  /** The names of the columns that key the table's rows; empty for a table without a key. */
  private static StringBuilder keyNames(ReplicatedTableSchema table) {
    StringBuilder sb = new StringBuilder("[");
    for (int i : RowKey.columns(table)) {
      JsonLine.string(sb.append(sb.length() > 1 ? "," : ""), table.columns().get(i).name());
    }
    return sb.append(']');
  }

  private static StringBuilder columns(ReplicatedTableSchema table) {
    StringBuilder sb = new StringBuilder("[");
    for (ColumnSchema c : table.columns()) {
      sb.append(sb.length() > 1 ? "," : "");
      sb.append(
          new JsonLine()
              .field("name", c.name())
              .field("type", c.typeName())
              .field("type_oid", c.typeOid())
              .field("attnum", c.ordinalPosition())
              .field("primary_key", c.isPrimaryKey())
              .field("nullable", c.nullable())
              .end()
              .stripTrailing());
    }
    return sb.append(']');
  }
}
