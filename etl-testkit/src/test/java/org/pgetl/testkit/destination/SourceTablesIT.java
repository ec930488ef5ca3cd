package org.pgetl.testkit.destination;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.pgetl.testkit.destination.Rows.row;

import java.math.BigDecimal;
import java.sql.Connection;
import java.time.Instant;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.time.LocalTime;
import java.time.OffsetTime;
import java.time.ZoneOffset;
import java.util.Arrays;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.pgetl.model.PgArray;
import org.pgetl.model.PgInterval;
import org.pgetl.model.PgNumeric;
import org.pgetl.model.TableName;
import org.pgetl.testkit.TestDatabase;
import org.pgetl.testkit.TestkitException;
import org.pgetl.testkit.WithPostgres;

/** {@link SourceTables} reads each supported type as the Java value the pipeline delivers. */
@WithPostgres
@Timeout(value = 2, unit = TimeUnit.MINUTES)
class SourceTablesIT {

  @Test
  void readsEverySupportedTypeAsThePipelinesJavaValue(TestDatabase db) {
    db.execute(
        """
        CREATE TABLE all_types (
          id int8 PRIMARY KEY, i2 int2, i4 int4, f4 float4, f8 float8, num numeric(10,2),
          b bool, t text, vc varchar(10), bp char(3), js json, jb jsonb, by bytea, u uuid,
          d date, ts timestamp, tstz timestamptz, tm time, ttz timetz, iv interval, o oid)""",
        """
        INSERT INTO all_types VALUES
          (1, 2, 3, 1.5, 2.25, 12.50, true, 'text', 'vc', 'ab', '{"a": 1}', '{"b": [1, 2]}',
           '\\x00ff10', 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11', '2024-02-29',
           '2024-05-06 07:08:09.123456', '2024-05-06 07:08:09.123456+02', '24:00:00',
           '10:11:12+03', '1 year 2 mons 3 days 04:05:06.789', 4000000000),
          (2, NULL, NULL, NULL, 'NaN', 'NaN', NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL,
           'infinity', '-infinity', 'infinity', '00:00:00', NULL, '-1 day -00:00:01', NULL)""");

    List<List<Object>> rows = SourceTables.read(db, new TableName("public", "all_types"));

    assertThat(rows)
        .containsExactly(
            row(
                1L,
                (short) 2,
                3,
                1.5f,
                2.25d,
                PgNumeric.of(new BigDecimal("12.50")),
                true,
                "text",
                "vc",
                "ab ",
                "{\"a\": 1}",
                "{\"b\": [1, 2]}",
                new byte[] {0, (byte) 0xff, 0x10},
                UUID.fromString("a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11"),
                LocalDate.of(2024, 2, 29),
                LocalDateTime.of(2024, 5, 6, 7, 8, 9, 123456000),
                Instant.parse("2024-05-06T05:08:09.123456Z"),
                LocalTime.MAX,
                OffsetTime.of(10, 11, 12, 0, ZoneOffset.ofHours(3)),
                new PgInterval(14, 3, (4 * 3600 + 5 * 60 + 6) * 1_000_000L + 789_000L),
                4_000_000_000L),
            row(
                2L,
                null,
                null,
                null,
                Double.NaN,
                PgNumeric.NAN,
                null,
                null,
                null,
                null,
                null,
                null,
                null,
                null,
                LocalDate.MAX,
                LocalDateTime.MIN,
                Instant.MAX,
                LocalTime.MIDNIGHT,
                null,
                new PgInterval(0, -1, -1_000_000L),
                null));
  }

  @Test
  void readsOneDimensionalArraysAsPgArray(TestDatabase db) throws Exception {
    db.execute(
        "CREATE TABLE arrays (id int4 PRIMARY KEY, ints int4[], texts text[], nums numeric[],"
            + " stamps timestamptz[], blobs bytea[])",
        "INSERT INTO arrays VALUES (1, '{1,NULL,3}', '{\"a b\",NULL,\"c,d\"}', '{1.50,NaN}',"
            + " '{\"2024-01-01 00:00:00+00\",infinity}', '{\"\\\\x0102\",NULL}'),"
            + " (2, '{}', NULL, '{}', '{}', '{}')");

    List<List<Object>> rows;
    try (Connection c = db.connect()) {
      rows = SourceTables.read(c, new TableName("public", "arrays"));
    }

    assertThat(rows)
        .containsExactly(
            row(
                1,
                PgArray.ofList(23, Arrays.asList(1, null, 3)),
                PgArray.ofList(25, Arrays.asList("a b", null, "c,d")),
                PgArray.ofList(1700, List.of(PgNumeric.parse("1.50"), PgNumeric.NAN)),
                PgArray.ofList(1184, List.of(Instant.parse("2024-01-01T00:00:00Z"), Instant.MAX)),
                PgArray.ofList(17, Arrays.asList(new byte[] {1, 2}, null))),
            row(
                2,
                PgArray.ofList(23, List.of()),
                null,
                PgArray.ofList(1700, List.of()),
                PgArray.ofList(1184, List.of()),
                PgArray.ofList(17, List.of())));
  }

  @Test
  void readsAColumnListSortedAndOtherTypesAsText(TestDatabase db) throws Exception {
    db.execute(
        "CREATE TYPE mood AS ENUM ('happy', 'sad')",
        "CREATE TABLE \"Mixed Case\" (id int8 PRIMARY KEY, m mood, skip text)",
        "INSERT INTO \"Mixed Case\" VALUES (2, 'sad', 'x'), (1, 'happy', 'y')");

    try (Connection c = db.connect()) {
      assertThat(SourceTables.read(c, new TableName("public", "Mixed Case"), List.of("m", "id")))
          .containsExactly(row("happy", 1L), row("sad", 2L));
      assertThat(SourceTables.query(c, "SELECT id FROM \"Mixed Case\" WHERE id > ?", 1L))
          .containsExactly(row(2L));
    }
  }

  @Test
  void refusesMultiDimensionalArrays(TestDatabase db) throws Exception {
    db.execute(
        "CREATE TABLE grid (id int4, g int4[])", "INSERT INTO grid VALUES (1, '{{1,2},{3,4}}')");

    try (Connection c = db.connect()) {
      assertThatThrownBy(() -> SourceTables.read(c, new TableName("public", "grid")))
          .isInstanceOf(TestkitException.class)
          .hasMessageContaining("one-dimensional");
    }
  }
}
