package org.pgetl.store;

import org.pgetl.model.TableId;

/**
 * The multi-row operations of a table's life in a pipeline, each atomic. Scoped to one pipeline.
 */
public interface TableLifecycleStore {

  /**
   * Prepares a table for a copy from scratch: deletes its destination metadata, its stored schema
   * versions and its table-sync progress; keeps its state. Called after the destination dropped
   * what an earlier attempt wrote.
   *
   * @param table the table
   */
  void prepareTableForCopy(TableId table);

  /**
   * Makes {@code Init} the current state of every table and deletes the apply progress: every table
   * is copied again (used when the apply slot had to be recreated). Schemas, metadata and
   * table-sync progress stay, so each copy can still drop what the destination holds.
   */
  void resetAllTablesForResync();

  /**
   * Deletes everything of a table: its state history, schema versions, destination metadata and
   * table-sync progress (used when a table leaves the publication).
   *
   * @param table the table
   */
  void deleteTable(TableId table);

  /**
   * Deletes every row of the pipeline except its destination lifecycle rows (used when a
   * destination is retired): states, progress, schemas, destination metadata.
   */
  void deletePipelineState();
}
