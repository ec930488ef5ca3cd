package org.pgetl.destination.iceberg;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.math.BigDecimal;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.time.LocalTime;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.Table;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.data.Record;
import org.apache.iceberg.types.Types;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.pgetl.PgConnectionConfig;
import org.pgetl.Pipeline;
import org.pgetl.PipelineConfig;
import org.pgetl.model.TableName;
import org.pgetl.store.MemoryStore;
import org.pgetl.store.TableState;
import org.pgetl.testkit.TestDatabase;
import org.pgetl.testkit.WithPostgres;

/**
 * Pipelines from a real PostgreSQL source into {@link IcebergDestination}: every change kind and
 * schema change the engine sends, in upsert mode on a JDBC catalog kept in the source database and
 * in changelog mode on a filesystem catalog, and every mapped type. Each test reads the Iceberg
 * tables back with Iceberg's generic reader and compares them with the source, row by row.
 */
@WithPostgres
@Timeout(value = 4, unit = TimeUnit.MINUTES)
class IcebergDestinationIT {
  private static final Duration WAIT = Duration.ofSeconds(90);

  @TempDir Path dir;

  /** A database of the test's own: the class's database is shared by its tests. */
  private static TestDatabase fresh(TestDatabase db, String suffix) {
    String name = db.name() + "_" + suffix;
    db.server().createDatabase(name);
    return new TestDatabase(db.server(), name);
  }

  private static PgConnectionConfig source(TestDatabase db) {
    return PgConnectionConfig.builderFromJdbcUrl(db.jdbcUrl())
        .user(db.user())
        .password(db.password())
        .build();
  }

  private static PipelineConfig config(TestDatabase db, String pipeline, String publication) {
    return PipelineConfig.builder()
        .pipelineId(pipeline)
        .publication(publication)
        .source(source(db))
        .batchMaxFill(Duration.ofMillis(100))
        .shutdownTimeout(Duration.ofSeconds(30))
        .build();
  }

  /** The workload of {@link #upsertTablesOnAJdbcCatalogEqualTheSource}, after the copy. */
  private static void changes(TestDatabase db) {
    db.execute(
        // a row whose big value is TOASTed, committed in an earlier Iceberg commit
        "UPDATE items SET qty = qty + 1 WHERE id = 1", // partial: note unchanged
        "INSERT INTO items VALUES (1000, 'ten', 1, repeat('n', 5000))",
        "UPDATE items SET name = 'TEN' WHERE id = 1000", // partial in the same commit
        "UPDATE items SET id = 2000 WHERE id = 2", // key change, partial
        "UPDATE items SET id = 3000, note = 'short' WHERE id = 3", // key change, full
        "BEGIN; DELETE FROM items WHERE id = 4; INSERT INTO items VALUES (4, 'again', 7, 'x');"
            + " COMMIT",
        "DELETE FROM items WHERE id = 5",
        "INSERT INTO log VALUES (1, 'a'), (1, 'a'), (2, 'b')",
        "DELETE FROM log WHERE ctid = (SELECT ctid FROM log WHERE a = 1 LIMIT 1)",
        "UPDATE log SET b = 'bb' WHERE a = 2",
        "TRUNCATE other",
        "INSERT INTO other VALUES (100, 'after truncate')",
        "ALTER TABLE items ADD COLUMN added text",
        "UPDATE items SET added = 'x' WHERE id = 1",
        "ALTER TABLE items RENAME COLUMN name TO label",
        "ALTER TABLE items ALTER COLUMN qty TYPE bigint",
        "INSERT INTO items VALUES (1100, 'eleven', 5000000000, 'n', 'y')",
        "ALTER TABLE items DROP COLUMN added",
        "UPDATE items SET qty = qty + 1 WHERE id = 1000");
  }

