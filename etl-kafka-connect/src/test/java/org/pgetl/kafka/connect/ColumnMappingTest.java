package org.pgetl.kafka.connect;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.math.BigDecimal;
import java.math.BigInteger;
import java.time.Instant;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.time.LocalTime;
import java.time.OffsetTime;
import java.time.ZoneOffset;
import java.util.Arrays;
import java.util.List;
import org.apache.kafka.connect.data.Decimal;
import org.apache.kafka.connect.data.Schema;
import org.apache.kafka.connect.data.Struct;
import org.junit.jupiter.api.Test;
import org.pgetl.error.ErrorKind;
import org.pgetl.error.EtlException;
import org.pgetl.kafka.connect.ColumnMapping.ArrayMode;
import org.pgetl.kafka.connect.ColumnMapping.DecimalMode;
import org.pgetl.model.ColumnSchema;
import org.pgetl.model.PgArray;
import org.pgetl.model.PgInterval;
import org.pgetl.model.PgNumeric;

class ColumnMappingTest {
  private static ColumnMapping mapping(int oid, int typmod, String type) {
    return mapping(oid, typmod, type, DecimalMode.PRECISE, ArrayMode.ARRAY);
  }

  private static ColumnMapping mapping(
      int oid, int typmod, String type, DecimalMode decimals, ArrayMode arrays) {
    ColumnSchema c = new ColumnSchema("c", oid, typmod, type, 1, 0, true, null);
    return ColumnMapping.of("public.t", c, true, decimals, arrays);
  }

  /** numeric(p,s) has typmod ((p << 16) | s) + 4. */
  private static int numericTypmod(int precision, int scale) {
    return ((precision << 16) | scale) + 4;
  }

  @Test
  void datesAreDaysSinceTheEpochWithInfinityAtTheInt32Ends() {
    ColumnMapping m = mapping(1082, -1, "date");
    assertThat(m.schema().name()).isEqualTo("io.debezium.time.Date");
    assertThat(m.schema().type()).isEqualTo(Schema.Type.INT32);
    assertThat(m.convert(LocalDate.of(1970, 1, 2))).isEqualTo(1);
    assertThat(m.convert(LocalDate.of(-4713, 11, 24)))
        .isEqualTo((int) LocalDate.of(-4713, 11, 24).toEpochDay());
    assertThat(m.convert(LocalDate.MAX)).isEqualTo(Integer.MAX_VALUE);
    assertThat(m.convert(LocalDate.MIN)).isEqualTo(Integer.MIN_VALUE);
    assertThat(m.convert(null)).isNull();
  }

  @Test
  void timesAreMicrosecondsAndMidnightAtTheEndIsAFullDay() {
    ColumnMapping m = mapping(1083, -1, "time without time zone");
    assertThat(m.schema().name()).isEqualTo("io.debezium.time.MicroTime");
    assertThat(m.convert(LocalTime.of(0, 0, 1, 500_000))).isEqualTo(1_000_500L);
    assertThat(m.convert(LocalTime.MAX)).isEqualTo(86_400_000_000L);
  }

  @Test
  void timestampsAreMicrosecondsWithInfinityAtTheInt64Ends() {
    ColumnMapping m = mapping(1114, -1, "timestamp without time zone");
    assertThat(m.schema().name()).isEqualTo("io.debezium.time.MicroTimestamp");
    assertThat(m.convert(LocalDateTime.of(1970, 1, 1, 0, 0, 0, 1_000))).isEqualTo(1L);
    assertThat(m.convert(LocalDateTime.of(1969, 12, 31, 23, 59, 59, 999_999_000))).isEqualTo(-1L);
    assertThat(m.convert(LocalDateTime.MAX)).isEqualTo(Long.MAX_VALUE);
    assertThat(m.convert(LocalDateTime.MIN)).isEqualTo(Long.MIN_VALUE);
  }

  @Test
  void zonedValuesAreIsoTextInUtcAndKeepTheirOffset() {
    ColumnMapping tz = mapping(1184, -1, "timestamp with time zone");
    assertThat(tz.schema().name()).isEqualTo("io.debezium.time.ZonedTimestamp");
    assertThat(tz.convert(Instant.parse("2024-01-31T10:15:30.123456Z")))
        .isEqualTo("2024-01-31T10:15:30.123456Z");
    assertThat(tz.convert(Instant.MAX)).isEqualTo("infinity");
    assertThat(tz.convert(Instant.MIN)).isEqualTo("-infinity");
    ColumnMapping ttz = mapping(1266, -1, "time with time zone");
    assertThat(ttz.convert(OffsetTime.of(10, 15, 30, 500_000_000, ZoneOffset.ofHours(2))))
        .isEqualTo("10:15:30.5+02:00");
    assertThat(ttz.convert(OffsetTime.of(LocalTime.MAX, ZoneOffset.ofHours(1))))
        .isEqualTo("24:00:00+01:00");
  }

