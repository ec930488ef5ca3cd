package org.pgetl.destination.postgres;

import static org.assertj.core.api.Assertions.assertThat;
import static org.pgetl.testing.destination.Scenario.await;
import static org.pgetl.testing.destination.Scenario.col;
import static org.pgetl.testing.destination.Scenario.identityFull;
import static org.pgetl.testing.destination.Scenario.keyed;
import static org.pgetl.testing.destination.Scenario.keyedAt;
import static org.pgetl.testing.destination.Scenario.sendEvents;
import static org.pgetl.testing.destination.SqlRows.query;

import java.math.BigDecimal;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Instant;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.time.LocalTime;
import java.time.OffsetTime;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.UUID;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.pgetl.destination.AsyncResult;
import org.pgetl.destination.AsyncResult.Outcome;
import org.pgetl.destination.StreamId;
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
import org.pgetl.model.PgText;
import org.pgetl.model.ReplicatedTableSchema;
import org.pgetl.model.TableName;
import org.pgetl.model.TableRow;
import org.pgetl.model.UpdatedRow;
import org.pgetl.testing.destination.ReferenceTables;
import org.pgetl.testing.destination.Scenario;
import org.pgetl.testing.destination.SqlRows;
import org.pgetl.testkit.TestDatabase;
import org.pgetl.testkit.WithPostgres;
import org.pgetl.testkit.destination.SchemaBuilder;

/**
 * {@link PostgresMirrorDestination} driven the way the engine drives it, into a real PostgreSQL
 * database (the test class's own database is the target).
 */
@WithPostgres
@Timeout(value = 3, unit = TimeUnit.MINUTES)
class PostgresMirrorDestinationIT {

  private static PostgresMirrorDestination started(TestDatabase db, Scenario.Context ctx) {
    PostgresMirrorDestination d = new PostgresMirrorDestination(Jdbc.config(db), 3);
    d.startup(ctx);
    return d;
  }

  @Test
  void copyThenStreamsThenRestartWithReplayEndsWithTheSourceStateAndNoDuplicates(TestDatabase db)
      throws Exception {
    Scenario scenario = new Scenario();
    Scenario.Context ctx = new Scenario.Context();

    PostgresMirrorDestination first = started(db, ctx);
    scenario.firstRun(first);
    first.shutdown();

    PostgresMirrorDestination second = started(db, ctx);
    scenario.secondRun(second);
    second.shutdown();

    ReferenceTables expected = scenario.expected();
    try (Connection c = connect(db)) {
      for (ReplicatedTableSchema t :
          List.of(Scenario.ORDERS, Scenario.EVENTS_LOG, Scenario.ITEMS, Scenario.AUDIT)) {
        List<String> columns = expected.columns(t.id());
        assertThat(columnNames(c, t.name())).as("columns of %s", t.name()).isEqualTo(columns);
        assertThat(read(c, t.name().quoted(), columns))
            .as("rows of %s", t.name())
            .isEqualTo(expected.render(t.id(), v -> v == null ? "NULL" : PgText.format(v)));
      }
      assertThat(
              query(c, "SELECT prefix, convert_from(content, 'UTF8') FROM _pgetl.mirror_messages"))
          .containsExactly("audit|hello ✓");
      assertThat(
              query(c, "SELECT count(*) FROM _pgetl.mirror_copy_batches WHERE table_oid = 16404"))
          .as("only the batches of audit's second copy attempt are remembered")
          .containsExactly("3");
    }
    assertThat(ctx.metadata.get(Scenario.ORDERS.id()).destinationTableId())
        .isEqualTo("\"public\".\"orders\"");
    assertThat(ctx.metadata.get(Scenario.ORDERS.id()).applied()).isTrue();
    assertThat(ctx.metadata.get(Scenario.ORDERS.id()).snapshotLsn())
        .isEqualTo(Scenario.ORDERS_V2.tableSchema().snapshotLsn());
  }

  @Test
  void storesEveryValueTypeExactlyAndUnknownTypesAsText(TestDatabase db) throws Exception {
    ReplicatedTableSchema types =
        keyed(
            18001,
            "types",
            "all_types",
            col("id", 23, "integer", 1, 1),
            col("b", 16, "boolean", 2, 0),
            col("i2", 21, "smallint", 3, 0),
            col("f4", 700, "real", 4, 0),
            col("f8", 701, "double precision", 5, 0),
            col("n", 1700, "numeric", 6, 0),
            col("by", 17, "bytea", 7, 0),
            col("d", 1082, "date", 8, 0),
            col("t", 1083, "time without time zone", 9, 0),
            col("tz", 1266, "time with time zone", 10, 0),
            col("ts", 1114, "timestamp without time zone", 11, 0),
            col("tstz", 1184, "timestamp with time zone", 12, 0),
            col("iv", 1186, "interval", 13, 0),
            col("u", 2950, "uuid", 14, 0),
            col("j", 3802, "jsonb", 15, 0),
            col("txt", 1009, "text[]", 16, 0),
            col("grid", 1007, "integer[]", 17, 0),
            col("pt", 600, "point", 18, 0),
            col("mood", 99001, "source_only_mood", 19, 0),
            col("tab", 25, "text", 20, 0));
    TableRow first =
        TableRow.of(
            1,
            true,
            (short) -2,
            Float.NaN,
            Double.NEGATIVE_INFINITY,
            PgNumeric.NAN,
            new byte[] {0, (byte) 0xff},
            LocalDate.of(-43, 3, 15),
            LocalTime.MAX,
            OffsetTime.of(1, 2, 3, 500_000_000, ZoneOffset.ofHoursMinutes(-5, -30)),
            LocalDateTime.MAX,
            Instant.MIN,
            new PgInterval(-14, 3, 14_706_789_000L),
            UUID.fromString("a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11"),
            "{\"a\": [1, 2]}",
            PgArray.ofList(25, List.of("a,b", "", "q\"uote", "NULL")),
            new PgArray(23, List.of(2, 2), List.of(1, 1), Arrays.asList(1, null, 3, 4)),
            "(1,2)",
            "happy",
            "tab\there\nnew line \\ backslash");
    TableRow second =
        TableRow.of(
            2,
            false,
            (short) 7,
            1.5f,
            0.1,
            PgNumeric.of(new BigDecimal("123456789012345678901234567890.123456789")),
            new byte[0],
            LocalDate.MIN,
            LocalTime.of(10, 15, 30, 500_000),
            OffsetTime.of(1, 0, 0, 0, ZoneOffset.UTC),
            LocalDateTime.of(1500, 1, 1, 0, 0, 0, 123_456_000),
            Instant.parse("2024-01-31T10:15:30.5Z"),
            new PgInterval(0, 0, 0),
            UUID.fromString("00000000-0000-0000-0000-000000000000"),
            "[]",
            PgArray.ofList(25, List.of()),
            null,
            null,
            null,
            "");
    PostgresMirrorDestination d = started(db, new Scenario.Context());
    try {
      Scenario.Copy copy = Scenario.copyOf(types, List.of(first), 10);
      Scenario.copyAll(d, copy);
      sendEvents(d, new Scenario.Tx(0x9000, 1).insert(types, second).end());
    } finally {
      d.shutdown();
    }
    try (Connection c = connect(db)) {
      for (TableRow row : List.of(first, second)) {
        Map<String, String> stored = row(c, "types.all_types", "id = " + row.get(0));
        for (int i = 0; i < types.columnCount(); i++) {
          Object v = row.get(i);
          assertThat(stored.get(types.columns().get(i).name()))
              .as("column %s of row %s", types.columns().get(i).name(), row.get(0))
              .isEqualTo(v == null ? null : PgText.format(v));
        }
      }
      assertThat(
              query(
                  c,
                  "SELECT format_type(atttypid, atttypmod) FROM pg_attribute"
                      + " WHERE attrelid = 'types.all_types'::regclass AND attname IN ('n', 'mood', 'grid')"
                      + " ORDER BY attnum"))
          .containsExactly("numeric", "integer[]", "text");
    }
  }