  private static void createSource(TestDatabase db, String publication) {
    db.execute(
        "CREATE TABLE items (id int PRIMARY KEY, name text, qty int, note text)",
        "ALTER TABLE items ALTER COLUMN note SET STORAGE EXTERNAL",
        "INSERT INTO items SELECT g, 'item ' || g, g, repeat(md5(g::text), 100)"
            + " FROM generate_series(1, 200) g",
        "CREATE TABLE log (a int, b text)",
        "ALTER TABLE log REPLICA IDENTITY FULL",
        "INSERT INTO log VALUES (1, 'a'), (3, 'c')",
        "CREATE TABLE other (id int PRIMARY KEY, v text)",
        "INSERT INTO other SELECT g, 'v' || g FROM generate_series(1, 50) g",
        "CREATE TABLE markers (id int PRIMARY KEY)",
        "CREATE PUBLICATION " + publication + " FOR TABLE items, log, other, markers");
  }

  /** Source rows as sorted text, with the same canonical text as {@link #icebergRows}. */
  private static List<String> sourceRows(TestDatabase db, String table, List<String> columns) {
    List<String> rows = new ArrayList<>();
    for (List<@Nullable String> r :
        db.queryRows("SELECT " + String.join(", ", columns) + " FROM " + table)) {
      rows.add(String.join("|", r.stream().map(String::valueOf).toList()));
    }
    rows.sort(Comparator.naturalOrder());
    return rows;
  }

  private static List<String> icebergRows(
      IcebergReader reader, TableIdentifier id, List<String> columns) {
    List<String> rows = new ArrayList<>();
    for (Record r : reader.records(id)) {
      List<String> row = new ArrayList<>();
      for (String c : columns) {
        row.add(String.valueOf(r.getField(c)));
      }
      rows.add(String.join("|", row));
    }
    rows.sort(Comparator.naturalOrder());
    return rows;
  }

  private static void awaitMarker(TestDatabase db, IcebergReader reader, int marker) {
    db.execute("INSERT INTO markers VALUES (" + marker + ")");
    await()
        .atMost(WAIT)
        .until(
            () -> {
              TableIdentifier id = TableIdentifier.of("public", "markers");
              return reader.exists(id)
                  && reader.records(id).stream()
                      .anyMatch(r -> Integer.valueOf(marker).equals(r.getField("id")));
            });
  }

  private static void awaitReady(MemoryStore store, int tables) {
    await()
        .atMost(WAIT)
        .until(
            () ->
                store.tableStates().size() == tables
                    && store.tableStates().values().stream()
                        .allMatch(s -> s.type() == TableState.Type.READY));
  }

  @Test
  void upsertTablesOnAJdbcCatalogEqualTheSource(TestDatabase shared) throws Exception {
    TestDatabase db = fresh(shared, "upsert");
    createSource(db, "ice_pub");
    Map<String, String> catalog = new HashMap<>();
    catalog.put("type", "jdbc");
    catalog.put("uri", db.jdbcUrl());
    catalog.put("jdbc.user", db.user());
    catalog.put("jdbc.password", db.password());
    catalog.put("jdbc.schema-version", "V1");
    catalog.put("warehouse", dir.resolve("warehouse").toUri().toString());
    IcebergReader reader = IcebergReader.of(catalog);
    MemoryStore store = new MemoryStore("ice_jdbc");
    PipelineConfig config = config(db, "ice_jdbc", "ice_pub");
    try (Pipeline p =
        Pipeline.create(
            config,
            store,
            IcebergDestination.jdbc(
                    db.jdbcUrl(),
                    db.user(),
                    db.password(),
                    dir.resolve("warehouse").toUri().toString())
                .commitInterval(Duration.ofMillis(300))
                .build())) {
      p.start();
      awaitReady(store, 4);
      changes(db);
      awaitMarker(db, reader, 1);
    }
    // a restart over the same catalog replays nothing twice
    try (Pipeline p =
        Pipeline.create(
            config,
            store,
            IcebergDestination.builder(catalog).commitInterval(Duration.ofMillis(300)).build())) {
      p.start();
      db.execute("UPDATE items SET qty = qty * 2 WHERE id < 50");
      awaitMarker(db, reader, 2);
    }
    List<String> items = List.of("id", "label", "qty", "md5(note)");
    assertThat(icebergRows(reader, TableIdentifier.of("public", "items"), items.subList(0, 3)))
        .as("items (key, renamed and widened columns)")
        .isEqualTo(sourceRows(db, "items", items.subList(0, 3)));
    assertThat(md5Notes(reader)).isEqualTo(sourceRows(db, "items", List.of("id", "md5(note)")));
    assertThat(icebergRows(reader, TableIdentifier.of("public", "log"), List.of("a", "b")))
        .as("log (REPLICA IDENTITY FULL, equal rows)")
        .isEqualTo(sourceRows(db, "log", List.of("a", "b")));
    assertThat(icebergRows(reader, TableIdentifier.of("public", "other"), List.of("id", "v")))
        .as("other (truncated, then an insert)")
        .isEqualTo(sourceRows(db, "other", List.of("id", "v")));
    Table itemsTable = reader.table(TableIdentifier.of("public", "items"));
    assertThat(itemsTable.schema().findField("qty").type()).isEqualTo(Types.LongType.get());
    assertThat(itemsTable.schema().findField("added")).as("the dropped column").isNull();
    assertThat(itemsTable.schema().identifierFieldNames()).containsExactly("id");
    Snapshot last = itemsTable.currentSnapshot();
    assertThat(last.summary()).containsKey(IcebergTable.THROUGH);
    assertThat(db.queryLong("SELECT count(*) FROM iceberg_tables WHERE table_name = 'items'"))
        .as("the JDBC catalog's pointer, in the source database")
        .isEqualTo(1);
  }

