package org.pgetl.core.internal.engine;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.pgetl.model.Lsn;
import org.pgetl.model.TableId;
import org.pgetl.model.TableName;

/**
 * What {@code Pipeline.status()} reports, kept up to date by the workers as they learn it, so that
 * reading the status never does I/O and never fails: the tables' names, the stored apply progress,
 * the last lag sample and when it was taken. Thread-safe; written by any worker.
 */
public final class StatusBoard {
  private final Map<TableId, TableName> names = new ConcurrentHashMap<>();
  private volatile Lsn applyLsn = Lsn.ZERO;
  private volatile long lagBytes = -1;
  private volatile long lagSampledAtMillis;

  /**
   * Records a table's name.
   *
   * @param table the table
   * @param name its name
   */
  public void name(TableId table, TableName name) {
    names.put(table, name);
  }

  /**
   * Returns a table's last known name.
   *
   * @param table the table
   * @return the name, or null when not known yet
   */
  public TableName name(TableId table) {
    return names.get(table);
  }

  /**
   * Records the apply stream's stored durable progress (monotonic).
   *
   * @param lsn the progress
   */
  public void applyLsn(Lsn lsn) {
    synchronized (this) {
      if (lsn.isAfter(applyLsn)) {
        applyLsn = lsn;
      }
    }
  }

  /**
   * Returns the apply stream's stored durable progress.
   *
   * @return the progress
   */
  public Lsn applyLsn() {
    return applyLsn;
  }

  /**
   * Records a lag sample.
   *
   * @param bytes the lag, -1 when unknown
   */
  public void lag(long bytes) {
    lagBytes = bytes;
    lagSampledAtMillis = System.currentTimeMillis();
  }

  /**
   * Returns the last lag sample.
   *
   * @return the lag in bytes, -1 when unknown
   */
  public long lagBytes() {
    return lagBytes;
  }

  /**
   * Returns when the last lag sample was taken.
   *
   * @return epoch milliseconds, 0 when never
   */
  public long lagSampledAtMillis() {
    return lagSampledAtMillis;
  }
}