  @Test
  void aTableCopiedInBinaryEqualsTheSourceForEveryTypeNullAndEdgeValue(TestDatabase db)
      throws Exception {
    ReplicatedTableSchema types =
        keyed(
            18011,
            "types",
            "binary_types",
            col("id", 23, "integer", 1, 1),
            col("b", 16, "boolean", 2, 0),
            col("i2", 21, "smallint", 3, 0),
            col("i8", 20, "bigint", 4, 0),
            col("f4", 700, "real", 5, 0),
            col("f8", 701, "double precision", 6, 0),
            col("n", 1700, "numeric", 7, 0),
            col("m", 1700, (12 << 16 | 2) + 4, "numeric(12,2)", 8),
            col("by", 17, "bytea", 9, 0),
            col("d", 1082, "date", 10, 0),
            col("ts", 1114, "timestamp without time zone", 11, 0),
            col("tstz", 1184, "timestamp with time zone", 12, 0),
            col("u", 2950, "uuid", 13, 0),
            col("j", 3802, "jsonb", 14, 0),
            col("js", 114, "json", 15, 0),
            col("vc", 1043, 14, "character varying(10)", 16),
            col("tab", 25, "text", 17, 0));
    List<TableRow> rows =
        List.of(
            TableRow.of(
                1,
                true,
                Short.MIN_VALUE,
                Long.MIN_VALUE,
                Float.NaN,
                Double.NEGATIVE_INFINITY,
                PgNumeric.NAN,
                PgNumeric.of(new BigDecimal("-9999999999.99")),
                new byte[] {0, (byte) 0xff, '\\', '\t'},
                LocalDate.MIN,
                LocalDateTime.MAX,
                Instant.MIN,
                UUID.fromString("a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11"),
                "{\"a\": [1, 2.50], \"b\": \"tab\\there\"}",
                "{ \"kept\" :  \"as sent\" }",
                "ten chars!",
                "tab\there\nnew line \\ backslash ✓"),
            TableRow.of(
                2,
                false,
                Short.MAX_VALUE,
                Long.MAX_VALUE,
                -0.0f,
                Double.MIN_VALUE,
                PgNumeric.POSITIVE_INFINITY,
                PgNumeric.of(new BigDecimal("0.01")),
                new byte[0],
                LocalDate.MAX,
                LocalDateTime.MIN,
                Instant.MAX,
                UUID.fromString("00000000-0000-0000-0000-000000000000"),
                "[]",
                "null",
                "",
                ""),
            TableRow.of(
                3, null, null, null, null, null, null, null, null, null, null, null, null, null,
                null, null, null),
            TableRow.of(
                4,
                true,
                (short) 0,
                0L,
                Float.POSITIVE_INFINITY,
                1.0e23,
                PgNumeric.of(new BigDecimal("-123456789012345678901234567890.000123456789")),
                PgNumeric.of(new BigDecimal("0.00")),
                new byte[] {1, 2, 3},
                LocalDate.of(-43, 3, 15),
                LocalDateTime.of(1500, 1, 1, 0, 0, 0, 123_456_000),
                Instant.parse("1969-12-31T23:59:59.999999Z"),
                UUID.fromString("ffffffff-ffff-ffff-ffff-ffffffffffff"),
                "{}",
                "[1, 2]",
                "äöü",
                "\\N"),
            TableRow.of(
                5,
                false,
                (short) -1,
                -1L,
                Float.MIN_VALUE,
                -0.0,
                PgNumeric.NEGATIVE_INFINITY,
                PgNumeric.of(new BigDecimal("10000.00")),
                new byte[] {(byte) 0x80},
                LocalDate.of(2000, 1, 1),
                LocalDateTime.of(2000, 1, 1, 0, 0),
                Instant.parse("2024-01-31T10:15:30.5Z"),
                UUID.fromString("123e4567-e89b-12d3-a456-426614174000"),
                "\"\"",
                "\"\"",
                "x",
                "x"),
            TableRow.of(
                6,
                true,
                (short) 1,
                1L,
                1.5f,
                0.1,
                PgNumeric.of(new BigDecimal("1E+20")),
                PgNumeric.of(new BigDecimal("-0.50")),
                new byte[] {0},
                LocalDate.of(1999, 12, 31),
                LocalDateTime.of(1999, 12, 31, 23, 59, 59, 999_999_000),
                Instant.parse("2000-01-01T00:00:00Z"),
                UUID.fromString("00000000-0000-0001-0000-000000000001"),
                "1",
                "2",
                "y",
                "y"),
            TableRow.of(
                7,
                false,
                (short) 2,
                2L,
                3.4028235e38f,
                Double.NaN,
                PgNumeric.of(new BigDecimal("0.00000000000000000001")),
                PgNumeric.of(new BigDecimal("1234.50")),
                new byte[] {9},
                LocalDate.of(1, 1, 1),
                LocalDateTime.of(294276, 12, 31, 23, 59, 59, 999_999_000),
                Instant.parse("-4713-11-24T00:00:00Z"),
                UUID.fromString("00000000-0000-0000-0000-000000000002"),
                "true",
                "false",
                "z",
                "z"));
    PostgresMirrorDestination d = started(db, new Scenario.Context());
    try {
      Scenario.copyAll(d, Scenario.copyOf(types, rows, 3));
    } finally {
      d.shutdown();
    }
    try (Connection c = connect(db)) {
      for (TableRow row : rows) {
        Map<String, String> stored = row(c, "types.binary_types", "id = " + row.get(0));
        for (int i = 0; i < types.columnCount(); i++) {
          Object v = row.get(i);
          assertThat(stored.get(types.columns().get(i).name()))
              .as("column %s of row %s", types.columns().get(i).name(), row.get(0))
              .isEqualTo(v == null ? null : PgText.format(v));
        }
      }
    }
  }

