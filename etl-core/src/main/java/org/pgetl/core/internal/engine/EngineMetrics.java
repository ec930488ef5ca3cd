package org.pgetl.core.internal.engine;

import org.pgetl.lifecycle.LifecycleState;
import org.pgetl.model.TableName;
import org.pgetl.store.TableState;

/**
 * What the engine reports to a metrics system. The default does nothing; the Micrometer binding is
 * used when a registry is configured. Every method is cheap and thread-safe.
 */
public interface EngineMetrics {
  /** Metrics that go nowhere. */
  EngineMetrics NONE = new EngineMetrics() {};

  /**
   * Counts rows copied into the destination.
   *
   * @param table the table
   * @param rows the number of rows
   * @param bytes their estimated size
   */
  default void rowsCopied(TableName table, long rows, long bytes) {}

  /**
   * Counts events delivered by a stream.
   *
   * @param changes the data changes among them (insert, update, delete, truncate, message)
   * @param markers the others (begin, commit, relation)
   * @param bytes their estimated size
   */
  default void eventsDelivered(long changes, long markers, long bytes) {}

  /**
   * Records the time from dispatch to the destination's answer.
   *
   * @param kind "copy" or "events"
   * @param nanos the latency
   */
  default void batchLatency(String kind, long nanos) {}

  /**
   * Records a change of the number of writes in flight (+1 / -1).
   *
   * @param delta the change
   */
  default void inFlight(int delta) {}

  /**
   * Counts events discarded by a lifecycle pause or an abandoned write.
   *
   * @param events the number of events
   */
  default void eventsDiscarded(long events) {}

  /**
   * Records the replication lag: server WAL end minus confirmed flush.
   *
   * @param bytes the lag in bytes
   */
  default void lagBytes(long bytes) {}

  /**
   * Reports whether the apply stream waits for a standby of {@code synchronized_standby_slots}.
   *
   * @param held true while the walsender waits for that standby's confirmation
   */
  default void heldByStandby(boolean held) {}

  /**
   * Records a table's state.
   *
   * @param table the table's name, or its oid while the name is not known yet
   * @param state the new state
   */
  default void tableState(String table, TableState.Type state) {}

  /**
   * Records the destination's lifecycle state.
   *
   * @param state the state
   */
  default void lifecycleState(LifecycleState state) {}
}
