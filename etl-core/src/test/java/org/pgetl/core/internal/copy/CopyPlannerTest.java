package org.pgetl.core.internal.copy;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.IntRange;
import net.jqwik.api.constraints.LongRange;
import org.junit.jupiter.api.Test;
import org.pgetl.model.TableId;

class CopyPlannerTest {
  private static final TableId T = new TableId(16384);

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

  /** The ranges of each table cover every block exactly once, whatever the sizes. */
  @Property(tries = 500)
  void rangesCoverEveryBlockExactlyOnce(
      @ForAll @LongRange(min = 0, max = 100_000) long blocksA,
      @ForAll @LongRange(min = -1, max = 10_000_000) long rowsA,
      @ForAll @LongRange(min = 0, max = 5_000) long blocksB,
      @ForAll @LongRange(min = -1, max = 1_000_000) long rowsB,
      @ForAll @IntRange(min = 1, max = 16) int connections) {
    TableId b = new TableId(20000);
    List<CopyPlanner.Partition> parts =
        CopyPlanner.plan(
            List.of(
                new CopyPlanner.TableSize(T, blocksA, rowsA),
                new CopyPlanner.TableSize(b, blocksB, rowsB)),
            connections);
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
