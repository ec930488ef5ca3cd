package org.pgetl.destination;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.UUID;
import org.junit.jupiter.api.Test;

class TableCopyBatchIdTest {
  private static final UUID ATTEMPT = UUID.randomUUID();

  @Test
  void aChunkedCopysBatchNamesItsChunkAndRead() {
    long first = TableCopyBatchId.firstOfChunkRead(5, 3);
    TableCopyBatchId fourth = new TableCopyBatchId(ATTEMPT, first + 3);
    assertThat(fourth.chunk()).isEqualTo(5);
    assertThat(fourth.chunkRead()).isEqualTo(3);
    // the largest chunk and read keep apart
    TableCopyBatchId last =
        new TableCopyBatchId(
            ATTEMPT, TableCopyBatchId.firstOfChunkRead((1 << 23) - 1, (1 << 16) - 1) + 7);
    assertThat(last.chunk()).isEqualTo((1 << 23) - 1);
    assertThat(last.chunkRead()).isEqualTo((1 << 16) - 1);
    // a later read of the chunk numbers its batches above every batch of the earlier one
    assertThat(TableCopyBatchId.firstOfChunkRead(5, 4)).isGreaterThan(first + (1 << 24) - 1);
  }

  @Test
  void aBatchOfACopyUnderOneSnapshotIsInChunkZeroReadZero() {
    TableCopyBatchId b = new TableCopyBatchId(ATTEMPT, 12_345);
    assertThat(b.chunk()).isZero();
    assertThat(b.chunkRead()).isZero();
  }

  @Test
  void chunkAndReadNumbersOutOfRangeAreRefused() {
    assertThatThrownBy(() -> TableCopyBatchId.firstOfChunkRead(1 << 23, 0))
        .isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> TableCopyBatchId.firstOfChunkRead(0, 1 << 16))
        .isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> TableCopyBatchId.firstOfChunkRead(-1, 0))
        .isInstanceOf(IllegalArgumentException.class);
  }
}
