package org.pgetl.examples.destination;

import static org.assertj.core.api.Assertions.assertThat;
import static org.pgetl.testing.destination.Scenario.assertDurable;
import static org.pgetl.testing.destination.Scenario.await;
import static org.pgetl.testing.destination.Scenario.col;
import static org.pgetl.testing.destination.Scenario.identityFull;
import static org.pgetl.testing.destination.Scenario.keyed;
import static org.pgetl.testing.destination.Scenario.sendEvents;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.io.PrintStream;
import java.io.StringWriter;
import java.math.BigDecimal;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.time.LocalTime;
import java.time.OffsetTime;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.UUID;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.pgetl.destination.AsyncResult;
import org.pgetl.destination.AsyncResult.Outcome;
import org.pgetl.destination.StreamId;
import org.pgetl.destination.TableCopyBatchId;
import org.pgetl.destination.TableCopyWrite;
import org.pgetl.destination.WriteDurability;
import org.pgetl.error.ErrorKind;
import org.pgetl.model.Event;
import org.pgetl.model.IdentityKind;
import org.pgetl.model.Lsn;
import org.pgetl.model.OldRow;
import org.pgetl.model.PgArray;
import org.pgetl.model.PgInterval;
import org.pgetl.model.PgNumeric;
import org.pgetl.model.ReplicatedTableSchema;
import org.pgetl.model.TableRow;
import org.pgetl.testing.destination.ReferenceTables;
import org.pgetl.testing.destination.Scenario;
import org.pgetl.testkit.destination.SchemaBuilder;

@Timeout(60)
class StdoutJsonDestinationTest {
  private static final Lsn COMMIT = Lsn.parse("0/16B3748");
  private static final Instant TIME = Instant.parse("2024-05-01T10:00:00Z");
  private static final String SEQ = "00000000016b3748/000000000000000";

  private static final ReplicatedTableSchema T =
      keyed(
          16384,
          "public",
          "t",
          col("id", 23, "integer", 1, 1),
          col("doc", 25, "text", 2, 0),
          col("price", 1700, Scenario.NUMERIC_10_2, "numeric(10,2)", 3));
  private static final ReplicatedTableSchema LOG =
      identityFull(16385, "audit", "log", col("msg", 25, "text", 1, 0));

  private static Lsn at(int ordinal) {
    return Lsn.of(COMMIT.value() - 0x48 + 8L * ordinal);
  }

