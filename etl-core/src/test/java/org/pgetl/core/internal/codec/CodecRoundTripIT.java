package org.pgetl.core.internal.codec;

import static org.assertj.core.api.Assertions.assertThat;

import java.math.BigDecimal;
import java.math.BigInteger;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.sql.Types;
import java.time.Instant;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.time.LocalTime;
import java.time.OffsetTime;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.lifecycle.AfterContainer;
import net.jqwik.api.lifecycle.BeforeContainer;
import net.jqwik.api.lifecycle.BeforeProperty;
import org.pgetl.model.PgArray;
import org.pgetl.model.PgInterval;
import org.pgetl.model.PgNumeric;
import org.pgetl.model.PgText;

/**
 * Random values of every scalar type, alone and in one- and two-dimensional arrays (with NULLs and
 * random lower bounds), written to the server as {@code PgText.format(v)} cast with {@code
 * ?::type}, must come back unchanged through COPY text and COPY binary.
 *
 * <p>Each property has a fixed number of tries and a time budget after which the remaining tries do
 * nothing (jqwik has no timeout of its own); jqwik prints every property's seed.
 */
class CodecRoundTripIT {
  private static final long BUDGET_NANOS = 5_000_000_000L;
  private static Connection conn;
  private static int serverMajor;
  private final TypeRegistry registry = new TypeRegistry();
  private long deadline;

  @BeforeContainer
  static void connect() throws SQLException {
    conn = CodecTestDatabase.connect();
    serverMajor = conn.getMetaData().getDatabaseMajorVersion();
  }

  @AfterContainer
  static void disconnect() throws SQLException {
    if (conn != null) {
      conn.close();
    }
  }

  @BeforeProperty
  void startClock() {
    deadline = System.nanoTime() + BUDGET_NANOS;
  }

