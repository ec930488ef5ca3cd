package org.pgetl.core.internal.chunk;

import java.util.Comparator;
import java.util.List;
import java.util.Optional;
import java.util.UUID;
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
 * replica identity index), of type {@code smallint}, {@code integer}, {@code bigint} or {@code
 * uuid}. A row keeps its chunk for as long as it keeps its key, and the apply stream finds a
 * change's chunk by comparing that column's value as PostgreSQL's btree does: integers as Java
 * {@code long}s ({@link Long} values), a {@code uuid} as its 16 bytes compared unsigned from the
 * first ({@code uuid_cmp} is a {@code memcmp}; {@link UUID#compareTo} compares signed halves and
 * would not do). No other type is taken: text compares by collation, which Java cannot reproduce,
 * and the rest is rare as the first column of a large table's key.
 *
 * <p>A key value is a {@link Long} or a {@link UUID}, as the decoded row holds it; {@link #order()}
 * compares two of one key.
 *
 * @param columnIndex the column's index among the table's replicated columns
 * @param name the column's name
 * @param typeOid the column's type
 */
public record ChunkKey(int columnIndex, String name, int typeOid) {
  private static final int INT8 = 20;
  private static final int INT2 = 21;
  private static final int INT4 = 23;
  private static final int UUID_OID = 2950;

  /** The lowest uuid in PostgreSQL's order. */
  private static final UUID MIN_UUID = new UUID(0, 0);

  private static final Comparator<Object> INTEGER_ORDER =
      (a, b) -> Long.compare(((Long) a).longValue(), ((Long) b).longValue());

  private static final Comparator<Object> UUID_ORDER =
      (a, b) -> {
        UUID x = (UUID) a;
        UUID y = (UUID) b;
        int c = Long.compareUnsigned(x.getMostSignificantBits(), y.getMostSignificantBits());
        return c != 0
            ? c
            : Long.compareUnsigned(x.getLeastSignificantBits(), y.getLeastSignificantBits());
      };

  /**
   * Returns the chunk key of a table, or empty when the table cannot be copied in chunks (no
   * primary key or identity index, or its first column is not an integer or a uuid).
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
    if (!supported(c.typeOid())) {
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
    return "the first column of its key is not smallint, integer, bigint or uuid";
  }

  private static boolean supported(int typeOid) {
    return typeOid == INT2 || typeOid == INT4 || typeOid == INT8 || typeOid == UUID_OID;
  }

  private boolean isUuid() {
    return typeOid == UUID_OID;
  }

  /**
   * Parses a bound in PostgreSQL's text form.
   *
   * @param text the value
   * @return the value: a {@link Long} or a {@link UUID}
   */
  public Object parse(String text) {
    return isUuid() ? UUID.fromString(text.trim()) : Long.valueOf(text.trim());
  }

  /**
   * Returns a value in PostgreSQL's text form, as bounds are stored.
   *
   * @param value a value of this key
   * @return its text
   */
  public String format(Object value) {
    return value.toString();
  }

  /**
   * Returns PostgreSQL's order of this key's values.
   *
   * @return the comparator
   */
  public Comparator<Object> order() {
    return isUuid() ? UUID_ORDER : INTEGER_ORDER;
  }

  /**
   * Returns a value no key value sorts before: where the first range chunk, open below, is filed.
   *
   * @return the lowest value
   */
  public Object lowest() {
    return isUuid() ? MIN_UUID : Long.MIN_VALUE;
  }

  private String literal(Object value) {
    // a parsed value: digits, or a uuid's canonical text (hex digits and dashes)
    return isUuid() ? "'" + value + "'::uuid" : value.toString();
  }

  /**
   * The SQL condition of a chunk over this key.
   *
   * @param from the lower bound (inclusive), or null
   * @param to the upper bound, or null
   * @param toInclusive whether {@code to} is inclusive (a key chunk)
   * @return the condition, or an empty string for the whole table
   */
  public String predicate(@Nullable Object from, @Nullable Object to, boolean toInclusive) {
    String col = TableName.quoteIdentifier(name);
    StringBuilder b = new StringBuilder();
    if (from != null) {
      b.append(col).append(" >= ").append(literal(from));
    }
    if (to != null) {
      b.append(b.length() == 0 ? "" : " AND ")
          .append(col)
          .append(toInclusive ? " <= " : " < ")
          .append(literal(to));
    }
    return b.toString();
  }

  /**
   * Returns the key of a full row.
   *
   * @param row a row of the table, in column order
   * @return the key ({@link Long} or {@link UUID}), or null when it is NULL
   */
  public @Nullable Object of(TableRow row) {
    return value(row.get(columnIndex));
  }

  /**
   * Returns the key of an update's new row.
   *
   * @param row the new row
   * @return the key, or null when it is NULL or not sent
   */
  public @Nullable Object of(UpdatedRow row) {
    return row.isPresent(columnIndex) ? value(row.get(columnIndex)) : null;
  }

  /**
   * Returns the key of an old row: its first value for an identity-only old row.
   *
   * @param old the old row, or null
   * @return the key, or null
   */
  public @Nullable Object of(@Nullable OldRow old) {
    if (old == null) {
      return null;
    }
    if (old instanceof OldRow.Key k) {
      return value(k.row().get(0));
    }
    return value(old.row().get(columnIndex));
  }

  private @Nullable Object value(@Nullable Object v) {
    if (isUuid()) {
      return v instanceof UUID ? v : null;
    }
    return v instanceof Number n ? Long.valueOf(n.longValue()) : null;
  }
}
