package org.pgetl.destination.postgres;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;
import static org.pgetl.testing.destination.Scenario.col;
import static org.pgetl.testing.destination.Scenario.keyed;
import static org.pgetl.testing.destination.Scenario.sendEvents;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.pgetl.Pipeline;
import org.pgetl.PipelineConfig;
import org.pgetl.destination.internal.WireDecoder;
import org.pgetl.destination.internal.WireRows;
import org.pgetl.model.ReplicatedTableSchema;
import org.pgetl.model.TableRow;
import org.pgetl.model.TableRow.WireFormat;
import org.pgetl.model.UpdatedRow;
import org.pgetl.store.MemoryStore;
import org.pgetl.store.TableState;
import org.pgetl.testing.destination.Scenario;
import org.pgetl.testkit.TestDatabase;
import org.pgetl.testkit.WithPostgres;

/**
 * Copied values that {@link PostgresMirrorDestination} writes in the binary form PostgreSQL sent
 * them in, without decoding them: the mirror still equals the source for every kind of type, and a
 * built-in value is never decoded.
 */
@WithPostgres
@Timeout(value = 3, unit = TimeUnit.MINUTES)
class MirrorWireValuesIT {

  @Test
  void aTableCopiedByThePipelineEqualsTheSourceForBuiltInAndUserDefinedTypes(TestDatabase db)
      throws Exception {
    db.execute(
        "CREATE TYPE mood AS ENUM ('sad', 'ok', 'happy')",
        "CREATE DOMAIN posint AS integer CHECK (VALUE > 0)",
        "CREATE TYPE pair AS (a int, b text)",
        "CREATE TABLE wire_types (id int PRIMARY KEY, i2 smallint, i8 bigint, n numeric,"
            + " n2 numeric(12,2), t text, vc varchar(10), b boolean, f4 real,"
            + " f8 double precision, d date, tm time, ttz timetz, ts timestamp, tstz timestamptz,"
            + " iv interval, u uuid, by bytea, j json, jb jsonb, ip inet, ia int[], ta text[],"
            + " na numeric(8,3)[], tsa timestamptz[], r int4range, m mood, ma mood[], dm posint,"
            + " p pair, pa pair[], mo money)",
        "INSERT INTO wire_types SELECT g, (g % 32000)::smallint, g * 1000000007::bigint,"
            + " (g * 1.5)::numeric / 7, (g % 10000000) + 0.25, 'row ' || g || E'\\t✓',"
            + " left('v' || g, 10), g % 2 = 0, g / 3.0::real, g / 7.0::double precision,"
            + " date '2000-01-01' + g, time '00:00:01.5' + g * interval '1 s',"
            + " (time '10:00' + g * interval '1 min')::timetz,"
            + " timestamp '1999-12-31 23:59:59.999999' + g * interval '1 h',"
            + " timestamptz '1970-01-01 00:00:00+02' + g * interval '1 day 1 us',"
            + " make_interval(0, g % 13, 0, g % 40, 0, 0, g / 1000.0),"
            + " md5(g::text)::uuid, decode(md5(g::text), 'hex'),"
            + " ('{\"k\": ' || g || ',  \"s\": \"x\"}')::json,"
            + " ('{\"k\": ' || g || ', \"a\": [1, 2.50]}')::jsonb,"
            + " ('10.0.' || (g % 256) || '.1/24')::inet, ARRAY[g, NULL, -g],"
            + " ARRAY['a b', 'c,d', NULL, '\"q\"'], ARRAY[g / 3.0, 1.5],"
            + " ARRAY[timestamptz '2020-02-29 12:00+00' + g * interval '1 s'],"
            + " int4range(g, g + 10), (ARRAY['sad', 'ok', 'happy'])[g % 3 + 1]::mood,"
            + " ARRAY['happy', 'sad']::mood[], g, ROW(g, 'p ' || g)::pair,"
            + " ARRAY[ROW(g, 'x')::pair, NULL], (g * 1234.5)::numeric::money"
            + " FROM generate_series(1, 2000) g",
        "INSERT INTO wire_types (id) VALUES (0)", // every other column NULL
        "INSERT INTO wire_types (id, n, f4, f8, d, ts, tstz, ia, t, by, jb, iv) VALUES"
            + " (-1, 'NaN', 'NaN', '-Infinity', 'infinity', '-infinity', 'infinity', '{}', '',"
            + " '\\x', '{}', '-178000000 years'),"
            + " (-2, '-0.000000000000000000001', '-0', 'Infinity', '-infinity', 'infinity',"
            + " '-infinity', '[0:1]={1,2}', E'back\\\\slash\\nnew line', '\\x00ff', '[]',"
            + " '1 day -00:00:00.000001')",
        // built-in types only: copied in binary, every value passed through
        "CREATE TABLE wire_builtins AS SELECT id, i2, i8, n, n2, t, vc, b, f4, f8, d, tm, ttz, ts,"
            + " tstz, iv, u, by, j, jb, ip, ia, ta, na, tsa, r, mo FROM wire_types",
        "ALTER TABLE wire_builtins ADD PRIMARY KEY (id)",
        "CREATE PUBLICATION wire_pub FOR TABLE wire_types, wire_builtins");
    String mirrorName = db.name() + "_mirror";
    db.server().createDatabase(mirrorName);
    try {
      TestDatabase mirror = new TestDatabase(db.server(), mirrorName);
      PipelineConfig config =
          PipelineConfig.builder()
              .pipelineId("wire")
              .publication("wire_pub")
              .source(Jdbc.config(db))
              .batchMaxBytes(64 * 1024) // several batches
              .shutdownTimeout(Duration.ofSeconds(30))
              .build();
      MemoryStore store = new MemoryStore("wire");
      try (Pipeline p =
          Pipeline.create(config, store, new PostgresMirrorDestination(Jdbc.config(mirror), 2))) {
        p.start();
        await()
            .atMost(Duration.ofMinutes(2))
            .until(
                () ->
                    store.tableStates().size() == 2
                        && store.tableStates().values().stream()
                            .allMatch(s -> s.type() == TableState.Type.READY));
        List<String> tables = List.of("public.wire_types", "public.wire_builtins");
        for (String table : tables) {
          String rows = "SELECT id || ' ' || t::text FROM " + table + " t ORDER BY id";
          List<String> source = column(db, rows);
          assertThat(source).hasSize(2003);
          assertThat(column(mirror, rows)).as("copied rows of %s", table).isEqualTo(source);
          String types =
              "SELECT attname || ' ' || format_type(atttypid, atttypmod) FROM pg_attribute"
                  + " WHERE attrelid = '"
                  + table
                  + "'::regclass AND attnum > 0 AND NOT attisdropped";
          assertThat(column(mirror, types))
              .as("built-in types of %s keep their type in the mirror", table)
              .containsAll(column(db, types + " AND atttypid < 10000"));
        }
        // then changes, in pgoutput's text form: many rows (copied in) and a few (statements)
        for (String table : tables) {
          db.execute(
              "UPDATE "
                  + table
                  + " SET t = t || ' and more', ia = ia || 7, iv = iv * 2, mo = mo * -2,"
                  + " tstz = 'infinity' WHERE id % 7 = 0",
              "DELETE FROM " + table + " WHERE id % 11 = 0",
              "INSERT INTO "
                  + table
                  + " SELECT id + 10000, i2, i8, n, n2, t, vc, b, f4, f8, d,"
                  + " tm, ttz, ts, tstz, iv, u, by, j, jb, ip, ia, ta, na, tsa, r"
                  + (table.endsWith("wire_types") ? ", m, ma, dm, p, pa" : "")
                  + ", mo"
                  + " FROM "
                  + table
                  + " WHERE id BETWEEN 1 AND 400",
              "INSERT INTO " + table + " (id, t) VALUES (20000, 'one')",
              "UPDATE " + table + " SET n2 = -n2, jb = jb || '{\"z\": null}' WHERE id = 3");
        }
        for (String table : tables) {
          String rows = "SELECT id || ' ' || t::text FROM " + table + " t ORDER BY id";
          await()
              .atMost(Duration.ofMinutes(2))
              .untilAsserted(
                  () ->
                      assertThat(column(mirror, rows))
                          .as("rows of %s after the changes", table)
                          .isEqualTo(column(db, rows)));
        }
      }
    } finally {
      db.dropAllSlots();
      db.server().dropDatabase(mirrorName);
    }
  }

