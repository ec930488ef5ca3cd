package org.pgetl.destination.iceberg;

import java.math.BigDecimal;
import java.math.RoundingMode;
import java.nio.ByteBuffer;
import java.time.Instant;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.time.LocalTime;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.apache.iceberg.types.Type;
import org.apache.iceberg.types.Types;
import org.jspecify.annotations.Nullable;
import org.pgetl.error.ErrorKind;
import org.pgetl.error.EtlException;
import org.pgetl.model.ColumnSchema;
import org.pgetl.model.PgArray;
import org.pgetl.model.PgNumeric;
import org.pgetl.model.PgText;

/**
 * The Iceberg type of a PostgreSQL column, and the conversion of pgetl's values to the Java values
 * Iceberg's generic writer takes. The table is in {@code docs/iceberg.md}; in short:
 *
 * <ul>
 *   <li>bool, int2, int4, int8, oid, float4, float8: boolean, int, int, long, long, float, double;
 *   <li>{@code numeric(p,s)} with {@code 0 <= s <= p <= 38}: {@code decimal(p,s)}; numeric without
 *       a precision (or wider): string, the exact decimal text ({@code NaN} and {@code Infinity}
 *       included);
 *   <li>text, varchar, char, name, json, jsonb, enums: string; bytea: binary; uuid: uuid;
 *   <li>date, time, timestamp, timestamptz: date, time, timestamp, timestamptz (microseconds, as
 *       PostgreSQL);
 *   <li>one-dimensional arrays of bool, int2, int4, int8, float4, float8, text, varchar, char,
 *       name, uuid, date, timestamp, timestamptz: a list of the element type;
 *   <li>every other type (timetz, interval, other arrays, composites, domains, ranges, geometric
 *       types, money, inet, ...): string, PostgreSQL's text form of the value.
 * </ul>
 *
 * No value is rounded or replaced: a value the Iceberg type cannot hold ({@code NaN} or {@code
 * infinity} in a decimal, date or timestamp column, a {@code 24:00:00} time, a two-dimensional
 * array in a list column) fails the write with {@code DESTINATION_SCHEMA_ERROR} naming the column.
 */
final class IcebergTypes {
  private IcebergTypes() {}

  private static final Map<Integer, Type> SCALARS =
      Map.ofEntries(
          Map.entry(16, Types.BooleanType.get()),
          Map.entry(17, Types.BinaryType.get()),
          Map.entry(20, Types.LongType.get()),
          Map.entry(21, Types.IntegerType.get()),
          Map.entry(23, Types.IntegerType.get()),
          Map.entry(26, Types.LongType.get()),
          Map.entry(700, Types.FloatType.get()),
          Map.entry(701, Types.DoubleType.get()),
          Map.entry(1082, Types.DateType.get()),
          Map.entry(1083, Types.TimeType.get()),
          Map.entry(1114, Types.TimestampType.withoutZone()),
          Map.entry(1184, Types.TimestampType.withZone()),
          Map.entry(2950, Types.UUIDType.get()));

  /** Array type oid to element type, for the arrays stored as lists. */
  private static final Map<Integer, Type> LISTS =
      Map.ofEntries(
          Map.entry(1000, Types.BooleanType.get()),
          Map.entry(1005, Types.IntegerType.get()),
          Map.entry(1007, Types.IntegerType.get()),
          Map.entry(1016, Types.LongType.get()),
          Map.entry(1021, Types.FloatType.get()),
          Map.entry(1022, Types.DoubleType.get()),
          Map.entry(1009, Types.StringType.get()),
          Map.entry(1015, Types.StringType.get()),
          Map.entry(1014, Types.StringType.get()),
          Map.entry(1003, Types.StringType.get()),
          Map.entry(2951, Types.UUIDType.get()),
          Map.entry(1182, Types.DateType.get()),
          Map.entry(1115, Types.TimestampType.withoutZone()),
          Map.entry(1185, Types.TimestampType.withZone()));

  /**
   * Returns the Iceberg type of a column (see the class comment).
   *
   * @param column the source column
   * @return the type
   */
  static Type forColumn(ColumnSchema column) {
    if (column.typeOid() == 1700) {
      int typmod = column.typeModifier();
      if (typmod >= 4) {
        int precision = ((typmod - 4) >> 16) & 0xFFFF;
        int scale = (((typmod - 4) & 0x7FF) ^ 1024) - 1024;
        if (precision <= 38 && scale >= 0 && scale <= precision) {
          return Types.DecimalType.of(precision, scale);
        }
      }
      return Types.StringType.get();
    }
    Type element = LISTS.get(column.typeOid());
    if (element != null) {
      // the element id is a placeholder: Iceberg assigns fresh ids when the field is created
      return Types.ListType.ofOptional(Integer.MAX_VALUE - column.ordinalPosition(), element);
    }
    Type t = SCALARS.get(column.typeOid());
    return t != null ? t : Types.StringType.get();
  }

