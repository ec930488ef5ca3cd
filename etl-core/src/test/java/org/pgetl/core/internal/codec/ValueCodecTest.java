package org.pgetl.core.internal.codec;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.math.BigDecimal;
import java.time.Instant;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.time.LocalTime;
import java.time.OffsetTime;
import java.time.ZoneOffset;
import java.util.HexFormat;
import java.util.List;
import java.util.UUID;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.pgetl.error.ErrorKind;
import org.pgetl.error.EtlException;
import org.pgetl.model.PgArray;
import org.pgetl.model.PgInterval;
import org.pgetl.model.PgNumeric;

/** The Java value of edge values of each type, from both forms, and how bad input fails. */
class ValueCodecTest {
  private final TypeRegistry registry = new TypeRegistry();

  private Object text(int oid, String text) {
    byte[] b = Values.utf8(text);
    return registry.codec(oid).decodeText(b, 0, b.length);
  }

  private Object bin(int oid, String hex) {
    byte[] b = HexFormat.of().parseHex(hex);
    return registry.codec(oid).decodeBinary(b, 0, b.length);
  }

  private static void assertInvalid(Runnable decode, String typeName) {
    assertThatThrownBy(decode::run)
        .isInstanceOfSatisfying(
            EtlException.class,
            e -> {
              assertThat(e.kind()).isIn(ErrorKind.INVALID_DATA, ErrorKind.CONVERSION_ERROR);
              assertThat(e.description()).contains(typeName);
            });
  }

  @Test
  void integersKeepTheirWidth() {
    assertThat(text(21, "-32768")).isEqualTo((short) -32768);
    assertThat(text(23, "2147483647")).isEqualTo(Integer.MAX_VALUE);
    assertThat(text(20, "-9223372036854775808")).isEqualTo(Long.MIN_VALUE);
    assertThat(bin(20, "8000000000000000")).isEqualTo(Long.MIN_VALUE);
    assertThat(text(26, "4294967295")).isEqualTo(4294967295L);
    assertThat(bin(26, "ffffffff")).isEqualTo(4294967295L);
    assertThat(bin(28, "00000003")).isEqualTo(3L);
  }

  @ParameterizedTest
  @CsvSource({
    "21, 32768",
    "21, -32769",
    "23, 2147483648",
    "20, 9223372036854775808",
    "20, -9223372036854775809",
    "20, 12a",
    "20, ''",
    "20, -",
    "20, ' 1'",
    "26, -1",
    "26, 4294967296",
    "5069, 18446744073709551615"
  })
  void integersOutOfRangeOrMalformedAreRejected(int oid, String value) {
    assertInvalid(() -> text(oid, value), registry.typeInfo(oid).name());
  }

  @Test
  void xid8PastTheRangeOfLongIsAConversionError() {
    assertThatThrownBy(() -> bin(5069, "ffffffffffffffff"))
        .isInstanceOfSatisfying(
            EtlException.class, e -> assertThat(e.kind()).isEqualTo(ErrorKind.CONVERSION_ERROR));
  }

  @Test
  void floatsKeepNanInfinitiesAndNegativeZero() {
    assertThat(text(701, "NaN")).isEqualTo(Double.NaN);
    assertThat(text(701, "-Infinity")).isEqualTo(Double.NEGATIVE_INFINITY);
    assertThat(text(701, "-0")).isEqualTo(-0.0d);
    assertThat(text(701, "9.999999999999999e+22")).isEqualTo(1e23);
    assertThat(bin(701, "7ff8000000000000")).isEqualTo(Double.NaN);
    assertThat(text(700, "3.4028235e+38")).isEqualTo(Float.MAX_VALUE);
    assertThat(bin(700, "80000000")).isEqualTo(-0.0f);
    assertInvalid(() -> text(701, "0x1p3"), "float8");
    assertInvalid(() -> text(701, "1d"), "float8");
    assertInvalid(() -> text(701, "infinity"), "float8");
  }

