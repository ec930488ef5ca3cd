package org.pgetl.model;

import java.util.Objects;

/**
 * The old row of an UPDATE or DELETE, as the table's replica identity provides it: {@link Full}
 * (REPLICA IDENTITY FULL) or {@link Key} (the identity columns only).
 */
public sealed interface OldRow permits OldRow.Full, OldRow.Key {

  /**
   * Returns the values this old row carries.
   *
   * @return the row
   */
  TableRow row();

  /**
   * The whole old row, with every published column in column order.
   *
   * @param row the values
   */
  record Full(TableRow row) implements OldRow {
    /**
     * Validates the components.
     *
     * @param row the values
     */
    public Full {
      Objects.requireNonNull(row, "row");
    }
  }

  /**
   * The old values of the identity columns only, in the order of {@link
   * ReplicatedTableSchema#identityColumnIndexes()}.
   *
   * @param row the key values
   */
  record Key(TableRow row) implements OldRow {
    /**
     * Validates the components.
     *
     * @param row the key values
     */
    public Key {
      Objects.requireNonNull(row, "row");
    }
  }
}
