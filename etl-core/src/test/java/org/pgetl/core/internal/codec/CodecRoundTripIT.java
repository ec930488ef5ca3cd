package org.pgetl.core.internal.codec;

import static org.assertj.core.api.Assertions.assertThat;
import static org.quicktheories.generators.SourceDSL.booleans;
import static org.quicktheories.generators.SourceDSL.integers;
import static org.quicktheories.generators.SourceDSL.lists;
import static org.quicktheories.generators.SourceDSL.longs;

import java.math.BigDecimal;
import java.math.BigInteger;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.sql.Types;
import java.time.Duration;
import java.time.Instant;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.time.LocalTime;
import java.time.OffsetTime;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.pgetl.model.PgArray;
import org.pgetl.model.PgInterval;
import org.pgetl.model.PgNumeric;
import org.pgetl.model.PgText;
import org.pgetl.testing.Theories;
import org.quicktheories.api.Pair;
import org.quicktheories.core.Gen;
import org.quicktheories.generators.Generate;

/**
 * Random values of every scalar type, alone and in one- and two-dimensional arrays (with NULLs and
 * random lower bounds), written to the server as {@code PgText.format(v)} cast with {@code
 * ?::type}, must come back unchanged through COPY text and COPY binary.
 *
 * <p>Each property has a fixed number of examples and stops early once its time budget is spent;
 * every example is a server round trip, so a failure is shrunk for at most {@link #SHRINKS}
 * attempts. A failure prints its seed, which {@code -Dpgetl.seed=...} replays.
 */
