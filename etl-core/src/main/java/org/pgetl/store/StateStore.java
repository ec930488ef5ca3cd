package org.pgetl.store;

import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.pgetl.model.Lsn;
import org.pgetl.model.TableId;

/**
 * Where a pipeline keeps its table states (with their history) and its durable progress. Scoped to
 * one pipeline id; implementations are thread-safe, and reads are served from a cache that stays
 * consistent with the backing storage after every write.
 *
 * <p>Every method may throw {@link org.pgetl.error.EtlException} of kind {@code STATE_STORE_ERROR}
 * when the backing storage fails.
 */
public interface StateStore {

  /**
   * Returns the pipeline this store is scoped to.
   *
   * @return the pipeline id
   */
  String pipelineId();

  /**
   * Reads every current table state from the backing storage and refreshes the cache. Called at
   * pipeline start.
   *
   * @return the current state of every table that has one
   */
  Map<TableId, TableState> loadTableStates();

  /**
   * Returns the cached current state of every table.
   *
   * @return an immutable snapshot
   */
  Map<TableId, TableState> tableStates();

  /**
   * Returns the cached current state of a table.
   *
   * @param table the table
   * @return the state, or empty when the table has none
   */
  Optional<TableState> tableState(TableId table);

  /**
   * Stores a new current state for a table; the previous one stays in the history, so it can be
   * rolled back to.
   *
   * @param table the table
   * @param state a persisted state (not {@code SyncWait} or {@code Catchup})
   * @throws IllegalArgumentException for a memory-only state
   */
  void updateTableState(TableId table, TableState state);

  /**
   * Stores new current states for several tables atomically.
   *
   * @param states the new states; each persisted
   */
  void updateTableStates(Map<TableId, TableState> states);

  /**
   * Makes a table's previous state current again (one step), deleting the current one.
   *
   * @param table the table
   * @return the state that is current now
   * @throws org.pgetl.error.EtlException of kind {@code STATE_ROLLBACK_ERROR} when there is no
   *     previous state
   */
  TableState rollbackTableState(TableId table);

  /**
   * Deletes a table's state history and makes {@code Init} its current state: the table is copied
   * again.
   *
   * @param table the table
   */
  void resetTableState(TableId table);

  /**
   * Returns a table's state history, the current state first.
   *
   * @param table the table
   * @return the states, newest first; empty when the table has none
   */
  List<TableState> tableStateHistory(TableId table);

  /**
   * Returns the durable progress of a worker: every change before this LSN is durable in the
   * destination.
   *
   * @param key the worker
   * @return the LSN, or empty when none was stored
   */
  Optional<Lsn> progress(ProgressKey key);

  /**
   * Advances the durable progress of a worker. Monotonic: a smaller LSN than the stored one leaves
   * it unchanged.
   *
   * @param key the worker
   * @param lsn the new durable point
   * @return the stored progress after the call (at least {@code lsn})
   */
  Lsn advanceProgress(ProgressKey key, Lsn lsn);

  /**
   * Deletes the progress of a worker.
   *
   * @param key the worker
   */
  void deleteProgress(ProgressKey key);
}
