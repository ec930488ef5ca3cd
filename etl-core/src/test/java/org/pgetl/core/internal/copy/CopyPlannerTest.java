package org.pgetl.core.internal.copy;

import static org.assertj.core.api.Assertions.assertThat;
import static org.quicktheories.generators.SourceDSL.integers;
import static org.quicktheories.generators.SourceDSL.longs;

import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.pgetl.model.TableId;
import org.pgetl.testing.Theories;
import org.quicktheories.core.Gen;

class CopyPlannerTest {
  private static final TableId T = new TableId(16384);

  private static final long MIB = 1024 * 1024;

  @Test
  void aTableGetsOneConnectionPerMinBytesUpToTheMaximum() {
    // 8 MiB per connection is 1024 blocks of 8 kB
    assertThat(connections(0, 8 * MIB)).isEqualTo(1);
    assertThat(connections(1, 8 * MIB)).isEqualTo(1);
    assertThat(connections(1024, 8 * MIB)).isEqualTo(1);
    assertThat(connections(1025, 8 * MIB)).isEqualTo(2);
    assertThat(connections(3 * 1024, 8 * MIB)).isEqualTo(3);
    assertThat(connections(100_000, 8 * MIB)).isEqualTo(4);
    // what decides is the bytes with TOAST: a small heap with large TOASTed values gets four
    assertThat(
            CopyPlanner.connections(
                List.of(new CopyPlanner.TableSize(T, 10, 100, 100 * MIB)), 4, 8 * MIB))
        .isEqualTo(4);
    // 0: always the maximum, however small the table
    assertThat(connections(1, 0)).isEqualTo(4);
    // a partitioned table counts its leaves together
    assertThat(
            CopyPlanner.connections(
                List.of(
                    new CopyPlanner.TableSize(T, 700, 1),
                    new CopyPlanner.TableSize(new TableId(16385), 700, 1)),
                4,
                8 * MIB))
        .isEqualTo(2);
  }

  private static int connections(long blocks, long minBytes) {
    return CopyPlanner.connections(List.of(new CopyPlanner.TableSize(T, blocks, -1)), 4, minBytes);
  }

  @Test
  void oneConnectionCopiesTheWholeTableInOneRange() {
    List<CopyPlanner.Partition> p =
        CopyPlanner.plan(List.of(new CopyPlanner.TableSize(T, 1000, 100_000)), 1);
    assertThat(p).hasSize(1);
    assertThat(p.get(0).ctidPredicate()).isEmpty();
  }

  @Test
  void fourConnectionsGetSixteenRangesOpenAtBothEnds() {
    List<CopyPlanner.Partition> p =
        CopyPlanner.plan(List.of(new CopyPlanner.TableSize(T, 1600, 100_000)), 4);
    assertThat(p).hasSize(16);
    assertThat(p).filteredOn(x -> x.startBlock() < 0).hasSize(1);
    assertThat(p).filteredOn(x -> x.endBlock() < 0).hasSize(1);
    assertThat(p.stream().map(CopyPlanner.Partition::ctidPredicate))
        .contains("ctid < '(100,0)'::tid", "ctid >= '(1500,0)'::tid");
  }

  @Test
  void emptyTableGetsOneWholeRange() {
    List<CopyPlanner.Partition> p =
        CopyPlanner.plan(List.of(new CopyPlanner.TableSize(T, 0, 0)), 4);
    assertThat(p).singleElement().satisfies(x -> assertThat(x.ctidPredicate()).isEmpty());
  }

  /** A size of table {@code t}: blocks and estimated rows ({@code -1}: never analyzed). */
  private static Gen<CopyPlanner.TableSize> sizes(TableId t, long maxBlocks, long maxRows) {
    Gen<Long> blocks = Theories.withEdges(longs().between(0, maxBlocks), 0L, 1L, 2L, maxBlocks);
    Gen<Long> rows = Theories.withEdges(longs().between(-1, maxRows), -1L, 0L, 1L, maxRows);
    return blocks.zip(rows, (b, r) -> new CopyPlanner.TableSize(t, b, r));
  }

  /** The ranges of each table cover every block exactly once, whatever the sizes. */
  @Test
  void rangesCoverEveryBlockExactlyOnce() {
    TableId b = new TableId(20000);
    Theories.qt(500, Duration.ofSeconds(5))
        .forAll(
            sizes(T, 100_000, 10_000_000),
            sizes(b, 5_000, 1_000_000),
            Theories.withEdges(integers().between(1, 16), 1, 2, 16))
        .checkAssert((a, bSize, connections) -> coverEveryBlockOnce(a, bSize, connections));
  }

  private static void coverEveryBlockOnce(
      CopyPlanner.TableSize sizeA, CopyPlanner.TableSize sizeB, int connections) {
    TableId b = sizeB.table();
    List<CopyPlanner.Partition> parts = CopyPlanner.plan(List.of(sizeA, sizeB), connections);
    assertThat(parts.size()).isLessThanOrEqualTo(CopyPlanner.MAX_PARTITIONS + 2);
    for (TableId t : List.of(T, b)) {
      List<CopyPlanner.Partition> mine =
          parts.stream()
              .filter(x -> x.table().equals(t))
              .sorted(
                  (x, y) ->
                      Long.compare(
                          x.startBlock() < 0 ? -1 : x.startBlock(),
                          y.startBlock() < 0 ? -1 : y.startBlock()))
              .toList();
      assertThat(mine).isNotEmpty();
      assertThat(mine.get(0).startBlock()).isEqualTo(-1);
      assertThat(mine.get(mine.size() - 1).endBlock()).isEqualTo(-1);
      for (int i = 1; i < mine.size(); i++) {
        assertThat(mine.get(i).startBlock()).isEqualTo(mine.get(i - 1).endBlock());
        assertThat(mine.get(i).startBlock()).isGreaterThan(mine.get(i - 1).startBlock());
      }
    }
  }
}