  @Test
  void printsOneGoldenLinePerEventKind() {
    StringWriter out = new StringWriter();
    StdoutJsonDestination d = new StdoutJsonDestination(out);
    List<Event> events =
        List.of(
            new Event.Begin(at(0), COMMIT, 0, TIME, 740),
            new Event.Relation(at(1), COMMIT, 1, T),
            new Event.Insert(at(2), COMMIT, 2, T, TableRow.of(1, "a", Scenario.num("1.50"))),
            new Event.Update(
                at(3), COMMIT, 3, T, Scenario.full(2, "b", null), new OldRow.Key(TableRow.of(1))),
            new Event.Update(
                at(4),
                COMMIT,
                4,
                T,
                Scenario.partial(3, new int[] {1}, 2, Scenario.num("2.00")),
                null),
            new Event.Delete(at(5), COMMIT, 5, T, new OldRow.Key(TableRow.of(2))),
            new Event.Delete(at(6), COMMIT, 6, LOG, new OldRow.Full(TableRow.of("gone"))),
            new Event.Truncate(at(7), COMMIT, 7, List.of(T, LOG), 3),
            new Event.Message(
                at(8), COMMIT, 8, true, "audit", "hi".getBytes(StandardCharsets.UTF_8)),
            new Event.Commit(at(9), COMMIT, 9, Lsn.parse("0/16B3790"), TIME, 0));
    sendEvents(d, events);
    d.shutdown();

    String head = "\"commit_lsn\":\"0/16B3748\",\"start_lsn\":\"0/16B37";
    String t = ",\"table\":\"public.t\",\"table_id\":16384";
    assertThat(out.toString().split("\n", -1))
        .containsExactly(
            "{\"kind\":\"begin\",\"seq\":\""
                + SEQ
                + "0\","
                + head
                + "00\","
                + "\"xid\":740,\"commit_time\":\"2024-05-01T10:00:00Z\"}",
            "{\"kind\":\"relation\",\"seq\":\""
                + SEQ
                + "1\","
                + head
                + "08\""
                + t
                + ",\"identity\":\"PRIMARY_KEY\",\"columns\":["
                + "{\"name\":\"id\",\"type\":\"integer\",\"type_oid\":23,\"attnum\":1,"
                + "\"primary_key\":true,\"nullable\":false},"
                + "{\"name\":\"doc\",\"type\":\"text\",\"type_oid\":25,\"attnum\":2,"
                + "\"primary_key\":false,\"nullable\":true},"
                + "{\"name\":\"price\",\"type\":\"numeric(10,2)\",\"type_oid\":1700,\"attnum\":3,"
                + "\"primary_key\":false,\"nullable\":true}]}",
            "{\"kind\":\"insert\",\"seq\":\""
                + SEQ
                + "2\","
                + head
                + "10\""
                + t
                + ",\"row\":{\"id\":1,\"doc\":\"a\",\"price\":1.50}}",
            "{\"kind\":\"update\",\"seq\":\""
                + SEQ
                + "3\","
                + head
                + "18\""
                + t
                + ",\"row\":{\"id\":2,\"doc\":\"b\",\"price\":null},\"old_key\":{\"id\":1}}",
            "{\"kind\":\"update\",\"seq\":\""
                + SEQ
                + "4\","
                + head
                + "20\""
                + t
                + ",\"row\":{\"id\":2,\"price\":2.00},\"missing\":[\"doc\"]}",
            "{\"kind\":\"delete\",\"seq\":\""
                + SEQ
                + "5\","
                + head
                + "28\""
                + t
                + ",\"old_key\":{\"id\":2}}",
            "{\"kind\":\"delete\",\"seq\":\""
                + SEQ
                + "6\","
                + head
                + "30\""
                + ",\"table\":\"audit.log\",\"table_id\":16385,\"old_row\":{\"msg\":\"gone\"}}",
            "{\"kind\":\"truncate\",\"seq\":\""
                + SEQ
                + "7\","
                + head
                + "38\""
                + ",\"tables\":[\"public.t\",\"audit.log\"],\"table_ids\":[16384,16385],"
                + "\"cascade\":true,\"restart_identity\":true}",
            "{\"kind\":\"message\",\"seq\":\""
                + SEQ
                + "8\","
                + head
                + "40\""
                + ",\"transactional\":true,\"prefix\":\"audit\",\"content\":\"\\\\x6869\"}",
            "{\"kind\":\"commit\",\"seq\":\""
                + SEQ
                + "9\","
                + head
                + "48\""
                + ",\"end_lsn\":\"0/16B3790\",\"commit_time\":\"2024-05-01T10:00:00Z\"}",
            "");
  }

  @Test
  void printsCopyRowsWithTheirBatchIdAndTheCopyBarriers() {
    StringWriter out = new StringWriter();
    StdoutJsonDestination d = new StdoutJsonDestination(out);
    UUID attempt = UUID.fromString("00000000-0000-0000-0000-00000000000a");
    AsyncResult dropped = AsyncResult.create();
    d.dropTableForCopy(T, attempt, dropped);
    AsyncResult batch = AsyncResult.create();
    d.writeTableRows(
        T,
        new TableCopyWrite.Batch(
            new TableCopyBatchId(attempt, 3),
            List.of(TableRow.of(1, "a", null), TableRow.of(2, "b", PgNumeric.NAN))),
        batch);
    AsyncResult finish = AsyncResult.create();
    d.writeTableRows(T, new TableCopyWrite.Finish(attempt, 1, 2), finish);
    assertDurable(dropped);
    assertDurable(batch);
    assertDurable(finish);
    d.shutdown();

    String t = "\"table\":\"public.t\",\"table_id\":16384";
    String b = ",\"batch\":\"" + attempt + "#3\"";
    assertThat(out.toString())
        .isEqualTo(
            "{\"kind\":\"drop_table_for_copy\","
                + t
                + ",\"attempt\":\""
                + attempt
                + "\",\"key\":[\"id\"]}\n"
                + "{\"kind\":\"copy\","
                + t
                + b
                + ",\"batch_row\":0,\"row\":{\"id\":1,\"doc\":\"a\",\"price\":null}}\n"
                + "{\"kind\":\"copy\","
                + t
                + b
                + ",\"batch_row\":1,\"row\":{\"id\":2,\"doc\":\"b\",\"price\":\"NaN\"}}\n"
                + "{\"kind\":\"copy_finished\","
                + t
                + ",\"attempt\":\""
                + attempt
                + "\",\"batches\":1,\"rows\":2}\n");
  }