  /**
   * Returns whether two types are the same column type (list element ids aside).
   *
   * @param a one type
   * @param b the other
   * @return whether they are equal
   */
  static boolean sameType(Type a, Type b) {
    if (a instanceof Types.ListType la && b instanceof Types.ListType lb) {
      return la.elementType().equals(lb.elementType());
    }
    return a.equals(b);
  }

  /**
   * Returns whether a column can change type in place (see {@link #sameType}, Iceberg's
   * promotions).
   *
   * @param from the current type
   * @param to the wanted type
   * @return whether the change is allowed
   */
  static boolean canPromote(Type from, Type to) {
    if (sameType(from, to)) {
      return true;
    }
    if (!from.isPrimitiveType() || !to.isPrimitiveType()) {
      return false;
    }
    if (from.equals(to)) {
      return true;
    }
    if (from.typeId() == Type.TypeID.INTEGER && to.typeId() == Type.TypeID.LONG) {
      return true;
    }
    if (from.typeId() == Type.TypeID.FLOAT && to.typeId() == Type.TypeID.DOUBLE) {
      return true;
    }
    if (from instanceof Types.DecimalType a && to instanceof Types.DecimalType b) {
      return a.scale() == b.scale() && b.precision() >= a.precision();
    }
    return false;
  }

  /**
   * Converts a pgetl value to the value Iceberg's generic writer takes for {@code type}.
   *
   * @param value the value as {@code TableRow.get} returns it
   * @param type the column's Iceberg type
   * @param column the column's name, for the error
   * @param table the table's name, for the error
   * @return the Iceberg value, or null for SQL NULL
   * @throws EtlException ({@code DESTINATION_SCHEMA_ERROR}) when the type cannot hold the value
   */
  static @Nullable Object toIceberg(
      @Nullable Object value, Type type, String column, String table) {
    if (value == null) {
      return null;
    }
    Object out =
        switch (type.typeId()) {
          case STRING -> value instanceof String s ? s : PgText.format(value);
          case BOOLEAN -> value instanceof Boolean ? value : null;
          case INTEGER ->
              value instanceof Integer ? value : value instanceof Short s ? (Object) (int) s : null;
          case LONG ->
              value instanceof Long
                  ? value
                  : value instanceof Integer i
                      ? (Object) (long) i
                      : value instanceof Short s ? (Object) (long) s : null;
          case FLOAT -> value instanceof Float ? value : null;
          case DOUBLE ->
              value instanceof Double
                  ? value
                  : value instanceof Float f ? (Object) (double) f : null;
          case DECIMAL -> decimal(value, (Types.DecimalType) type, column, table);
          case BINARY -> value instanceof byte[] b ? ByteBuffer.wrap(b) : null;
          case UUID -> value instanceof UUID ? value : null;
          case DATE ->
              value instanceof LocalDate d && !d.equals(LocalDate.MAX) && !d.equals(LocalDate.MIN)
                  ? d
                  : null;
          case TIME -> value instanceof LocalTime ? value : null;
          case TIMESTAMP -> timestamp(value, (Types.TimestampType) type, column, table);
          case LIST -> list(value, (Types.ListType) type, column, table);
          default -> null;
        };
    if (out == null) {
      throw unfit(value, type, column, table);
    }
    return out;
  }

