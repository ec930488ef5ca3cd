package org.pgetl.core.internal.decode;

import org.jspecify.annotations.Nullable;

/**
 * A table's replica identity as a Relation message states it ({@code pg_class.relreplident}): which
 * old values the server sends with an Update or Delete.
 */
public enum ReplicaIdentity {
  /** {@code 'd'}: the primary key columns, if the table has a primary key. */
  DEFAULT('d'),
  /** {@code 'n'}: nothing; the server refuses UPDATE and DELETE on a table that publishes them. */
  NOTHING('n'),
  /** {@code 'f'}: every column of the old row. */
  FULL('f'),
  /** {@code 'i'}: the columns of a chosen unique index ({@code REPLICA IDENTITY USING INDEX}). */
  INDEX('i');

  private final char code;

  ReplicaIdentity(char code) {
    this.code = code;
  }

  /**
   * Returns the character that marks this identity on the wire and in {@code pg_class}.
   *
   * @return {@code 'd'}, {@code 'n'}, {@code 'f'} or {@code 'i'}
   */
  public char code() {
    return code;
  }

  /**
   * Returns the identity of a wire code, or null when the code is not one.
   *
   * @param code the byte from the message
   * @return the identity, or null
   */
  public static @Nullable ReplicaIdentity ofCode(int code) {
    return switch (code) {
      case 'd' -> DEFAULT;
      case 'n' -> NOTHING;
      case 'f' -> FULL;
      case 'i' -> INDEX;
      default -> null;
    };
  }
}