  @Test
  void mapsEveryValueTypeAsDocumented() {
    Object[][] cases = {
      {null, "null"},
      {true, "true"},
      {(short) -2, "-2"},
      {7, "7"},
      {9007199254740993L, "9007199254740993"},
      {1.5f, "1.5"},
      {Float.NaN, "\"NaN\""},
      {1e20, "1.0E20"},
      {Double.NEGATIVE_INFINITY, "\"-Infinity\""},
      {Scenario.num("1.50"), "1.50"},
      {Scenario.num("-0.000123"), "-0.000123"},
      {PgNumeric.of(new BigDecimal("1E+3")), "1000"},
      {PgNumeric.NAN, "\"NaN\""},
      {PgNumeric.POSITIVE_INFINITY, "\"Infinity\""},
      {PgNumeric.NEGATIVE_INFINITY, "\"-Infinity\""},
      {"text", "\"text\""},
      {"{\"a\": 1}", "\"{\\\"a\\\": 1}\""},
      {new byte[] {0, (byte) 0xff, 0x10}, "\"\\\\x00ff10\""},
      {new byte[0], "\"\\\\x\""},
      {
        UUID.fromString("a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11"),
        "\"a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11\""
      },
      {LocalDate.of(2024, 1, 31), "\"2024-01-31\""},
      {LocalDate.of(-43, 3, 15), "\"-0043-03-15\""},
      {LocalDate.of(12345, 1, 1), "\"+12345-01-01\""},
      {LocalDate.MAX, "\"infinity\""},
      {LocalDate.MIN, "\"-infinity\""},
      {LocalTime.of(10, 15), "\"10:15:00\""},
      {LocalTime.of(10, 15, 30, 500_000_000), "\"10:15:30.5\""},
      {LocalTime.MAX, "\"24:00:00\""},
      {OffsetTime.of(10, 15, 30, 0, ZoneOffset.ofHours(2)), "\"10:15:30+02:00\""},
      {OffsetTime.of(10, 15, 30, 0, ZoneOffset.UTC), "\"10:15:30Z\""},
      {LocalDateTime.of(2024, 1, 31, 10, 15, 30, 123_456_000), "\"2024-01-31T10:15:30.123456\""},
      {LocalDateTime.of(-43, 3, 15, 1, 2), "\"-0043-03-15T01:02:00\""},
      {LocalDateTime.MAX, "\"infinity\""},
      {LocalDateTime.MIN, "\"-infinity\""},
      {Instant.parse("2024-01-31T10:15:30Z"), "\"2024-01-31T10:15:30Z\""},
      {Instant.MAX, "\"infinity\""},
      {Instant.MIN, "\"-infinity\""},
      {new PgInterval(14, 3, 14_706_789_000L), "\"P1Y2M3DT4H5M6.789S\""},
      {new PgInterval(-1, -2, -3_000_000L), "\"P-1M-2DT-3S\""},
      {new PgInterval(0, 0, -3_723_500_000L), "\"PT-1H-2M-3.5S\""},
      {new PgInterval(0, 0, 0), "\"PT0S\""},
      {
        new PgArray(23, List.of(2, 2), List.of(1, 1), Arrays.asList(1, null, 3, 4)),
        "[[1,null],[3,4]]"
      },
      {PgArray.ofList(25, Arrays.asList("a\"b", null)), "[\"a\\\"b\",null]"},
      {
        new PgArray(23, List.of(2), List.of(0), List.of(1, 2)),
        "{\"lower_bounds\":[0],\"values\":[1,2]}"
      },
      {PgArray.ofList(23, List.of()), "[]"},
      {
        PgArray.ofList(1114, List.of(LocalDateTime.MAX, LocalDateTime.of(2024, 1, 1, 0, 0))),
        "[\"infinity\",\"2024-01-01T00:00:00\"]"
      },
    };
    List<String> actual = new ArrayList<>();
    List<String> expected = new ArrayList<>();
    for (Object[] c : cases) {
      StringBuilder sb = new StringBuilder();
      JsonLine.value(sb, c[0]);
      actual.add(sb.toString());
      expected.add((String) c[1]);
      StrictJson.parse(sb.toString()); // every value is valid JSON on its own
    }
    assertThat(actual).containsExactlyElementsOf(expected);
  }