  private static List<String> md5Notes(IcebergReader reader) {
    List<String> rows = new ArrayList<>();
    for (Record r : reader.records(TableIdentifier.of("public", "items"))) {
      Object note = r.getField("note");
      rows.add(r.getField("id") + "|" + (note == null ? "null" : md5(note.toString())));
    }
    rows.sort(Comparator.naturalOrder());
    return rows;
  }

  private static String md5(String s) {
    try {
      byte[] d =
          java.security.MessageDigest.getInstance("MD5").digest(s.getBytes(StandardCharsets.UTF_8));
      StringBuilder sb = new StringBuilder();
      for (byte b : d) {
        sb.append(String.format("%02x", b));
      }
      return sb.toString();
    } catch (java.security.NoSuchAlgorithmException e) {
      throw new IllegalStateException(e);
    }
  }

  @Test
  void aChangelogFoldedByKeyEqualsTheSource(TestDatabase shared) throws Exception {
    TestDatabase db = fresh(shared, "changelog");
    db.execute(
        "CREATE TABLE items (id int PRIMARY KEY, name text, note text)",
        "ALTER TABLE items ALTER COLUMN note SET STORAGE EXTERNAL",
        "INSERT INTO items SELECT g, 'item ' || g, repeat(md5(g::text), 100)"
            + " FROM generate_series(1, 100) g",
        "CREATE TABLE markers (id int PRIMARY KEY)",
        "CREATE PUBLICATION ice_log_pub FOR TABLE items, markers");
    Path warehouse = dir.resolve("changelog");
    IcebergReader reader = IcebergReader.hadoop(warehouse);
    MemoryStore store = new MemoryStore("ice_log");
    try (Pipeline p =
        Pipeline.create(
            config(db, "ice_log", "ice_log_pub"),
            store,
            IcebergDestination.hadoop(warehouse)
                .mode(IcebergDestination.Mode.CHANGELOG)
                .commitInterval(Duration.ofMillis(300))
                .build())) {
      p.start();
      awaitReady(store, 2);
      db.execute(
          "UPDATE items SET name = 'renamed' WHERE id = 1", // note unchanged: named
          "UPDATE items SET id = 200 WHERE id = 2",
          "DELETE FROM items WHERE id = 3",
          "INSERT INTO items VALUES (3, 'back', 'b')",
          "UPDATE items SET note = 'short' WHERE id = 4",
          "TRUNCATE items",
          "INSERT INTO items VALUES (7, 'seven', 's'), (8, 'eight', 'e')",
          "UPDATE items SET name = 'SEVEN' WHERE id = 7",
          "INSERT INTO items VALUES (9, 'nine', repeat(md5('9'), 100))",
          "UPDATE items SET id = 300 WHERE id = 9"); // note unchanged under a new key
      awaitMarker(db, reader, 1);
    }
    List<Record> log = reader.records(TableIdentifier.of("public", "items"));
    assertThat(log)
        .extracting(r -> r.getField(TableLayout.OP))
        .contains("INSERT", "UPDATE", "DELETE", "TRUNCATE");
    assertThat(log)
        .filteredOn(r -> Integer.valueOf(300).equals(r.getField("id")))
        .extracting(r -> r.getField(TableLayout.UNCHANGED))
        .as("the key-changing update left the TOASTed note unchanged")
        .containsExactly("note");
    List<String> actual = new ArrayList<>();
    IcebergTableReader.hadoop(warehouse)
        .forEachFoldedRow(
            new TableName("public", "items"),
            List.of("id"),
            List.of("id", "name", "note"),
            row ->
                actual.add(row.get(0) + "|" + row.get(1) + "|" + md5(String.valueOf(row.get(2)))));
    actual.sort(Comparator.naturalOrder());
    assertThat(actual).isEqualTo(sourceRows(db, "items", List.of("id", "name", "md5(note)")));
  }