  @Test
  void builtInValuesInBinaryWireFormGoInWithoutBeingDecoded(TestDatabase db) throws Exception {
    ReplicatedTableSchema table =
        keyed(
            18101,
            "wire",
            "never_decoded",
            col("id", 23, "integer", 1, 1),
            col("label", 25, "text", 2, 0),
            col("at", 1184, "timestamp with time zone", 3, 0),
            col("amount", 1700, "numeric", 4, 0),
            col("grid", 1007, "integer[]", 5, 0));
    AtomicInteger decoded = new AtomicInteger();
    WireDecoder refusing =
        new WireDecoder() {
          @Override
          public WireFormat format(int column) {
            return WireFormat.BINARY;
          }

          @Override
          public Object decode(int column, byte[] buf, int off, int len) {
            decoded.incrementAndGet();
            throw new IllegalStateException("column " + column + " was decoded");
          }
        };
    List<TableRow> rows = new ArrayList<>();
    for (int id = 1; id <= 300; id++) {
      rows.add(wireRow(refusing, id, id % 50 == 0));
    }
    PostgresMirrorDestination d = new PostgresMirrorDestination(Jdbc.config(db), 2);
    d.startup(new Scenario.Context());
    try {
      Scenario.copyAll(d, Scenario.copyOf(table, rows, 100));
    } finally {
      d.shutdown();
    }
    assertThat(decoded).as("values decoded").hasValue(0);
    assertThat(
            column(
                db,
                "SELECT id || '|' || coalesce(label, 'NULL') || '|' || (at AT TIME ZONE 'UTC') || '|' || amount"
                    + " || '|' || grid::text FROM wire.never_decoded WHERE id IN (1, 50, 300)"
                    + " ORDER BY id"))
        .containsExactly(
            "1|label 1|2000-01-01 00:00:01|12.5|{1,-1}",
            "50|NULL|2000-01-01 00:00:50|12.5|{50,-50}",
            "300|NULL|2000-01-01 00:05:00|12.5|{300,-300}");
  }

