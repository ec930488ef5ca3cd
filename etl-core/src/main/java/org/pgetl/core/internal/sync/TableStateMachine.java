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
import org.jspecify.annotations.Nullable;
import org.pgetl.error.ErrorKind;
import org.pgetl.error.EtlException;
import org.pgetl.model.Lsn;
import org.pgetl.model.TableId;
import org.pgetl.store.PipelineStore;
import org.pgetl.store.TableState;

/**
 * The one owner of the table state machine of a running generation (ARCHITECTURE.md §3): the live
 * state of every table, including the memory-only hand-off states ({@code SyncWait}, {@code
 * Catchup}), which tables have a table-sync worker, and every change of a state — each through a
 * named transition that rejects an illegal one with {@code INVALID_STATE}.
 *
 * <pre>
 *   add           absent -> Init              remove      any -> absent
 *   startCopy     Init | DataSync | FinishedCopy -> DataSync
 *   copyFinished  DataSync -> FinishedCopy
 *   awaitCatchup  FinishedCopy -> SyncWait(lsn)         (memory only)
 *   startCatchup  SyncWait -> Catchup(lsn)              (memory only; the apply worker)
 *   syncDone      Catchup -> SyncDone(lsn)
 *   ready         SyncDone -> Ready                     (the apply worker)
 *   error         any but Ready, Errored -> Errored
 *   retry         Errored -> the state before it        (a timed retry or an operator)
 *   reset         any -> Init                           (copy again)
 *   revert        any -> the last stored state           (a worker gave up)
 * </pre>
 *
 * <p>Persisted states are written to the store first, then published here, so a state seen here is
 * never ahead of the store; a table's persisted transitions are serialised by a lock of that table,
 * held across its store write (never the machine's lock, which is held for memory only). Every
 * thread waiting for a change of a table wakes up at each change; listeners are told under the
 * machine's lock, so a table's changes reach them in order.
 */
