package org.pgetl.destination;

import java.util.Objects;
import org.pgetl.model.Lsn;

/**
 * What a destination created for one source table, kept in the pipeline's store so that it survives
 * restarts: the destination's own name for the table and the schema version it applied.
 *
 * @param destinationTableId the destination's identifier of the table (for example its qualified
 *     name)
 * @param snapshotLsn the snapshot LSN of the schema version the destination applied
 * @param applied false while a schema change is being applied, true once it is complete
 */
public record DestinationTableMetadata(
    String destinationTableId, Lsn snapshotLsn, boolean applied) {
  /**
   * Validates the components.
   *
   * @param destinationTableId the destination's identifier of the table (for example its qualified
   *     name)
   * @param snapshotLsn the snapshot LSN of the schema version the destination applied
   * @param applied false while a schema change is being applied, true once it is complete
   */
  public DestinationTableMetadata {
    Objects.requireNonNull(destinationTableId, "destinationTableId");
    Objects.requireNonNull(snapshotLsn, "snapshotLsn");
  }
}
