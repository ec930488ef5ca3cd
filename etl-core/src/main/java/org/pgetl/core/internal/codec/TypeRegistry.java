package org.pgetl.core.internal.codec;

import java.sql.Connection;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import org.pgetl.error.ErrorKind;
import org.pgetl.error.EtlException;
import org.pgetl.model.PgArray;
import org.pgetl.model.PgText;

/**
 * The types pgetl can decode: every built-in type (known statically, their oids are fixed), plus
 * the domains, enums, composite, range, multirange, array and extension types of one database,
 * loaded from its catalog with {@link #load(Connection, Collection)}.
 *
 * <p>Resolve a {@link ValueCodec} per column once, with {@link #codec(int)}, and decode every value
 * of the column with it. A type the registry has never seen decodes as its text form (a String) and
 * has no binary decoding; {@link #canDecodeBinary(int)} tells whether a stream or a COPY of a
 * column may use the binary format. Thread-safe: codecs are built once and cached; {@link #load}
 * may run while other threads decode.
 */
public final class TypeRegistry {
  static final int INT2 = 21;
  static final int OID = 26;
  private static final int MAX_NESTING = 32;
  private static final Map<Integer, TypeInfo> BUILTINS = parseBuiltins();

  private final Map<Integer, TypeInfo> loaded = new ConcurrentHashMap<>();
  private final Map<Integer, ValueCodec> codecs = new ConcurrentHashMap<>();

  /** Creates a registry that knows the built-in types. */
  public TypeRegistry() {}

  /**
   * Returns true when the oid is one of PostgreSQL's built-in types known statically.
   *
   * @param oid the type oid
   * @return whether the type is built in
   */
  public static boolean isBuiltin(int oid) {
    return BUILTINS.containsKey(oid);
  }

  /**
   * Returns what the registry knows of a type.
   *
   * @param oid the type oid
   * @return the type, or a type of kind {@link TypeKind#UNKNOWN} when neither built in nor loaded
   */
  public TypeInfo typeInfo(int oid) {
    TypeInfo t = BUILTINS.get(oid);
    if (t == null) {
      t = loaded.get(oid);
    }
    return t != null ? t : TypeInfo.unknown(oid);
  }

  /**
   * Returns true when values of the type decode from binary into the same value as from text, so
   * that a COPY or a replication stream carrying the type may use the binary format.
   *
   * @param oid the type oid
   * @return whether the binary form is supported
   */
  public boolean canDecodeBinary(int oid) {
    return codec(oid).canDecodeBinary();
  }

  /**
   * Returns the codec of a type (a domain gets the codec of its base type).
   *
   * @param oid the type oid
   * @return the codec, never null; for an unknown type, one that decodes the text form only
   */
  public ValueCodec codec(int oid) {
    ValueCodec c = codecs.get(oid);
    if (c != null) {
      return c;
    }
    c = build(oid, 0);
    ValueCodec raced = codecs.putIfAbsent(oid, c);
    return raced != null ? raced : c;
  }

  /**
   * Returns the codecs of several columns, in order.
   *
   * @param typeOids the column types
   * @return one codec per column
   */
  public List<ValueCodec> codecs(int... typeOids) {
    List<ValueCodec> list = new ArrayList<>(typeOids.length);
    for (int oid : typeOids) {
      list.add(codec(oid));
    }
    return list;
  }

  /**
   * Decodes the text form of a value of a type.
   *
   * @param type the type
   * @param buf the buffer holding the value
   * @param off where the value starts
   * @param len the value's length in bytes
   * @return the Java value
   * @throws EtlException when the bytes are not a valid text value of the type
   */
  public Object decodeText(TypeInfo type, byte[] buf, int off, int len) {
    return codec(type.oid()).decodeText(buf, off, len);
  }

  /**
   * Decodes the binary form of a value of a type.
   *
   * @param type the type
   * @param buf the buffer holding the value
   * @param off where the value starts
   * @param len the value's length in bytes
   * @return the Java value
   * @throws EtlException when the bytes are not a valid binary value of the type or the type has no
   *     binary decoding
   */
  public Object decodeBinary(TypeInfo type, byte[] buf, int off, int len) {
    return codec(type.oid()).decodeBinary(buf, off, len);
  }

  /**
   * Adds or replaces a type that is not built in (for example one learned from another source than
   * the catalog). Built-in oids cannot be replaced.
   *
   * @param type the type
   * @throws IllegalArgumentException when the oid is a built-in type's
   */
  public void register(TypeInfo type) {
    if (isBuiltin(type.oid())) {
      throw new IllegalArgumentException("type " + type.label() + " is built in");
    }
    loaded.put(type.oid(), type);
    codecs.clear();
  }

