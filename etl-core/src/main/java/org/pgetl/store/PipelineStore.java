package org.pgetl.store;

import org.pgetl.destination.DestinationTableMetadataStore;
import org.pgetl.lifecycle.DestinationLifecycleStore;

/**
 * Everything a pipeline persists, scoped to one pipeline id: table states and progress, schema
 * versions, destination table metadata, the table life-cycle operations and the operator's
 * destination lifecycle rows. {@link MemoryStore} keeps it in memory; {@code PostgresStore} (module
 * etl-postgres-store) in PostgreSQL.
 *
 * <p>Implementations are thread-safe and never hold a global lock across I/O.
 */
public interface PipelineStore
    extends StateStore,
        SchemaStore,
        DestinationTableMetadataStore,
        TableLifecycleStore,
        DestinationLifecycleStore,
        AutoCloseable {

  /**
   * Returns a new handle on the pipeline's lease, for one pipeline instance.
   *
   * @param holder how the instance describes itself to others (host, process id, application)
   * @return the handle, not yet holding the lease
   */
  PipelineLease lease(String holder);

  /** Releases the store's resources (connection pool). Idempotent. */
  @Override
  default void close() {}
}