  @Test
  void aRelationSharesTheKeyOfTheChangeAfterItAndDoesNotHideIt(TestDatabase db) {
    PostgresMirrorDestination d = started(db, new Scenario.Context());
    try {
      Scenario.emptyCopy(d, Scenario.SHARED_V1);
      Scenario.writeRelationsSharingKeys(d);
    } finally {
      d.shutdown();
    }
    assertThat(db.queryRows("SELECT id, v, added FROM public.shared ORDER BY id"))
        .containsExactly(Arrays.asList("1", "one", null), List.of("2", "two", "22"));
  }

  @Test
  void foldsTheChangesOfEachKeyIntoTheirNetEffectWithoutChangingTheOutcome(TestDatabase db) {
    ReplicatedTableSchema t =
        keyed(
            18007,
            "fold",
            "t",
            col("id", 23, "integer", 1, 1),
            col("v", 25, "text", 2, 0),
            col("w", 25, "text", 3, 0),
            col("big", 25, "text", 4, 0));
    List<TableRow> before =
        List.of(
            TableRow.of(3, "v3", "w3", "big3"),
            TableRow.of(4, "v4", "w4", "big4"),
            TableRow.of(5, "v5", "w5", "big5"),
            TableRow.of(6, "v6", "w6", "big6"),
            TableRow.of(7, "v7", "w7", "big7"));
    List<Event> batch =
        new Scenario.Tx(0x1000, 1)
            .insert(t, TableRow.of(1, "v1", "w1", "big1"))
            .update(t, Scenario.partial(4, new int[] {3}, 1, "v1b", "w1b"), null)
            .insert(t, TableRow.of(2, "v2", "w2", "big2"))
            .delete(t, Scenario.key(2))
            .delete(t, Scenario.key(3))
            .insert(t, TableRow.of(3, "v3 again", null, "big3 again"))
            .update(t, Scenario.partial(4, new int[] {2, 3}, 4, "v4b"), null)
            .update(t, Scenario.partial(4, new int[] {1, 3}, 4, "w4b"), null)
            .update(t, Scenario.partial(4, new int[] {3}, 50, "v5b", "w5b"), Scenario.key(5))
            .update(t, Scenario.full(60, "v60", "w60", "big60"), Scenario.key(6))
            .update(t, Scenario.partial(4, new int[] {3}, 60, "v60b", null), null)
            .update(t, Scenario.partial(4, new int[] {3}, 7, null, "w7b"), null)
            .delete(t, Scenario.key(7))
            .end();
    PostgresMirrorDestination d = started(db, new Scenario.Context());
    try {
      Scenario.copyAll(d, Scenario.copyOf(t, before, 10));
      sendEvents(d, batch);
      sendEvents(d, batch); // a replay changes nothing
    } finally {
      d.shutdown();
    }
    assertThat(db.queryRows("SELECT id, v, w, big FROM fold.t ORDER BY id"))
        .containsExactly(
            List.of("1", "v1b", "w1b", "big1"),
            Arrays.asList("3", "v3 again", null, "big3 again"),
            List.of("4", "v4b", "w4b", "big4"),
            List.of("50", "v5b", "w5b", "big5"),
            Arrays.asList("60", "v60b", null, "big60"));
  }

