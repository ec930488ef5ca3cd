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

  /** Releases the store's resources (connection pool). Idempotent. */
  @Override
  default void close() {}
}
