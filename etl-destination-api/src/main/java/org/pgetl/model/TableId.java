package org.pgetl.model;

/**
 * The identity of a source table: its PostgreSQL object id ({@code pg_class.oid}), an unsigned
 * 32-bit number.
 *
 * <p>The oid survives renames of the table, so pgetl keys all table state by it.
 *
 * @param oid the table's oid, from 1 to 4294967295
 */
public record TableId(long oid) implements Comparable<TableId> {
  /**
   * Validates the components.
   *
   * @param oid the table's oid, from 1 to 4294967295
   */
  public TableId {
    if (oid <= 0 || oid > 0xFFFFFFFFL) {
      throw new IllegalArgumentException("table oid must be in 1..4294967295, was " + oid);
    }
  }

  /**
   * Returns the table id of an oid read as a signed 32-bit int (as the wire protocol carries it).
   *
   * @param oid the oid bits
   * @return the table id
   */
  public static TableId ofInt(int oid) {
    return new TableId(Integer.toUnsignedLong(oid));
  }

  @Override
  public int compareTo(TableId other) {
    return Long.compare(oid, other.oid);
  }

  /**
   * Returns the oid in decimal.
   *
   * @return the oid
   */
  @Override
  public String toString() {
    return Long.toString(oid);
  }
}