public final class TableStateMachine {
  private final PipelineStore store;
  private final ReentrantLock lock = new ReentrantLock();
  private final Condition changed = lock.newCondition();
  private final Map<TableId, ReentrantLock> tableLocks = new ConcurrentHashMap<>();
  // written under the lock (so waiters see every change), read without it on the hot path
  private final Map<TableId, TableState> states = new ConcurrentHashMap<>();
  // the last state each table has in the store, as written through this machine
  private final Map<TableId, TableState> stored = new ConcurrentHashMap<>();
  private volatile boolean anySyncing;
  private final Set<TableId> activeWorkers = new HashSet<>();
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
    void changed(TableId table, @Nullable TableState from, @Nullable TableState to);
  }

  /**
   * Creates the machine, seeded from the store's current states.
   *
   * @param store the pipeline's store
   */
  public TableStateMachine(PipelineStore store) {
    this.store = store;
    states.putAll(store.tableStates());
    stored.putAll(states);
    anySyncing = states.values().stream().anyMatch(TableState::isSyncing);
  }

  // ---------------------------------------------------------------- reading

  /**
   * Returns the state of a table.
   *
   * @param table the table
   * @return the state, or null when the table is not part of the pipeline
   */
  public @Nullable TableState get(TableId table) {
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

  // ---------------------------------------------------------------- transitions

  /**
   * A table joined the pipeline: {@code Init}, or the state the store already holds for it.
   *
   * @param table the table
   * @return the table's state now
   * @throws EtlException of kind {@code INVALID_STATE} when the table is part of the pipeline
   */
  public TableState add(TableId table) {
    return underTableLock(
        table,
        () -> {
          require(table, states.get(table) == null, "add", "a table not in the pipeline");
          TableState current = store.tableState(table).orElse(null);
          if (current == null) {
            store.updateTableState(table, TableState.INIT);
            current = TableState.INIT;
          }
          stored.put(table, current);
          publish(table, current);
          return current;
        });
  }

  /**
   * A table left the pipeline: its stored state, schemas, metadata, progress and requests are
   * deleted.
   *
   * @param table the table
   */
  public void remove(TableId table) {
    locked(
        table,
        () -> {
          store.deleteTable(table);
          TableState from;
          lock.lock();
          try {
            from = states.remove(table);
            stored.remove(table);
            changedLocked(table, from, null);
          } finally {
            lock.unlock();
          }
        });
  }

  /**
   * A copy (again) from scratch begins.
   *
   * @param table the table
   */
  public void startCopy(TableId table) {
    persist(
        table,
        "startCopy",
        "Init, DataSync or FinishedCopy",
        s ->
            s.type() == TableState.Type.INIT
                || s.type() == TableState.Type.DATA_SYNC
                || s.type() == TableState.Type.FINISHED_COPY,
        TableState.DATA_SYNC);
  }

  /**
   * The copy's {@code Finish} barrier was answered durable.
   *
   * @param table the table
   */
  public void copyFinished(TableId table) {
    persist(
        table,
        "copyFinished",
        "DataSync",
        s -> s.type() == TableState.Type.DATA_SYNC,
        TableState.FINISHED_COPY);
  }

  /**
   * The table-sync worker asks the apply worker for a catch-up target (memory only).
   *
   * @param table the table
   * @param consistentPoint the copy's consistent point
   */
  public void awaitCatchup(TableId table, Lsn consistentPoint) {
    inMemory(
        table,
        "awaitCatchup",
        "FinishedCopy",
        s -> s.type() == TableState.Type.FINISHED_COPY,
        new TableState.SyncWait(consistentPoint));
  }

  /**
   * The apply worker gives the table-sync worker its catch-up target (memory only).
   *
   * @param table the table
   * @param target where the catch-up ends
   */
  public void startCatchup(TableId table, Lsn target) {
    inMemory(
        table,
        "startCatchup",
        "SyncWait",
        s -> s.type() == TableState.Type.SYNC_WAIT,
        new TableState.Catchup(target));
  }

  /**
   * The catch-up reached its target and it is durable: the apply worker owns the table from {@code
   * lsn} on.
   *
   * @param table the table
   * @param lsn the position
   */
  public void syncDone(TableId table, Lsn lsn) {
    persist(
        table,
        "syncDone",
        "Catchup",
        s -> s.type() == TableState.Type.CATCHUP,
        new TableState.SyncDone(lsn));
  }

  /**
   * A table copied in chunks has every chunk durable and its {@code Finish} answered: the apply
   * worker, which applied its changes all along, owns it as {@code Ready}.
   *
   * @param table the table
   */
  public void chunkedCopyDone(TableId table) {
    persist(
        table,
        "chunkedCopyDone",
        "DataSync",
        s -> s.type() == TableState.Type.DATA_SYNC,
        TableState.READY);
  }

  /**
   * The apply worker's durable progress passed the table's {@code SyncDone} point.
   *
   * @param table the table
   */
  public void ready(TableId table) {
    persist(
        table, "ready", "SyncDone", s -> s.type() == TableState.Type.SYNC_DONE, TableState.READY);
  }

  /**
   * The table's sync failed.
   *
   * @param table the table
   * @param errored the error and its retry policy
   */
  public void error(TableId table, TableState.Errored errored) {
    persist(
        table,
        "error",
        "a state other than Ready and Errored",
        s -> s.type() != TableState.Type.READY && s.type() != TableState.Type.ERRORED,
        errored);
  }

  /**
   * An errored table is retried: its state goes back one step in its history.
   *
   * @param table the table
   * @return the state it is in now
   */
  public TableState retry(TableId table) {
    return underTableLock(
        table,
        () -> {
          TableState s = states.get(table);
          require(table, s != null && s.type() == TableState.Type.ERRORED, "retry", "Errored");
          TableState back = store.rollbackTableState(table);
          stored.put(table, back);
          publish(table, back);
          return back;
        });
  }

  /**
   * The table is copied again from scratch: {@code Init}, its history deleted.
   *
   * @param table the table
   */
  public void reset(TableId table) {
    locked(
        table,
        () -> {
          require(table, states.get(table) != null, "reset", "a table of the pipeline");
          store.resetTableState(table);
          stored.put(table, TableState.INIT);
          publish(table, TableState.INIT);
        });
  }

  /**
   * A worker gave up without storing its table's next state (the store was away): the table goes
   * back to the last state stored through this machine, so that a new worker takes it from there.
   * Reads nothing from the store, so it works while the store is away.
   *
   * @param table the table
   * @return the stored state now published, or null when the table left the pipeline
   */
  public @Nullable TableState revert(TableId table) {
    ReentrantLock l = tableLock(table);
    l.lock();
    try {
      TableState last = stored.get(table);
      if (last == null || states.get(table) == null) {
        return null;
      }
      publish(table, last);
      return last;
    } finally {
      l.unlock();
    }
  }

  // ---------------------------------------------------------------- workers

  /**
   * Marks that a table-sync worker runs (or waits to run) for a table. Returns false when one
   * already does.
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
      changed.signalAll();
    } finally {
      lock.unlock();
    }
  }

  /**
   * Returns true while a table-sync worker runs (or waits to run) for the table.
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
  public @Nullable TableState await(TableId table, Predicate<TableState> until, Duration timeout)
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

  // ---------------------------------------------------------------- internals

  private interface Step<T> {
    T run();
  }

  private ReentrantLock tableLock(TableId table) {
    return tableLocks.computeIfAbsent(table, t -> new ReentrantLock());
  }

  private void locked(TableId table, Runnable step) {
    ReentrantLock l = tableLock(table);
    l.lock();
    try {
      step.run();
    } finally {
      l.unlock();
    }
  }

  private <T> T underTableLock(TableId table, Step<T> step) {
    ReentrantLock l = tableLock(table);
    l.lock();
    try {
      return step.run();
    } finally {
      l.unlock();
    }
  }

  private void persist(
      TableId table, String transition, String allowed, Predicate<TableState> from, TableState to) {
    locked(
        table,
        () -> {
          TableState s = states.get(table);
          require(table, s != null && from.test(s), transition, allowed);
          store.updateTableState(table, to);
          stored.put(table, to);
          publish(table, to);
        });
  }

  private void inMemory(
      TableId table, String transition, String allowed, Predicate<TableState> from, TableState to) {
    locked(
        table,
        () -> {
          TableState s = states.get(table);
          require(table, s != null && from.test(s), transition, allowed);
          publish(table, to);
        });
  }

  private void require(TableId table, boolean ok, String transition, String allowed) {
    if (!ok) {
      TableState s = states.get(table);
      throw new EtlException(
          ErrorKind.INVALID_STATE,
          "table "
              + table
              + ": "
              + transition
              + " needs "
              + allowed
              + ", the table is "
              + (s == null ? "not in the pipeline" : s.type()),
          "a bug, or another process changed the pipeline's state: report it with the log");
    }
  }

  private void publish(TableId table, TableState state) {
    lock.lock();
    try {
      TableState from = states.put(table, state);
      changedLocked(table, from, state);
    } finally {
      lock.unlock();
    }
  }

  private void changedLocked(TableId table, @Nullable TableState from, @Nullable TableState to) {
    anySyncing = states.values().stream().anyMatch(TableState::isSyncing);
    changed.signalAll();
    if (to == null ? from != null : !to.equals(from)) {
      listener.changed(table, from, to);
    }
  }
}
