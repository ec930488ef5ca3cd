package org.pgetl.destination;

import java.util.List;
import java.util.Objects;
import java.util.UUID;
import org.pgetl.model.TableRow;

/**
 * One call of {@link Destination#writeTableRows}: a {@link Batch} of copied rows, or the {@link
 * Finish} barrier that ends a table's copy.
 */
public sealed interface TableCopyWrite
    permits TableCopyWrite.Batch, TableCopyWrite.ChunkEnd, TableCopyWrite.Finish {

  /**
   * A batch of rows of the initial copy. Never empty.
   *
   * @param id the batch id (kept when the batch is delivered again)
   * @param rows the rows, in the order of the table's replicated columns
   */
  record Batch(TableCopyBatchId id, List<TableRow> rows) implements TableCopyWrite {
    /**
     * Validates the components.
     *
     * @param id the batch id (kept when the batch is delivered again)
     * @param rows the rows, in the order of the table's replicated columns
     */
    public Batch {
      Objects.requireNonNull(id, "id");
      rows = List.copyOf(rows);
      if (rows.isEmpty()) {
        throw new IllegalArgumentException("a copy batch holds at least one row");
      }
    }

    @Override
    public String toString() {
      return "Batch[" + id + ", " + rows.size() + " rows]";
    }
  }

  /**
   * The barrier at the end of one read of a chunk of a table copied in chunks (only a destination
   * whose {@link Destination#supportsChunkedCopy()} is true gets it), sent once every batch of that
   * read was answered. Answer it {@code durable()} only when every batch of the read is durable:
   * the engine then records the chunk as done, and writes the table's changes to the chunk's keys
   * after it.
   *
   * @param attemptId the table's copy attempt
   * @param chunk the chunk's number in the attempt
   * @param firstBatch the sequence number of the read's first batch; its batches are {@code
   *     firstBatch .. firstBatch+batches-1}
   * @param batches how many batches the read sent
   * @param rows how many rows those batches held
   */
  record ChunkEnd(UUID attemptId, int chunk, long firstBatch, long batches, long rows)
      implements TableCopyWrite {
    /**
     * Validates the components.
     *
     * @param attemptId the table's copy attempt
     * @param chunk the chunk's number in the attempt
     * @param firstBatch the sequence number of the read's first batch
     * @param batches how many batches the read sent
     * @param rows how many rows those batches held
     */
    public ChunkEnd {
      Objects.requireNonNull(attemptId, "attemptId");
      if (chunk < 0 || firstBatch < 0 || batches < 0 || rows < 0) {
        throw new IllegalArgumentException(
            "chunk, firstBatch, batches and rows must be >= 0, were "
                + chunk
                + ", "
                + firstBatch
                + ", "
                + batches
                + " and "
                + rows);
      }
    }
  }

  /**
   * The barrier at the end of one copy attempt of a table, sent once after every batch of the
   * attempt was answered — also when every batch was answered {@code durable()}, when the table was
   * empty, and when its copy was skipped by configuration. Answering it {@code durable()} confirms
   * that every batch of the attempt is durable; only then does the table leave the copy phase. It
   * is the first write an empty table gets, so a destination can create the table, and it tells a
   * destination that the attempt's data is complete (for example, to swap a staging table in).
   *
   * @param attemptId the copy attempt this barrier ends (the one {@code dropTableForCopy} named)
   * @param batches how many batches the attempt sent (sequence numbers {@code 0..batches-1}); for a
   *     table copied in chunks, how many batches the chunk reads that made the chunks done sent,
   *     whose numbers are those their {@link ChunkEnd}s named, not {@code 0..batches-1}
   * @param rows how many rows those batches held
   */
  record Finish(UUID attemptId, long batches, long rows) implements TableCopyWrite {
    /**
     * Validates the components.
     *
     * @param attemptId the copy attempt this barrier ends
     * @param batches how many batches the attempt sent
     * @param rows how many rows those batches held
     */
    public Finish {
      Objects.requireNonNull(attemptId, "attemptId");
      if (batches < 0 || rows < 0) {
        throw new IllegalArgumentException(
            "batches and rows must be >= 0, were " + batches + " and " + rows);
      }
    }
  }
}
