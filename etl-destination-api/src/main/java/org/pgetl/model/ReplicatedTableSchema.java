package org.pgetl.model;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * A table schema as the pipeline replicates it: the {@link TableSchema}, which of its columns are
 * published (the publication's column list, PostgreSQL 15+), and the table's replica identity.
 *
 * <p>Every {@link TableRow} of this table holds exactly the values of {@link #columns()}, in that
 * order. Immutable and safe to share between threads.
 */
// its signatures carry @Nullable of org.jspecify, read at compile time only (requires static)
@SuppressWarnings("exports")
public final class ReplicatedTableSchema {
  private final TableSchema tableSchema;
  private final boolean[] replicated;
  private final List<ColumnSchema> columns;
  private final IdentityKind identity;
  private final int[] identityIndexes;

  private ReplicatedTableSchema(
      TableSchema tableSchema, boolean[] replicated, IdentityKind identity, int[] identityIndexes) {
    this.tableSchema = tableSchema;
    this.replicated = replicated;
    List<ColumnSchema> cols = new ArrayList<>();
    for (int i = 0; i < replicated.length; i++) {
      if (replicated[i]) {
        cols.add(tableSchema.columns().get(i));
      }
    }
    this.columns = List.copyOf(cols);
    this.identity = identity;
    this.identityIndexes = identityIndexes;
    for (int idx : identityIndexes) {
      if (idx < 0 || idx >= columns.size()) {
        throw new IllegalArgumentException(
            "identity column index " + idx + " out of range 0.." + (columns.size() - 1));
      }
    }
  }

  /**
   * Creates a replicated schema.
   *
   * @param tableSchema the full table schema
   * @param replicatedMask one flag per column of {@code tableSchema}: true when published
   * @param identity the replica identity
   * @param identityColumnIndexes indexes into {@link #columns()} of the identity columns (empty for
   *     {@link IdentityKind#FULL} and {@link IdentityKind#NOTHING})
   * @return the replicated schema
   */
  public static ReplicatedTableSchema of(
      TableSchema tableSchema,
      boolean[] replicatedMask,
      IdentityKind identity,
      int[] identityColumnIndexes) {
    Objects.requireNonNull(tableSchema, "tableSchema");
    Objects.requireNonNull(identity, "identity");
    if (replicatedMask.length != tableSchema.columns().size()) {
      throw new IllegalArgumentException(
          "replication mask has "
              + replicatedMask.length
              + " entries for "
              + tableSchema.columns().size()
              + " columns of "
              + tableSchema.name());
    }
    return new ReplicatedTableSchema(
        tableSchema, replicatedMask.clone(), identity, identityColumnIndexes.clone());
  }

  /**
   * Creates a replicated schema where every column is published and the identity is the primary key
   * (or NOTHING when the table has none).
   *
   * @param tableSchema the full table schema
   * @return the replicated schema
   */
  public static ReplicatedTableSchema allColumns(TableSchema tableSchema) {
    boolean[] mask = new boolean[tableSchema.columns().size()];
    Arrays.fill(mask, true);
    List<ColumnSchema> cols = tableSchema.columns();
    Integer[] order = new Integer[cols.size()];
    int n = 0;
    for (int i = 0; i < cols.size(); i++) {
      if (cols.get(i).isPrimaryKey()) {
        order[n++] = i;
      }
    }
    Integer[] keyIdx = Arrays.copyOf(order, n);
    Arrays.sort(
        keyIdx, (a, b) -> cols.get(a).primaryKeyOrdinal() - cols.get(b).primaryKeyOrdinal());
    int[] idx = new int[n];
    for (int i = 0; i < n; i++) {
      idx[i] = keyIdx[i];
    }
    return of(tableSchema, mask, n == 0 ? IdentityKind.NOTHING : IdentityKind.PRIMARY_KEY, idx);
  }

  /**
   * Returns the full table schema, including columns that are not published.
   *
   * @return the table schema
   */
  public TableSchema tableSchema() {
    return tableSchema;
  }

  /**
   * Returns the table's oid.
   *
   * @return the table id
   */
  public TableId id() {
    return tableSchema.id();
  }

  /**
   * Returns the table's qualified name.
   *
   * @return the table name
   */
  public TableName name() {
    return tableSchema.name();
  }

  /**
   * Returns the published columns in {@code attnum} order: the columns every row of this table
   * holds.
   *
   * @return the published columns
   */
  public List<ColumnSchema> columns() {
    return columns;
  }

  /**
   * Returns the number of published columns.
   *
   * @return the column count of every row
   */
  public int columnCount() {
    return columns.size();
  }

  /**
   * Returns the index in {@link #columns()} of the column with this name, or -1.
   *
   * @param name the exact column name
   * @return the index, or -1
   */
  public int indexOf(String name) {
    for (int i = 0; i < columns.size(); i++) {
      if (columns.get(i).name().equals(name)) {
        return i;
      }
    }
    return -1;
  }

  /**
   * Returns whether the column at this index of {@link TableSchema#columns()} is published.
   *
   * @param tableColumnIndex an index into the full table schema's columns
   * @return whether that column is published
   */
  public boolean isReplicated(int tableColumnIndex) {
    return replicated[tableColumnIndex];
  }

  /**
   * Returns the replication mask: one flag per column of the full table schema.
   *
   * @return a copy of the mask
   */
  public boolean[] replicationMask() {
    return replicated.clone();
  }

  /**
   * Returns the replica identity of the table.
   *
   * @return the identity kind
   */
  public IdentityKind identity() {
    return identity;
  }

  /**
   * Returns the indexes into {@link #columns()} of the identity (key) columns, in key order. For
   * {@link IdentityKind#FULL} and {@link IdentityKind#NOTHING} this is empty; a destination that
   * needs a key for a FULL-identity table uses every column.
   *
   * @return a copy of the identity column indexes
   */
  public int[] identityColumnIndexes() {
    return identityIndexes.clone();
  }

  /**
   * Returns the same replicated schema over another version of the table schema with the same
   * columns (used when only the snapshot LSN or the name changes).
   *
   * @param newSchema the new table schema, with as many columns as this one
   * @return the new replicated schema
   */
  public ReplicatedTableSchema withTableSchema(TableSchema newSchema) {
    return of(newSchema, replicated, identity, identityIndexes);
  }

  @Override
  public boolean equals(@Nullable Object o) {
    return o instanceof ReplicatedTableSchema other
        && tableSchema.equals(other.tableSchema)
        && Arrays.equals(replicated, other.replicated)
        && identity == other.identity
        && Arrays.equals(identityIndexes, other.identityIndexes);
  }

  @Override
  public int hashCode() {
    return Objects.hash(tableSchema, Arrays.hashCode(replicated), identity)
        + 31 * Arrays.hashCode(identityIndexes);
  }

  @Override
  public String toString() {
    StringBuilder sb = new StringBuilder("ReplicatedTableSchema[").append(tableSchema.name());
    sb.append(" (").append(tableSchema.id()).append(") columns=");
    for (int i = 0; i < columns.size(); i++) {
      sb.append(i == 0 ? "" : ",").append(columns.get(i).name());
    }
    return sb.append(" identity=").append(identity).append(']').toString();
  }
}