  @Test
  void changesWriteNonKeyValuesInTheTextFormPostgresSentWithoutDecodingThem(TestDatabase db) {
    ReplicatedTableSchema table =
        keyed(
            18102,
            "wire",
            "changes",
            col("id", 23, "integer", 1, 1),
            col("label", 25, "text", 2, 0),
            col("at", 1184, "timestamp with time zone", 3, 0),
            col("grid", 1007, "integer[]", 4, 0));
    AtomicInteger decoded = new AtomicInteger();
    WireDecoder keyOnly =
        new WireDecoder() {
          @Override
          public WireFormat format(int column) {
            return WireFormat.TEXT;
          }

          @Override
          public Object decode(int column, byte[] buf, int off, int len) {
            if (column == 0) {
              return Integer.valueOf(new String(buf, off, len, StandardCharsets.UTF_8));
            }
            decoded.incrementAndGet();
            throw new IllegalStateException("column " + column + " was decoded");
          }
        };
    // 300 inserts: copied into the table; then 3 inserts and an update: statements
    Scenario.Tx large = new Scenario.Tx(0x1000, 1).relation(table);
    for (int id = 1; id <= 300; id++) {
      large.insert(table, textRow(keyOnly, id, "label\t" + id));
    }
    Scenario.Tx small = new Scenario.Tx(0x2000, 2);
    for (int id = 301; id <= 303; id++) {
      small.insert(table, textRow(keyOnly, id, "small " + id));
    }
    small.update(table, new UpdatedRow.Full(textRow(keyOnly, 2, "updated")), null);
    PostgresMirrorDestination d = new PostgresMirrorDestination(Jdbc.config(db), 2);
    d.startup(new Scenario.Context());
    try {
      sendEvents(d, large.end());
      sendEvents(d, small.end());
    } finally {
      d.shutdown();
    }
    assertThat(decoded).as("non-key values decoded").hasValue(0);
    assertThat(
            column(
                db,
                "SELECT id || '|' || label || '|' || (at AT TIME ZONE 'UTC') || '|' || grid::text"
                    + " FROM wire.changes WHERE id IN (1, 2, 300, 303) ORDER BY id"))
        .containsExactly(
            "1|label\t1|2020-02-29 12:00:01|{1,NULL}",
            "2|updated|2020-02-29 12:00:02|{2,NULL}",
            "300|label\t300|2020-02-29 12:05:00|{300,NULL}",
            "303|small 303|2020-02-29 12:05:03|{303,NULL}");
    assertThat(db.queryLong("SELECT count(*) FROM wire.changes")).isEqualTo(303);
  }

