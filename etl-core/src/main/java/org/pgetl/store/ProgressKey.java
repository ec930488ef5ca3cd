package org.pgetl.store;

import java.util.Objects;
import org.pgetl.model.TableId;

/**
 * Whose durable progress a stored LSN is: the apply worker's, or one table-sync worker's.
 *
 * @param worker the worker kind
 * @param table the table of a table-sync worker, null for the apply worker
 */
public record ProgressKey(WorkerKind worker, TableId table) {
  /** The kind of worker that owns a progress row. */
  public enum WorkerKind {
    /** The apply worker (one per pipeline). */
    APPLY,
    /** A table-sync worker (one per table while it syncs). */
    TABLE_SYNC
  }

  private static final ProgressKey APPLY = new ProgressKey(WorkerKind.APPLY, null);

  /** Validates that only table-sync keys name a table. */
  public ProgressKey {
    Objects.requireNonNull(worker, "worker");
    if ((worker == WorkerKind.APPLY) != (table == null)) {
      throw new IllegalArgumentException("only table-sync progress names a table");
    }
  }

  /**
   * Returns the key of the apply worker's progress.
   *
   * @return the key
   */
  public static ProgressKey apply() {
    return APPLY;
  }

  /**
   * Returns the key of a table-sync worker's progress.
   *
   * @param table the table
   * @return the key
   */
  public static ProgressKey tableSync(TableId table) {
    return new ProgressKey(WorkerKind.TABLE_SYNC, Objects.requireNonNull(table, "table"));
  }

  @Override
  public String toString() {
    return worker == WorkerKind.APPLY ? "apply" : "table_sync:" + table;
  }
}
