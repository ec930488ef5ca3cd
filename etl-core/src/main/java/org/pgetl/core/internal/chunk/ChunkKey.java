package org.pgetl.core.internal.chunk;

import java.util.List;
import java.util.Optional;
import org.jspecify.annotations.Nullable;
import org.pgetl.model.ColumnSchema;
import org.pgetl.model.IdentityKind;
import org.pgetl.model.OldRow;
import org.pgetl.model.ReplicatedTableSchema;
import org.pgetl.model.TableName;
import org.pgetl.model.TableRow;
import org.pgetl.model.UpdatedRow;

/**
 * The column a table copied in chunks is split on: the first column of its primary key (or of its
 * replica identity index), of type {@code smallint}, {@code integer} or {@code bigint}. A row keeps
 * its chunk for as long as it keeps its key, and the apply stream finds a change's chunk by
 * comparing that column's value as PostgreSQL does (integers compare the same in Java).
 *
 * @param columnIndex the column's index among the table's replicated columns
 * @param name the column's name
 * @param typeOid the column's type
 */
public record ChunkKey(int columnIndex, String name, int typeOid) {
  private static final int INT8 = 20;
  private static final int INT2 = 21;
  private static final int INT4 = 23;

  /**
   * Returns the chunk key of a table, or empty when the table cannot be copied in chunks (no
   * primary key or identity index, or its first column is not an integer).
   *
   * @param schema the table's replicated schema
   * @return the key, or empty
   */
  public static Optional<ChunkKey> of(ReplicatedTableSchema schema) {
    if (schema.identity() != IdentityKind.PRIMARY_KEY && schema.identity() != IdentityKind.INDEX) {
      return Optional.empty();
    }
    int[] identity = schema.identityColumnIndexes();
    if (identity.length == 0) {
      return Optional.empty();
    }
    ColumnSchema c = schema.columns().get(identity[0]);
    if (c.typeOid() != INT2 && c.typeOid() != INT4 && c.typeOid() != INT8) {
      return Optional.empty();
    }
    return Optional.of(new ChunkKey(identity[0], c.name(), c.typeOid()));
  }

  /**
   * Returns this key as it is in another version of the table's schema: the column of the same name
   * and type, wherever it is now; null when that version has no such column.
   *
   * @param schema a version of the table's schema
   * @return the key in it, or null
   */
  public @Nullable ChunkKey in(ReplicatedTableSchema schema) {
    int[] identity = schema.identityColumnIndexes();
    if (identity.length > 0
        && (schema.identity() == IdentityKind.PRIMARY_KEY
            || schema.identity() == IdentityKind.INDEX)
        && !schema.columns().get(identity[0]).name().equals(name)) {
      // another key leads the identity now: an old key row's first value is not this column
      return null;
    }
    List<ColumnSchema> cols = schema.columns();
    if (columnIndex < cols.size()
        && cols.get(columnIndex).name().equals(name)
        && cols.get(columnIndex).typeOid() == typeOid) {
      return this;
    }
    for (int i = 0; i < cols.size(); i++) {
      if (cols.get(i).name().equals(name) && cols.get(i).typeOid() == typeOid) {
        return new ChunkKey(i, name, typeOid);
      }
    }
    return null;
  }

  /**
   * Returns true when two keys split a table the same way (same column name and type).
   *
   * @param other the other key
   * @return whether they are the same column
   */
  public boolean sameColumn(ChunkKey other) {
    return name.equals(other.name) && typeOid == other.typeOid;
  }

  /**
   * Returns why a table cannot be copied in chunks, for the log.
   *
   * @param schema the table's replicated schema
   * @return the reason
   */
  public static String whyNot(ReplicatedTableSchema schema) {
    if (schema.identity() != IdentityKind.PRIMARY_KEY && schema.identity() != IdentityKind.INDEX) {
      return "it has no primary key or replica identity index";
    }
    return "the first column of its key is not smallint, integer or bigint";
  }

  /**
   * Parses a bound in PostgreSQL's text form.
   *
   * @param text the value
   * @return the value
   */
  public long parse(String text) {
    return Long.parseLong(text.trim());
  }

  /**
   * The SQL condition of a chunk over this key.
   *
   * @param from the lower bound (inclusive), or null
   * @param to the upper bound, or null
   * @param toInclusive whether {@code to} is inclusive (a key chunk)
   * @return the condition, or an empty string for the whole table
   */
  public String predicate(@Nullable Long from, @Nullable Long to, boolean toInclusive) {
    String col = TableName.quoteIdentifier(name);
    StringBuilder b = new StringBuilder();
    if (from != null) {
      b.append(col).append(" >= ").append(from.longValue());
    }
    if (to != null) {
      b.append(b.length() == 0 ? "" : " AND ")
          .append(col)
          .append(toInclusive ? " <= " : " < ")
          .append(to.longValue());
    }
    return b.toString();
  }

  /**
   * Returns the key of a full row.
   *
   * @param row a row of the table, in column order
   * @return the key, or null when it is NULL
   */
  public @Nullable Long of(TableRow row) {
    return number(row.get(columnIndex));
  }

  /**
   * Returns the key of an update's new row.
   *
   * @param row the new row
   * @return the key, or null when it is NULL or not sent
   */
  public @Nullable Long of(UpdatedRow row) {
    return row.isPresent(columnIndex) ? number(row.get(columnIndex)) : null;
  }

  /**
   * Returns the key of an old row: its first value for an identity-only old row.
   *
   * @param old the old row, or null
   * @return the key, or null
   */
  public @Nullable Long of(@Nullable OldRow old) {
    if (old == null) {
      return null;
    }
    if (old instanceof OldRow.Key k) {
      return number(k.row().get(0));
    }
    return number(old.row().get(columnIndex));
  }

  private static @Nullable Long number(@Nullable Object v) {
    return v instanceof Number n ? n.longValue() : null;
  }
}
