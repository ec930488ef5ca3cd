package org.pgetl.core.internal.pg;

import java.util.Objects;
import org.jspecify.annotations.Nullable;
import org.pgetl.model.Lsn;

/**
 * A replication slot just created by {@code CREATE_REPLICATION_SLOT}.
 *
 * @param slotName the slot's name
 * @param consistentPoint the LSN from which the slot streams every transaction that commits later;
 *     a snapshot taken with the slot sees exactly the transactions that committed before it
 * @param snapshotName the exported snapshot's name with {@link SnapshotMode#EXPORT_SNAPSHOT}, else
 *     null
 * @param mode the snapshot mode the slot was created with
 */
public record CreatedSlot(
    String slotName, Lsn consistentPoint, @Nullable String snapshotName, SnapshotMode mode) {
  /** Validates the components. */
  public CreatedSlot {
    Objects.requireNonNull(slotName, "slotName");
    Objects.requireNonNull(consistentPoint, "consistentPoint");
    Objects.requireNonNull(mode, "mode");
  }
}
