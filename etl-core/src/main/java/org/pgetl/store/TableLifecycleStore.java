package org.pgetl.store;

import java.util.List;
import java.util.Map;
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

  /**
   * Records an operator's request for a table, for the running pipeline (which reads requests with
   * its lifecycle poll) or the next start.
   *
   * @param table the table
   * @param action what to do
   * @param requestedBy who asks, or null
   * @return the request as stored
   */
  TableRequest requestTableAction(TableId table, TableRequest.Action action, String requestedBy);

  /**
   * Returns the requests not yet carried out, oldest first.
   *
   * @return the pending requests
   */
  List<TableRequest> tableRequests();

  /**
   * Deletes a request that was carried out (or could not apply). Unknown ids are ignored.
   *
   * @param requestId the request's id
   */
  void completeTableRequest(long requestId);

  /**
   * Records the last finished copy of a table, replacing the one before.
   *
   * @param table the table
   * @param copy the copy
   */
  void recordCopy(TableId table, CopyRecord copy);

  /**
   * Returns the last finished copy of every table that has one.
   *
   * @return the copies, by table
   */
  Map<TableId, CopyRecord> copies();
}
