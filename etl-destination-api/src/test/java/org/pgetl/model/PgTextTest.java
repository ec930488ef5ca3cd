package org.pgetl.model;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.quicktheories.generators.SourceDSL.integers;
import static org.quicktheories.generators.SourceDSL.longs;

import java.math.BigDecimal;
import java.time.Duration;
import java.time.Instant;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.time.LocalTime;
import java.time.OffsetTime;
import java.time.ZoneOffset;
import java.util.Arrays;
import java.util.List;
import java.util.UUID;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.pgetl.testing.Theories;
import org.quicktheories.api.Pair;
import org.quicktheories.core.Gen;
import org.quicktheories.generators.Generate;

/** PostgreSQL's text forms of Java values (outputs checked against PostgreSQL 17). */
class PgTextTest {

  @ParameterizedTest
  @CsvSource({
    "0.1, 0.1",
    "1e15, 1e+15",
    "1e14, 100000000000000",
    "123456789012345678, 1.2345678901234568e+17",
    "0.0001, 0.0001",
    "0.00001, 1e-05",
    "5e-324, 5e-324",
    "1.7976931348623157e308, 1.7976931348623157e+308",
    "1.5e300, 1.5e+300",
    "1e22, 1e+22",
    "1e23, 9.999999999999999e+22",
    "-123.456, -123.456",
    "2.2250738585072014e-308, 2.2250738585072014e-308",
    "100, 100"
  })
  void doublesPrintShortestLikeFloat8Out(double value, String expected) {
    assertThat(PgText.format(value)).isEqualTo(expected);
  }

  @ParameterizedTest
  @CsvSource({
    "0.1, 0.1",
    "1e6, 1e+06",
    "1e5, 100000",
    "123456, 123456",
    "1234567, 1.234567e+06",
    "1.5e-5, 1.5e-05",
    "3.4028235e38, 3.4028235e+38",
    "1e-45, 1e-45"
  })
  void floatsPrintShortestLikeFloat4Out(float value, String expected) {
    assertThat(PgText.format(value)).isEqualTo(expected);
  }

  @Test
  void specialFloats() {
    assertThat(PgText.format(Double.NaN)).isEqualTo("NaN");
    assertThat(PgText.format(Double.NEGATIVE_INFINITY)).isEqualTo("-Infinity");
    assertThat(PgText.format(-0.0d)).isEqualTo("-0");
    assertThat(PgText.format(0.0f)).isEqualTo("0");
    assertThat(PgText.format(Float.POSITIVE_INFINITY)).isEqualTo("Infinity");
  }

  private static final Duration BUDGET = Duration.ofSeconds(5);

  /**
   * Short decimals such as {@code 0.1} or {@code 1234.5}, doubles of every bit pattern (NaN and the
   * infinities too) and the values at the edges of the shortest-form algorithm. One in four is a
   * bit pattern: their exponents are large, and the exact search for their digits is what costs
   * time.
   */
  private static Gen<Double> doubles() {
    Gen<Double> bits = longs().all().map(Double::longBitsToDouble);
    Gen<Double> decimals =
        longs()
            .between(-1_000_000_000_000L, 1_000_000_000_000L)
            .zip(integers().between(-20, 20), (unscaled, exp) -> unscaled * Math.pow(10, exp));
    return Theories.withEdges(
        Generate.frequency(Pair.of(3, decimals), Pair.of(1, bits)),
        0.0d,
        -0.0d,
        Double.MIN_VALUE,
        Double.MIN_NORMAL,
        Double.MAX_VALUE,
        -Double.MAX_VALUE,
        1e15,
        1e16,
        1e-4,
        1e-5,
        1e22,
        1e23,
        0.1,
        Double.NaN,
        Double.POSITIVE_INFINITY,
        Double.NEGATIVE_INFINITY);
  }

