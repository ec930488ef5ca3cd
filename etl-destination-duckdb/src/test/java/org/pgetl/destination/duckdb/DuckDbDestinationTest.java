package org.pgetl.destination.duckdb;

import static org.assertj.core.api.Assertions.assertThat;
import static org.pgetl.testing.destination.Scenario.await;
import static org.pgetl.testing.destination.Scenario.col;
import static org.pgetl.testing.destination.Scenario.keyed;
import static org.pgetl.testing.destination.Scenario.sendEvents;
import static org.pgetl.testing.destination.SqlRows.query;

import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
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
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.pgetl.destination.AsyncResult;
import org.pgetl.destination.AsyncResult.Outcome;
import org.pgetl.destination.StreamId;
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
import org.pgetl.model.UpdatedRow;
import org.pgetl.testing.destination.ReferenceTables;
import org.pgetl.testing.destination.Scenario;
import org.pgetl.testing.destination.SqlRows;
import org.pgetl.testkit.destination.SchemaBuilder;

@Timeout(120)
class DuckDbDestinationTest {
  @TempDir Path dir;

  private DuckDbDestination started(Path file, Scenario.Context ctx) {
    DuckDbDestination d = new DuckDbDestination(file);
    d.startup(ctx);
    return d;
  }

  @Test
  void copyThenStreamsThenRestartWithReplayEndsWithTheSourceStateAndNoDuplicates()
      throws Exception {
    Path file = dir.resolve("mirror.duckdb");
    Scenario scenario = new Scenario();
    Scenario.Context ctx = new Scenario.Context();

    DuckDbDestination first = started(file, ctx);
    scenario.firstRun(first);
    first.shutdown();

    DuckDbDestination second = started(file, ctx);
    scenario.secondRun(second);
    second.shutdown();

    ReferenceTables expected = scenario.expected();
    try (Connection c = DriverManager.getConnection("jdbc:duckdb:" + file)) {
      for (ReplicatedTableSchema t :
          List.of(Scenario.ORDERS, Scenario.EVENTS_LOG, Scenario.ITEMS, Scenario.AUDIT)) {
        List<String> columns = expected.columns(t.id());
        String name = t.name().quoted();
        assertThat(columnNames(c, t)).as("columns of %s", name).isEqualTo(columns);
        assertThat(read(c, name, columns))
            .as("rows of %s", name)
            .isEqualTo(expected.render(t.id(), DuckDbDestinationTest::duckText));
      }
      assertThat(query(c, "SELECT prefix, decode(content) FROM _pgetl.messages"))
          .containsExactly("audit|hello ✓");
    }
    assertThat(ctx.metadata.get(Scenario.ORDERS.id()).destinationTableId())
        .isEqualTo("\"public\".\"orders\"");
    assertThat(ctx.metadata.get(Scenario.ORDERS.id()).applied()).isTrue();
    assertThat(ctx.metadata.get(Scenario.ORDERS.id()).snapshotLsn())
        .isEqualTo(Scenario.ORDERS_V2.tableSchema().snapshotLsn());
    assertThat(ctx.metadata).containsKeys(Scenario.ITEMS.id(), Scenario.AUDIT.id());
  }

  /** How DuckDB prints a model value with CAST(... AS VARCHAR), for the scenario's types. */
  static String duckText(Object v) {
    if (v == null) {
      return "NULL";
    }
    if (v instanceof PgArray a) {
      return a.elements().stream().map(String::valueOf).collect(Collectors.joining(", ", "[", "]"));
    }
    return v.toString();
  }

