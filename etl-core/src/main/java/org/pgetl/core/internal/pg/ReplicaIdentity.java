package org.pgetl.core.internal.pg;

import java.util.List;
import java.util.Objects;
import org.pgetl.model.IdentityKind;

/**
 * A table's replica identity: {@code pg_class.relreplident} and the columns that identify a row.
 *
 * @param code {@code relreplident}: {@code d} (default: the primary key), {@code n} (nothing),
 *     {@code f} (full) or {@code i} (an index)
 * @param kind what old rows carry, resolved: DEFAULT without a primary key is {@link
 *     IdentityKind#NOTHING}
 * @param keyAttnums the {@code attnum}s of the identity columns in key order; empty for FULL and
 *     NOTHING
 */
public record ReplicaIdentity(char code, IdentityKind kind, List<Integer> keyAttnums) {
  /** Validates the components and copies the list. */
  public ReplicaIdentity {
    Objects.requireNonNull(kind, "kind");
    keyAttnums = List.copyOf(keyAttnums);
  }
}