  @Test
  void numericKeepsScaleAndSpecialValues() {
    assertThat(text(1700, "1.50")).isEqualTo(PgNumeric.of(new BigDecimal("1.50")));
    assertThat(bin(1700, "000200000000000200011388"))
        .isEqualTo(PgNumeric.of(new BigDecimal("1.50")));
    assertThat(text(1700, "0.00")).isEqualTo(PgNumeric.of(new BigDecimal("0.00")));
    assertThat(bin(1700, "0000000000000002")).isEqualTo(PgNumeric.of(new BigDecimal("0.00")));
    assertThat(text(1700, "NaN")).isEqualTo(PgNumeric.NAN);
    assertThat(bin(1700, "00000000c0000000")).isEqualTo(PgNumeric.NAN);
    assertThat(bin(1700, "00000000d0000000")).isEqualTo(PgNumeric.POSITIVE_INFINITY);
    assertThat(bin(1700, "00000000f0000000")).isEqualTo(PgNumeric.NEGATIVE_INFINITY);
    // 10^20: one digit of weight 5, no display scale
    assertThat(bin(1700, "0001000500000000000a"))
        .isEqualTo(PgNumeric.of(new BigDecimal("1000000000000000000000")));
    String big = "9".repeat(1000);
    assertThat(text(1700, big)).isEqualTo(PgNumeric.of(new BigDecimal(big)));
    assertThat(text(1700, "-" + big + ".5"))
        .isEqualTo(PgNumeric.of(new BigDecimal("-" + big + ".5")));
  }

  @Test
  void numericDigitsHiddenByTheDisplayScaleAreCut() {
    // digits 1.2345 with dscale 2: numeric_recv truncates to 1.23
    assertThat(bin(1700, "00020000000000020001091d"))
        .isEqualTo(PgNumeric.of(new BigDecimal("1.23")));
  }

  @ParameterizedTest
  @CsvSource({"1.2.3", "1.", "-", "''", "1e5", "+-1", "Inf"})
  void malformedNumericTextIsRejected(String value) {
    assertInvalid(() -> text(1700, value), "numeric");
  }

  @Test
  void malformedNumericBinaryIsRejected() {
    assertInvalid(() -> bin(1700, "0001000000000000"), "numeric"); // digit missing
    assertInvalid(() -> bin(1700, "000100000000000027100000"), "numeric"); // a spare byte pair
    assertInvalid(() -> bin(1700, "0001000000000000ffff"), "numeric"); // digit -1
    assertInvalid(() -> bin(1700, "0001000000000000" + "2710"), "numeric"); // digit 10000
    assertInvalid(() -> bin(1700, "0000000012340000"), "numeric"); // bad sign
    assertInvalid(() -> bin(1700, "00010000c0000000"), "numeric"); // NaN with a digit
  }

  @Test
  void datesMapInfinityToMaxAndMinAndBcToProlepticYears() {
    assertThat(text(1082, "infinity")).isEqualTo(LocalDate.MAX);
    assertThat(text(1082, "-infinity")).isEqualTo(LocalDate.MIN);
    assertThat(bin(1082, "7fffffff")).isEqualTo(LocalDate.MAX);
    assertThat(bin(1082, "80000000")).isEqualTo(LocalDate.MIN);
    assertThat(text(1082, "0001-01-01 BC")).isEqualTo(LocalDate.of(0, 1, 1));
    assertThat(text(1082, "4714-11-24 BC")).isEqualTo(LocalDate.of(-4713, 11, 24));
    assertThat(text(1082, "5874897-12-31")).isEqualTo(LocalDate.of(5874897, 12, 31));
    assertThat(bin(1082, "00000000")).isEqualTo(LocalDate.of(2000, 1, 1));
    assertThat(bin(1082, "ffffffff")).isEqualTo(LocalDate.of(1999, 12, 31));
    assertInvalid(() -> text(1082, "2021-02-29"), "date");
    assertInvalid(() -> text(1082, "20-01-01"), "date");
    assertInvalid(() -> text(1082, "2020-01-01 AD"), "date");
  }

  @Test
  void timeOf24HoursIsLocalTimeMax() {
    assertThat(text(1083, "24:00:00")).isEqualTo(LocalTime.MAX);
    assertThat(bin(1083, "000000141dd76000")).isEqualTo(LocalTime.MAX);
    assertThat(text(1083, "23:59:59.999999")).isEqualTo(LocalTime.of(23, 59, 59, 999_999_000));
    assertThat(text(1083, "12:00:00.5")).isEqualTo(LocalTime.of(12, 0, 0, 500_000_000));
    assertInvalid(() -> text(1083, "24:00:01"), "time");
    assertInvalid(() -> text(1083, "12:00:00.1234567"), "time");
    assertInvalid(() -> bin(1083, "000000141dd76001"), "time");
  }