  /** The float counterpart of {@link #doubles()}. */
  private static Gen<Float> floats() {
    Gen<Float> bits = integers().all().map(Float::intBitsToFloat);
    Gen<Float> decimals =
        integers()
            .between(-10_000_000, 10_000_000)
            .zip(
                integers().between(-10, 10),
                (unscaled, exp) -> (float) (unscaled * Math.pow(10, exp)));
    return Theories.withEdges(
        Generate.oneOf(bits, decimals),
        0.0f,
        -0.0f,
        Float.MIN_VALUE,
        Float.MIN_NORMAL,
        Float.MAX_VALUE,
        -Float.MAX_VALUE,
        1e6f,
        1e7f,
        1e-4f,
        1e-5f,
        0.1f,
        Float.NaN,
        Float.POSITIVE_INFINITY,
        Float.NEGATIVE_INFINITY);
  }

  @Test
  void everyDoubleReadsBackAndIsNoLongerThanJavas() {
    Theories.qt(2000, BUDGET)
        .forAll(doubles())
        .checkAssert(
            d -> {
              String s = PgText.format(d);
              if (Double.isFinite(d)) {
                assertThat(Double.parseDouble(s)).isEqualTo(d);
                assertThat(digits(s)).isLessThanOrEqualTo(digits(Double.toString(d)));
              }
            });
  }

  @Test
  void everyFloatReadsBackAndIsNoLongerThanJavas() {
    Theories.qt(2000, BUDGET)
        .forAll(floats())
        .checkAssert(
            f -> {
              String s = PgText.format(f);
              if (Float.isFinite(f)) {
                assertThat(Float.parseFloat(s)).isEqualTo(f);
                assertThat(digits(s)).isLessThanOrEqualTo(digits(Float.toString(f)));
              }
            });
  }

  private static int digits(String s) {
    String mantissa = s.split("[eE]")[0].replace("-", "").replace(".", "");
    mantissa = mantissa.replaceFirst("^0+", "").replaceFirst("0+$", "");
    return Math.max(1, mantissa.length());
  }

  @Test
  void scalars() {
    assertThat(PgText.format(null)).isNull();
    assertThat(PgText.format(true)).isEqualTo("t");
    assertThat(PgText.format(false)).isEqualTo("f");
    assertThat(PgText.format((short) -32768)).isEqualTo("-32768");
    assertThat(PgText.format(Long.MIN_VALUE)).isEqualTo("-9223372036854775808");
    assertThat(PgText.format(PgNumeric.of(new BigDecimal("1.50")))).isEqualTo("1.50");
    assertThat(PgText.format(PgNumeric.NEGATIVE_INFINITY)).isEqualTo("-Infinity");
    assertThat(PgText.format(new BigDecimal("1E+3"))).isEqualTo("1000");
    assertThat(PgText.format(new byte[] {0, (byte) 0xff, 0x5c})).isEqualTo("\\x00ff5c");
    assertThat(PgText.format(new byte[0])).isEqualTo("\\x");
    assertThat(PgText.format("é\t")).isEqualTo("é\t");
    UUID u = UUID.fromString("A0EEBC99-9C0B-4EF8-BB6D-6BB9BD380A11");
    assertThat(PgText.format(u)).isEqualTo("a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11");
  }

  @Test
  void datesAndTimes() {
    assertThat(PgText.format(LocalDate.MAX)).isEqualTo("infinity");
    assertThat(PgText.format(LocalDate.MIN)).isEqualTo("-infinity");
    assertThat(PgText.format(LocalDate.of(0, 1, 1))).isEqualTo("0001-01-01 BC");
    assertThat(PgText.format(LocalDate.of(-4713, 11, 24))).isEqualTo("4714-11-24 BC");
    assertThat(PgText.format(LocalDate.of(10000, 1, 1))).isEqualTo("10000-01-01");
    assertThat(PgText.format(LocalDate.of(33, 2, 3))).isEqualTo("0033-02-03");
    assertThat(PgText.format(LocalTime.MAX)).isEqualTo("24:00:00");
    assertThat(PgText.format(LocalTime.of(1, 2, 3, 450_000_000))).isEqualTo("01:02:03.45");
    assertThat(PgText.format(LocalTime.of(1, 2, 3, 1000))).isEqualTo("01:02:03.000001");
    assertThat(PgText.format(OffsetTime.of(LocalTime.MAX, ZoneOffset.ofHours(0))))
        .isEqualTo("24:00:00+00");
    assertThat(
            PgText.format(OffsetTime.of(13, 0, 0, 0, ZoneOffset.ofHoursMinutesSeconds(5, 30, 15))))
        .isEqualTo("13:00:00+05:30:15");
    assertThat(PgText.format(OffsetTime.of(13, 0, 0, 0, ZoneOffset.ofHoursMinutes(-3, -30))))
        .isEqualTo("13:00:00-03:30");
    assertThat(PgText.format(LocalDateTime.of(0, 1, 1, 12, 0, 0, 500_000_000)))
        .isEqualTo("0001-01-01 12:00:00.5 BC");
    assertThat(PgText.format(LocalDateTime.MAX)).isEqualTo("infinity");
    assertThat(PgText.format(LocalDateTime.MIN)).isEqualTo("-infinity");
    assertThat(PgText.format(Instant.parse("2020-06-01T06:30:00.25Z")))
        .isEqualTo("2020-06-01 06:30:00.25+00");
    assertThat(PgText.format(LocalDateTime.of(0, 1, 1, 6, 0).toInstant(ZoneOffset.UTC)))
        .isEqualTo("0001-01-01 06:00:00+00 BC");
    assertThat(PgText.format(Instant.MAX)).isEqualTo("infinity");
    assertThat(PgText.format(Instant.MIN)).isEqualTo("-infinity");
  }

