package org.pgetl.core.internal.pg;

/**
 * One row of {@code pg_attribute} for a table column ({@code attnum > 0}), dropped columns
 * included: attnums are never reused, so the rows of dropped columns still tell which attnums
 * existed.
 *
 * @param attnum the column's {@code attnum}
 * @param dropped {@code attisdropped}: the column is gone (its name and type are then meaningless)
 * @param generated the column is generated ({@code pg_attribute.attgenerated} not empty): pgoutput
 *     does not publish it (before PostgreSQL 18)
 * @param name {@code attname}
 * @param typeOid {@code atttypid} (0 for a dropped column)
 * @param typeModifier {@code atttypmod}
 * @param typeName {@code format_type(atttypid, atttypmod)}, or null for a dropped column
 * @param notNull {@code attnotnull}
 * @param defaultExpression the column default as SQL text, or null
 * @param primaryKeyOrdinal the 1-based position of the column in the primary key, 0 when none
 */
public record Attribute(
    int attnum,
    boolean dropped,
    boolean generated,
    String name,
    int typeOid,
    int typeModifier,
    String typeName,
    boolean notNull,
    String defaultExpression,
    int primaryKeyOrdinal) {

  /**
   * Returns whether the column exists and pgoutput can publish it (neither dropped nor generated).
   *
   * @return whether the column is a live, ordinary one
   */
  public boolean alive() {
    return !dropped && !generated;
  }
}