@Timeout(value = 2, unit = TimeUnit.MINUTES, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class CodecRoundTripIT {
  private static final Duration BUDGET = Duration.ofSeconds(5);
  private static final int SHRINKS = 200;
  private static Connection conn;
  private static int serverMajor;
  private final TypeRegistry registry = new TypeRegistry();

  @BeforeAll
  static void connect() throws SQLException {
    conn = CodecTestDatabase.connect();
    serverMajor = conn.getMetaData().getDatabaseMajorVersion();
  }

  @AfterAll
  static void disconnect() throws SQLException {
    if (conn != null) {
      conn.close();
    }
  }

  /**
   * Checks that {@code values} of {@code sqlType}, alone and in arrays with random lower bounds,
   * survive the round trip, for {@code examples} examples.
   */
  private void property(String sqlType, int examples, Gen<List<Object>> values) {
    Gen<Integer> bound = integers().between(-5, 5);
    Theories.qt(examples, BUDGET, SHRINKS)
        .forAll(values, bound, bound)
        .checkAssert(
            (v, a, b) -> {
              try {
                roundTrip(sqlType, v, a, b);
              } catch (SQLException e) {
                throw new AssertionError(sqlType + ": " + e.getMessage(), e);
              }
            });
  }

  /** Writes the values (and two arrays of them) to a table and reads them back both ways. */
  private void roundTrip(String sqlType, List<Object> values, int lb1, int lb2)
      throws SQLException {
    int oid;
    try (Statement st = conn.createStatement()) {
      st.execute("DROP TABLE IF EXISTS pg_temp.roundtrip");
      st.execute("CREATE TEMP TABLE roundtrip (id int, v " + sqlType + ", a " + sqlType + "[])");
      try (ResultSet rs = st.executeQuery("SELECT '" + sqlType + "'::regtype::oid::int8")) {
        rs.next();
        oid = (int) rs.getLong(1);
      }
    }
    List<PgArray> arrays = new ArrayList<>();
    arrays.add(PgArray.ofList(oid, values));
    int k = values.size() / 2;
    if (k > 0) {
      arrays.add(new PgArray(oid, List.of(2, k), List.of(lb1, lb2), values.subList(0, 2 * k)));
    }
    try (PreparedStatement ps =
        conn.prepareStatement(
            "INSERT INTO roundtrip VALUES (?, ?::" + sqlType + ", ?::" + sqlType + "[])")) {
      for (int i = 0; i < Math.max(values.size(), arrays.size()); i++) {
        ps.setInt(1, i);
        ps.setObject(2, i < values.size() ? PgText.format(values.get(i)) : null, Types.OTHER);
        ps.setObject(3, i < arrays.size() ? PgText.format(arrays.get(i)) : null, Types.OTHER);
        ps.addBatch();
      }
      ps.executeBatch();
    }
    List<ValueCodec> codecs = registry.codecs(oid, arrayOf(oid));
    for (boolean binary : new boolean[] {false, true}) {
      List<Object[]> rows =
          CopyReaders.read(conn, codecs, List.of("v", "a"), "FROM roundtrip ORDER BY id", binary);
      String form = binary ? "COPY binary" : "COPY text";
      for (int i = 0; i < values.size(); i++) {
        Object back = rows.get(i)[0];
        assertThat(Values.same(back, values.get(i)))
            .as(
                "%s %s: %s came back as %s",
                form, sqlType, Values.show(values.get(i)), Values.show(back))
            .isTrue();
      }
      for (int i = 0; i < arrays.size(); i++) {
        Object back = rows.get(i)[1];
        assertThat(Values.same(back, arrays.get(i)))
            .as(
                "%s %s[]: %s came back as %s",
                form, sqlType, Values.show(arrays.get(i)), Values.show(back))
            .isTrue();
      }
    }
  }

  private int arrayOf(int oid) throws SQLException {
    try (Statement st = conn.createStatement();
        ResultSet rs = st.executeQuery("SELECT typarray::int8 FROM pg_type WHERE oid = " + oid)) {
      rs.next();
      return (int) rs.getLong(1);
    }
  }

  // ------------------------------------------------------------------ generators

  /** Up to 24 values, one in ten of them NULL. */
  private static <T> Gen<List<Object>> listOf(Gen<T> element) {
    Gen<Object> nullable = element.toOptionals(10).map(o -> o.orElse(null));
    return lists()
        .of(nullable)
        .ofSizeBetween(0, 24)
        .describedAs(l -> l.stream().map(Values::show).collect(Collectors.joining(", ", "[", "]")));
  }

  @SafeVarargs
  private static <T> Gen<T> constants(T... values) {
    return Generate.pick(List.of(values));
  }

  private static Gen<List<Object>> bools() {
    return listOf(booleans().all());
  }

  private static Gen<List<Object>> int2s() {
    return listOf(
        Theories.withEdges(
            integers().between(Short.MIN_VALUE, Short.MAX_VALUE).map(Integer::shortValue),
            (short) 0,
            (short) -1,
            Short.MIN_VALUE,
            Short.MAX_VALUE));
  }

  private static Gen<List<Object>> int4s() {
    return listOf(
        Theories.withEdges(integers().all(), 0, -1, Integer.MIN_VALUE, Integer.MAX_VALUE));
  }

  private static Gen<List<Object>> int8s() {
    return listOf(Theories.withEdges(longs().all(), 0L, -1L, Long.MIN_VALUE, Long.MAX_VALUE));
  }

  private static Gen<List<Object>> oids() {
    return listOf(
        Theories.withEdges(
            longs().between(0, 0xFFFFFFFFL), 0L, 0x7FFFFFFFL, 0x80000000L, 0xFFFFFFFFL));
  }

  private static Gen<List<Object>> float4s() {
    return listOf(
        Generate.oneOf(
            integers().all().map(Float::intBitsToFloat),
            integers().between(-100_000_000, 100_000_000).map(i -> i / 100f),
            constants(Float.NaN, -0.0f, Float.MIN_VALUE, Float.MAX_VALUE)));
  }

  private static Gen<List<Object>> float8s() {
    return listOf(
        Generate.oneOf(
            longs().all().map(Double::longBitsToDouble),
            longs().between(-100_000_000_000L, 100_000_000_000L).map(l -> l / 100d),
            constants(Double.NaN, -0.0d, Double.MIN_VALUE, Double.MAX_VALUE, 1e23)));
  }

  private static Gen<List<Object>> numerics() {
    Gen<PgNumeric> finite =
        Theories.strings("0123456789", 1, 40)
            .zip(
                integers().between(0, 30),
                booleans().all(),
                (digits, scale, negative) ->
                    PgNumeric.of(
                        new BigDecimal(new BigInteger((negative ? "-" : "") + digits), scale)));
    Gen<PgNumeric> huge =
        Theories.strings("0123456789", 900, 1000)
            .map(d -> PgNumeric.of(new BigDecimal(new BigInteger(d), 3)));
    return listOf(
        Generate.frequency(
            Pair.of(20, finite),
            Pair.of(1, huge),
            Pair.of(
                2,
                constants(
                    PgNumeric.NAN, PgNumeric.POSITIVE_INFINITY, PgNumeric.NEGATIVE_INFINITY))));
  }

  private static Gen<List<Object>> texts() {
    // every code point but the surrogates, which no UTF-8 text can hold
    Gen<Integer> codePoint =
        integers().between(1, 0x10FFFF - 0x800).map(cp -> cp < 0xD800 ? cp : cp + 0x800);
    Gen<String> unicode =
        lists()
            .of(codePoint)
            .ofSizeBetween(0, 12)
            .map(
                cps -> {
                  StringBuilder sb = new StringBuilder();
                  cps.forEach(sb::appendCodePoint);
                  return sb.toString();
                });
    Gen<String> tricky = Theories.strings("\\\"{},; \t\n\rNUL()[]x", 0, 8);
    return listOf(Generate.oneOf(unicode, tricky, constants("NULL", "null", "")));
  }

  private static Gen<List<Object>> byteas() {
    return listOf(Theories.bytes(40));
  }

  private static final long MIN_DAY = LocalDate.of(-4713, 11, 24).toEpochDay();
  private static final long MAX_DAY = LocalDate.of(5874897, 12, 31).toEpochDay();

  private static Gen<List<Object>> dates() {
    return listOf(
        Generate.oneOf(
            longs().between(MIN_DAY, MAX_DAY).map(LocalDate::ofEpochDay),
            longs().between(-800_000, 3_000_000).map(LocalDate::ofEpochDay),
            constants(LocalDate.MAX, LocalDate.MIN, LocalDate.of(0, 1, 1))));
  }

  private static final long DAY_MICROS = 86_400_000_000L;

  private static Gen<LocalTime> times() {
    return longs()
        .between(0, DAY_MICROS)
        .map(m -> m == DAY_MICROS ? LocalTime.MAX : LocalTime.ofNanoOfDay(m * 1000));
  }

  private static Gen<List<Object>> localTimes() {
    return listOf(Generate.oneOf(times(), constants(LocalTime.MAX, LocalTime.MIDNIGHT)));
  }

  private static Gen<List<Object>> offsetTimes() {
    Gen<ZoneOffset> offsets =
        Generate.oneOf(
            integers().between(-57_599, 57_599).map(ZoneOffset::ofTotalSeconds),
            integers().between(-15, 15).map(ZoneOffset::ofHours));
    return listOf(times().zip(offsets, OffsetTime::of));
  }

  private static final long MIN_SECOND =
      LocalDateTime.of(-4713, 11, 24, 0, 0).toEpochSecond(ZoneOffset.UTC);
  private static final long MAX_SECOND =
      LocalDateTime.of(294276, 12, 31, 23, 59, 59).toEpochSecond(ZoneOffset.UTC);

  private static Gen<Instant> instants() {
    Gen<Long> wide = longs().between(MIN_SECOND, MAX_SECOND);
    Gen<Long> near = longs().between(-70_000_000_000L, 10_000_000_000L);
    return Generate.oneOf(wide, near)
        .zip(integers().between(0, 999_999), (s, us) -> Instant.ofEpochSecond(s, us * 1000L));
  }

  private static Gen<List<Object>> timestamps() {
    return listOf(
        Generate.oneOf(
            instants()
                .map(
                    i ->
                        LocalDateTime.ofEpochSecond(
                            i.getEpochSecond(), i.getNano(), ZoneOffset.UTC)),
            constants(LocalDateTime.MAX, LocalDateTime.MIN)));
  }

  private static Gen<List<Object>> instantLists() {
    return listOf(Generate.oneOf(instants(), constants(Instant.MAX, Instant.MIN)));
  }

  private static Gen<List<Object>> intervals() {
    // PostgreSQL 14 handles at most 2147483647 hours in an interval's text form (a 32-bit hour
    // field); 15 handles every value of the 64-bit time field
    long maxMicros =
        serverMajor >= 15 ? Long.MAX_VALUE : Integer.MAX_VALUE * 3_600_000_000L + 3_599_999_999L;
    Gen<PgInterval> any =
        integers()
            .all()
            .zip(integers().all(), longs().between(-maxMicros, maxMicros), PgInterval::new)
            .assuming(PgInterval::isFinite);
    Gen<PgInterval> small =
        integers()
            .between(-50, 50)
            .zip(
                integers().between(-50, 50),
                longs().between(-200_000_000_000L, 200_000_000_000L),
                PgInterval::new);
    Gen<PgInterval> special =
        serverMajor >= 17
            ? constants(PgInterval.INFINITY, PgInterval.NEGATIVE_INFINITY)
            : constants(new PgInterval(0, 0, 0));
    return listOf(Generate.oneOf(any, small, special));
  }

  private static Gen<List<Object>> uuids() {
    return listOf(longs().all().zip(longs().all(), UUID::new));
  }

  // ------------------------------------------------------------------ properties

  @Test
  void bool() {
    property("bool", 40, bools());
  }

  @Test
  void int2() {
    property("int2", 40, int2s());
  }

  @Test
  void int4() {
    property("int4", 40, int4s());
  }

  @Test
  void int8() {
    property("int8", 40, int8s());
  }

  @Test
  void oid() {
    property("oid", 40, oids());
  }

  @Test
  void float4() {
    property("float4", 60, float4s());
  }

  @Test
  void float8() {
    property("float8", 60, float8s());
  }

  @Test
  void numeric() {
    property("numeric", 40, numerics());
  }

  @Test
  void text() {
    property("text", 40, texts());
  }

  @Test
  void bytea() {
    property("bytea", 40, byteas());
  }

  @Test
  void date() {
    property("date", 40, dates());
  }

  @Test
  void time() {
    property("time", 40, localTimes());
  }

  @Test
  void timetz() {
    property("timetz", 40, offsetTimes());
  }

  @Test
  void timestamp() {
    property("timestamp", 40, timestamps());
  }

  @Test
  void timestamptz() {
    property("timestamptz", 40, instantLists());
  }

  @Test
  void interval() {
    property("interval", 40, intervals());
  }

  @Test
  void uuid() {
    property("uuid", 40, uuids());
  }
}