  @Test
  void escapesStringsSoThatEveryLineIsValidJsonAndReadsBackUnchanged() {
    String nasty = "q\"b\\s/\n\r\t\b\f\u0001\u001f\u007f\u2028\u2029é✓😀 lone:\ud800.";
    StringBuilder sb = new StringBuilder();
    JsonLine.string(sb, nasty);
    assertThat(sb.toString())
        .isEqualTo(
            "\"q\\\"b\\\\s/\\n\\r\\t\\b\\f\\u0001\\u001f\u007f\\u2028\\u2029é✓😀 lone:\\ud800.\"");
    assertThat(StrictJson.parse(sb.toString())).isEqualTo(nasty);

    ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    StdoutJsonDestination d =
        new StdoutJsonDestination(new PrintStream(bytes, true, StandardCharsets.UTF_8));
    ReplicatedTableSchema table = keyed(1, "we\"ird", "tab\nle", col("k\\ey", 25, "text", 1, 1));
    sendEvents(d, List.of(new Event.Insert(at(1), COMMIT, 1, table, TableRow.of("😀é\n"))));
    d.shutdown();
    String line = bytes.toString(StandardCharsets.UTF_8);
    assertThat(line).endsWith("}\n").doesNotContain("\r").hasLineCount(1);
    assertThat(StrictJson.object(line.strip()))
        .containsEntry("table", "we\"ird.tab\nle")
        .containsEntry("row", java.util.Map.of("k\\ey", "😀é\n"));
  }

  @Test
  void copyThenStreamsThenRestartWithReplayReadBackToTheSourceState() throws Exception {
    Scenario scenario = new Scenario();
    StringWriter firstOut = new StringWriter();
    StdoutJsonDestination first = new StdoutJsonDestination(firstOut);
    scenario.firstRun(first);
    first.shutdown();
    StringWriter secondOut = new StringWriter();
    StdoutJsonDestination second = new StdoutJsonDestination(secondOut);
    scenario.secondRun(second);
    second.shutdown();

    JsonLinesReader reader = new JsonLinesReader();
    reader.read(firstOut.toString());
    reader.read(secondOut.toString());
    ReferenceTables expected = scenario.expected();
    for (ReplicatedTableSchema t :
        List.of(Scenario.ORDERS, Scenario.EVENTS_LOG, Scenario.ITEMS, Scenario.AUDIT)) {
      List<String> columns = expected.columns(t.id());
      assertThat(reader.render(t.id().oid(), columns))
          .as("rows of %s", t.name())
          .isEqualTo(expected.render(t.id(), StdoutJsonDestinationTest::asJson));
    }
    assertThat(reader.messages.values()).containsExactly("audit|\\x68656c6c6f20e29c93");
    // the output really was at-least-once: the replay printed events a second time
    assertThat(secondOut.toString()).contains("\"seq\":\"0000000000001000/0000000000000002\"");
    assertThat(firstOut.toString()).contains("\"seq\":\"0000000000001000/0000000000000002\"");
  }

  /** A model value as the reader sees it: printed as JSON, parsed back. */
  private static String asJson(Object v) {
    StringBuilder sb = new StringBuilder();
    JsonLine.value(sb, v);
    return String.valueOf(StrictJson.parse(sb.toString()));
  }