  @Test
  void storesEveryValueTypeExactly() throws Exception {
    Path file = dir.resolve("types.duckdb");
    ReplicatedTableSchema types =
        keyed(
            17001,
            "public",
            "types",
            col("id", 23, "integer", 1, 1),
            col("b", 16, "boolean", 2, 0),
            col("i2", 21, "smallint", 3, 0),
            col("f4", 700, "real", 4, 0),
            col("f8", 701, "double precision", 5, 0),
            col("n", 1700, "numeric", 6, 0),
            col("by", 17, "bytea", 7, 0),
            col("d", 1082, "date", 8, 0),
            col("t", 1083, "time", 9, 0),
            col("tz", 1266, "time with time zone", 10, 0),
            col("ts", 1114, "timestamp", 11, 0),
            col("tstz", 1184, "timestamptz", 12, 0),
            col("iv", 1186, "interval", 13, 0),
            col("u", 2950, "uuid", 14, 0),
            col("j", 3802, "jsonb", 15, 0),
            col("txt", 1009, "text[]", 16, 0),
            col("grid", 1007, "integer[]", 17, 0),
            col("other", 600, "point", 18, 0));
    UUID uuid = UUID.fromString("a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11");
    TableRow copied =
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
            uuid,
            "{\"a\": [1, 2]}",
            PgArray.ofList(25, List.of("a,b", "")),
            PgArray.ofList(23, List.of(1, 2)),
            "(1,2)");
    try (Running d = closing(started(file, new Scenario.Context()))) {
      Scenario.Copy copy = Scenario.copyOf(types, List.of(copied), 10);
      Scenario.copyAll(d.destination, copy);
      List<Object> v = new ArrayList<>(copied.values());
      v.set(0, 2);
      v.set(5, PgNumeric.of(new java.math.BigDecimal("123456789012345678901234567890.123456789")));
      v.set(7, LocalDate.MIN);
      v.set(10, LocalDateTime.of(1500, 1, 1, 0, 0, 0, 123_456_000));
      v.set(11, Instant.parse("2024-01-31T10:15:30.5Z"));
      v.set(
          16,
          new PgArray(23, List.of(2, 2), List.of(1, 1), java.util.Arrays.asList(1, null, 3, 4)));
      sendEvents(d.destination, new Scenario.Tx(0x9000, 1).insert(types, TableRow.ofList(v)).end());
    }
    try (Connection c = DriverManager.getConnection("jdbc:duckdb:" + file)) {
      Map<String, String> one = row(c, "types", "id = 1");
      assertThat(one)
          .containsEntry("b", "true")
          .containsEntry("i2", "-2")
          .containsEntry("f4", "nan")
          .containsEntry("f8", "-inf")
          .containsEntry("n", "NaN")
          .containsEntry("by", "\\x00\\xFF")
          .containsEntry("d", "0044-03-15 (BC)")
          .containsEntry("t", "24:00:00")
          .containsEntry("tz", "01:02:03.5-05:30")
          .containsEntry("ts", "infinity")
          .containsEntry("tstz", "-infinity")
          .containsEntry("iv", "-1 year -2 months 3 days 04:05:06.789")
          .containsEntry("u", uuid.toString())
          .containsEntry("j", "{\"a\": [1, 2]}")
          .containsEntry("txt", "['a,b', '']")
          .containsEntry("other", "(1,2)");
      Map<String, String> two = row(c, "types", "id = 2");
      assertThat(two)
          .containsEntry("n", "123456789012345678901234567890.123456789")
          .containsEntry("d", "-infinity")
          .containsEntry("ts", "1500-01-01 00:00:00.123456")
          .containsEntry("tstz", "2024-01-31 10:15:30.5+00")
          .containsEntry("grid", "{{1,NULL},{3,4}}");
      // the 2-D array widened the int[] column; the row written before keeps its value as text
      assertThat(one).containsEntry("grid", "{1,2}");
      assertThat(typeOf(c, "types", "grid")).isEqualTo("VARCHAR");
      assertThat(typeOf(c, "types", "iv")).isEqualTo("INTERVAL");
      assertThat(typeOf(c, "types", "txt")).isEqualTo("VARCHAR[]");
    }
  }

  @Test
  void widensAColumnForValuesItsTypeCannotHoldAndKeepsItWidenedAfterRestart() throws Exception {
    Path file = dir.resolve("widen.duckdb");
    ReplicatedTableSchema prices =
        keyed(
            17002,
            "public",
            "prices",
            col("id", 23, "integer", 1, 1),
            col("price", 1700, Scenario.NUMERIC_10_2, "numeric(10,2)", 2),
            col("at", 1114, "timestamp", 3, 0));
    try (Running d = closing(started(file, new Scenario.Context()))) {
      Scenario.Copy copy =
          Scenario.copyOf(
              prices,
              List.of(
                  TableRow.of(1, Scenario.num("1.50"), LocalDateTime.of(-43, 3, 15, 1, 2)),
                  TableRow.of(2, Scenario.num("2.00"), LocalDateTime.of(2024, 1, 1, 10, 0))),
              10);
      Scenario.copyAll(d.destination, copy);
    }
    try (Connection c = DriverManager.getConnection("jdbc:duckdb:" + file)) {
      assertThat(typeOf(c, "prices", "price")).isEqualTo("DECIMAL(10,2)");
    }
    try (Running d = closing(started(file, new Scenario.Context()))) {
      sendEvents(
          d.destination,
          new Scenario.Tx(0x9000, 1)
              .insert(prices, TableRow.of(3, PgNumeric.NAN, LocalDateTime.of(294270, 1, 1, 0, 0)))
              .end());
    }
    try (Running d = closing(started(file, new Scenario.Context()))) {
      sendEvents(
          d.destination,
          new Scenario.Tx(0xA000, 2).insert(prices, TableRow.of(4, PgNumeric.NAN, null)).end());
    }
    try (Connection c = DriverManager.getConnection("jdbc:duckdb:" + file)) {
      assertThat(typeOf(c, "prices", "price")).isEqualTo("VARCHAR");
      assertThat(typeOf(c, "prices", "at")).isEqualTo("VARCHAR");
      assertThat(query(c, "SELECT id, price, \"at\" FROM public.prices ORDER BY id"))
          .containsExactly(
              "1|1.50|0044-03-15 01:02:00 BC",
              "2|2.00|2024-01-01 10:00:00",
              "3|NaN|294270-01-01 00:00:00",
              "4|NaN|null");
    }
  }

  @Test
  void aFailedWriteRollsBackItsRowsAndBookkeepingAndCanBeSentAgain() throws Exception {
    Path file = dir.resolve("fail.duckdb");
    ReplicatedTableSchema t =
        keyed(17003, "public", "t", col("id", 23, "integer", 1, 1), col("v", 25, "text", 2, 0));
    List<Event> good = new Scenario.Tx(0x1000, 1).insert(t, TableRow.of(1, "one")).end();
    List<Event> bad =
        new Scenario.Tx(0x2000, 2)
            .insert(t, TableRow.of(2, "two"))
            .insert(t, TableRow.of(null, "no key"))
            .end();
    try (Running d = closing(started(file, new Scenario.Context()))) {
      Scenario.emptyCopy(d.destination, t);
      sendEvents(d.destination, good);
      AsyncResult failed = AsyncResult.create();
      d.destination.writeEvents(StreamId.APPLY, bad, WriteDurability.MAY_DEFER, failed);
      Outcome o = await(failed);
      assertThat(o.kind()).isEqualTo(Outcome.Kind.FAILED);
      assertThat(o.error().kind()).isEqualTo(ErrorKind.DESTINATION_QUERY_FAILED);
      assertThat(o.error().getMessage()).contains("events");
    }
    try (Connection c = DriverManager.getConnection("jdbc:duckdb:" + file)) {
      assertThat(query(c, "SELECT id FROM public.t ORDER BY id")).containsExactly("1");
    }
    try (Running d = closing(started(file, new Scenario.Context()))) {
      // the engine retries from the durable point: the good part of the failed batch is not
      // skipped, and a replay of what is durable changes nothing
      sendEvents(d.destination, bad.subList(0, 2));
      sendEvents(d.destination, good);
    }
    try (Connection c = DriverManager.getConnection("jdbc:duckdb:" + file)) {
      assertThat(query(c, "SELECT id, v FROM public.t ORDER BY id"))
          .containsExactly("1|one", "2|two");
    }
  }

  @Test
  void insertsWrittenTogetherKeepTheirOrderWithTheChangesAroundThem() throws Exception {
    Path file = dir.resolve("runs.duckdb");
    ReplicatedTableSchema t =
        keyed(17005, "public", "r", col("id", 23, "integer", 1, 1), col("v", 25, "text", 2, 0));
    List<Event> batch = new ArrayList<>();
    batch.addAll(new Scenario.Tx(0x1000, 1).insert(t, TableRow.of(1, "a")).end());
    batch.addAll(
        new Scenario.Tx(0x2000, 2)
            .insert(t, TableRow.of(2, "b"))
            .message("m", "between")
            .insert(t, TableRow.of(3, "c"))
            .end());
    batch.addAll(
        new Scenario.Tx(0x3000, 3)
            .update(t, Scenario.full(1, "a2"), null)
            .insert(t, TableRow.of(4, "d"))
            .delete(t, Scenario.key(2))
            .insert(t, TableRow.of(2, "b again"))
            .truncate(t)
            .insert(t, TableRow.of(5, "after truncate"))
            .insert(t, TableRow.of(6, "f"))
            .end());
    try (Running d = closing(started(file, new Scenario.Context()))) {
      sendEvents(d.destination, batch);
    }
    try (Connection c = DriverManager.getConnection("jdbc:duckdb:" + file)) {
      assertThat(query(c, "SELECT id, v FROM public.r ORDER BY id"))
          .containsExactly("5|after truncate", "6|f");
    }
    batch.subList(batch.size() - 4, batch.size()).clear(); // the same stream, without the truncate
    try (Running d = closing(started(dir.resolve("runs2.duckdb"), new Scenario.Context()))) {
      sendEvents(d.destination, batch);
    }
    try (Connection c = DriverManager.getConnection("jdbc:duckdb:" + dir.resolve("runs2.duckdb"))) {
      assertThat(query(c, "SELECT id, v FROM public.r ORDER BY id"))
          .containsExactly("1|a2", "2|b again", "3|c", "4|d");
    }
  }

  /**
   * The engine gives a {@code Relation} event the sequence key of the change that follows it (see
   * docs/design-decisions.md); that change must still be applied, once, also when replayed.
   */
  @Test
  void aChangeThatSharesItsSequenceKeyWithTheRelationBeforeItIsApplied() throws Exception {
    Path file = dir.resolve("shared-key.duckdb");
    ReplicatedTableSchema t =
        keyed(17008, "public", "s", col("id", 23, "integer", 1, 1), col("v", 25, "text", 2, 0));
    Lsn commit = Lsn.of(0x1000);
    Instant time = Instant.parse("2024-01-01T00:00:00Z");
    List<Event> first =
        List.of(
            new Event.Begin(Lsn.of(0x0f00), commit, 0, time, 801),
            new Event.Relation(Lsn.of(0x0f10), commit, 1, t),
            new Event.Insert(Lsn.of(0x0f10), commit, 1, t, TableRow.of(1, "one")),
            new Event.Commit(Lsn.of(0x0f20), commit, 2, Lsn.of(0x1030), time, 0));
    Lsn commit2 = Lsn.of(0x2000);
    List<Event> second =
        List.of(
            new Event.Begin(Lsn.of(0x1f00), commit2, 0, time, 802),
            new Event.Relation(Lsn.of(0x1f10), commit2, 1, t),
            new Event.Update(
                Lsn.of(0x1f10), commit2, 1, t, Scenario.full(1, "uno"), Scenario.key(1)),
            new Event.Commit(Lsn.of(0x1f20), commit2, 2, Lsn.of(0x2030), time, 0));
    try (Running d = closing(started(file, new Scenario.Context()))) {
      Scenario.emptyCopy(d.destination, t);
      sendEvents(d.destination, first);
      sendEvents(d.destination, second);
      sendEvents(d.destination, first); // a replay after a restart changes nothing
    }
    try (Connection c = DriverManager.getConnection("jdbc:duckdb:" + file)) {
      assertThat(query(c, "SELECT id, v FROM public.s ORDER BY id")).containsExactly("1|uno");
    }
  }

  /**
   * A new source table under the name of an older one (dropped and created again, or the older one
   * renamed) takes the name; the older copy is kept under a parked name, never dropped by name.
   */
  @Test
  void aSourceTableCreatedAgainUnderTheSameNameParksTheOldCopy() throws Exception {
    Path file = dir.resolve("recreated.duckdb");
    ReplicatedTableSchema before =
        keyed(17006, "public", "x", col("id", 23, "integer", 1, 1), col("v", 25, "text", 2, 0));
    ReplicatedTableSchema after =
        keyed(17007, "public", "x", col("id", 23, "integer", 1, 1), col("w", 20, "bigint", 2, 0));
    try (Running d = closing(started(file, new Scenario.Context()))) {
      Scenario.copyAll(d.destination, Scenario.copyOf(before, List.of(TableRow.of(1, "old")), 10));
      Scenario.copyAll(d.destination, Scenario.copyOf(after, List.of(TableRow.of(2, 20L)), 10));
    }
    try (Connection c = DriverManager.getConnection("jdbc:duckdb:" + file)) {
      assertThat(query(c, "SELECT id, w FROM public.x")).containsExactly("2|20");
      assertThat(query(c, "SELECT id, v FROM public._pgetl_parked_17006")).containsExactly("1|old");
      assertThat(
              query(
                  c,
                  "SELECT table_oid, duckdb_schema || '.' || duckdb_table FROM _pgetl.tables"
                      + " ORDER BY table_oid"))
          .containsExactly("17006|public._pgetl_parked_17006", "17007|public.x");
    }
  }

  /**
   * Renames follow the source table's oid. A new table copied under the name a renamed table still
   * holds (its rename did not arrive yet) parks the renamed table; the rename, to another schema,
   * moves it there with its rows and key, and nothing stays parked.
   */
  @Test
  void aNewTableTakingTheNameOfARenamedOneParksItUntilTheRenameArrives() throws Exception {
    Path file = dir.resolve("moves.duckdb");
    ReplicatedTableSchema old =
        keyed(17020, "mv", "t", col("id", 23, "integer", 1, 1), col("v", 25, "text", 2, 0));
    ReplicatedTableSchema renamed =
        Scenario.keyedAt(
            Lsn.of(0x2000),
            17020,
            "mv2",
            "t",
            col("id", 23, "integer", 1, 1),
            col("v", 25, "text", 2, 0));
    ReplicatedTableSchema created =
        keyed(17021, "mv", "t", col("id", 23, "integer", 1, 1), col("w", 25, "text", 2, 0));
    Scenario.Context ctx = new Scenario.Context();
    try (Running d = closing(started(file, ctx))) {
      Scenario.copyAll(
          d.destination,
          Scenario.copyOf(old, List.of(TableRow.of(1, "a"), TableRow.of(2, "b")), 10));
      Scenario.copyAll(
          d.destination, Scenario.copyOf(created, List.of(TableRow.of(10, "new")), 10));
      sendEvents(
          d.destination,
          new Scenario.Tx(0x2000, 1)
              .relation(renamed)
              .insert(renamed, TableRow.of(3, "c"))
              .update(renamed, Scenario.full(1, "a1"), null)
              .insert(created, TableRow.of(11, "newer"))
              .end());
    }
    try (Connection c = DriverManager.getConnection("jdbc:duckdb:" + file)) {
      assertThat(query(c, "SELECT id, v FROM mv2.t ORDER BY id"))
          .containsExactly("1|a1", "2|b", "3|c");
      assertThat(query(c, "SELECT id, w FROM mv.t ORDER BY id"))
          .containsExactly("10|new", "11|newer");
      assertThat(
              query(
                  c, "SELECT count(*) FROM duckdb_tables() WHERE table_name LIKE '_pgetl_parked%'"))
          .containsExactly("0");
    }
    assertThat(ctx.metadata.get(renamed.id()).destinationTableId()).isEqualTo("\"mv2\".\"t\"");
  }

  /**
   * A parked table whose source still wants the name it lost (changes from before its rename, not
   * applied yet) takes the name back; when it moves on, the table it parked gets the name again.
   */
  @Test
  void aTableLeavingANameGivesItBackToTheParkedTableThatWantsIt() throws Exception {
    Path file = dir.resolve("back.duckdb");
    ReplicatedTableSchema a =
        keyed(17030, "pp", "t", col("id", 23, "integer", 1, 1), col("v", 25, "text", 2, 0));
    ReplicatedTableSchema aRenamed =
        Scenario.keyedAt(
            Lsn.of(0x3000),
            17030,
            "pp",
            "t_old",
            col("id", 23, "integer", 1, 1),
            col("v", 25, "text", 2, 0));
    ReplicatedTableSchema b =
        keyed(17031, "pp", "t", col("id", 23, "integer", 1, 1), col("v", 25, "text", 2, 0));
    try (Running d = closing(started(file, new Scenario.Context()))) {
      Scenario.copyAll(d.destination, Scenario.copyOf(a, List.of(TableRow.of(1, "a")), 10));
      Scenario.copyAll(d.destination, Scenario.copyOf(b, List.of(TableRow.of(10, "b")), 10));
      sendEvents(d.destination, new Scenario.Tx(0x2000, 1).insert(a, TableRow.of(2, "a2")).end());
      sendEvents(
          d.destination,
          new Scenario.Tx(0x3000, 2)
              .relation(aRenamed)
              .insert(aRenamed, TableRow.of(3, "a3"))
              .end());
    }
    try (Connection c = DriverManager.getConnection("jdbc:duckdb:" + file)) {
      assertThat(query(c, "SELECT id FROM pp.t_old ORDER BY id")).containsExactly("1", "2", "3");
      assertThat(query(c, "SELECT id FROM pp.t")).containsExactly("10");
    }
  }

  /**
   * Issue #9 item 14: a table without columns ({@code CREATE TABLE t ()}, which DuckDB cannot
   * create) stores its rows of no values, through copy, inserts, a delete, a column added and all
   * columns dropped again.
   */
  @Test
  void aTableWithoutColumnsStoresItsRowsOfNoValues() throws Exception {
    Path file = dir.resolve("nothing.duckdb");
    ReplicatedTableSchema empty =
        SchemaBuilder.table(17040, "public.nothing").identity(IdentityKind.FULL).build();
    ReplicatedTableSchema withColumn =
        SchemaBuilder.from(empty).column("a", "int4").snapshotLsn(Lsn.of(0x3000)).build();
    ReplicatedTableSchema emptyAgain =
        SchemaBuilder.from(withColumn).dropColumn("a").snapshotLsn(Lsn.of(0x4000)).build();
    try (Running d = closing(started(file, new Scenario.Context()))) {
      Scenario.copyAll(
          d.destination,
          Scenario.copyOf(empty, List.of(TableRow.of(), TableRow.of(), TableRow.of()), 2));
      sendEvents(
          d.destination,
          new Scenario.Tx(0x2000, 1)
              .insert(empty, TableRow.of())
              .insert(empty, TableRow.of())
              .delete(empty, new OldRow.Full(TableRow.of()))
              .update(empty, new UpdatedRow.Full(TableRow.of()), new OldRow.Full(TableRow.of()))
              .end());
      try (Connection c = DriverManager.getConnection("jdbc:duckdb:" + file)) {
        assertThat(query(c, "SELECT count(*) FROM public.nothing")).containsExactly("4");
      }
      sendEvents(
          d.destination,
          new Scenario.Tx(0x3000, 2).relation(withColumn).insert(withColumn, TableRow.of(7)).end());
      try (Connection c = DriverManager.getConnection("jdbc:duckdb:" + file)) {
        assertThat(query(c, "SELECT a FROM public.nothing ORDER BY a NULLS FIRST"))
            .containsExactly("null", "null", "null", "null", "7");
      }
      sendEvents(
          d.destination,
          new Scenario.Tx(0x4000, 3).relation(emptyAgain).insert(emptyAgain, TableRow.of()).end());
    }
    try (Connection c = DriverManager.getConnection("jdbc:duckdb:" + file)) {
      assertThat(query(c, "SELECT count(*) FROM public.nothing")).containsExactly("6");
    }
  }

  /**
   * Regression: replacing a table's only column (one dropped, another added in one schema change)
   * failed, because DuckDB does not drop a table's last column.
   */
  @Test
  void theOnlyColumnOfATableIsReplaced() throws Exception {
    Path file = dir.resolve("only.duckdb");
    ReplicatedTableSchema before =
        SchemaBuilder.table(17041, "public.only")
            .column("a", "int4")
            .identity(IdentityKind.FULL)
            .build();
    ReplicatedTableSchema after =
        SchemaBuilder.from(before)
            .dropColumn("a")
            .column("b", "text")
            .snapshotLsn(Lsn.of(0x2000))
            .build();
    try (Running d = closing(started(file, new Scenario.Context()))) {
      Scenario.copyAll(d.destination, Scenario.copyOf(before, List.of(TableRow.of(1)), 10));
      sendEvents(
          d.destination,
          new Scenario.Tx(0x2000, 1).relation(after).insert(after, TableRow.of("x")).end());
    }
    try (Connection c = DriverManager.getConnection("jdbc:duckdb:" + file)) {
      assertThat(query(c, "SELECT * FROM public.only ORDER BY b NULLS FIRST"))
          .containsExactly("null", "x");
    }
  }

  @Test
  void aRelationSharesTheKeyOfTheChangeAfterItAndDoesNotHideIt() throws Exception {
    Path file = dir.resolve("shared.duckdb");
    try (Running d = closing(started(file, new Scenario.Context()))) {
      Scenario.emptyCopy(d.destination, Scenario.SHARED_V1);
      Scenario.writeRelationsSharingKeys(d.destination);
    }
    try (Connection c = DriverManager.getConnection("jdbc:duckdb:" + file)) {
      assertThat(query(c, "SELECT id, v, added FROM public.shared ORDER BY id"))
          .containsExactly("1|one|null", "2|two|22");
    }
  }

  @Test
  void writesAfterShutdownAreAnsweredShutdown() {
    DuckDbDestination d = started(dir.resolve("closed.duckdb"), new Scenario.Context());
    d.shutdown();
    AsyncResult r = AsyncResult.create();
    d.writeEvents(StreamId.APPLY, List.of(), WriteDurability.REQUIRE_DURABLE, r);
    assertThat(await(r)).isEqualTo(Outcome.SHUTDOWN);
  }

  @Test
  void droppingAPrimaryKeyColumnFailsWithASchemaErrorNamingTheTable() throws Exception {
    ReplicatedTableSchema t =
        keyed(17004, "public", "k", col("id", 23, "integer", 1, 1), col("v", 25, "text", 2, 0));
    ReplicatedTableSchema withoutId = keyed(17004, "public", "k", col("v", 25, "text", 2, 0));
    try (Running d = closing(started(dir.resolve("k.duckdb"), new Scenario.Context()))) {
      Scenario.emptyCopy(d.destination, t);
      AsyncResult r = AsyncResult.create();
      d.destination.writeEvents(
          StreamId.APPLY,
          new Scenario.Tx(0x1000, 1).relation(withoutId).end(),
          WriteDurability.MAY_DEFER,
          r);
      Outcome o = await(r);
      assertThat(o.kind()).isEqualTo(Outcome.Kind.FAILED);
      assertThat(o.error().kind()).isEqualTo(ErrorKind.DESTINATION_SCHEMA_ERROR);
      assertThat(o.error().getMessage()).contains("\"public\".\"k\"");
    }
  }

  // --- helpers

  /** Shuts the destination down at the end of a try block. */
  /**
   * Regression: in a file named like a source schema ({@code shop.duckdb} and schema {@code shop})
   * every statement on {@code "shop"."orders"} failed: DuckDB names the file's catalog {@code shop}
   * too, and the unqualified name was ambiguous.
   */
  @Test
  void aSchemaNamedLikeTheFileIsCopiedAndStreamed() throws Exception {
    Path file = dir.resolve("shop.duckdb");
    ReplicatedTableSchema orders =
        keyed(17010, "shop", "orders", col("id", 23, "integer", 1, 1), col("v", 25, "text", 2, 0));
    try (Running d = closing(started(file, new Scenario.Context()))) {
      Scenario.copyAll(d.destination, Scenario.copyOf(orders, List.of(TableRow.of(1, "a")), 10));
      sendEvents(
          d.destination, new Scenario.Tx(0x1000, 1).insert(orders, TableRow.of(2, "b")).end());
    }
    try (Connection c = DriverManager.getConnection("jdbc:duckdb:" + file)) {
      assertThat(query(c, "SELECT id, v FROM shop.shop.orders ORDER BY id"))
          .containsExactly("1|a", "2|b");
    }
  }

  /**
   * A copy attempt is complete only when every batch its Finish counts is stored: the attempt is
   * marked finished with its counts, and a Finish that counts a batch the file does not hold fails.
   */
  @Test
  void aFinishMarksItsAttemptCompleteOnlyWhenEveryBatchIsStored() throws Exception {
    Path file = dir.resolve("finish.duckdb");
    ReplicatedTableSchema t =
        keyed(17011, "public", "f", col("id", 23, "integer", 1, 1), col("v", 25, "text", 2, 0));
    Scenario.Copy copy =
        Scenario.copyOf(
            t, List.of(TableRow.of(1, "a"), TableRow.of(2, "b"), TableRow.of(3, "c")), 1);
    try (Running d = closing(started(file, new Scenario.Context()))) {
      Scenario.copyAll(d.destination, copy);
      Scenario.drop(d.destination, copy.table(), copy.attempt());
      Scenario.sendBatch(d.destination, copy, 0);
      AsyncResult r = AsyncResult.create();
      d.destination.writeTableRows(
          t, new org.pgetl.destination.TableCopyWrite.Finish(copy.attempt(), 3, 3), r);
      Outcome o = await(r);
      assertThat(o.kind()).isEqualTo(Outcome.Kind.FAILED);
      assertThat(o.error().kind()).isEqualTo(ErrorKind.DESTINATION_ERROR);
      assertThat(o.error().getMessage()).contains("ends with 3 batches").contains("stored 1");
      Scenario.sendBatch(d.destination, copy, 1);
      Scenario.sendBatch(d.destination, copy, 2);
      Scenario.finish(d.destination, copy, 3);
    }
    try (Connection c = DriverManager.getConnection("jdbc:duckdb:" + file)) {
      assertThat(
              query(
                  c,
                  "SELECT attempt_id, finished, batch_count, row_count FROM _pgetl.copy_attempts"))
          .containsExactly(copy.attempt() + "|true|3|3");
      assertThat(query(c, "SELECT count(*) FROM public.f")).containsExactly("3");
    }
  }

  private record Running(DuckDbDestination destination) implements AutoCloseable {
    @Override
    public void close() {
      destination.shutdown();
    }
  }

  private static Running closing(DuckDbDestination d) {
    return new Running(d);
  }

  private static String typeOf(Connection c, String table, String column) throws SQLException {
    return query(
            c,
            "SELECT data_type FROM information_schema.columns WHERE table_name = '"
                + table
                + "' AND column_name = '"
                + column
                + "'")
        .get(0);
  }

  private static List<String> columnNames(Connection c, ReplicatedTableSchema t)
      throws SQLException {
    return query(
        c,
        "SELECT column_name FROM information_schema.columns WHERE table_schema = '"
            + t.name().schema()
            + "' AND table_name = '"
            + t.name().name()
            + "' ORDER BY ordinal_position");
  }

  /** Reads every row as {@code {name=text, ...}} with values cast to VARCHAR, sorted. */
  private static List<String> read(Connection c, String table, List<String> columns)
      throws SQLException {
    String select =
        columns.stream()
            .map(n -> "CAST(\"" + n + "\" AS VARCHAR)")
            .collect(Collectors.joining(", "));
    return SqlRows.namedRows(c, "SELECT " + select + " FROM " + table, columns);
  }

  private static Map<String, String> row(Connection c, String table, String where)
      throws SQLException {
    List<String> names =
        query(
            c,
            "SELECT column_name FROM information_schema.columns WHERE table_name = '"
                + table
                + "' ORDER BY ordinal_position");
    String select =
        names.stream().map(n -> "CAST(\"" + n + "\" AS VARCHAR)").collect(Collectors.joining(", "));
    Map<String, String> row = new LinkedHashMap<>();
    try (Statement s = c.createStatement();
        ResultSet rs =
            s.executeQuery("SELECT " + select + " FROM public." + table + " WHERE " + where)) {
      assertThat(rs.next()).as("a row of %s where %s", table, where).isTrue();
      for (int i = 0; i < names.size(); i++) {
        row.put(names.get(i), rs.getString(i + 1));
      }
    }
    return row;
  }
}
