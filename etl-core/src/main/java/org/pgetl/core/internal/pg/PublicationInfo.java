package org.pgetl.core.internal.pg;

import java.util.Objects;

/**
 * A publication as {@code pg_publication} describes it.
 *
 * @param name the publication's name
 * @param allTables whether it is {@code FOR ALL TABLES}
 * @param viaRoot whether changes of partitions are published as their root table ({@code
 *     publish_via_partition_root})
 * @param inserts whether INSERTs are published
 * @param updates whether UPDATEs are published
 * @param deletes whether DELETEs are published
 * @param truncates whether TRUNCATEs are published
 */
public record PublicationInfo(
    String name,
    boolean allTables,
    boolean viaRoot,
    boolean inserts,
    boolean updates,
    boolean deletes,
    boolean truncates) {
  /** Validates the components. */
  public PublicationInfo {
    Objects.requireNonNull(name, "name");
  }
}