  @Test
  void timetzKeepsOffsetsWithSeconds() {
    assertThat(text(1266, "13:00:00+05:30:15"))
        .isEqualTo(OffsetTime.of(13, 0, 0, 0, ZoneOffset.ofHoursMinutesSeconds(5, 30, 15)));
    assertThat(text(1266, "24:00:00-15:59:59"))
        .isEqualTo(OffsetTime.of(LocalTime.MAX, ZoneOffset.ofHoursMinutesSeconds(-15, -59, -59)));
    // 10:00:00, 3 hours west of UTC (PostgreSQL stores seconds west: +10800)
    assertThat(bin(1266, "0000000861c4680000002a30"))
        .isEqualTo(OffsetTime.of(10, 0, 0, 0, ZoneOffset.ofHours(-3)));
  }

  @Test
  void timestampsMapInfinitiesBcAndLargeYears() {
    assertThat(text(1114, "infinity")).isEqualTo(LocalDateTime.MAX);
    assertThat(bin(1114, "8000000000000000")).isEqualTo(LocalDateTime.MIN);
    assertThat(text(1114, "0001-01-01 00:00:00 BC")).isEqualTo(LocalDateTime.of(0, 1, 1, 0, 0));
    assertThat(text(1114, "294276-12-31 23:59:59.999999"))
        .isEqualTo(LocalDateTime.of(294276, 12, 31, 23, 59, 59, 999_999_000));
    assertThat(text(1184, "infinity")).isEqualTo(Instant.MAX);
    assertThat(bin(1184, "8000000000000000")).isEqualTo(Instant.MIN);
    assertThat(text(1184, "2020-06-01 12:00:00.25+05:30"))
        .isEqualTo(Instant.parse("2020-06-01T06:30:00.25Z"));
    assertThat(text(1184, "0001-01-01 06:29:45.5+00 BC"))
        .isEqualTo(LocalDateTime.of(0, 1, 1, 6, 29, 45, 500_000_000).toInstant(ZoneOffset.UTC));
    assertThat(bin(1184, "0000000000000001"))
        .isEqualTo(Instant.parse("2000-01-01T00:00:00.000001Z"));
    assertInvalid(() -> text(1184, "2020-01-01 00:00:00"), "timestamptz");
    assertInvalid(() -> text(1114, "2020-01-01 24:00:00"), "timestamp");
  }

  @Test
  void intervalsKeepMonthsDaysAndMicrosApart() {
    assertThat(text(1186, "1 year 2 mons 3 days 04:05:06.789"))
        .isEqualTo(new PgInterval(14, 3, 14_706_789_000L));
    assertThat(text(1186, "-1 days +02:00:00")).isEqualTo(new PgInterval(0, -1, 7_200_000_000L));
    assertThat(text(1186, "-178956970 years -8 mons -2147483647 days -2562047788:00:54.775807"))
        .isEqualTo(new PgInterval(Integer.MIN_VALUE, -Integer.MAX_VALUE, -Long.MAX_VALUE));
    assertThat(text(1186, "-2562047788:00:54.775808"))
        .isEqualTo(new PgInterval(0, 0, Long.MIN_VALUE));
    assertThat(text(1186, "infinity")).isEqualTo(PgInterval.INFINITY);
    assertThat(bin(1186, "7fffffffffffffff7fffffff7fffffff")).isEqualTo(PgInterval.INFINITY);
    assertThat(bin(1186, "00000000000000010000000200000003")).isEqualTo(new PgInterval(3, 2, 1));
    assertInvalid(() -> text(1186, "1 week"), "interval");
    assertInvalid(() -> text(1186, "2562047788:00:54.775808"), "interval");
    assertInvalid(() -> text(1186, ""), "interval");
  }

  @Test
  void byteaReadsHexAndEscapeFormats() {
    assertThat((byte[]) text(17, "\\x00ff")).containsExactly(0, 0xff);
    assertThat((byte[]) text(17, "\\x")).isEmpty();
    assertThat((byte[]) text(17, "a\\\\b\\001")).containsExactly('a', '\\', 'b', 1);
    assertThat((byte[]) bin(17, "00ff")).containsExactly(0, 0xff);
    assertInvalid(() -> text(17, "\\x0"), "bytea");
    assertInvalid(() -> text(17, "\\xzz"), "bytea");
    assertInvalid(() -> text(17, "a\\9"), "bytea");
  }

