package org.pgetl.destination.internal;

import java.util.List;
import java.util.stream.IntStream;
import org.pgetl.model.ColumnSchema;
import org.pgetl.model.ReplicatedTableSchema;

/**
 * The columns that identify a row of a replicated table, for destinations that find the row of an
 * update or delete by key: the replica identity columns, else the primary key columns in key order,
 * else none (a table with neither, whose rows are found by the whole old row).
 */
public final class RowKey {
  private RowKey() {}

  /**
   * Returns the indexes (in {@link ReplicatedTableSchema#columns()}) of the key columns.
   *
   * @param schema the table's schema
   * @return the replica identity columns, else the primary key columns, else an empty array
   */
  public static int[] columns(ReplicatedTableSchema schema) {
    int[] identity = schema.identityColumnIndexes();
    if (identity.length > 0) {
      return identity;
    }
    List<ColumnSchema> columns = schema.columns();
    return IntStream.range(0, columns.size())
        .filter(i -> columns.get(i).isPrimaryKey())
        .boxed()
        .sorted((a, b) -> columns.get(a).primaryKeyOrdinal() - columns.get(b).primaryKeyOrdinal())
        .mapToInt(Integer::intValue)
        .toArray();
  }
}