  @Test
  void intervals() {
    assertThat(PgText.format(new PgInterval(14, 3, 14_706_789_000L)))
        .isEqualTo("1 year 2 mons 3 days 04:05:06.789");
    assertThat(PgText.format(new PgInterval(0, -1, 7_200_000_000L))).isEqualTo("-1 days +02:00:00");
    assertThat(PgText.format(new PgInterval(-1, 1, 0))).isEqualTo("-1 mons +1 day");
    assertThat(PgText.format(new PgInterval(0, 0, 0))).isEqualTo("00:00:00");
    assertThat(PgText.format(new PgInterval(0, 0, Long.MIN_VALUE)))
        .isEqualTo("-2562047788:00:54.775808");
    assertThat(PgText.format(PgInterval.INFINITY)).isEqualTo("infinity");
    assertThat(PgText.format(PgInterval.NEGATIVE_INFINITY)).isEqualTo("-infinity");
    assertThat(PgInterval.INFINITY.isFinite()).isFalse();
    assertThat(new PgInterval(1, 2, 3).isFinite()).isTrue();
  }

  @Test
  void arraysQuoteLikeArrayOut() {
    PgArray texts =
        PgArray.ofList(
            25, Arrays.asList("a b", "", "NULL", null, "q\"x", "b\\s", "é", "nUll", "{"));
    assertThat(PgText.format(texts))
        .isEqualTo("{\"a b\",\"\",\"NULL\",NULL,\"q\\\"x\",\"b\\\\s\",é,\"nUll\",\"{\"}");
    PgArray bounded = new PgArray(23, List.of(2, 2), List.of(0, -2), Arrays.asList(1, null, 3, 4));
    assertThat(PgText.format(bounded)).isEqualTo("[0:1][-2:-1]={{1,NULL},{3,4}}");
    assertThat(PgText.format(PgArray.ofList(23, List.of()))).isEqualTo("{}");
    PgArray boxes = PgArray.ofList(603, List.of("(3,4),(1,2)", "(7,8),(5,6)"));
    assertThat(PgText.format(boxes)).isEqualTo("{(3,4),(1,2);(7,8),(5,6)}");
    assertThat(PgText.formatArray(PgArray.ofList(99999, List.of("a;b", "c")), ';'))
        .isEqualTo("{\"a;b\";c}");
    PgArray dates = PgArray.ofList(1082, List.of(LocalDate.MAX, LocalDate.of(0, 1, 1)));
    assertThat(PgText.format(dates)).isEqualTo("{infinity,\"0001-01-01 BC\"}");
    PgArray bytes = PgArray.ofList(17, List.of(new byte[] {1}));
    assertThat(PgText.format(bytes)).isEqualTo("{\"\\\\x01\"}");
  }

  @Test
  void unknownClassesAreRefused() {
    assertThatThrownBy(() -> PgText.format(new Object()))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("java.lang.Object");
  }
}