  @Test
  void largeWritesThroughStagingTablesEndAsTheirChangesOneByOneWould(TestDatabase db) {
    ReplicatedTableSchema t =
        keyed(
            18008,
            "staged",
            "t",
            col("id", 23, "integer", 1, 1),
            col("v", 25, "text", 2, 0),
            col("w", 25, "text", 3, 0));
    int n = 3 * MirrorRows.STAGE_MIN_ROWS;
    List<TableRow> before = Scenario.rows(0, 4 * n, i -> TableRow.of(i, "v" + i, "w" + i));
    Scenario.Tx tx = new Scenario.Tx(0x2000, 1);
    Map<Integer, List<String>> expected = new TreeMap<>();
    for (int i = 0; i < 4 * n; i++) {
      expected.put(i, List.of(String.valueOf(i), "v" + i, "w" + i));
    }
    for (int i = 0; i < n; i++) { // partial updates: w is not sent and keeps its value
      String v = "p\t" + i + "\\ \n";
      tx.update(t, Scenario.partial(3, new int[] {2}, i, v), null);
      expected.put(i, List.of(String.valueOf(i), v, "w" + i));
    }
    for (int i = n; i < 2 * n; i++) { // full updates: upserts
      tx.update(t, Scenario.full(i, "f" + i, null), null);
      expected.put(i, Arrays.asList(String.valueOf(i), "f" + i, null));
    }
    for (int i = 2 * n; i < 3 * n; i++) {
      tx.delete(t, Scenario.key(i));
      expected.remove(i);
    }
    for (int i = 4 * n; i < 5 * n; i++) {
      tx.insert(t, TableRow.of(i, "new\r" + i, "\\N"));
      expected.put(i, List.of(String.valueOf(i), "new\r" + i, "\\N"));
    }
    List<Event> batch = tx.end();
    PostgresMirrorDestination d = started(db, new Scenario.Context());
    try {
      Scenario.copyAll(d, Scenario.copyOf(t, before, 1000));
      sendEvents(d, batch);
      sendEvents(d, batch); // a replay changes nothing
    } finally {
      d.shutdown();
    }
    assertThat(db.queryRows("SELECT id, v, w FROM staged.t ORDER BY id"))
        .containsExactlyElementsOf(expected.values());
  }

  @Test
  void anInsertOnlyWriteReplayedAfterARestartChangesNothing(TestDatabase db) {
    ReplicatedTableSchema t =
        keyed(
            18009,
            "bulk",
            "t",
            col("id", 23, "integer", 1, 1),
            col("v", 25, "text", 2, 0),
            col("n", 1700, "numeric", 3, 0));
    int n = 2 * MirrorRows.STAGE_MIN_ROWS;
    Map<Integer, List<String>> expected = new TreeMap<>();
    Scenario.Tx first = new Scenario.Tx(0x3000, 1);
    for (int i = 0; i < n; i++) { // values COPY escapes, and NULLs
      String v = i % 7 == 0 ? null : "r\t" + i + "\t\n\\N";
      first.insert(t, TableRow.of(i, v, i % 5 == 0 ? null : Scenario.num(i + ".25")));
      expected.put(i, Arrays.asList(String.valueOf(i), v, i % 5 == 0 ? null : i + ".25"));
    }
    List<Event> written = first.end();
    Scenario.Context ctx = new Scenario.Context();
    PostgresMirrorDestination d = started(db, ctx);
    try {
      Scenario.copyAll(d, Scenario.copyOf(t, List.of(), 1000));
      sendEvents(d, written);
    } finally {
      d.shutdown();
    }
    // changed in the target alone: a replay that wrote its rows again would overwrite it
    db.execute("UPDATE bulk.t SET v = 'kept' WHERE id = 1");
    expected.put(1, Arrays.asList("1", "kept", "1.25"));

    Scenario.Tx second = new Scenario.Tx(0x4000, 2);
    for (int i = n; i < 2 * n; i++) {
      second.insert(t, TableRow.of(i, "s" + i, null));
      expected.put(i, Arrays.asList(String.valueOf(i), "s" + i, null));
    }
    List<Event> redelivered = new ArrayList<>(written); // delivered again after the restart
    redelivered.addAll(second.end());
    d = started(db, ctx);
    try {
      sendEvents(d, written);
      sendEvents(d, redelivered);
    } finally {
      d.shutdown();
    }
    assertThat(db.queryRows("SELECT id, v, n FROM bulk.t ORDER BY id"))
        .containsExactlyElementsOf(expected.values());
  }

  @Test
  void insertsMeetingRowsAlreadyInTheTargetReplaceThem(TestDatabase db) {
    ReplicatedTableSchema t =
        keyed(18010, "bulk", "u", col("id", 23, "integer", 1, 1), col("v", 25, "text", 2, 0));
    int n = 2 * MirrorRows.STAGE_MIN_ROWS;
    Map<Integer, List<String>> expected = new TreeMap<>();
    for (int i = 0; i < 10; i++) {
      expected.put(i, List.of(String.valueOf(i), "old" + i));
    }
    Scenario.Tx tx = new Scenario.Tx(0x3000, 1);
    for (int i = 5; i < 5 + n; i++) {
      tx.insert(t, TableRow.of(i, "new" + i));
      expected.put(i, List.of(String.valueOf(i), "new" + i));
    }
    // the same key twice in one write (not possible at a source with this key): the last row wins
    tx.insert(t, TableRow.of(7, "last"));
    expected.put(7, List.of("7", "last"));
    List<Event> batch = tx.end();
    PostgresMirrorDestination d = started(db, new Scenario.Context());
    try {
      Scenario.copyAll(
          d, Scenario.copyOf(t, Scenario.rows(0, 10, i -> TableRow.of(i, "old" + i)), 1000));
      sendEvents(d, batch);
      sendEvents(d, batch); // a replay changes nothing
    } finally {
      d.shutdown();
    }
    assertThat(db.queryRows("SELECT id, v FROM bulk.u ORDER BY id"))
        .containsExactlyElementsOf(expected.values());
  }

  @Test
  void concurrentFirstBatchesOfANewTableCreateItOnce(TestDatabase db) throws Exception {
    ReplicatedTableSchema t =
        keyed(18003, "par", "t", col("id", 23, "integer", 1, 1), col("v", 25, "text", 2, 0));
    List<TableRow> rows = Scenario.rows(0, 400, i -> TableRow.of(i, "v" + i));
    Scenario.Copy copy = Scenario.copyOf(t, rows, 25);
    PostgresMirrorDestination d = new PostgresMirrorDestination(Jdbc.config(db), 8);
    d.startup(new Scenario.Context());
    try {
      Scenario.drop(d, copy);
      Scenario.copyConcurrently(d, 8, List.of(copy), new int[][] {Scenario.range(0, 16)});
      // a partition that never saw its answer sends its batch again
      Scenario.sendBatch(d, copy, 3);
      Scenario.finish(d, copy, 16);
    } finally {
      d.shutdown();
    }
    assertThat(db.queryLong("SELECT count(*) FROM par.t")).isEqualTo(400);
    assertThat(db.queryLong("SELECT count(DISTINCT id) FROM par.t")).isEqualTo(400);
  }

