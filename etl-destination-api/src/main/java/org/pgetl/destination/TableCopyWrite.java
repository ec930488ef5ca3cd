package org.pgetl.destination;

import java.util.List;
import java.util.Objects;
import java.util.UUID;
import org.pgetl.model.TableRow;

/**
 * One call of {@link Destination#writeTableRows}: a {@link Batch} of copied rows, or the {@link
 * Finish} barrier that ends a table's copy.
 */
public sealed interface TableCopyWrite permits TableCopyWrite.Batch, TableCopyWrite.Finish {

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
   * The barrier at the end of one copy attempt of a table, sent once after every batch of the
   * attempt was answered — also when every batch was answered {@code durable()}, when the table was
   * empty, and when its copy was skipped by configuration. Answering it {@code durable()} confirms
   * that every batch of the attempt is durable; only then does the table leave the copy phase. It
   * is the first write an empty table gets, so a destination can create the table, and it tells a
   * destination that the attempt's data is complete (for example, to swap a staging table in).
   *
   * @param attemptId the copy attempt this barrier ends (the one {@code dropTableForCopy} named)
   * @param batches how many batches the attempt sent (sequence numbers {@code 0..batches-1})
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