  @Test
  void aReaderThatLetsARelationShareTheKeyOfItsChangeMissesNothing() {
    StringWriter out = new StringWriter();
    StdoutJsonDestination d = new StdoutJsonDestination(out);
    Scenario.writeRelationsSharingKeys(d);
    d.shutdown();
    JsonLinesReader reader = new JsonLinesReader();
    reader.read(out.toString());
    assertThat(reader.render(Scenario.SHARED_V1.id().oid(), List.of("id", "v", "added")))
        .containsExactly("{id=1, v=one, added=null}", "{id=2, v=two, added=22}");
  }

  @Test
  void aStreamThatFailsToWriteFailsTheWriteWithADestinationError() {
    OutputStream broken =
        new OutputStream() {
          @Override
          public void write(int b) throws IOException {
            throw new IOException("pipe closed");
          }
        };
    StdoutJsonDestination d = new StdoutJsonDestination(new PrintStream(broken));
    AsyncResult r = AsyncResult.create();
    d.writeEvents(
        StreamId.APPLY,
        List.of(new Event.Begin(at(0), COMMIT, 0, TIME, 1)),
        WriteDurability.MAY_DEFER,
        r);
    Outcome o = await(r);
    d.shutdown();
    assertThat(o.kind()).isEqualTo(Outcome.Kind.FAILED);
    assertThat(o.error().kind()).isEqualTo(ErrorKind.DESTINATION_ERROR);
  }

  @Test
  void writesAfterShutdownAreAnsweredShutdownAndABarrierIsDurable() {
    StdoutJsonDestination d = new StdoutJsonDestination(new StringWriter());
    AsyncResult barrier = AsyncResult.create();
    d.writeEvents(StreamId.APPLY, List.of(), WriteDurability.REQUIRE_DURABLE, barrier);
    assertDurable(barrier);
    d.shutdown();
    AsyncResult late = AsyncResult.create();
    d.writeEvents(StreamId.APPLY, List.of(), WriteDurability.REQUIRE_DURABLE, late);
    assertThat(await(late)).isEqualTo(Outcome.SHUTDOWN);
  }

  /**
   * Issue #9 item 14: a table without columns ({@code CREATE TABLE t ()}) has rows of no values;
   * each is a line with an empty {@code "row"}, and a reader counts them.
   */
  @Test
  void aTableWithoutColumnsPrintsItsRowsOfNoValues() {
    ReplicatedTableSchema empty =
        SchemaBuilder.table(16390, "public.nothing").identity(IdentityKind.FULL).build();
    StringWriter out = new StringWriter();
    StdoutJsonDestination d = new StdoutJsonDestination(out);
    Scenario.copyAll(
        d, Scenario.copyOf(empty, List.of(TableRow.of(), TableRow.of(), TableRow.of()), 2));
    Scenario.sendEvents(
        d,
        new Scenario.Tx(0x2000, 1)
            .relation(empty)
            .insert(empty, TableRow.of())
            .delete(empty, new OldRow.Full(TableRow.of()))
            .insert(empty, TableRow.of())
            .end());
    d.shutdown();

    assertThat(out.toString())
        .contains("\"kind\":\"copy\",\"table\":\"public.nothing\"")
        .contains("\"row\":{}")
        .contains("\"columns\":[]")
        .contains("\"old_row\":{}");
    JsonLinesReader reader = new JsonLinesReader();
    reader.read(out.toString());
    assertThat(reader.rows(16390)).hasSize(4).allSatisfy(r -> assertThat(r).isEmpty());
  }