  /**
   * Four updates of one row in one commit, each leaving some TOASTed values unchanged: the first
   * needs the committed row's values, the next two set both TOASTed columns, the last needs nothing
   * from the committed row any more. The row keeps the values the transaction set.
   */
  @Test
  void updatesOfTwoToastedColumnsInOneCommitKeepTheLatestValues(TestDatabase shared)
      throws Exception {
    TestDatabase db = fresh(shared, "toasted");
    db.execute(
        "CREATE TABLE wide (id int PRIMARY KEY, n int, a text, b text)",
        "ALTER TABLE wide ALTER COLUMN a SET STORAGE EXTERNAL",
        "ALTER TABLE wide ALTER COLUMN b SET STORAGE EXTERNAL",
        "INSERT INTO wide SELECT g, g, repeat('a', 3000), repeat('b', 3000)"
            + " FROM generate_series(1, 3) g",
        "CREATE TABLE markers (id int PRIMARY KEY)",
        "CREATE PUBLICATION ice_toast_pub FOR TABLE wide, markers");
    Path warehouse = dir.resolve("toasted");
    IcebergReader reader = IcebergReader.hadoop(warehouse);
    MemoryStore store = new MemoryStore("ice_toast");
    try (Pipeline p =
        Pipeline.create(
            config(db, "ice_toast", "ice_toast_pub"),
            store,
            IcebergDestination.hadoop(warehouse).commitInterval(Duration.ofSeconds(2)).build())) {
      p.start();
      awaitReady(store, 2);
      db.execute(
          "BEGIN;"
              + " UPDATE wide SET n = n + 10 WHERE id = 1;" // a and b unchanged
              + " UPDATE wide SET a = repeat('A', 3000) WHERE id = 1;" // b unchanged
              + " UPDATE wide SET b = repeat('B', 3000) WHERE id = 1;" // a unchanged
              + " UPDATE wide SET n = n + 10 WHERE id = 1;" // a and b unchanged
              + " COMMIT");
      awaitMarker(db, reader, 1);
    }
    List<String> columns = List.of("id", "n", "md5(a)", "md5(b)");
    List<String> actual = new ArrayList<>();
    for (Record r : reader.records(TableIdentifier.of("public", "wide"))) {
      actual.add(
          r.getField("id")
              + "|"
              + r.getField("n")
              + "|"
              + md5(String.valueOf(r.getField("a")))
              + "|"
              + md5(String.valueOf(r.getField("b"))));
    }
    actual.sort(Comparator.naturalOrder());
    assertThat(actual).isEqualTo(sourceRows(db, "wide", columns));
  }

