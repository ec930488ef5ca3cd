package org.pgetl.core.internal.engine;

import org.jspecify.annotations.Nullable;
import org.pgetl.model.TableId;
import org.pgetl.model.TableName;

/**
 * A change to the set or the states of a running generation's tables, carried out by the apply
 * worker's thread (the one thread that hands tables over and promotes them), so that no state
 * change races with it: a table joined or left the publication, or an operator asked for a table to
 * be copied again or retried.
 *
 * @param kind what to do
 * @param table the table
 * @param name the table's name, when known (may be null)
 * @param requestId the store's id of the operator request this carries out, or 0
 */
record TableCommand(Kind kind, TableId table, @Nullable TableName name, long requestId) {

  /** What to do with the table. */
  enum Kind {
    /** The table joined the publication: copy it. */
    ADD,
    /** The table left the publication: stop its worker, delete its state and slot. */
    REMOVE,
    /** Copy the table again from scratch (the destination is told with dropTableForCopy). */
    RESYNC,
    /** Retry an {@code Errored} table now. */
    RETRY
  }
}