  /**
   * Loads types from the catalog of the connected database: the given types (again, if already
   * loaded) and every type they depend on that is not known yet (domain base types, array elements,
   * range subtypes, the range of a multirange, attribute types of composites). Built-in oids are
   * skipped; oids the catalog does not have stay unknown.
   *
   * @param connection a plain JDBC connection to the database the values come from
   * @param typeOids the types to load
   * @throws EtlException of kind {@link ErrorKind#SOURCE_QUERY_FAILED} when the catalog cannot be
   *     read
   */
  public void load(Connection connection, Collection<Integer> typeOids) {
    Set<Integer> pending = new LinkedHashSet<>();
    for (int oid : typeOids) {
      if (!isBuiltin(oid)) {
        pending.add(oid);
      }
    }
    Set<Integer> seen = new LinkedHashSet<>(pending);
    try {
      int major = connection.getMetaData().getDatabaseMajorVersion();
      while (!pending.isEmpty()) {
        Map<Integer, TypeInfo> found = CatalogQuery.load(connection, major, pending);
        pending.clear();
        for (TypeInfo t : found.values()) {
          loaded.put(t.oid(), t);
          for (int dep : dependencies(t)) {
            if (dep != 0 && !isBuiltin(dep) && !loaded.containsKey(dep) && seen.add(dep)) {
              pending.add(dep);
            }
          }
        }
      }
    } catch (SQLException e) {
      throw new EtlException(
          ErrorKind.SOURCE_QUERY_FAILED,
          "could not read types " + typeOids + " from pg_type",
          "SQLSTATE " + e.getSQLState() + ": " + e.getMessage(),
          e);
    } finally {
      codecs.clear();
    }
  }

  private static List<Integer> dependencies(TypeInfo t) {
    List<Integer> deps = new ArrayList<>(t.attributeTypeOids());
    deps.add(t.baseTypeOid());
    deps.add(t.elementOid());
    deps.add(t.rangeSubtypeOid());
    deps.add(t.rangeOid());
    return deps;
  }

  /** Decodes a binary value of a type into PostgreSQL's text form of it (for fields, bounds). */
  String binaryAsText(int oid, byte[] b, int off, int len) {
    ValueCodec c = codec(oid);
    if (!c.canDecodeBinary()) {
      throw BadValue.of(
          "a part of type " + typeInfo(oid).label() + " has no binary decoding: use text form");
    }
    return formatText(c.binary(b, off, len));
  }

  /** Formats a decoded value as PostgreSQL prints it, with the delimiter of an array's elements. */
  String formatText(Object value) {
    if (value instanceof PgArray a) {
      return PgText.formatArray(a, typeInfo(a.elementTypeOid()).delimiter());
    }
    return Objects.requireNonNull(
        PgText.format(value), "a value that is not SQL NULL has a text form");
  }

  // ------------------------------------------------------------------ building codecs

  private ValueCodec build(int oid, int depth) {
    if (depth > MAX_NESTING) {
      return new Scalars.TextOnly(typeInfo(oid).label());
    }
    ValueCodec cached = depth == 0 ? null : codecs.get(oid);
    if (cached != null) {
      return cached;
    }
    TypeInfo t = typeInfo(oid);
    String label = t.label();
    switch (t.kind()) {
      case DOMAIN:
        return build(t.baseTypeOid(), depth + 1);
      case ARRAY:
        if (oid == 22 || oid == 30) {
          return new TextForms.Vector(label, t.elementOid());
        }
        return new ArrayCodec(
            label,
            t.elementOid(),
            build(t.elementOid(), depth + 1),
            typeInfo(t.elementOid()).delimiter());
      case ENUM:
        return new Scalars.Text(label);
      case COMPOSITE:
        {
          boolean ok = t.hasBinaryOutput();
          for (int a : t.attributeTypeOids()) {
            ok &= build(a, depth + 1).canDecodeBinary();
          }
          return new RowTypes.Composite(label, this, ok);
        }
      case RANGE:
        return range(t, depth);
      case MULTIRANGE:
        {
          ValueCodec r = build(t.rangeOid(), depth + 1);
          if (r instanceof RowTypes.Range range) {
            return new RowTypes.Multirange(label, range);
          }
          return new Scalars.TextOnly(label);
        }
      case BASE:
      case PSEUDO:
        return BUILTINS.containsKey(oid) ? builtin(oid, label) : new Scalars.TextOnly(label);
      case UNKNOWN:
      default:
        return new Scalars.TextOnly(label);
    }
  }