  @Test
  void intervalsAreIso8601WithASignPerPart() {
    assertThat(ColumnMapping.interval(new PgInterval(14, 3, 14_706_789_000L)))
        .isEqualTo("P1Y2M3DT4H5M6.789S");
    assertThat(ColumnMapping.interval(new PgInterval(-1, 0, 0))).isEqualTo("P-1M");
    assertThat(ColumnMapping.interval(new PgInterval(0, 0, -90_000_000L))).isEqualTo("PT-1M-30S");
    assertThat(ColumnMapping.interval(new PgInterval(0, 0, 0))).isEqualTo("PT0S");
    assertThat(ColumnMapping.interval(PgInterval.INFINITY)).isEqualTo("infinity");
    assertThat(ColumnMapping.interval(PgInterval.NEGATIVE_INFINITY)).isEqualTo("-infinity");
  }

  @Test
  void numericWithAScaleIsAConnectDecimalOfThatScale() {
    ColumnMapping m = mapping(1700, numericTypmod(10, 2), "numeric(10,2)");
    assertThat(m.schema().name()).isEqualTo(Decimal.LOGICAL_NAME);
    assertThat(m.schema().parameters())
        .containsEntry(Decimal.SCALE_FIELD, "2")
        .containsEntry("connect.decimal.precision", "10");
    assertThat(m.convert(PgNumeric.of(new BigDecimal("1.50")))).isEqualTo(new BigDecimal("1.50"));
  }

  @Test
  void unconstrainedNumericKeepsEachValuesScale() {
    ColumnMapping m = mapping(1700, -1, "numeric");
    assertThat(m.schema().name()).isEqualTo("io.debezium.data.VariableScaleDecimal");
    Struct s = (Struct) m.convert(PgNumeric.of(new BigDecimal("-12.3450")));
    assertThat(s.getInt32("scale")).isEqualTo(4);
    assertThat(new BigInteger(s.getBytes("value"))).isEqualTo(BigInteger.valueOf(-123450));
  }

  @Test
  void numericNanIsNotFakedInPreciseModeAndKeptInStringMode() {
    ColumnMapping precise = mapping(1700, numericTypmod(10, 2), "numeric(10,2)");
    assertThatThrownBy(() -> precise.convert(PgNumeric.NAN))
        .isInstanceOf(EtlException.class)
        .satisfies(
            e ->
                assertThat(((EtlException) e).kind())
                    .isEqualTo(ErrorKind.UNSUPPORTED_VALUE_IN_DESTINATION))
        .hasMessageContaining("public.t.c")
        .hasMessageContaining("NaN");
    ColumnMapping string = mapping(1700, -1, "numeric", DecimalMode.STRING, ArrayMode.ARRAY);
    assertThat(string.convert(PgNumeric.NAN)).isEqualTo("NaN");
    assertThat(string.convert(PgNumeric.of(new BigDecimal("0.00")))).isEqualTo("0.00");
    ColumnMapping dbl = mapping(1700, -1, "numeric", DecimalMode.DOUBLE, ArrayMode.ARRAY);
    assertThat(dbl.convert(PgNumeric.NEGATIVE_INFINITY)).isEqualTo(Double.NEGATIVE_INFINITY);
  }

  @Test
  void arraysOfOneDimensionAreConnectArraysWithNullElements() {
    ColumnMapping m = mapping(1007, -1, "integer[]");
    assertThat(m.schema().type()).isEqualTo(Schema.Type.ARRAY);
    assertThat(m.schema().valueSchema().type()).isEqualTo(Schema.Type.INT32);
    PgArray a = PgArray.ofList(23, Arrays.asList(1, null, 3));
    assertThat(m.convert(a)).isEqualTo(Arrays.asList(1, null, 3));
    ColumnMapping dates = mapping(1182, -1, "date[]");
    assertThat(dates.convert(PgArray.ofList(1082, List.of(LocalDate.of(1970, 1, 11)))))
        .isEqualTo(List.of(10));
  }

  @Test
  void multiDimensionalArraysNeedTheStringMode() {
    PgArray square = new PgArray(23, List.of(2, 2), List.of(1, 1), List.of(1, 2, 3, 4));
    assertThatThrownBy(() -> mapping(1007, -1, "integer[]").convert(square))
        .isInstanceOf(EtlException.class)
        .hasMessageContaining("2 dimensions");
    ColumnMapping text = mapping(1007, -1, "integer[]", DecimalMode.PRECISE, ArrayMode.STRING);
    assertThat(text.schema().type()).isEqualTo(Schema.Type.STRING);
    assertThat(text.convert(square)).isEqualTo("{{1,2},{3,4}}");
  }

  @Test
  void jsonUuidAndUnknownTypesAreStrings() {
    assertThat(mapping(3802, -1, "jsonb").schema().name()).isEqualTo("io.debezium.data.Json");
    assertThat(mapping(2950, -1, "uuid").convert(new java.util.UUID(0, 1)))
        .isEqualTo("00000000-0000-0000-0000-000000000001");
    ColumnMapping ext = mapping(99999, -1, "hstore");
    assertThat(ext.schema().type()).isEqualTo(Schema.Type.STRING);
    assertThat(ext.convert("\"a\"=>\"1\"")).isEqualTo("\"a\"=>\"1\"");
  }

  @Test
  void negativeNumericScalesAreWrittenWithVariableScale() {
    // numeric(5,-2) on PostgreSQL 15+: the scale is an 11-bit signed number
    int typmod = ((5 << 16) | (-2 & 0x7ff)) + 4;
    assertThat(ColumnMapping.numericScale(typmod)).isEqualTo(-1);
    assertThat(ColumnMapping.numericScale(numericTypmod(38, 0))).isZero();
  }
}
