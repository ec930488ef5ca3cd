package org.pgetl.core.internal.chunk;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import org.junit.jupiter.api.Test;

class ChunkKeyTest {
  private static final ChunkKey BIGINT = new ChunkKey(0, "id", 20);
  private static final ChunkKey UUID_KEY = new ChunkKey(0, "id", 2950);

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
}