  /**
   * A table copied in chunks: every row and change is printed as it comes, each chunk read ends
   * with a {@code copy_chunk_end} line answered durable, and a reader that keeps the last row per
   * key ends with the source's table: a chunk read twice (the first cut short), an insert of a key
   * a chunk copies later, changes of keys not held yet, key moves.
   */
  @Test
  void aTableCopiedInChunksReadsBackToTheSourceStateByTheLastRowPerKey() {
    ReplicatedTableSchema t =
        keyed(
            16500,
            "public",
            "chunked",
            col("id", 23, "integer", 1, 1),
            col("v", 25, "text", 2, 0),
            col("w", 25, "text", 3, 0));
    StringWriter out = new StringWriter();
    StdoutJsonDestination d = new StdoutJsonDestination(out);
    assertThat(d.supportsChunkedCopy()).isTrue();
    UUID attempt = UUID.randomUUID();
    Scenario.drop(d, t, attempt);
    chunkBatch(d, t, attempt, 0, TableRow.of(1, "c0-1", "w1"), TableRow.of(2, "c0-2", "w2"));
    chunkBatch(d, t, attempt, 1, TableRow.of(3, "c0-3", "w3"), TableRow.of(4, "c0-4", "w4"));
    sendEvents(
        d,
        new Scenario.Tx(0x1000, 1)
            .insert(t, TableRow.of(7, "event 7", "w")) // chunk 1 copies key 7 too
            .update(t, Scenario.full(11, "not held", "w"), null) // skipped by the reader
            .update(t, Scenario.partial(3, new int[] {2}, 9, "not held"), null)
            .delete(t, Scenario.key(10))
            .update(t, Scenario.full(2, "updated 2", "w2u"), null)
            .end());
    chunkEnd(d, t, attempt, 0, 0, 2, 4);
    chunkBatch(d, t, attempt, 2, TableRow.of(6, "r1-6", "w6"), TableRow.of(8, "r1-8", "w8"));
    chunkBatch(d, t, attempt, 10, TableRow.of(6, "r2-6", "w6"), TableRow.of(7, "r2-7", "w7"));
    chunkBatch(d, t, attempt, 11, TableRow.of(9, "r2-9", "w9"), TableRow.of(10, "r2-10", "w10"));
    chunkEnd(d, t, attempt, 1, 10, 2, 4);
    sendEvents(
        d,
        new Scenario.Tx(0x2000, 2)
            .delete(t, Scenario.key(8))
            .insert(t, TableRow.of(3, "inserted 3", "w"))
            .update(t, Scenario.full(60, "moved 6", "w60"), Scenario.key(6))
            .update(t, Scenario.full(98, "moved 99", "w98"), Scenario.key(99))
            .update(t, Scenario.partial(3, new int[] {2}, 96, "moved 97"), Scenario.key(97))
            .update(t, Scenario.partial(3, new int[] {2}, 4, "moved 1"), Scenario.key(1))
            .end());
    Scenario.finish(d, t, attempt, 4, 8);
    d.shutdown();

    assertThat(out.toString())
        .contains(
            "{\"kind\":\"copy_chunk_end\",\"table\":\"public.chunked\",\"table_id\":16500,"
                + "\"attempt\":\""
                + attempt
                + "\",\"chunk\":1,\"first_batch\":10,\"batches\":2,\"rows\":4}\n");
    JsonLinesReader reader = new JsonLinesReader();
    reader.read(out.toString());
    assertThat(reader.render(16500, List.of("id", "v", "w")))
        .containsExactly(
            "{id=10, v=r2-10, w=w10}",
            "{id=2, v=updated 2, w=w2u}",
            "{id=3, v=inserted 3, w=w}",
            "{id=4, v=moved 1, w=w1}",
            "{id=60, v=moved 6, w=w60}",
            "{id=7, v=r2-7, w=w7}",
            "{id=9, v=r2-9, w=w9}",
            "{id=98, v=moved 99, w=w98}");
  }

  private static void chunkBatch(
      StdoutJsonDestination d, ReplicatedTableSchema t, UUID attempt, long seq, TableRow... rows) {
    AsyncResult r = AsyncResult.create();
    d.writeTableRows(
        t, new TableCopyWrite.Batch(new TableCopyBatchId(attempt, seq), List.of(rows)), r);
    assertDurable(r);
  }

  private static void chunkEnd(
      StdoutJsonDestination d,
      ReplicatedTableSchema t,
      UUID attempt,
      int chunk,
      long firstBatch,
      long batches,
      long rows) {
    AsyncResult r = AsyncResult.create();
    d.writeTableRows(t, new TableCopyWrite.ChunkEnd(attempt, chunk, firstBatch, batches, rows), r);
    assertDurable(r);
  }
}