  /** Writes the values (and two arrays of them) to a table and reads them back both ways. */
  private void roundTrip(String sqlType, List<Object> values, int lb1, int lb2)
      throws SQLException {
    if (System.nanoTime() - deadline > 0) {
      return; // budget spent: the remaining tries do nothing
    }
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

  private static <T> Arbitrary<List<Object>> listOf(Arbitrary<T> element) {
    return element.map(e -> (Object) e).injectNull(0.1).list().ofMaxSize(24);
  }

  @Provide
  Arbitrary<Integer> bound() {
    return Arbitraries.integers().between(-5, 5);
  }

  @Provide
  Arbitrary<List<Object>> bools() {
    return listOf(Arbitraries.of(true, false));
  }

  @Provide
  Arbitrary<List<Object>> int2s() {
    return listOf(Arbitraries.shorts());
  }

  @Provide
  Arbitrary<List<Object>> int4s() {
    return listOf(Arbitraries.integers());
  }

  @Provide
  Arbitrary<List<Object>> int8s() {
    return listOf(Arbitraries.longs());
  }

  @Provide
  Arbitrary<List<Object>> oids() {
    return listOf(Arbitraries.longs().between(0, 0xFFFFFFFFL));
  }

  @Provide
  Arbitrary<List<Object>> float4s() {
    return listOf(
        Arbitraries.oneOf(
            Arbitraries.integers().map(Float::intBitsToFloat),
            Arbitraries.floats(),
            Arbitraries.of(Float.NaN, -0.0f, Float.MIN_VALUE, Float.MAX_VALUE)));
  }

  @Provide
  Arbitrary<List<Object>> float8s() {
    return listOf(
        Arbitraries.oneOf(
            Arbitraries.longs().map(Double::longBitsToDouble),
            Arbitraries.doubles(),
            Arbitraries.of(Double.NaN, -0.0d, Double.MIN_VALUE, Double.MAX_VALUE, 1e23)));
  }

  @Provide
  Arbitrary<List<Object>> numerics() {
    Arbitrary<PgNumeric> finite =
        Combinators.combine(
                Arbitraries.strings().numeric().ofMinLength(1).ofMaxLength(40),
                Arbitraries.integers().between(0, 30),
                Arbitraries.of(true, false))
            .as(
                (digits, scale, negative) ->
                    PgNumeric.of(
                        new BigDecimal(new BigInteger((negative ? "-" : "") + digits), scale)));
    Arbitrary<PgNumeric> huge =
        Arbitraries.strings()
            .numeric()
            .ofMinLength(900)
            .ofMaxLength(1000)
            .map(d -> PgNumeric.of(new BigDecimal(new BigInteger(d), 3)));
    return listOf(
        Arbitraries.frequencyOf(
            net.jqwik.api.Tuple.of(20, finite),
            net.jqwik.api.Tuple.of(1, huge),
            net.jqwik.api.Tuple.of(
                2,
                Arbitraries.of(
                    PgNumeric.NAN, PgNumeric.POSITIVE_INFINITY, PgNumeric.NEGATIVE_INFINITY))));
  }

  @Provide
  Arbitrary<List<Object>> texts() {
    Arbitrary<String> unicode =
        Arbitraries.integers()
            .between(1, 0x10FFFF)
            .filter(cp -> cp < 0xD800 || cp > 0xDFFF)
            .list()
            .ofMaxSize(12)
            .map(
                cps -> {
                  StringBuilder sb = new StringBuilder();
                  cps.forEach(sb::appendCodePoint);
                  return sb.toString();
                });
    Arbitrary<String> tricky =
        Arbitraries.strings().withChars("\\\"{},; \t\n\rNUL()[]x").ofMaxLength(8);
    return listOf(Arbitraries.oneOf(unicode, tricky, Arbitraries.of("NULL", "null", "")));
  }

  @Provide
  Arbitrary<List<Object>> byteas() {
    return listOf(Arbitraries.bytes().array(byte[].class).ofMaxSize(40));
  }

  private static final long MIN_DAY = LocalDate.of(-4713, 11, 24).toEpochDay();
  private static final long MAX_DAY = LocalDate.of(5874897, 12, 31).toEpochDay();

  @Provide
  Arbitrary<List<Object>> dates() {
    return listOf(
        Arbitraries.oneOf(
            Arbitraries.longs().between(MIN_DAY, MAX_DAY).map(LocalDate::ofEpochDay),
            Arbitraries.longs().between(-800_000, 3_000_000).map(LocalDate::ofEpochDay),
            Arbitraries.of(LocalDate.MAX, LocalDate.MIN, LocalDate.of(0, 1, 1))));
  }

  private static final long DAY_MICROS = 86_400_000_000L;

  private static Arbitrary<LocalTime> times() {
    return Arbitraries.longs()
        .between(0, DAY_MICROS)
        .map(m -> m == DAY_MICROS ? LocalTime.MAX : LocalTime.ofNanoOfDay(m * 1000));
  }

  @Provide
  Arbitrary<List<Object>> localTimes() {
    return listOf(Arbitraries.oneOf(times(), Arbitraries.of(LocalTime.MAX, LocalTime.MIDNIGHT)));
  }

  @Provide
  Arbitrary<List<Object>> offsetTimes() {
    Arbitrary<ZoneOffset> offsets =
        Arbitraries.oneOf(
            Arbitraries.integers().between(-57_599, 57_599).map(ZoneOffset::ofTotalSeconds),
            Arbitraries.integers().between(-15, 15).map(h -> ZoneOffset.ofHours(h)));
    return listOf(Combinators.combine(times(), offsets).as(OffsetTime::of));
  }

  private static final long MIN_SECOND =
      LocalDateTime.of(-4713, 11, 24, 0, 0).toEpochSecond(ZoneOffset.UTC);
  private static final long MAX_SECOND =
      LocalDateTime.of(294276, 12, 31, 23, 59, 59).toEpochSecond(ZoneOffset.UTC);

  private static Arbitrary<Instant> instants() {
    Arbitrary<Long> wide = Arbitraries.longs().between(MIN_SECOND, MAX_SECOND);
    Arbitrary<Long> near = Arbitraries.longs().between(-70_000_000_000L, 10_000_000_000L);
    return Combinators.combine(
            Arbitraries.oneOf(wide, near), Arbitraries.integers().between(0, 999_999))
        .as((s, us) -> Instant.ofEpochSecond(s, us * 1000L));
  }

  @Provide
  Arbitrary<List<Object>> timestamps() {
    return listOf(
        Arbitraries.oneOf(
            instants()
                .map(
                    i ->
                        LocalDateTime.ofEpochSecond(
                            i.getEpochSecond(), i.getNano(), ZoneOffset.UTC)),
            Arbitraries.of(LocalDateTime.MAX, LocalDateTime.MIN)));
  }

  @Provide
  Arbitrary<List<Object>> instantLists() {
    return listOf(Arbitraries.oneOf(instants(), Arbitraries.of(Instant.MAX, Instant.MIN)));
  }

  @Provide
  Arbitrary<List<Object>> intervals() {
    // PostgreSQL 14 handles at most 2147483647 hours in an interval's text form (a 32-bit hour
    // field); 15 handles every value of the 64-bit time field
    long maxMicros =
        serverMajor >= 15 ? Long.MAX_VALUE : Integer.MAX_VALUE * 3_600_000_000L + 3_599_999_999L;
    Arbitrary<PgInterval> any =
        Combinators.combine(
                Arbitraries.integers(),
                Arbitraries.integers(),
                Arbitraries.longs().between(-maxMicros, maxMicros))
            .as(PgInterval::new)
            .filter(PgInterval::isFinite);
    Arbitrary<PgInterval> small =
        Combinators.combine(
                Arbitraries.integers().between(-50, 50),
                Arbitraries.integers().between(-50, 50),
                Arbitraries.longs().between(-200_000_000_000L, 200_000_000_000L))
            .as(PgInterval::new);
    Arbitrary<PgInterval> special =
        serverMajor >= 17
            ? Arbitraries.of(PgInterval.INFINITY, PgInterval.NEGATIVE_INFINITY)
            : Arbitraries.of(new PgInterval(0, 0, 0));
    return listOf(Arbitraries.oneOf(any, small, special));
  }

  @Provide
  Arbitrary<List<Object>> uuids() {
    return listOf(Combinators.combine(Arbitraries.longs(), Arbitraries.longs()).as(UUID::new));
  }

  // ------------------------------------------------------------------ properties

  @Property(tries = 40)
  void bool(@ForAll("bools") List<Object> v, @ForAll("bound") int a, @ForAll("bound") int b)
      throws SQLException {
    roundTrip("bool", v, a, b);
  }

  @Property(tries = 40)
  void int2(@ForAll("int2s") List<Object> v, @ForAll("bound") int a, @ForAll("bound") int b)
      throws SQLException {
    roundTrip("int2", v, a, b);
  }

  @Property(tries = 40)
  void int4(@ForAll("int4s") List<Object> v, @ForAll("bound") int a, @ForAll("bound") int b)
      throws SQLException {
    roundTrip("int4", v, a, b);
  }

  @Property(tries = 40)
  void int8(@ForAll("int8s") List<Object> v, @ForAll("bound") int a, @ForAll("bound") int b)
      throws SQLException {
    roundTrip("int8", v, a, b);
  }

  @Property(tries = 40)
  void oid(@ForAll("oids") List<Object> v, @ForAll("bound") int a, @ForAll("bound") int b)
      throws SQLException {
    roundTrip("oid", v, a, b);
  }

  @Property(tries = 60)
  void float4(@ForAll("float4s") List<Object> v, @ForAll("bound") int a, @ForAll("bound") int b)
      throws SQLException {
    roundTrip("float4", v, a, b);
  }

  @Property(tries = 60)
  void float8(@ForAll("float8s") List<Object> v, @ForAll("bound") int a, @ForAll("bound") int b)
      throws SQLException {
    roundTrip("float8", v, a, b);
  }

  @Property(tries = 40)
  void numeric(@ForAll("numerics") List<Object> v, @ForAll("bound") int a, @ForAll("bound") int b)
      throws SQLException {
    roundTrip("numeric", v, a, b);
  }

  @Property(tries = 40)
  void text(@ForAll("texts") List<Object> v, @ForAll("bound") int a, @ForAll("bound") int b)
      throws SQLException {
    roundTrip("text", v, a, b);
  }

  @Property(tries = 40)
  void bytea(@ForAll("byteas") List<Object> v, @ForAll("bound") int a, @ForAll("bound") int b)
      throws SQLException {
    roundTrip("bytea", v, a, b);
  }

  @Property(tries = 40)
  void date(@ForAll("dates") List<Object> v, @ForAll("bound") int a, @ForAll("bound") int b)
      throws SQLException {
    roundTrip("date", v, a, b);
  }

  @Property(tries = 40)
  void time(@ForAll("localTimes") List<Object> v, @ForAll("bound") int a, @ForAll("bound") int b)
      throws SQLException {
    roundTrip("time", v, a, b);
  }

  @Property(tries = 40)
  void timetz(@ForAll("offsetTimes") List<Object> v, @ForAll("bound") int a, @ForAll("bound") int b)
      throws SQLException {
    roundTrip("timetz", v, a, b);
  }

  @Property(tries = 40)
  void timestamp(
      @ForAll("timestamps") List<Object> v, @ForAll("bound") int a, @ForAll("bound") int b)
      throws SQLException {
    roundTrip("timestamp", v, a, b);
  }

  @Property(tries = 40)
  void timestamptz(
      @ForAll("instantLists") List<Object> v, @ForAll("bound") int a, @ForAll("bound") int b)
      throws SQLException {
    roundTrip("timestamptz", v, a, b);
  }

  @Property(tries = 40)
  void interval(@ForAll("intervals") List<Object> v, @ForAll("bound") int a, @ForAll("bound") int b)
      throws SQLException {
    roundTrip("interval", v, a, b);
  }

  @Property(tries = 40)
  void uuid(@ForAll("uuids") List<Object> v, @ForAll("bound") int a, @ForAll("bound") int b)
      throws SQLException {
    roundTrip("uuid", v, a, b);
  }
}