  /**
   * Regression (issue #9 item 11): the first batches of several tables of a schema the target does
   * not have yet, written at once, each created the schema; all but one failed with a duplicate key
   * in {@code pg_namespace} (23505) and their tables stayed errored.
   */
  @Test
  void firstBatchesOfSeveralTablesOfANewSchemaAllCreateTheirTables(TestDatabase db)
      throws Exception {
    int tables = 6;
    List<Scenario.Copy> copies = new ArrayList<>();
    for (int i = 0; i < tables; i++) {
      ReplicatedTableSchema t =
          keyed(
              18100 + i,
              "fresh",
              "t" + i,
              col("id", 23, "integer", 1, 1),
              col("v", 25, "text", 2, 0));
      copies.add(
          Scenario.copyOf(t, Scenario.rows(0, 20_000, n -> TableRow.of(n, "v" + n)), 20_000));
    }
    PostgresMirrorDestination d = new PostgresMirrorDestination(Jdbc.config(db), tables);
    d.startup(new Scenario.Context());
    ExecutorService pool = Executors.newFixedThreadPool(tables);
    try {
      for (Scenario.Copy c : copies) {
        Scenario.drop(d, c);
      }
      CountDownLatch start = new CountDownLatch(1);
      List<Future<Outcome>> answers = new ArrayList<>();
      for (Scenario.Copy c : copies) {
        answers.add(
            pool.submit(
                () -> {
                  start.await();
                  AsyncResult r = AsyncResult.create();
                  d.writeTableRows(c.table(), c.batch(0), r);
                  return await(r);
                }));
      }
      start.countDown();
      for (Future<Outcome> a : answers) {
        assertThat(a.get(2, TimeUnit.MINUTES)).isEqualTo(Outcome.DURABLE);
      }
      for (Scenario.Copy c : copies) {
        Scenario.finish(d, c, 1);
      }
    } finally {
      pool.shutdownNow();
      d.shutdown();
    }
    for (int i = 0; i < tables; i++) {
      assertThat(db.queryLong("SELECT count(*) FROM fresh.t" + i))
          .as("fresh.t%d", i)
          .isEqualTo(20_000);
    }
  }

  @Test
  void aKeylessTableChangesOneOfItsEqualRowsEvenWithJsonColumns(TestDatabase db) {
    ReplicatedTableSchema log =
        identityFull(
            18004,
            "full",
            "log",
            col("kind", 25, "text", 1, 0),
            col("doc", 114, "json", 2, 0),
            col("flag", 16, "boolean", 3, 0));
    TableRow same = TableRow.of("a", "{ \"x\" : 1 }", true);
    PostgresMirrorDestination d = started(db, new Scenario.Context());
    try {
      Scenario.copyAll(d, Scenario.copyOf(log, List.of(same, same, same), 10));
      sendEvents(
          d,
          new Scenario.Tx(0x1000, 1)
              .update(log, Scenario.full("b", "{ \"x\" : 1 }", false), Scenario.oldFull(same))
              .delete(log, Scenario.oldFull(same))
              .end());
    } finally {
      d.shutdown();
    }
    assertThat(db.queryRows("SELECT kind, doc::text, flag::text FROM \"full\".log ORDER BY kind"))
        .containsExactly(
            List.of("a", "{ \"x\" : 1 }", "true"), List.of("b", "{ \"x\" : 1 }", "false"));
  }

  @Test
  void aFailedWriteRollsBackItsRowsAndBookkeepingAndReportsTheSqlState(TestDatabase db) {
    ReplicatedTableSchema t =
        keyed(18005, "fail", "t", col("id", 23, "integer", 1, 1), col("v", 25, "text", 2, 0));
    List<Event> good = new Scenario.Tx(0x1000, 1).insert(t, TableRow.of(1, "one")).end();
    List<Event> bad =
        new Scenario.Tx(0x2000, 2)
            .insert(t, TableRow.of(2, "two"))
            .insert(t, TableRow.of("not a number", "secret value"))
            .end();
    PostgresMirrorDestination d = started(db, new Scenario.Context());
    try {
      Scenario.emptyCopy(d, t);
      sendEvents(d, good);
      AsyncResult failed = AsyncResult.create();
      d.writeEvents(StreamId.APPLY, bad, WriteDurability.MAY_DEFER, failed);
      Outcome o = await(failed);
      assertThat(o.kind()).isEqualTo(Outcome.Kind.FAILED);
      assertThat(o.error().kind()).isEqualTo(ErrorKind.UNSUPPORTED_VALUE_IN_DESTINATION);
      assertThat(o.error().getMessage())
          .contains("SQLSTATE 22P02")
          .contains("of table \"fail\".\"t\"")
          .doesNotContain("not a number")
          .doesNotContain("secret value");
      assertThat(db.queryRows("SELECT id FROM fail.t ORDER BY id")).containsExactly(List.of("1"));
      // the engine retries from the durable point: the good part is applied, a replay is harmless
      sendEvents(d, bad.subList(0, 2));
      sendEvents(d, good);
    } finally {
      d.shutdown();
    }
    assertThat(db.queryRows("SELECT id, v FROM fail.t ORDER BY id"))
        .containsExactly(List.of("1", "one"), List.of("2", "two"));
  }

