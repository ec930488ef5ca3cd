package org.pgetl.model;

import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * One column of a source table, as the catalog describes it.
 *
 * @param name the column name, as stored in {@code pg_attribute.attname}
 * @param typeOid the type's oid ({@code pg_attribute.atttypid}); domains keep their own oid
 * @param typeModifier the type modifier ({@code atttypmod}), -1 when none
 * @param typeName the formatted SQL type, as {@code format_type(atttypid, atttypmod)} prints it,
 *     for example {@code numeric(10,2)} or {@code text[]}
 * @param ordinalPosition the column's {@code attnum}, starting at 1 (gaps where columns were
 *     dropped)
 * @param primaryKeyOrdinal the 1-based position of the column in the primary key, 0 when the column
 *     is not part of it
 * @param nullable false when the column is {@code NOT NULL}
 * @param defaultExpression the column default as SQL text, or null when there is none
 */
// its signatures carry @Nullable of org.jspecify, read at compile time only (requires static)
@SuppressWarnings("exports")
public record ColumnSchema(
    String name,
    int typeOid,
    int typeModifier,
    String typeName,
    int ordinalPosition,
    int primaryKeyOrdinal,
    boolean nullable,
    @Nullable String defaultExpression) {

  /**
   * Validates the components.
   *
   * @param name the column name, as stored in {@code pg_attribute.attname}
   * @param typeOid the type's oid ({@code pg_attribute.atttypid}); domains keep their own oid
   * @param typeModifier the type modifier ({@code atttypmod}), -1 when none
   * @param typeName the formatted SQL type, as {@code format_type(atttypid, atttypmod)} prints it,
   *     for example {@code numeric(10,2)} or {@code text[]}
   * @param ordinalPosition the column's {@code attnum}, starting at 1 (gaps where columns were
   *     dropped)
   * @param primaryKeyOrdinal the 1-based position of the column in the primary key, 0 when the
   *     column is not part of it
   * @param nullable false when the column is {@code NOT NULL}
   * @param defaultExpression the column default as SQL text, or null when there is none
   */
  public ColumnSchema {
    Objects.requireNonNull(name, "name");
    Objects.requireNonNull(typeName, "typeName");
    if (primaryKeyOrdinal < 0) {
      throw new IllegalArgumentException(
          "primaryKeyOrdinal must be >= 0, was " + primaryKeyOrdinal);
    }
  }

  /**
   * Returns true when the column is part of the primary key.
   *
   * @return whether the column belongs to the primary key
   */
  public boolean isPrimaryKey() {
    return primaryKeyOrdinal > 0;
  }
}
