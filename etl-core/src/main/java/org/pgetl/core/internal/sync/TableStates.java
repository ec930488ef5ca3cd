package org.pgetl.core.internal.sync;

import java.time.Duration;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Predicate;
import org.pgetl.model.Lsn;
import org.pgetl.model.TableId;
import org.pgetl.store.StateStore;
import org.pgetl.store.TableState;

/**
 * The live state of every table of a pipeline, including the memory-only hand-off states ({@code
 * SyncWait}, {@code Catchup}), and which tables have a running table-sync worker.
 *
 * <p>The apply worker and the table-sync workers coordinate through it: a worker sets a state and
 * every thread waiting for a state change of that table wakes up. Persisted states are written to
 * the store first, then published here, so a state seen here is never ahead of the store. One lock;
 * never held across I/O.
 */
public final class TableStates {
  private final StateStore store;
  private final ReentrantLock lock = new ReentrantLock();
  private final Condition changed = lock.newCondition();
  // written under the lock (so waiters see every change), read without it on the hot path
  private final Map<TableId, TableState> states = new ConcurrentHashMap<>();
  private volatile boolean anySyncing;
  private final Set<TableId> activeWorkers = new HashSet<>();
  private long version;
  private volatile Listener listener = (t, from, to) -> {};

  /** Told about every state change, after it happened, on the changing thread. */
  @FunctionalInterface
  public interface Listener {
    /**
     * Called after a table's state changed.
     *
     * @param table the table
     * @param from the state before, or null when the table was new
     * @param to the state now, or null when the table left the pipeline
     */
    void changed(TableId table, TableState from, TableState to);
  }

  /**
   * Creates the live view, seeded from the store's current states.
   *
   * @param store the pipeline's state store
   */
  public TableStates(StateStore store) {
    this.store = store;
    states.putAll(store.tableStates());
    anySyncing = states.values().stream().anyMatch(TableState::isSyncing);
  }

  /**
   * Returns the state of a table.
   *
   * @param table the table
   * @return the state, or null when the table is not part of the pipeline
   */
  public TableState get(TableId table) {
    return states.get(table);
  }

  /**
   * Returns true while any table is still syncing (not {@code Ready} or {@code Errored}): the apply
   * worker's cheap check before its hand-off work after each commit.
   *
   * @return whether some table syncs
   */
  public boolean anySyncing() {
    return anySyncing;
  }

  /**
   * Returns a snapshot of every table's state.
   *
   * @return the states, ordered by table id
   */
  public Map<TableId, TableState> snapshot() {
    lock.lock();
    try {
      return new TreeMap<>(states);
    } finally {
      lock.unlock();
    }
  }

  /**
   * Registers a callback run after every state change, under the lock (so that changes of a table
   * reach it in order): it must be cheap and must not block or call back into this object.
   *
   * @param listener the callback
   */
  public void onChange(Listener listener) {
    this.listener = listener;
  }

  /**
   * Sets a memory-only state ({@code SyncWait}, {@code Catchup}) and wakes waiters.
   *
   * @param table the table
   * @param state the state
   */
  public void setInMemory(TableId table, TableState state) {
    TableState from;
    lock.lock();
    try {
      from = states.put(table, state);
      anySyncing = state.isSyncing() || states.values().stream().anyMatch(TableState::isSyncing);
      version++;
      changed.signalAll();
      if (!state.equals(from)) {
        // under the lock, so that listeners see a table's changes in the order they happened
        listener.changed(table, from, state);
      }
    } finally {
      lock.unlock();
    }
  }

  /**
   * Stores a persisted state, then publishes it and wakes waiters.
   *
   * @param table the table
   * @param state a persisted state
   */
  public void setAndStore(TableId table, TableState state) {
    store.updateTableState(table, state);
    setInMemory(table, state);
  }

  /**
   * Publishes a state already written to the store (after a rollback or reset).
   *
   * @param table the table
   * @param state the state the store now holds
   */
  public void publish(TableId table, TableState state) {
    setInMemory(table, state);
  }

  /**
   * Forgets a table that left the pipeline (its stored state is already deleted) and wakes waiters.
   *
   * @param table the table
   */
  public void remove(TableId table) {
    TableState from;
    lock.lock();
    try {
      from = states.remove(table);
      anySyncing = states.values().stream().anyMatch(TableState::isSyncing);
      version++;
      changed.signalAll();
      if (from != null) {
        listener.changed(table, from, null);
      }
    } finally {
      lock.unlock();
    }
  }

  /**
   * Marks that a table-sync worker runs for a table. Returns false when one already does.
   *
   * @param table the table
   * @return whether the caller may start a worker
   */
  public boolean claimWorker(TableId table) {
    lock.lock();
    try {
      return activeWorkers.add(table);
    } finally {
      lock.unlock();
    }
  }

  /**
   * Marks that the table-sync worker of a table ended, and wakes waiters.
   *
   * @param table the table
   */
  public void releaseWorker(TableId table) {
    lock.lock();
    try {
      activeWorkers.remove(table);
      version++;
      changed.signalAll();
    } finally {
      lock.unlock();
    }
  }

  /**
   * Returns true while a table-sync worker runs for the table.
   *
   * @param table the table
   * @return whether a worker is active
   */
  public boolean hasWorker(TableId table) {
    lock.lock();
    try {
      return activeWorkers.contains(table);
    } finally {
      lock.unlock();
    }
  }

  /**
   * Waits until the table's state matches, or its worker ended, or the timeout passed.
   *
   * @param table the table
   * @param until the condition on the state
   * @param timeout the longest wait
   * @return the state when the condition holds, or null on timeout or when the worker ended without
   *     reaching it
   * @throws InterruptedException when interrupted
   */
  public TableState await(TableId table, Predicate<TableState> until, Duration timeout)
      throws InterruptedException {
    long nanos = timeout.toNanos();
    lock.lock();
    try {
      while (true) {
        TableState s = states.get(table);
        if (s != null && until.test(s)) {
          return s;
        }
        if (!activeWorkers.contains(table) || nanos <= 0) {
          return null;
        }
        nanos = changed.awaitNanos(nanos);
      }
    } finally {
      lock.unlock();
    }
  }

  /**
   * The ownership rule of the apply worker: it applies a change of the table only when the table is
   * {@code Ready}, or {@code SyncDone(lsn)} with {@code lsn <= commitLsn}.
   *
   * @param table the table
   * @param commitLsn the commit LSN of the change's transaction
   * @return whether the apply worker applies the change
   */
  public boolean applyWorkerOwns(TableId table, Lsn commitLsn) {
    TableState s = get(table);
    if (s == null) {
      return false;
    }
    if (s.type() == TableState.Type.READY) {
      return true;
    }
    return s instanceof TableState.SyncDone d && d.lsn().compareTo(commitLsn) <= 0;
  }
}