  @Test
  void charWithTheHighBitSetPrintsAsOctalFromBinary() {
    assertThat(bin(18, "c3")).isEqualTo("\\303");
    assertThat(bin(18, "00")).isEqualTo("");
    assertThat(bin(18, "61")).isEqualTo("a");
    assertThat(text(18, "\\303")).isEqualTo("\\303");
    // PostgreSQL 14 prints the raw byte: the same Java value
    byte[] raw = {(byte) 0xC3};
    assertThat(registry.codec(18).decodeText(raw, 0, 1)).isEqualTo("\\303");
  }

  @Test
  void textRejectsMalformedUtf8InsteadOfReplacingIt() {
    byte[] bad = {'a', (byte) 0xC3};
    assertInvalid(() -> registry.codec(25).decodeText(bad, 0, 2), "text");
    byte[] surrogate = {(byte) 0xED, (byte) 0xA0, (byte) 0x80};
    assertInvalid(() -> registry.codec(25).decodeBinary(surrogate, 0, 3), "text");
    byte[] replacement = Values.utf8("\uFFFD");
    assertThat(registry.codec(25).decodeText(replacement, 0, replacement.length))
        .isEqualTo("\uFFFD");
  }

  @Test
  void uuidAndJsonb() {
    UUID u = UUID.fromString("a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11");
    assertThat(text(2950, "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11")).isEqualTo(u);
    assertThat(bin(2950, "a0eebc999c0b4ef8bb6d6bb9bd380a11")).isEqualTo(u);
    assertInvalid(() -> text(2950, "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a1"), "uuid");
    assertInvalid(() -> text(2950, "a0eebc99+9c0b-4ef8-bb6d-6bb9bd380a11"), "uuid");
    assertThat(bin(3802, "017b7d")).isEqualTo("{}");
    assertInvalid(() -> bin(3802, "027b7d"), "jsonb");
  }

  @Test
  void arraysKeepBoundsNullsAndShape() {
    PgArray a = (PgArray) text(1007, "[0:1][-2:-1]={{1,NULL},{3,4}}");
    assertThat(a.elementTypeOid()).isEqualTo(23);
    assertThat(a.dimensions()).containsExactly(2, 2);
    assertThat(a.lowerBounds()).containsExactly(0, -2);
    assertThat(a.elements()).containsExactly(1, null, 3, 4);
    PgArray empty = (PgArray) text(1007, "{}");
    assertThat(empty.dimensions()).isEmpty();
    assertThat(empty.elements()).isEmpty();
    PgArray texts = (PgArray) text(1009, "{\"a \\\"b\\\\\",\"\",NULL,\"NULL\",nUlL,é}");
    assertThat(texts.elements()).containsExactly("a \"b\\", "", null, "NULL", null, "é");
    PgArray boxes = (PgArray) text(1020, "{(3,4),(1,2);(7,8),(5,6)}");
    assertThat(boxes.elements()).containsExactly("(3,4),(1,2)", "(7,8),(5,6)");
    // binary: 1 dimension of 2 elements from lower bound 0, element oid 23, the second NULL
    PgArray fromBinary =
        (PgArray) bin(1007, "00000001000000010000001700000002000000000000000400000007ffffffff");
    assertThat(fromBinary.lowerBounds()).containsExactly(0);
    assertThat(fromBinary.elements()).containsExactly(7, null);
  }

  @ParameterizedTest
  @CsvSource(
      delimiter = '|',
      value = {
        "{1,2",
        "{1,{2}}",
        "{{1},2}",
        "{{1,2},{3}}",
        "[1:3]={1,2}",
        "[1:2]{1,2}",
        "{1,,2}",
        "{1}x",
        "{\"1}",
        "{{{{{{{1}}}}}}}",
        "''"
      })
  void malformedArrayTextIsRejected(String value) {
    assertInvalid(() -> text(1007, value), "_int4");
  }

