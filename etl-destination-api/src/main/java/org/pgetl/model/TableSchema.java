package org.pgetl.model;

import java.util.List;
import java.util.Objects;

/**
 * One version of a source table's schema: its columns in {@code attnum} order, and the LSN from
 * which this version applies.
 *
 * <p>A table has one version per schema change the pipeline saw: the version read at copy time has
 * {@code snapshotLsn} {@link Lsn#ZERO}; a version learnt from a RELATION message has the LSN of
 * that message. The store keeps versions so that a restart decodes old WAL with the schema that was
 * current then.
 *
 * @param id the table's oid
 * @param name the table's qualified name at that version
 * @param columns every column, replicated or not, in {@code attnum} order
 * @param snapshotLsn the LSN from which this version applies
 */
public record TableSchema(TableId id, TableName name, List<ColumnSchema> columns, Lsn snapshotLsn) {
  /**
   * Validates the components.
   *
   * @param id the table's oid
   * @param name the table's qualified name at that version
   * @param columns every column, replicated or not, in {@code attnum} order
   * @param snapshotLsn the LSN from which this version applies
   */
  public TableSchema {
    Objects.requireNonNull(id, "id");
    Objects.requireNonNull(name, "name");
    Objects.requireNonNull(snapshotLsn, "snapshotLsn");
    columns = List.copyOf(columns);
  }

  /**
   * Returns the same schema with another snapshot LSN.
   *
   * @param lsn the LSN from which the copy applies
   * @return the new version
   */
  public TableSchema withSnapshotLsn(Lsn lsn) {
    return new TableSchema(id, name, columns, lsn);
  }

  /**
   * Returns the index of the column with this name, or -1.
   *
   * @param columnName the exact column name
   * @return the index in {@link #columns()}, or -1
   */
  public int indexOf(String columnName) {
    for (int i = 0; i < columns.size(); i++) {
      if (columns.get(i).name().equals(columnName)) {
        return i;
      }
    }
    return -1;
  }
}
