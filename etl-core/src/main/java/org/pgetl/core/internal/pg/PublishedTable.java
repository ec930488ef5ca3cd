package org.pgetl.core.internal.pg;

import java.util.List;
import java.util.Objects;
import org.jspecify.annotations.Nullable;
import org.pgetl.model.TableId;

/**
 * How a publication publishes one table: its row filter and column list (PostgreSQL 15+).
 *
 * @param table the table asked about
 * @param publishedAs the relation whose entry in the publication applies: the table itself, or, for
 *     a partition of a table published with {@code publish_via_partition_root}, the topmost
 *     published ancestor
 * @param rowFilter the row filter as SQL ({@code pg_get_expr}), or null for none
 * @param columnNames the published columns, or null when every column is published
 */
public record PublishedTable(
    TableId table,
    TableId publishedAs,
    @Nullable String rowFilter,
    @Nullable List<String> columnNames) {
  /** Validates the components and copies the column list. */
  public PublishedTable {
    Objects.requireNonNull(table, "table");
    Objects.requireNonNull(publishedAs, "publishedAs");
    columnNames = columnNames == null ? null : List.copyOf(columnNames);
  }

  /**
   * Returns the same entry for another table (a partition published through its ancestor).
   *
   * @param partition the partition
   * @return the entry with {@link #table()} replaced
   */
  PublishedTable forPartition(TableId partition) {
    return new PublishedTable(partition, publishedAs, rowFilter, columnNames);
  }
}