  @Test
  @SuppressWarnings("unchecked") // the list values of the generic reader
  void everyMappedTypeRoundTrips(TestDatabase shared) throws Exception {
    TestDatabase db = fresh(shared, "types");
    db.execute(
        "CREATE TYPE mood AS ENUM ('sad', 'happy')",
        "CREATE DOMAIN positive AS int CHECK (VALUE > 0)",
        "CREATE TYPE pair AS (x int, y text)",
        "CREATE TABLE types (id int PRIMARY KEY, b bool, i2 int2, i8 int8, f4 float4,"
            + " f8 float8, n numeric, n2 numeric(10,2), t text, vc varchar(5), c char(3),"
            + " by bytea, d date, tm time, tz timetz, ts timestamp, tstz timestamptz,"
            + " iv interval, u uuid, j json, jb jsonb, ia int[], ta text[], m mood,"
            + " p positive, c2 pair, pt point, ip inet, mo money, da date[], tsa timestamptz[])",
        "CREATE TABLE markers (id int PRIMARY KEY)",
        "CREATE PUBLICATION ice_types_pub FOR TABLE types, markers");
    String row =
        " true, -2, 9000000000, 1.5, 'NaN', 12345.678901234567890, 3.10, 'tëxt', 'ab', 'x',"
            + " '\\x00ff', '2024-02-29', '13:14:15.123456', '13:14:15+02', '2024-01-02"
            + " 03:04:05.678901', '2024-01-02 03:04:05.678901+00', '1 year 2 mons 3 days"
            + " 04:05:06', 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11', '{\"a\": 1}', '{\"b\": [1,"
            + " 2]}', '{1,NULL,3}', '{\"x y\",z}', 'happy', 7, '(1,\"q\")', '(1.5,2)',"
            + " '10.0.0.1/8', '12.34'";
    // before the epoch, where the microseconds are negative: the copy writes them itself
    String early =
        " '1901-05-06', '00:00:00.000001', '1969-12-31 23:59:59.5', '1969-12-31"
            + " 23:59:59.5+00', '{1969-12-31,NULL}', '{\"1969-12-31 23:59:59.5+00\",NULL}'";
    db.execute(
        "SET lc_monetary = 'C'",
        "INSERT INTO types VALUES (1," + row + ")", // copied
        "INSERT INTO types (id) VALUES (2)",
        "INSERT INTO types (id, d, tm, ts, tstz, da, tsa) VALUES (4," + early + ")"); // copied
    Path warehouse = dir.resolve("types");
    IcebergReader reader = IcebergReader.hadoop(warehouse);
    MemoryStore store = new MemoryStore("ice_types");
    try (Pipeline p =
        Pipeline.create(
            config(db, "ice_types", "ice_types_pub"),
            store,
            IcebergDestination.hadoop(warehouse).commitInterval(Duration.ofMillis(300)).build())) {
      p.start();
      awaitReady(store, 2);
      db.execute(
          "INSERT INTO types VALUES (3," + row + ")", // streamed
          "INSERT INTO types (id, d, tm, ts, tstz, da, tsa) VALUES (5," + early + ")");
      awaitMarker(db, reader, 1);
    }
    Table t = reader.table(TableIdentifier.of("public", "types"));
    Map<String, String> types = new LinkedHashMap<>();
    for (Types.NestedField f : t.schema().columns()) {
      types.put(f.name(), f.type().toString());
    }
    assertThat(types)
        .containsEntry("b", "boolean")
        .containsEntry("i2", "int")
        .containsEntry("i8", "long")
        .containsEntry("f4", "float")
        .containsEntry("f8", "double")
        .containsEntry("n", "string")
        .containsEntry("n2", "decimal(10, 2)")
        .containsEntry("by", "binary")
        .containsEntry("d", "date")
        .containsEntry("tm", "time")
        .containsEntry("tz", "string")
        .containsEntry("ts", "timestamp")
        .containsEntry("tstz", "timestamptz")
        .containsEntry("iv", "string")
        .containsEntry("u", "uuid")
        .containsEntry("jb", "string")
        .containsEntry("ia", "list<int>")
        .containsEntry("ta", "list<string>")
        .containsEntry("m", "string")
        .containsEntry("p", "string")
        .containsEntry("c2", "string");
    Map<Integer, Record> byId = new HashMap<>();
    for (Record r : reader.records(TableIdentifier.of("public", "types"))) {
      byId.put((Integer) r.getField("id"), r);
    }
    assertThat(byId).containsOnlyKeys(1, 2, 3, 4, 5);
    for (int id : List.of(4, 5)) {
      Record r = byId.get(id);
      assertThat(r.getField("d")).isEqualTo(LocalDate.of(1901, 5, 6));
      assertThat(r.getField("tm")).isEqualTo(LocalTime.of(0, 0, 0, 1000));
      assertThat(r.getField("ts"))
          .isEqualTo(LocalDateTime.of(1969, 12, 31, 23, 59, 59, 500_000_000));
      assertThat(r.getField("tstz"))
          .isEqualTo(OffsetDateTime.of(1969, 12, 31, 23, 59, 59, 500_000_000, ZoneOffset.UTC));
      assertThat((List<Object>) r.getField("da")).containsExactly(LocalDate.of(1969, 12, 31), null);
      assertThat((List<Object>) r.getField("tsa"))
          .containsExactly(
              OffsetDateTime.of(1969, 12, 31, 23, 59, 59, 500_000_000, ZoneOffset.UTC), null);
    }
    for (int id : List.of(1, 3)) {
      Record r = byId.get(id);
      assertThat(r.getField("b")).isEqualTo(true);
      assertThat(r.getField("i2")).isEqualTo(-2);
      assertThat(r.getField("i8")).isEqualTo(9_000_000_000L);
      assertThat(r.getField("f4")).isEqualTo(1.5f);
      assertThat((Double) r.getField("f8")).isNaN();
      assertThat(r.getField("n")).isEqualTo("12345.678901234567890");
      assertThat(r.getField("n2")).isEqualTo(new BigDecimal("3.10"));
      assertThat(r.getField("t")).isEqualTo("tëxt");
      assertThat(r.getField("vc")).isEqualTo("ab");
      assertThat(r.getField("c")).isEqualTo("x  ");
      assertThat(r.getField("by")).isEqualTo(ByteBuffer.wrap(new byte[] {0, (byte) 0xff}));
      assertThat(r.getField("d")).isEqualTo(LocalDate.of(2024, 2, 29));
      assertThat(r.getField("tm")).isEqualTo(LocalTime.parse("13:14:15.123456"));
      assertThat(r.getField("tz")).isEqualTo("13:14:15+02");
      assertThat(r.getField("ts")).isEqualTo(LocalDateTime.parse("2024-01-02T03:04:05.678901"));
      assertThat(r.getField("tstz"))
          .isEqualTo(OffsetDateTime.of(2024, 1, 2, 3, 4, 5, 678_901_000, ZoneOffset.UTC));
      assertThat(r.getField("iv")).isEqualTo("1 year 2 mons 3 days 04:05:06");
      assertThat(r.getField("u"))
          .isEqualTo(UUID.fromString("a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11"));
      assertThat(r.getField("j")).isEqualTo("{\"a\": 1}");
      assertThat(r.getField("jb")).isEqualTo("{\"b\": [1, 2]}");
      assertThat(r.getField("ia")).isEqualTo(java.util.Arrays.asList(1, null, 3));
      assertThat(r.getField("ta")).isEqualTo(List.of("x y", "z"));
      assertThat(r.getField("m")).isEqualTo("happy");
      assertThat(r.getField("p")).isEqualTo("7");
      assertThat(r.getField("c2")).isEqualTo("(1,q)");
      assertThat(r.getField("pt")).isEqualTo("(1.5,2)");
      assertThat(r.getField("ip")).isEqualTo("10.0.0.1/8");
      assertThat(r.getField("mo")).isNotNull();
    }
    Record empty = byId.get(2);
    for (Types.NestedField f : t.schema().columns()) {
      if (!f.name().equals("id")) {
        assertThat(empty.getField(f.name())).as("NULL in %s", f.name()).isNull();
      }
    }
  }
}