  @Test
  void aTablePgetlDidNotCreateIsNeverDroppedOrWrittenTo(TestDatabase db) {
    db.execute(
        "CREATE SCHEMA mine",
        "CREATE TABLE mine.t (id int PRIMARY KEY, v text)",
        "INSERT INTO mine.t VALUES (1, 'precious')");
    ReplicatedTableSchema t =
        keyed(18006, "mine", "t", col("id", 23, "integer", 1, 1), col("v", 25, "text", 2, 0));
    PostgresMirrorDestination d = started(db, new Scenario.Context());
    try {
      Scenario.Copy copy = Scenario.copyOf(t, List.of(TableRow.of(2, "x")), 10);
      Scenario.drop(d, copy);
      AsyncResult r = AsyncResult.create();
      d.writeTableRows(t, copy.batch(0), r);
      Outcome o = await(r);
      assertThat(o.kind()).isEqualTo(Outcome.Kind.FAILED);
      assertThat(o.error().kind()).isEqualTo(ErrorKind.DESTINATION_SCHEMA_ERROR);
      assertThat(o.error().getMessage()).contains("42P07");
    } finally {
      d.shutdown();
    }
    assertThat(db.queryRows("SELECT id, v FROM mine.t")).containsExactly(List.of("1", "precious"));
  }

  /**
   * A late batch of an abandoned attempt that is still being written when the next attempt's drop
   * comes (the copy threads run concurrently) is either dropped with the old attempt or skipped:
   * the mirror ends with the new attempt's rows only, and the attempt marked finished.
   */
  @Test
  void aLateBatchRacingTheNextDropIsNotApplied(TestDatabase db) throws Exception {
    ReplicatedTableSchema t =
        keyed(18010, "late", "t", col("id", 23, "integer", 1, 1), col("v", 25, "text", 2, 0));
    Scenario.Copy abandoned =
        Scenario.copyOf(t, Scenario.rows(0, 20_000, i -> TableRow.of(i, "old " + i)), 10_000);
    Scenario.Copy current =
        Scenario.copyOf(t, Scenario.rows(0, 10, i -> TableRow.of(i, "new " + i)), 10);
    PostgresMirrorDestination d = new PostgresMirrorDestination(Jdbc.config(db), 4);
    d.startup(new Scenario.Context());
    try {
      Scenario.drop(d, abandoned);
      Scenario.sendBatch(d, abandoned, 0);
      AsyncResult late = AsyncResult.create();
      d.writeTableRows(t, abandoned.batch(1), late); // still running when the drop comes
      Scenario.copyAll(d, current);
      assertThat(await(late).kind()).isEqualTo(Outcome.Kind.DURABLE);
    } finally {
      d.shutdown();
    }
    assertThat(db.queryRows("SELECT count(*), min(v), max(v) FROM late.t"))
        .containsExactly(List.of("10", "new 0", "new 9"));
    assertThat(
            db.queryRows(
                "SELECT attempt_id::text, finished, batch_count, row_count"
                    + " FROM _pgetl.mirror_copy_attempts WHERE table_oid = 18010"))
        .containsExactly(List.of(current.attempt().toString(), "t", "1", "10"));
  }

  /** A Finish that counts a batch the mirror does not hold fails instead of ending the copy. */
  @Test
  void aFinishThatCountsAMissingBatchFails(TestDatabase db) {
    ReplicatedTableSchema t =
        keyed(18011, "fin", "t", col("id", 23, "integer", 1, 1), col("v", 25, "text", 2, 0));
    Scenario.Copy copy = Scenario.copyOf(t, List.of(TableRow.of(1, "a"), TableRow.of(2, "b")), 1);
    PostgresMirrorDestination d = started(db, new Scenario.Context());
    try {
      Scenario.drop(d, copy);
      Scenario.sendBatch(d, copy, 0);
      AsyncResult r = AsyncResult.create();
      d.writeTableRows(t, new TableCopyWrite.Finish(copy.attempt(), 2, 2), r);
      Outcome o = await(r);
      assertThat(o.kind()).isEqualTo(Outcome.Kind.FAILED);
      assertThat(o.error().kind()).isEqualTo(ErrorKind.DESTINATION_ERROR);
      assertThat(o.error().getMessage()).contains("ends with 2 batches").contains("stored 1");
    } finally {
      d.shutdown();
    }
    assertThat(
            db.queryString(
                "SELECT finished FROM _pgetl.mirror_copy_attempts WHERE table_oid = 18011"))
        .isEqualTo("f");
  }

  /**
   * Renames follow the source table's oid. A new table copied under the name a renamed table still
   * holds in the target (its rename did not arrive yet) parks the renamed table instead of dropping
   * it; the rename moves it to its new name with its rows, and nothing stays parked.
   */
  @Test
  void aNewTableTakingTheNameOfARenamedOneParksItUntilTheRenameArrives(TestDatabase db)
      throws Exception {
    ReplicatedTableSchema old =
        keyed(18200, "mv", "t", col("id", 23, "integer", 1, 1), col("v", 25, "text", 2, 0));
    ReplicatedTableSchema renamed =
        keyedAt(
            Lsn.of(0x2000),
            18200,
            "mv2",
            "t",
            col("id", 23, "integer", 1, 1),
            col("v", 25, "text", 2, 0));
    ReplicatedTableSchema created =
        keyed(18201, "mv", "t", col("id", 23, "integer", 1, 1), col("w", 25, "text", 2, 0));
    Scenario.Context ctx = new Scenario.Context();
    PostgresMirrorDestination d = started(db, ctx);
    try {
      Scenario.copyAll(
          d, Scenario.copyOf(old, List.of(TableRow.of(1, "a"), TableRow.of(2, "b")), 10));
      Scenario.copyAll(d, Scenario.copyOf(created, List.of(TableRow.of(10, "new")), 10));
      assertThat(db.queryLong("SELECT count(*) FROM mv._pgetl_parked_18200")).isEqualTo(2);
      sendEvents(
          d,
          new Scenario.Tx(0x2000, 1)
              .relation(renamed)
              .insert(renamed, TableRow.of(3, "c"))
              .insert(created, TableRow.of(11, "newer"))
              .end());
    } finally {
      d.shutdown();
    }
    assertThat(db.queryRows("SELECT id, v FROM mv2.t ORDER BY id"))
        .containsExactly(List.of("1", "a"), List.of("2", "b"), List.of("3", "c"));
    assertThat(db.queryRows("SELECT id, w FROM mv.t ORDER BY id"))
        .containsExactly(List.of("10", "new"), List.of("11", "newer"));
    assertThat(db.queryLong("SELECT count(*) FROM pg_tables WHERE tablename LIKE '_pgetl_parked%'"))
        .isZero();
    assertThat(ctx.metadata.get(renamed.id()).destinationTableId()).isEqualTo("\"mv2\".\"t\"");
  }

