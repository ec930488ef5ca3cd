package org.pgetl.core.internal.chunk;

import java.math.BigDecimal;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.util.Comparator;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.UUID;
import org.jspecify.annotations.Nullable;
import org.pgetl.core.internal.codec.TypeRegistry;
import org.pgetl.model.ColumnSchema;
import org.pgetl.model.IdentityKind;
import org.pgetl.model.OldRow;
import org.pgetl.model.PgNumeric;
import org.pgetl.model.PgText;
import org.pgetl.model.ReplicatedTableSchema;
import org.pgetl.model.TableName;
import org.pgetl.model.TableRow;
import org.pgetl.model.UpdatedRow;

/**
 * The column a table copied in chunks is split on: the first column of its primary key (or of its
 * replica identity index), of type {@code smallint}, {@code integer}, {@code bigint}, {@code uuid},
 * {@code numeric}, {@code date}, {@code timestamp} or {@code timestamptz}. A row keeps its chunk
 * for as long as it keeps its key, and the apply stream finds a change's chunk by comparing that
 * column's value as PostgreSQL's btree does:
 *
 * <ul>
 *   <li>integers as Java {@code long}s ({@link Long} values);
 *   <li>a {@code uuid} as its 16 bytes compared unsigned from the first ({@code uuid_cmp} is a
 *       {@code memcmp}; {@link UUID#compareTo} compares signed halves and would not do);
 *   <li>a {@code numeric} as a {@link PgNumeric}: {@code -Infinity}, the finite values, {@code
 *       Infinity}, then {@code NaN}, as {@code numeric_cmp} orders them; a finite value is kept
 *       without trailing zeros, so {@code 1.0} and {@code 1.00}, one key to the btree, are one key
 *       here too;
 *   <li>a {@code date}, {@code timestamp} or {@code timestamptz} as the {@link LocalDate}, {@link
 *       LocalDateTime} or {@link Instant} the decoder gives, in their natural order, which is
 *       PostgreSQL's ({@code -infinity} and {@code infinity} decode to the classes' {@code MIN} and
 *       {@code MAX}).
 * </ul>
 *
 * <p>No other type is taken: text compares by collation, which Java cannot reproduce, and the rest
 * is rare as the first column of a large table's key.
 *
 * <p>A key value is one of the classes above, as {@link #of(TableRow)} returns it; {@link #order()}
 * compares two of one key. Bounds are stored in PostgreSQL's text form ({@link PgText#format}) and
 * written into SQL as literals of the column's type.
 *
 * @param columnIndex the column's index among the table's replicated columns
 * @param name the column's name
 * @param typeOid the column's type
 */
public record ChunkKey(int columnIndex, String name, int typeOid) {
  private static final int INT8 = 20;
  private static final int INT2 = 21;
  private static final int INT4 = 23;
  private static final int DATE_OID = 1082;
  private static final int TIMESTAMP_OID = 1114;
  private static final int TIMESTAMPTZ_OID = 1184;
  private static final int NUMERIC_OID = 1700;
  private static final int UUID_OID = 2950;

  /** The built-in codecs, which read a bound's text form. */
  private static final TypeRegistry BUILTIN_TYPES = new TypeRegistry();

  /** How the values of one key type are read, compared and written. */
  private enum Kind {
    INTEGER(null, Long.MIN_VALUE) {
      @Override
      int compare(Object a, Object b) {
        return Long.compare((Long) a, (Long) b);
      }
    },
    UUID_KEY("uuid", new UUID(0, 0)) {
      @Override
      int compare(Object a, Object b) {
        UUID x = (UUID) a;
        UUID y = (UUID) b;
        int c = Long.compareUnsigned(x.getMostSignificantBits(), y.getMostSignificantBits());
        return c != 0
            ? c
            : Long.compareUnsigned(x.getLeastSignificantBits(), y.getLeastSignificantBits());
      }
    },
    NUMERIC("numeric", PgNumeric.NEGATIVE_INFINITY) {
      @Override
      int compare(Object a, Object b) {
        return ((PgNumeric) a).compareTo((PgNumeric) b);
      }
    },
    DATE("date", LocalDate.MIN) {
      @Override
      int compare(Object a, Object b) {
        return ((LocalDate) a).compareTo((LocalDate) b);
      }
    },
    TIMESTAMP("timestamp", LocalDateTime.MIN) {
      @Override
      int compare(Object a, Object b) {
        return ((LocalDateTime) a).compareTo((LocalDateTime) b);
      }
    },
    TIMESTAMPTZ("timestamptz", Instant.MIN) {
      @Override
      int compare(Object a, Object b) {
        return ((Instant) a).compareTo((Instant) b);
      }
    };

