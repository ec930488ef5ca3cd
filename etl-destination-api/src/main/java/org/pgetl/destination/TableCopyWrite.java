package org.pgetl.destination;

import java.util.List;
import java.util.Objects;
import org.pgetl.model.TableRow;

/**
 * One call of {@link Destination#writeTableRows}: a {@link Batch} of copied rows, or the {@link
 * Finish} barrier that ends a table's copy.
 */
public sealed interface TableCopyWrite permits TableCopyWrite.Batch, TableCopyWrite.Finish {

  /**
   * Returns the terminal barrier.
   *
   * @return the {@link Finish} instance
   */
  static TableCopyWrite finish() {
    return Finish.INSTANCE;
  }

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
   * The barrier at the end of a table's copy, sent when any batch of the attempt was answered
   * {@code accepted()} or the table was empty (or its copy skipped). Answering it {@code durable()}
   * confirms that every batch of the attempt is durable; only then does the table leave the copy
   * phase. It is also the first write an empty table gets, so a destination can create the table.
   */
  final class Finish implements TableCopyWrite {
    static final Finish INSTANCE = new Finish();

    private Finish() {}

    @Override
    public String toString() {
      return "Finish";
    }
  }
}
