package org.pgetl.core.internal.pg;

import java.util.List;
import java.util.Objects;
import org.pgetl.core.internal.decode.ReplicaIdentity;
import org.pgetl.model.IdentityKind;

/**
 * How a table identifies its rows, as the catalog says: the replica identity setting and the
 * columns it resolves to.
 *
 * @param setting {@code pg_class.relreplident}
 * @param kind what old rows carry, resolved: {@link ReplicaIdentity#DEFAULT} without a primary key
 *     is {@link IdentityKind#NOTHING}, and so is {@link ReplicaIdentity#INDEX} whose index was
 *     dropped
 * @param keyAttnums the {@code attnum}s of the identity columns in key order; empty for FULL and
 *     NOTHING
 */
public record TableIdentity(ReplicaIdentity setting, IdentityKind kind, List<Integer> keyAttnums) {
  /** Validates the components and copies the list. */
  public TableIdentity {
    Objects.requireNonNull(setting, "setting");
    Objects.requireNonNull(kind, "kind");
    keyAttnums = List.copyOf(keyAttnums);
  }
}