    /** The type's name in SQL, or null for a plain number literal. */
    final @Nullable String sqlType;

    /** A value no value of the type sorts before. */
    @SuppressWarnings("ImmutableEnumChecker") // a Long, UUID, PgNumeric or java.time value
    final Object lowest;

    Kind(@Nullable String sqlType, Object lowest) {
      this.sqlType = sqlType;
      this.lowest = lowest;
    }

    abstract int compare(Object a, Object b);

    static @Nullable Kind of(int typeOid) {
      return switch (typeOid) {
        case INT2, INT4, INT8 -> INTEGER;
        case UUID_OID -> UUID_KEY;
        case NUMERIC_OID -> NUMERIC;
        case DATE_OID -> DATE;
        case TIMESTAMP_OID -> TIMESTAMP;
        case TIMESTAMPTZ_OID -> TIMESTAMPTZ;
        default -> null;
      };
    }
  }

  /**
   * Checks the key's type.
   *
   * @throws IllegalArgumentException when a table cannot be split on a column of this type
   */
  public ChunkKey {
    if (Kind.of(typeOid) == null) {
      throw new IllegalArgumentException(
          "a table cannot be copied in chunks on a column of type oid " + typeOid);
    }
  }

  /**
   * Returns the chunk key of a table, or empty when the table cannot be copied in chunks (no
   * primary key or identity index, or its first column is not of a type listed above).
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
    if (Kind.of(c.typeOid()) == null) {
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
    return "the first column of its key is not smallint, integer, bigint, uuid, numeric, date,"
        + " timestamp or timestamptz";
  }

  private Kind kind() {
    return Objects.requireNonNull(Kind.of(typeOid));
  }

  /**
   * Parses a bound in PostgreSQL's text form (any time zone offset for a {@code timestamptz}).
   *
   * @param text the value
   * @return the value, of the class {@link #of(TableRow)} returns
   * @throws IllegalArgumentException when the text is not a value of the key's type
   */
  public Object parse(String text) {
    String t = text.trim();
    Object v =
        switch (kind()) {
          case INTEGER -> Long.valueOf(t);
          case UUID_KEY -> UUID.fromString(t);
          case NUMERIC -> PgNumeric.parse(t);
          case DATE, TIMESTAMP, TIMESTAMPTZ -> {
            byte[] b = t.getBytes(StandardCharsets.UTF_8);
            yield BUILTIN_TYPES.codec(typeOid).decodeText(b, 0, b.length);
          }
        };
    Object key = value(v);
    if (key == null) {
      throw new IllegalArgumentException("not a value of type oid " + typeOid + ": " + text);
    }
    return key;
  }

  /**
   * Returns a value in PostgreSQL's text form, as bounds are stored.
   *
   * @param value a value of this key
   * @return its text
   */
  public String format(Object value) {
    return Objects.requireNonNull(PgText.format(value));
  }

  /**
   * Returns PostgreSQL's order of this key's values.
   *
   * @return the comparator
   */
  public Comparator<Object> order() {
    return kind()::compare;
  }

  /**
   * Returns a value no key value sorts before: where the first range chunk, open below, is filed.
   *
   * @return the lowest value
   */
  public Object lowest() {
    return kind().lowest;
  }

  private String literal(Object value) {
    String sqlType = kind().sqlType;
    if (sqlType == null) {
      return value.toString(); // a Long: digits
    }
    return "'" + format(value).replace("'", "''") + "'::" + sqlType;
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
   * @return the key, or null when it is NULL
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

  /** A decoded value as a key value: integers widened, numerics without trailing zeros. */
  private @Nullable Object value(@Nullable Object v) {
    return switch (kind()) {
      case INTEGER -> v instanceof Number n ? Long.valueOf(n.longValue()) : null;
      case UUID_KEY -> v instanceof UUID ? v : null;
      case NUMERIC -> {
        PgNumeric n =
            v instanceof PgNumeric p ? p : v instanceof BigDecimal d ? PgNumeric.of(d) : null;
        yield n == null || !n.isFinite()
            ? n
            : PgNumeric.of(n.bigDecimalValue().stripTrailingZeros());
      }
      case DATE -> v instanceof LocalDate ? v : null;
      case TIMESTAMP -> v instanceof LocalDateTime ? v : null;
      case TIMESTAMPTZ -> v instanceof Instant ? v : null;
    };
  }
}