  /**
   * A parked table whose source still wants the name it lost (changes from before its rename, not
   * applied yet) takes the name back; when it moves on, the table it parked gets the name again.
   */
  @Test
  void aTableLeavingANameGivesItBackToTheParkedTableThatWantsIt(TestDatabase db) throws Exception {
    ReplicatedTableSchema a =
        keyed(18210, "pp", "t", col("id", 23, "integer", 1, 1), col("v", 25, "text", 2, 0));
    ReplicatedTableSchema aRenamed =
        keyedAt(
            Lsn.of(0x3000),
            18210,
            "pp",
            "t_old",
            col("id", 23, "integer", 1, 1),
            col("v", 25, "text", 2, 0));
    ReplicatedTableSchema b =
        keyed(18211, "pp", "t", col("id", 23, "integer", 1, 1), col("v", 25, "text", 2, 0));
    PostgresMirrorDestination d = started(db, new Scenario.Context());
    try {
      Scenario.copyAll(d, Scenario.copyOf(a, List.of(TableRow.of(1, "a")), 10));
      Scenario.copyAll(d, Scenario.copyOf(b, List.of(TableRow.of(10, "b")), 10)); // parks a
      sendEvents(d, new Scenario.Tx(0x2000, 1).insert(a, TableRow.of(2, "a2")).end()); // parks b
      assertThat(db.queryLong("SELECT count(*) FROM pp._pgetl_parked_18211")).isEqualTo(1);
      sendEvents(
          d,
          new Scenario.Tx(0x3000, 2)
              .relation(aRenamed)
              .insert(aRenamed, TableRow.of(3, "a3"))
              .end()); // a leaves pp.t: b gets it back
    } finally {
      d.shutdown();
    }
    assertThat(db.queryRows("SELECT id FROM pp.t_old ORDER BY id"))
        .containsExactly(List.of("1"), List.of("2"), List.of("3"));
    assertThat(db.queryRows("SELECT id FROM pp.t")).containsExactly(List.of("10"));
    assertThat(db.queryLong("SELECT count(*) FROM pg_tables WHERE tablename LIKE '_pgetl_parked%'"))
        .isZero();
  }

  /** A rename into a name that a table pgetl did not create holds fails loudly, naming both. */
  @Test
  void aRenameOntoATablePgetlDidNotCreateFailsWithASchemaError(TestDatabase db) throws Exception {
    db.execute("CREATE SCHEMA theirs", "CREATE TABLE theirs.t (x int)");
    ReplicatedTableSchema t =
        keyed(18220, "ours", "t", col("id", 23, "integer", 1, 1), col("v", 25, "text", 2, 0));
    ReplicatedTableSchema moved =
        keyedAt(
            Lsn.of(0x2000),
            18220,
            "theirs",
            "t",
            col("id", 23, "integer", 1, 1),
            col("v", 25, "text", 2, 0));
    PostgresMirrorDestination d = started(db, new Scenario.Context());
    try {
      Scenario.copyAll(d, Scenario.copyOf(t, List.of(TableRow.of(1, "a")), 10));
      AsyncResult r = AsyncResult.create();
      d.writeEvents(
          StreamId.APPLY,
          new Scenario.Tx(0x2000, 1).relation(moved).insert(moved, TableRow.of(2, "b")).end(),
          WriteDurability.MAY_DEFER,
          r);
      Outcome o = await(r);
      assertThat(o.kind()).isEqualTo(Outcome.Kind.FAILED);
      assertThat(o.error().kind()).isEqualTo(ErrorKind.DESTINATION_SCHEMA_ERROR);
      assertThat(o.error().getMessage()).contains("\"ours\".\"t\"").contains("42P07");
    } finally {
      d.shutdown();
    }
    assertThat(db.queryRows("SELECT id FROM ours.t")).containsExactly(List.of("1"));
  }

  /**
   * Issue #9 item 14: a table without columns ({@code CREATE TABLE t ()}) stores its rows of no
   * values, through copy, inserts, a delete, a column added and all columns dropped again.
   */
  @Test
  void aTableWithoutColumnsStoresItsRowsOfNoValues(TestDatabase db) throws Exception {
    ReplicatedTableSchema empty =
        SchemaBuilder.table(18300, "nocols.nothing").identity(IdentityKind.FULL).build();
    ReplicatedTableSchema withColumn =
        SchemaBuilder.from(empty).column("a", "int4").snapshotLsn(Lsn.of(0x3000)).build();
    ReplicatedTableSchema emptyAgain =
        SchemaBuilder.from(withColumn).dropColumn("a").snapshotLsn(Lsn.of(0x4000)).build();
    PostgresMirrorDestination d = started(db, new Scenario.Context());
    try {
      Scenario.copyAll(
          d, Scenario.copyOf(empty, List.of(TableRow.of(), TableRow.of(), TableRow.of()), 2));
      sendEvents(
          d,
          new Scenario.Tx(0x2000, 1)
              .insert(empty, TableRow.of())
              .insert(empty, TableRow.of())
              .delete(empty, new OldRow.Full(TableRow.of()))
              .update(empty, new UpdatedRow.Full(TableRow.of()), new OldRow.Full(TableRow.of()))
              .end());
      assertThat(db.queryLong("SELECT count(*) FROM nocols.nothing")).isEqualTo(4);
      sendEvents(
          d,
          new Scenario.Tx(0x3000, 2).relation(withColumn).insert(withColumn, TableRow.of(7)).end());
      assertThat(db.queryRows("SELECT a FROM nocols.nothing ORDER BY a NULLS FIRST"))
          .containsExactly(
              Arrays.asList((String) null),
              Arrays.asList((String) null),
              Arrays.asList((String) null),
              Arrays.asList((String) null),
              List.of("7"));
      sendEvents(
          d,
          new Scenario.Tx(0x4000, 3).relation(emptyAgain).insert(emptyAgain, TableRow.of()).end());
    } finally {
      d.shutdown();
    }
    assertThat(db.queryLong("SELECT count(*) FROM nocols.nothing")).isEqualTo(6);
  }