  /** A change's row as the engine makes it from pgoutput's text values. */
  private static TableRow textRow(WireDecoder decoder, int id, String label) {
    ByteBuffer b = ByteBuffer.allocate(256);
    long[] spans = new long[4];
    spans[0] = put(b, String.valueOf(id).getBytes(StandardCharsets.UTF_8));
    spans[1] = put(b, label.getBytes(StandardCharsets.UTF_8));
    String at = "2020-02-29 12:" + String.format("%02d:%02d", id / 60, id % 60) + "+00";
    spans[2] = put(b, at.getBytes(StandardCharsets.UTF_8));
    spans[3] = put(b, ("{" + id + ",NULL}").getBytes(StandardCharsets.UTF_8));
    byte[] bytes = new byte[b.position()];
    b.flip().get(bytes);
    return WireRows.row(bytes, spans, decoder, bytes.length);
  }

  /** A row as the engine makes it from a binary COPY: the fields' bytes and their spans. */
  private static TableRow wireRow(WireDecoder decoder, int id, boolean nullLabel) {
    ByteBuffer b = ByteBuffer.allocate(256);
    long[] spans = new long[5];
    spans[0] = put(b, ByteBuffer.allocate(4).putInt(id).array());
    spans[1] = nullLabel ? WireRows.NULL : put(b, ("label " + id).getBytes(StandardCharsets.UTF_8));
    spans[2] = put(b, ByteBuffer.allocate(8).putLong(id * 1_000_000L).array()); // since 2000
    // numeric 12.5: 2 digits, weight 0, positive, scale 1; 12 and 5000 in base 10000
    spans[3] =
        put(
            b,
            ByteBuffer.allocate(12)
                .putShort((short) 2)
                .putShort((short) 0)
                .putShort((short) 0)
                .putShort((short) 1)
                .putShort((short) 12)
                .putShort((short) 5000)
                .array());
    // int4[]: one dimension, no NULLs, element type int4 (oid 23), 2 elements from index 1
    spans[4] =
        put(
            b,
            ByteBuffer.allocate(36)
                .putInt(1)
                .putInt(0)
                .putInt(23)
                .putInt(2)
                .putInt(1)
                .putInt(4)
                .putInt(id)
                .putInt(4)
                .putInt(-id)
                .array());
    byte[] bytes = new byte[b.position()];
    b.flip().get(bytes);
    return WireRows.row(bytes, spans, decoder, bytes.length);
  }

  private static long put(ByteBuffer b, byte[] value) {
    int at = b.position();
    b.put(value);
    return WireRows.span(at, value.length);
  }

  private static List<String> column(TestDatabase db, String sql) {
    List<String> values = new ArrayList<>();
    for (List<String> row : db.queryRows(sql)) {
      values.add(row.get(0));
    }
    return values;
  }
}
