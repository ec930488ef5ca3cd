package org.pgetl.core.internal.chunk;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import org.junit.jupiter.api.Test;

class ChunkKeyTest {
  private static final ChunkKey BIGINT = new ChunkKey(0, "id", 20);
  private static final ChunkKey UUID_KEY = new ChunkKey(0, "id", 2950);
  private static final ChunkKey NUMERIC = new ChunkKey(0, "n", 1700);
  private static final ChunkKey DATE = new ChunkKey(0, "d", 1082);
  private static final ChunkKey TIMESTAMP = new ChunkKey(0, "ts", 1114);
  private static final ChunkKey TIMESTAMPTZ = new ChunkKey(0, "at", 1184);

  @Test
  void uuidsSortAsPostgresSortsThemByteByByte() {
    // PostgreSQL: ORDER BY id gives these in this order (uuid_cmp is a memcmp); Java's own
    // UUID.compareTo puts the two with the high bit set first
    List<UUID> postgresOrder =
        List.of(
            UUID.fromString("00000000-0000-0000-0000-000000000000"),
            UUID.fromString("00000000-0000-0000-7fff-ffffffffffff"),
            UUID.fromString("00000000-0000-0000-8000-000000000000"),
            UUID.fromString("7fffffff-ffff-ffff-ffff-ffffffffffff"),
            UUID.fromString("80000000-0000-0000-0000-000000000000"),
            UUID.fromString("ffffffff-ffff-ffff-ffff-ffffffffffff"));
    List<Object> shuffled = new ArrayList<>(postgresOrder);
    java.util.Collections.reverse(shuffled);
    shuffled.sort(UUID_KEY.order());
    assertThat(shuffled).containsExactlyElementsOf(postgresOrder);
    assertThat(UUID_KEY.order().compare(UUID_KEY.lowest(), postgresOrder.get(0))).isZero();
    assertThat(postgresOrder.get(4).compareTo(postgresOrder.get(3))).isNegative();
  }

  @Test
  void boundsRoundTripThroughTheirTextAndBecomeSqlLiterals() {
    Object u = UUID_KEY.parse(" 8f3c2a1e-0b4d-4e5f-9a6b-7c8d9e0f1a2b ");
    assertThat(u).isInstanceOf(UUID.class);
    assertThat(UUID_KEY.parse(UUID_KEY.format(u))).isEqualTo(u);
    assertThat(UUID_KEY.predicate(u, null, false))
        .isEqualTo("\"id\" >= '8f3c2a1e-0b4d-4e5f-9a6b-7c8d9e0f1a2b'::uuid");
    Object n = BIGINT.parse("-42");
    assertThat(n).isEqualTo(-42L);
    assertThat(BIGINT.predicate(n, 7L, true)).isEqualTo("\"id\" >= -42 AND \"id\" <= 7");
    assertThat(BIGINT.order().compare(Long.MIN_VALUE, n)).isNegative();
  }

  @Test
  void numericsSortAsNumericCmpAndEqualValuesAreOneKey() {
    // SELECT x FROM unnest('{NaN,Infinity,1.00,-Infinity,0,-1.5,1e-20,1}'::numeric[]) x ORDER BY x
    List<String> postgresOrder =
        List.of("-Infinity", "-1.5", "0", "0.00000000000000000001", "1", "Infinity", "NaN");
    List<Object> values = new ArrayList<>();
    for (String t : postgresOrder) {
      values.add(NUMERIC.parse(t));
    }
    List<Object> sorted = new ArrayList<>(values);
    java.util.Collections.reverse(sorted);
    sorted.sort(NUMERIC.order());
    assertThat(sorted).containsExactlyElementsOf(values);
    // 1.0 = 1.00 to the btree: one key, with one hash
    assertThat(NUMERIC.parse("1.00")).isEqualTo(NUMERIC.parse("1")).isEqualTo(NUMERIC.parse("1.0"));
    assertThat(NUMERIC.parse("1.00").hashCode()).isEqualTo(NUMERIC.parse("1").hashCode());
    assertThat(NUMERIC.order().compare(NUMERIC.lowest(), values.get(0))).isZero();
    // 1E+2 without trailing zeros is still written as a plain decimal
    assertThat(NUMERIC.format(NUMERIC.parse("100.0"))).isEqualTo("100");
    assertThat(NUMERIC.predicate(NUMERIC.parse("100.0"), NUMERIC.parse("NaN"), false))
        .isEqualTo("\"n\" >= '100'::numeric AND \"n\" < 'NaN'::numeric");
  }

  @Test
  void datesAndTimestampsRoundTripWithInfinityAndBeforeChrist() {
    List<String> dates =
        List.of("-infinity", "4714-11-24 BC", "0001-12-31 BC", "2024-02-29", "infinity");
    List<Object> parsed = new ArrayList<>();
    for (String t : dates) {
      Object d = DATE.parse(t);
      assertThat(DATE.format(d)).isEqualTo(t);
      parsed.add(d);
    }
    List<Object> sorted = new ArrayList<>(parsed);
    java.util.Collections.reverse(sorted);
    sorted.sort(DATE.order());
    assertThat(sorted).containsExactlyElementsOf(parsed);
    assertThat(DATE.order().compare(DATE.lowest(), parsed.get(0))).isZero();
    assertThat(DATE.predicate(parsed.get(1), null, false))
        .isEqualTo("\"d\" >= '4714-11-24 BC'::date");

    Object ts = TIMESTAMP.parse("2024-01-02 03:04:05.123456");
    assertThat(TIMESTAMP.format(ts)).isEqualTo("2024-01-02 03:04:05.123456");
    assertThat(TIMESTAMP.order().compare(ts, TIMESTAMP.parse("2024-01-02 03:04:05.123457")))
        .isNegative();
    assertThat(TIMESTAMP.order().compare(TIMESTAMP.parse("-infinity"), TIMESTAMP.lowest()))
        .isZero();
  }

  @Test
  void timestamptzBoundsInAnyOffsetAreOneInstant() {
    // percentile_disc(...)::text[] prints in the session's time zone
    Object a = TIMESTAMPTZ.parse("2024-06-01 12:00:00+02");
    Object b = TIMESTAMPTZ.parse("2024-06-01 10:00:00+00");
    Object c = TIMESTAMPTZ.parse("2024-06-01 05:30:00.5-04:30");
    assertThat(a).isEqualTo(b);
    assertThat(TIMESTAMPTZ.order().compare(b, c)).isNegative();
    assertThat(TIMESTAMPTZ.format(a)).isEqualTo("2024-06-01 10:00:00+00");
    assertThat(TIMESTAMPTZ.predicate(a, c, false))
        .isEqualTo(
            "\"at\" >= '2024-06-01 10:00:00+00'::timestamptz"
                + " AND \"at\" < '2024-06-01 10:00:00.5+00'::timestamptz");
  }

  @Test
  void aTextKeyIsNotTaken() {
    assertThatThrownBy(() -> new ChunkKey(0, "code", 25))
        .isInstanceOf(IllegalArgumentException.class);
  }
}