  private ValueCodec range(TypeInfo t, int depth) {
    boolean ok = t.hasBinaryOutput() && build(t.rangeSubtypeOid(), depth + 1).canDecodeBinary();
    return new RowTypes.Range(t.label(), this, t.rangeSubtypeOid(), ok);
  }

  private ValueCodec builtin(int oid, String label) {
    return switch (oid) {
      case 16 -> new Scalars.Bool(label);
      case 17 -> new Scalars.Bytea(label);
      case 18 -> new Scalars.Char(label);
      case 20 -> new Scalars.Int8(label);
      case 21 -> new Scalars.Int2(label);
      case 23 -> new Scalars.Int4(label);
      case 26, 28, 29 -> new Scalars.UnsignedInt4(label); // oid, xid, cid
      case 5069 -> new Scalars.Xid8(label);
      case 700 -> new Scalars.Float4(label);
      case 701 -> new Scalars.Float8(label);
      case 1700 -> new NumericCodec(label);
      // text-like types whose binary form is their text
      case 19, 25, 114, 142, 194, 705, 1042, 1043, 1790, 2275 -> new Scalars.Text(label);
      case 3802, 4072 -> new Scalars.VersionedText(label); // jsonb, jsonpath
      case 2950 -> new Scalars.Uuid(label);
      case 1082 -> new DateTimeCodecs.Date(label);
      case 1083 -> new DateTimeCodecs.Time(label);
      case 1266 -> new DateTimeCodecs.TimeTz(label);
      case 1114 -> new DateTimeCodecs.Timestamp(label);
      case 1184 -> new DateTimeCodecs.TimestampTz(label);
      case 1186 -> new DateTimeCodecs.Interval(label);
      case 869 -> new TextForms.Inet(label, false);
      case 650 -> new TextForms.Inet(label, true);
      case 829 -> new TextForms.MacAddr(label, 6);
      case 774 -> new TextForms.MacAddr(label, 8);
      case 790 -> new TextForms.Money(label);
      case 1560, 1562 -> new TextForms.Bits(label);
      case 3220 -> new TextForms.Lsn(label);
      case 27 -> new TextForms.Tid(label);
      case 2970, 5038 -> new TextForms.Snapshot(label);
      case 600 -> new TextForms.Geometric(label, TextForms.Geometric.Shape.POINT);
      case 601 -> new TextForms.Geometric(label, TextForms.Geometric.Shape.LSEG);
      case 602 -> new TextForms.Geometric(label, TextForms.Geometric.Shape.PATH);
      case 603 -> new TextForms.Geometric(label, TextForms.Geometric.Shape.BOX);
      case 604 -> new TextForms.Geometric(label, TextForms.Geometric.Shape.POLYGON);
      case 628 -> new TextForms.Geometric(label, TextForms.Geometric.Shape.LINE);
      case 718 -> new TextForms.Geometric(label, TextForms.Geometric.Shape.CIRCLE);
      case 2249 -> new RowTypes.Composite(label, this, true); // record: fields carry their oids
      // reg* (names resolved through the catalog), aclitem, tsvector, tsquery, statistics types:
      // the binary form is not the text form
      default -> new Scalars.TextOnly(label);
    };
  }

  private static Map<Integer, TypeInfo> parseBuiltins() {
    Map<Integer, TypeInfo> map = new HashMap<>();
    for (String line : BuiltinTypes.TABLE.split("\n", -1)) {
      String[] f = line.trim().split(" ", -1);
      if (f.length < 5) {
        continue;
      }
      int oid = Integer.parseInt(f[0]);
      String name = f[1];
      int ref = Integer.parseInt(f[3]);
      char category = f[4].charAt(0);
      char delim = f.length > 5 ? f[5].charAt(0) : ',';
      TypeKind kind =
          switch (f[2]) {
            case "A" -> TypeKind.ARRAY;
            case "r" -> TypeKind.RANGE;
            case "m" -> TypeKind.MULTIRANGE;
            case "p" -> TypeKind.PSEUDO;
            default -> TypeKind.BASE;
          };
      TypeInfo t =
          new TypeInfo(
              oid,
              name,
              kind,
              category,
              kind == TypeKind.ARRAY ? ref : 0,
              delim,
              0,
              kind == TypeKind.RANGE ? ref : 0,
              kind == TypeKind.MULTIRANGE ? ref : 0,
              List.of(),
              kind != TypeKind.PSEUDO || oid == 2249);
      map.put(oid, t);
    }
    return Map.copyOf(map);
  }
}
