package org.pgetl.store.postgres;

import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.locks.Lock;
import java.util.concurrent.locks.ReentrantLock;
import java.util.concurrent.locks.ReentrantReadWriteLock;
import org.pgetl.model.TableId;

/**
 * The store's locks: one per table, and one for the whole pipeline.
 *
 * <p>A write to some tables holds the pipeline lock shared and the locks of those tables, taken in
 * table-id order (so two multi-table writes cannot deadlock); writes to different tables never wait
 * for each other. The rare writes that touch every table (load at start, reset for resync, delete
 * of the pipeline's state) hold the pipeline lock exclusively. A lock is held from before the
 * database write until the cache reflects the commit, which is what keeps the cache in the order of
 * the commits. Reads of the caches take no lock.
 */
final class TableLocks {

  /** Locks held by one operation; {@link #release()} releases them in reverse order. */
  static final class Held {
    private final List<Lock> locks;

    private Held(List<Lock> locks) {
      this.locks = locks;
    }

    /** Releases the locks; call it once, in a finally block. */
    void release() {
      for (int i = locks.size() - 1; i >= 0; i--) {
        locks.get(i).unlock();
      }
    }
  }

  private final ReentrantReadWriteLock pipeline = new ReentrantReadWriteLock();
  private final ConcurrentHashMap<TableId, ReentrantLock> tables = new ConcurrentHashMap<>();

  /**
   * Takes the locks of some tables (and the pipeline lock shared).
   *
   * @param ids the tables
   * @return the held locks, to release
   */
  Held tables(Collection<TableId> ids) {
    List<Lock> held = new ArrayList<>(ids.size() + 1);
    Lock shared = pipeline.readLock();
    shared.lock();
    held.add(shared);
    for (TableId id : new TreeSet<>(ids)) {
      Lock l = tables.computeIfAbsent(id, k -> new ReentrantLock());
      l.lock();
      held.add(l);
    }
    return new Held(held);
  }

  /**
   * Takes the lock of one table (and the pipeline lock shared).
   *
   * @param id the table
   * @return the held locks, to release
   */
  Held table(TableId id) {
    return tables(List.of(id));
  }

  /**
   * Takes the pipeline lock exclusively: no table write runs meanwhile.
   *
   * @return the held lock, to release
   */
  Held pipeline() {
    Lock exclusive = pipeline.writeLock();
    exclusive.lock();
    return new Held(List.of(exclusive));
  }
}
