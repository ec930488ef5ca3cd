package org.pgetl.model;

import java.util.Arrays;
import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * The new row of an UPDATE: either {@link Full} (every published column) or {@link Partial} (some
 * unchanged TOAST values were not sent by PostgreSQL and could not be taken from the old row).
 *
 * <p>A destination that receives a {@code Partial} row keeps its current values of the {@linkplain
 * Partial#missingColumnIndexes() missing columns}; pgetl never fills them with a placeholder.
 */
// its signatures carry @Nullable of org.jspecify, read at compile time only (requires static)
@SuppressWarnings("exports")
public sealed interface UpdatedRow permits UpdatedRow.Full, UpdatedRow.Partial {

  /**
   * Returns the number of published columns of the table.
   *
   * @return the column count
   */
  int columnCount();

  /**
   * Returns true when the value at this column index is known.
   *
   * @param columnIndex the column index
   * @return whether the value is present
   */
  boolean isPresent(int columnIndex);

  /**
   * Returns the value at a column index.
   *
   * @param columnIndex the column index
   * @return the value, or null for SQL NULL
   * @throws IllegalStateException when the value is missing (unchanged TOAST)
   */
  @Nullable Object get(int columnIndex);

  /**
   * A new row with every published column.
   *
   * @param row the values in column order
   */
  record Full(TableRow row) implements UpdatedRow {
    /**
     * Validates the components.
     *
     * @param row the values in column order
     */
    public Full {
      Objects.requireNonNull(row, "row");
    }

    @Override
    public int columnCount() {
      return row.size();
    }

    @Override
    public boolean isPresent(int columnIndex) {
      return true;
    }

    @Override
    public @Nullable Object get(int columnIndex) {
      return row.get(columnIndex);
    }
  }

  /**
   * A new row with some columns missing: their values are unchanged TOAST values that PostgreSQL
   * did not send. {@code presentValues} holds the other columns, in column order.
   *
   * @param columnCount the number of published columns of the table
   * @param presentValues the values of the present columns, in column order
   * @param missingColumnIndexes the column indexes whose values are missing, ascending
   */
  @SuppressWarnings("ArrayRecordComponent") // copied in and out; equals/hashCode compare contents
  record Partial(int columnCount, TableRow presentValues, int[] missingColumnIndexes)
      implements UpdatedRow {
    /**
     * Validates the components.
     *
     * @param columnCount the number of published columns of the table
     * @param presentValues the values of the present columns, in column order
     * @param missingColumnIndexes the column indexes whose values are missing, ascending
     */
    public Partial {
      Objects.requireNonNull(presentValues, "presentValues");
      missingColumnIndexes = missingColumnIndexes.clone();
      if (missingColumnIndexes.length == 0) {
        throw new IllegalArgumentException("a partial row misses at least one column");
      }
      for (int i = 0; i < missingColumnIndexes.length; i++) {
        int m = missingColumnIndexes[i];
        if (m < 0 || m >= columnCount || (i > 0 && missingColumnIndexes[i - 1] >= m)) {
          throw new IllegalArgumentException(
              "missing column indexes must be ascending in 0.." + (columnCount - 1));
        }
      }
      if (presentValues.size() + missingColumnIndexes.length != columnCount) {
        throw new IllegalArgumentException(
            presentValues.size()
                + " present + "
                + missingColumnIndexes.length
                + " missing values != "
                + columnCount
                + " columns");
      }
    }

    /**
     * Returns the missing column indexes (a copy).
     *
     * @return the indexes, ascending
     */
    @Override
    public int[] missingColumnIndexes() {
      return missingColumnIndexes.clone();
    }

    @Override
    public boolean isPresent(int columnIndex) {
      Objects.checkIndex(columnIndex, columnCount);
      return Arrays.binarySearch(missingColumnIndexes, columnIndex) < 0;
    }

    @Override
    public @Nullable Object get(int columnIndex) {
      Objects.checkIndex(columnIndex, columnCount);
      int pos = Arrays.binarySearch(missingColumnIndexes, columnIndex);
      if (pos >= 0) {
        throw new IllegalStateException(
            "column " + columnIndex + " is an unchanged TOAST value that was not sent");
      }
      // -(insertion point) - 1: the number of missing columns before this one
      int missingBefore = -pos - 1;
      return presentValues.get(columnIndex - missingBefore);
    }

    /**
     * Returns the full row, taking missing values from {@code current} (for example the row a
     * destination holds).
     *
     * @param current a full row of the same table
     * @return the merged row
     */
    public TableRow mergeInto(TableRow current) {
      @Nullable Object[] merged = new Object[columnCount];
      for (int i = 0; i < columnCount; i++) {
        merged[i] = isPresent(i) ? get(i) : current.get(i);
      }
      return TableRow.of(merged);
    }

    @Override
    public boolean equals(@Nullable Object o) {
      return o instanceof Partial p
          && columnCount == p.columnCount
          && presentValues.equals(p.presentValues)
          && Arrays.equals(missingColumnIndexes, p.missingColumnIndexes);
    }

    @Override
    public int hashCode() {
      return Objects.hash(columnCount, presentValues) * 31 + Arrays.hashCode(missingColumnIndexes);
    }

    @Override
    public String toString() {
      return "Partial[columns="
          + columnCount
          + ", missing="
          + Arrays.toString(missingColumnIndexes)
          + "]";
    }
  }
}
