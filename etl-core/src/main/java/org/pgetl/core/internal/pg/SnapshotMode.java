package org.pgetl.core.internal.pg;

/** What {@code CREATE_REPLICATION_SLOT} does with the snapshot of the slot's consistent point. */
public enum SnapshotMode {
  /** No snapshot: for the apply slot, which only streams. */
  NOEXPORT_SNAPSHOT,
  /**
   * Export the snapshot under a name that other connections import with {@code SET TRANSACTION
   * SNAPSHOT}. The name stays valid only until the next command on the replication connection.
   */
  EXPORT_SNAPSHOT,
  /**
   * Use the snapshot in the current transaction of the replication connection, which must be {@code
   * REPEATABLE READ, READ ONLY}; queries in that transaction (and {@code pg_export_snapshot()} for
   * child connections) then see exactly the data as of the consistent point.
   */
  USE_SNAPSHOT
}