  /**
   * Converts a decoded PostgreSQL value into Iceberg's internal representation, which the copy's
   * data files are written from ({@code InternalWriter}): as {@link #toIceberg}, except that a
   * {@code date} is its epoch day ({@code Integer}), a {@code time} its microsecond of the day and
   * a timestamp its microseconds since the epoch ({@code Long}), in lists too. The same values are
   * refused.
   *
   * @param value the decoded value, or null
   * @param type the column's Iceberg type
   * @param column the column's name, for the error
   * @param table the table's name, for the error
   * @return the internal value, or null for SQL NULL
   * @throws EtlException ({@code DESTINATION_SCHEMA_ERROR}) when the type cannot hold the value
   */
  static @Nullable Object toInternal(
      @Nullable Object value, Type type, String column, String table) {
    if (value == null) {
      return null;
    }
    switch (type.typeId()) {
      case DATE -> {
        if (value instanceof LocalDate d && !d.equals(LocalDate.MAX) && !d.equals(LocalDate.MIN)) {
          return Math.toIntExact(d.toEpochDay());
        }
        throw unfit(value, type, column, table);
      }
      case TIME -> {
        if (value instanceof LocalTime t) {
          return t.toNanoOfDay() / 1000;
        }
        throw unfit(value, type, column, table);
      }
      case TIMESTAMP -> {
        boolean utc = ((Types.TimestampType) type).shouldAdjustToUTC();
        if (utc && value instanceof Instant i && !i.equals(Instant.MAX) && !i.equals(Instant.MIN)) {
          return micros(i.getEpochSecond(), i.getNano());
        }
        if (!utc
            && value instanceof LocalDateTime t
            && !t.equals(LocalDateTime.MAX)
            && !t.equals(LocalDateTime.MIN)) {
          Instant i = t.toInstant(ZoneOffset.UTC);
          return micros(i.getEpochSecond(), i.getNano());
        }
        throw unfit(value, type, column, table);
      }
      case LIST -> {
        Types.ListType list = (Types.ListType) type;
        if (!(value instanceof PgArray a) || a.dimensionCount() > 1 || !a.hasDefaultLowerBounds()) {
          throw unfit(value, type, column, table);
        }
        List<@Nullable Object> out = new ArrayList<>(a.elements().size());
        for (Object e : a.elements()) {
          out.add(toInternal(e, list.elementType(), column, table));
        }
        return out;
      }
      default -> {
        return toIceberg(value, type, column, table);
      }
    }
  }

  /** Microseconds since the epoch, as Iceberg stores timestamps (the nanoseconds are positive). */
  private static long micros(long epochSecond, int nano) {
    return Math.addExact(Math.multiplyExact(epochSecond, 1_000_000L), nano / 1000);
  }

  private static @Nullable Object list(
      Object value, Types.ListType type, String column, String table) {
    if (!(value instanceof PgArray a) || a.dimensionCount() > 1 || !a.hasDefaultLowerBounds()) {
      return null; // a multi-dimensional array, or one not starting at 1, has no list form
    }
    List<@Nullable Object> out = new ArrayList<>(a.elements().size());
    for (Object e : a.elements()) {
      out.add(toIceberg(e, type.elementType(), column, table));
    }
    return out;
  }

  private static Object decimal(Object value, Types.DecimalType type, String column, String table) {
    BigDecimal d;
    if (value instanceof PgNumeric n) {
      if (!n.isFinite()) {
        throw unfit(value, type, column, table);
      }
      d = n.bigDecimalValue();
    } else if (value instanceof BigDecimal b) {
      d = b;
    } else {
      throw unfit(value, type, column, table);
    }
    try {
      // PostgreSQL already rounded to the column's scale: this only pads (1.5 -> 1.50)
      BigDecimal scaled = d.setScale(type.scale(), RoundingMode.UNNECESSARY);
      if (scaled.precision() > type.precision()) {
        throw unfit(value, type, column, table);
      }
      return scaled;
    } catch (ArithmeticException e) {
      throw unfit(value, type, column, table);
    }
  }

  private static Object timestamp(
      Object value, Types.TimestampType type, String column, String table) {
    if (type.shouldAdjustToUTC() && value instanceof Instant i) {
      if (i.equals(Instant.MAX) || i.equals(Instant.MIN)) {
        throw unfit(value, type, column, table);
      }
      // not OffsetDateTime.ofInstant: it builds the offset's ZoneRules on every call
      return OffsetDateTime.of(
          LocalDateTime.ofEpochSecond(i.getEpochSecond(), i.getNano(), ZoneOffset.UTC),
          ZoneOffset.UTC);
    }
    if (!type.shouldAdjustToUTC() && value instanceof LocalDateTime t) {
      if (t.equals(LocalDateTime.MAX) || t.equals(LocalDateTime.MIN)) {
        throw unfit(value, type, column, table);
      }
      return t;
    }
    throw unfit(value, type, column, table);
  }

  private static EtlException unfit(Object value, Type type, String column, String table) {
    return new EtlException(
        ErrorKind.DESTINATION_SCHEMA_ERROR,
        "a value of column "
            + column
            + " of table "
            + table
            + " cannot be stored in its Iceberg type "
            + type,
        "Iceberg's "
            + type
            + " has no form for this value (infinity, NaN, or a value of an unexpected type "
            + value.getClass().getSimpleName()
            + "); change the column's type at the source (for example to text) and copy the"
            + " table again",
        null);
  }
}