  /**
   * Regression (found with issue #9 item 12): after the target server restarted, the first write on
   * each pooled connection failed with {@code DESTINATION_CONNECTION_FAILED} (57P01), which the
   * pipeline counted against its retries; it now runs again on a new connection.
   */
  @Test
  void aWriteOnAConnectionTheServerClosedRunsAgainOnANewOne(TestDatabase db) throws Exception {
    ReplicatedTableSchema t =
        keyed(18400, "lost", "t", col("id", 23, "integer", 1, 1), col("v", 25, "text", 2, 0));
    List<Scenario.Copy> others = new ArrayList<>();
    for (int i = 0; i < 3; i++) {
      ReplicatedTableSchema o =
          keyed(
              18410 + i,
              "lost",
              "o" + i,
              col("id", 23, "integer", 1, 1),
              col("v", 25, "text", 2, 0));
      others.add(Scenario.copyOf(o, Scenario.rows(0, 20_000, n -> TableRow.of(n, "v" + n)), 5_000));
    }
    PostgresMirrorDestination d = new PostgresMirrorDestination(Jdbc.config(db), 3);
    d.startup(new Scenario.Context());
    try {
      Scenario.copyAll(d, Scenario.copyOf(t, List.of(TableRow.of(1, "a")), 10));
      for (Scenario.Copy o : others) {
        Scenario.drop(d, o);
      }
      // three copy threads at once: the pool keeps several connections
      Scenario.copyConcurrently(
          d,
          3,
          others,
          new int[][] {Scenario.range(0, 4), Scenario.range(0, 4), Scenario.range(0, 4)});
      sendEvents(d, new Scenario.Tx(0x1000, 1).insert(t, TableRow.of(2, "b")).end());
      String mirrorSessions =
          "FROM pg_stat_activity WHERE application_name = 'pgetl-mirror-test'"
              + " AND datname = current_database()";
      assertThat(db.queryLong("SELECT count(*) " + mirrorSessions)).isGreaterThan(1);
      db.execute("SELECT pg_terminate_backend(pid) " + mirrorSessions);
      org.awaitility.Awaitility.await()
          .atMost(java.time.Duration.ofSeconds(30))
          .until(() -> db.queryLong("SELECT count(*) " + mirrorSessions) == 0);

      sendEvents(d, new Scenario.Tx(0x2000, 2).insert(t, TableRow.of(3, "c")).end());
      Scenario.copyAll(
          d,
          Scenario.copyOf(
              keyed(18401, "lost", "u", col("id", 23, "integer", 1, 1)),
              List.of(TableRow.of(1)),
              10));
    } finally {
      d.shutdown();
    }
    assertThat(db.queryRows("SELECT id FROM lost.t ORDER BY id"))
        .containsExactly(List.of("1"), List.of("2"), List.of("3"));
    assertThat(db.queryLong("SELECT count(*) FROM lost.u")).isEqualTo(1);
  }

  @Test
  void writesAfterShutdownAreAnsweredShutdown(TestDatabase db) {
    PostgresMirrorDestination d = started(db, new Scenario.Context());
    d.shutdown();
    AsyncResult r = AsyncResult.create();
    d.writeEvents(StreamId.APPLY, List.of(), WriteDurability.REQUIRE_DURABLE, r);
    assertThat(await(r)).isEqualTo(Outcome.SHUTDOWN);
  }

  @Test
  void aWrongPasswordFailsTheStartWithAnAuthenticationError(TestDatabase db) {
    PostgresMirrorDestination d =
        new PostgresMirrorDestination(Jdbc.config(db).toBuilder().password("wrong").build());
    org.assertj.core.api.Assertions.assertThatThrownBy(() -> d.startup(new Scenario.Context()))
        .isInstanceOfSatisfying(
            org.pgetl.error.EtlException.class,
            e -> {
              assertThat(e.kind()).isEqualTo(ErrorKind.DESTINATION_AUTHENTICATION_ERROR);
              assertThat(e.getMessage()).doesNotContain("wrong");
            });
  }

  // --- helpers

  /** A connection whose text output matches {@link PgText}: UTC, shortest exact floats. */
  static Connection connect(TestDatabase db) throws SQLException {
    Connection c = db.connect();
    try (Statement s = c.createStatement()) {
      s.execute("SET TimeZone = 'UTC'; SET extra_float_digits = 3; SET IntervalStyle = 'postgres'");
    }
    return c;
  }

  private static List<String> columnNames(Connection c, TableName t) throws SQLException {
    return query(
        c,
        "SELECT attname FROM pg_attribute WHERE attrelid = '"
            + t.quoted().replace("'", "''")
            + "'::regclass AND attnum > 0 AND NOT attisdropped ORDER BY attnum");
  }

  /** Reads every row as {@code {name=text, ...}} (the server's text output), sorted. */
  private static List<String> read(Connection c, String table, List<String> columns)
      throws SQLException {
    String select = String.join(", ", columns.stream().map(TableName::quoteIdentifier).toList());
    return SqlRows.namedRows(c, "SELECT " + select + " FROM " + table, columns);
  }

  private static Map<String, String> row(Connection c, String table, String where)
      throws SQLException {
    Map<String, String> row = new LinkedHashMap<>();
    try (Statement s = c.createStatement();
        ResultSet rs = s.executeQuery("SELECT * FROM " + table + " WHERE " + where)) {
      assertThat(rs.next()).as("a row of %s where %s", table, where).isTrue();
      for (int i = 1; i <= rs.getMetaData().getColumnCount(); i++) {
        row.put(rs.getMetaData().getColumnName(i), rs.getString(i));
      }
    }
    return row;
  }
}
