package org.pgetl.model;

/**
 * How a table identifies its rows in UPDATE and DELETE events: its {@code REPLICA IDENTITY}.
 *
 * <p>It decides what an {@link OldRow} holds: the whole old row ({@link #FULL}), only the key
 * columns ({@link #PRIMARY_KEY}, {@link #INDEX}), or nothing ({@link #NOTHING}: PostgreSQL then
 * refuses UPDATE and DELETE on a published table).
 */
public enum IdentityKind {
  /** {@code REPLICA IDENTITY DEFAULT} on a table with a primary key: old rows carry the key. */
  PRIMARY_KEY,
  /** {@code REPLICA IDENTITY USING INDEX}: old rows carry the columns of that unique index. */
  INDEX,
  /** {@code REPLICA IDENTITY FULL}: old rows carry every column. */
  FULL,
  /** {@code REPLICA IDENTITY NOTHING}, or DEFAULT without a primary key: no old row. */
  NOTHING
}
