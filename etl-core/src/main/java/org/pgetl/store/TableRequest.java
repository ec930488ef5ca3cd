package org.pgetl.store;

import java.time.Instant;
import java.util.Objects;
import org.pgetl.model.TableId;

/**
 * An operator's request for one table, kept by the store until the pipeline carried it out: the
 * running pipeline picks it up within a lifecycle poll interval, a stopped one at its next start.
 * Requests come from {@code Pipeline.resyncTable}/{@code retryTable} or from another process (the
 * {@code pgetl tables} command).
 *
 * @param id the store's id of the request
 * @param table the table
 * @param action what to do
 * @param requestedBy who asked, or null
 * @param requestedAt when
 */
public record TableRequest(
    long id, TableId table, Action action, String requestedBy, Instant requestedAt) {

  /** What an operator can ask for a table. */
  public enum Action {
    /**
     * Copy the table again from scratch: its worker (if any) stops, its state becomes {@code Init},
     * and the destination is told through {@code dropTableForCopy}.
     */
    RESYNC,
    /** Retry an {@code Errored} table now (its state is rolled back one step). */
    RETRY
  }

  /** Validates the components. */
  public TableRequest {
    Objects.requireNonNull(table, "table");
    Objects.requireNonNull(action, "action");
    Objects.requireNonNull(requestedAt, "requestedAt");
  }
}