  @Test
  void malformedArrayBinaryIsRejected() {
    // element type text where int4 is expected
    assertInvalid(
        () -> bin(1007, "000000010000000000000019000000010000000100000001" + "61"), "_int4");
    // a billion elements announced in a few bytes
    assertInvalid(() -> bin(1007, "0000000100000000000000173b9aca0000000001"), "_int4");
    // NULL element while the has-nulls flag is clear
    assertInvalid(
        () -> bin(1007, "00000001000000000000001700000001" + "00000001ffffffff"), "_int4");
  }

  @Test
  void aTypeWithoutBinaryDecodingSaysSo() {
    assertThat(registry.canDecodeBinary(3614)).isFalse(); // tsvector
    assertThat(registry.canDecodeBinary(2205)).isFalse(); // regclass
    assertThat(registry.canDecodeBinary(3643)).isFalse(); // tsvector[]
    assertThat(registry.canDecodeBinary(1009)).isTrue(); // text[]
    assertThatThrownBy(() -> bin(3614, "00"))
        .isInstanceOfSatisfying(
            EtlException.class, e -> assertThat(e.detail()).contains("text form"));
  }

  @Test
  void unknownTypesDecodeTheirTextOnly() {
    int oid = 987_654;
    assertThat(registry.typeInfo(oid).kind()).isEqualTo(TypeKind.UNKNOWN);
    assertThat(registry.canDecodeBinary(oid)).isFalse();
    assertThat(text(oid, "anything (at all)")).isEqualTo("anything (at all)");
    assertThat(registry.canDecodeBinary(-5)).isFalse(); // an oid above 2^31
  }

  @Test
  void registeredCatalogTypesDecodeFromBinary() {
    TypeRegistry r = new TypeRegistry();
    int mood = 70_001;
    int complex = 70_002;
    int moodArray = 70_003;
    r.register(
        new TypeInfo(mood, "public.mood", TypeKind.ENUM, 'E', 0, ',', 0, 0, 0, List.of(), true));
    r.register(
        new TypeInfo(
            moodArray, "public._mood", TypeKind.ARRAY, 'A', mood, ',', 0, 0, 0, List.of(), true));
    r.register(
        new TypeInfo(
            complex,
            "public.complex",
            TypeKind.COMPOSITE,
            'C',
            0,
            ',',
            0,
            0,
            0,
            List.of(701, mood, moodArray),
            true));
    assertThat(r.canDecodeBinary(complex)).isTrue();
    // (1.5, 'so "so"', {happy,NULL})
    String hex =
        "00000003"
            + "000002bd"
            + "00000008"
            + "3ff8000000000000"
            + "00011171"
            + "00000007"
            + "736f2022736f22"
            + "00011173"
            + "00000021"
            + "00000001"
            + "00000001"
            + "00011171"
            + "00000002"
            + "00000001"
            + "00000005"
            + "6861707079"
            + "ffffffff";
    byte[] b = HexFormat.of().parseHex(hex);
    assertThat(r.codec(complex).decodeBinary(b, 0, b.length))
        .isEqualTo("(1.5,\"so \"\"so\"\"\",\"{happy,NULL}\")");
    // a field of a type the registry does not know: cannot be printed from binary
    TypeRegistry other = new TypeRegistry();
    other.register(
        new TypeInfo(
            complex,
            "public.complex",
            TypeKind.COMPOSITE,
            'C',
            0,
            ',',
            0,
            0,
            0,
            List.of(701),
            true));
    byte[] unknownField = HexFormat.of().parseHex("00000001" + "00011171" + "00000001" + "61");
    assertThatThrownBy(() -> other.codec(complex).decodeBinary(unknownField, 0, 4 + 9))
        .isInstanceOf(EtlException.class);
  }

  @Test
  void rangesPrintQuotedBoundsFromBinary() {
    // tsrange ["2020-01-01 00:00:00",infinity): lower inclusive, upper infinite
    String hex = "12" + "00000008" + "00023e0786c26000";
    assertThat(bin(3908, hex)).isEqualTo("[\"2020-01-01 00:00:00\",)");
    assertThat(bin(3904, "01")).isEqualTo("empty");
    assertThat(bin(3904, "18")).isEqualTo("(,)");
    assertInvalid(() -> bin(3904, "0100"), "int4range");
    // int4multirange {[1,3)}
    assertThat(bin(4451, "00000001" + "00000011" + "02" + "0000000400000001" + "0000000400000003"))
        .isEqualTo("{[1,3)}");
  }

