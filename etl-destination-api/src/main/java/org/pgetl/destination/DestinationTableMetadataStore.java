package org.pgetl.destination;

import java.util.Optional;
import org.pgetl.model.TableId;

/**
 * Where a destination keeps its {@link DestinationTableMetadata}, scoped to one pipeline. Backed by
 * the pipeline's store; thread-safe. The engine deletes an entry when the table is copied again or
 * removed from the publication.
 */
public interface DestinationTableMetadataStore {
  /**
   * Returns the metadata of a table.
   *
   * @param table the source table
   * @return the metadata, or empty when the destination stored none
   */
  Optional<DestinationTableMetadata> get(TableId table);

  /**
   * Stores (replaces) the metadata of a table.
   *
   * @param table the source table
   * @param metadata the metadata
   */
  void put(TableId table, DestinationTableMetadata metadata);
}
