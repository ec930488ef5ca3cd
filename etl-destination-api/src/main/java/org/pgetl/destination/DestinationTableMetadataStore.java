package org.pgetl.destination;

import java.util.Objects;
import java.util.Optional;
import org.pgetl.model.Lsn;
import org.pgetl.model.TableId;

/**
 * Where a destination keeps its {@link TableMetadata}, scoped to one pipeline. Backed by the
 * pipeline's store; thread-safe. The engine deletes an entry when the table is copied again or
 * removed from the publication.
 */
public interface DestinationTableMetadataStore {
  /**
   * Returns the metadata of a table.
   *
   * @param table the source table
   * @return the metadata, or empty when the destination stored none
   */
  Optional<TableMetadata> get(TableId table);

  /**
   * Stores (replaces) the metadata of a table.
   *
   * @param table the source table
   * @param metadata the metadata
   */
  void put(TableId table, TableMetadata metadata);

  /**
   * What a destination created for one source table, kept in the pipeline's store so that it
   * survives restarts: the destination's own name for the table and the schema version it applied.
   *
   * @param destinationTableId the destination's identifier of the table (for example its qualified
   *     name)
   * @param snapshotLsn the snapshot LSN of the schema version the destination applied
   * @param applied false while a schema change is being applied, true once it is complete
   */
  record TableMetadata(String destinationTableId, Lsn snapshotLsn, boolean applied) {
    /**
     * Validates the components.
     *
     * @param destinationTableId the destination's identifier of the table (for example its
     *     qualified name)
     * @param snapshotLsn the snapshot LSN of the schema version the destination applied
     * @param applied false while a schema change is being applied, true once it is complete
     */
    public TableMetadata {
      Objects.requireNonNull(destinationTableId, "destinationTableId");
      Objects.requireNonNull(snapshotLsn, "snapshotLsn");
    }
  }
}