  @Test
  void inetPrintsLikeInetOut() {
    assertThat(bin(869, "02200004" + "01020304")).isEqualTo("1.2.3.4");
    assertThat(bin(650, "02200104" + "01020304")).isEqualTo("1.2.3.4/32");
    assertThat(bin(869, "03800010" + "00000000000000000000ffff01020304"))
        .isEqualTo("::ffff:1.2.3.4");
    assertThat(bin(869, "03400010" + "20010db8000000000000000000000001"))
        .isEqualTo("2001:db8::1/64");
    assertThat(bin(869, "03800010" + "00010000000000010000000000000001")).isEqualTo("1:0:0:1::1");
    assertInvalid(() -> bin(869, "04200004" + "01020304"), "inet");
    assertInvalid(() -> bin(869, "02210004" + "01020304"), "inet");
  }

  @Test
  void moneyPrintsInTheCLocale() {
    assertThat(bin(790, "0000000000000005")).isEqualTo("$0.05");
    assertThat(bin(790, "fffffffffffe1dc0")).isEqualTo("-$1,234.56");
    assertThat(bin(790, "8000000000000000")).isEqualTo("-$92,233,720,368,547,758.08");
  }

  @Test
  void failuresNameTheTypeButNeverTheValue() {
    String secret = "s3cr3t-value";
    assertThatThrownBy(() -> text(1700, secret))
        .isInstanceOfSatisfying(
            EtlException.class,
            e -> {
              assertThat(e.getMessage()).contains("numeric (oid 1700)").doesNotContain(secret);
              assertThat(e.getCause()).isNull();
            });
    assertThatThrownBy(() -> text(2950, secret + "-000000000000000000000"))
        .hasMessageNotContaining(secret);
    assertThatThrownBy(() -> text(701, secret)).hasMessageNotContaining(secret);
  }

  @Test
  void valueBoundsOutsideTheBufferAreInvalidData() {
    byte[] b = new byte[4];
    ValueCodec c = registry.codec(23);
    assertInvalid(() -> c.decodeBinary(b, 2, 4), "int4");
    assertInvalid(() -> c.decodeBinary(b, -1, 4), "int4");
    assertInvalid(() -> c.decodeText(null, 0, 0), "int4");
    assertInvalid(() -> c.decode((byte) 'x', b, 0, 4), "int4");
    assertThat(c.decode((byte) 'b', b, 0, 4)).isEqualTo(0);
  }

  @Test
  void recordsNestedWithoutEndAreInvalidData() {
    // an anonymous record whose only field is an anonymous record, 200000 levels deep
    int depth = 200_000;
    byte[] b = new byte[12 * depth + 4];
    int p = 0;
    for (int i = 0; i < depth; i++) {
      int rest = b.length - p - 12;
      p = putInt(b, p, 1);
      p = putInt(b, p, 2249);
      p = putInt(b, p, rest);
    }
    putInt(b, p, 0);
    assertInvalid(() -> registry.codec(2249).decodeBinary(b, 0, b.length), "record");
  }

  private static int putInt(byte[] b, int p, int v) {
    b[p] = (byte) (v >> 24);
    b[p + 1] = (byte) (v >> 16);
    b[p + 2] = (byte) (v >> 8);
    b[p + 3] = (byte) v;
    return p + 4;
  }

  @Test
  void builtinTypesAreKnownStatically() {
    TypeInfo numeric = registry.typeInfo(1700);
    assertThat(numeric.name()).isEqualTo("numeric");
    assertThat(numeric.kind()).isEqualTo(TypeKind.BASE);
    assertThat(numeric.category()).isEqualTo('N');
    assertThat(registry.typeInfo(1020).elementOid()).isEqualTo(603);
    assertThat(registry.typeInfo(603).delimiter()).isEqualTo(';');
    assertThat(registry.typeInfo(3910).rangeSubtypeOid()).isEqualTo(1184);
    assertThat(registry.typeInfo(4534).rangeOid()).isEqualTo(3910);
    assertThat(TypeRegistry.isBuiltin(2249)).isTrue();
    assertThat(TypeRegistry.isBuiltin(16_384)).isFalse();
    assertThat(registry.typeInfo(16_384).label()).isEqualTo("unknown type 16384");
    assertThatThrownBy(() -> registry.register(numeric))
        .isInstanceOf(IllegalArgumentException.class);
  }
}
