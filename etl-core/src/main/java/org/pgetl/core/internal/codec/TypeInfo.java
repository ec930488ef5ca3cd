package org.pgetl.core.internal.codec;

import java.util.List;
import java.util.Objects;

/**
 * What pgetl knows of one PostgreSQL type: the catalog facts that decide how its values decode.
 *
 * @param oid the type's oid
 * @param name the type's name ({@code pg_type.typname}), schema-qualified for non-built-in types
 * @param kind the shape of the type
 * @param category the type's category ({@code pg_type.typcategory}: {@code N} numeric, {@code S}
 *     string, {@code D} date/time, {@code A} array, {@code U} user-defined, ...)
 * @param elementOid the element type of an array, 0 otherwise
 * @param delimiter the array delimiter of this type when it is an array element ({@code typdelim})
 * @param baseTypeOid the base type of a domain, 0 otherwise
 * @param rangeSubtypeOid the subtype of a range type, 0 otherwise
 * @param rangeOid the range type of a multirange type, 0 otherwise
 * @param attributeTypeOids the attribute types of a composite type in attribute order (dropped
 *     attributes left out), empty otherwise
 * @param hasBinaryOutput whether the type has a binary output function ({@code typsend})
 */
public record TypeInfo(
    int oid,
    String name,
    TypeKind kind,
    char category,
    int elementOid,
    char delimiter,
    int baseTypeOid,
    int rangeSubtypeOid,
    int rangeOid,
    List<Integer> attributeTypeOids,
    boolean hasBinaryOutput) {

  /** Validates the components and copies the attribute list. */
  public TypeInfo {
    Objects.requireNonNull(name, "name");
    Objects.requireNonNull(kind, "kind");
    attributeTypeOids = List.copyOf(attributeTypeOids);
  }

  /**
   * Returns the description of a type the registry does not know.
   *
   * @param oid the type's oid
   * @return a type of kind {@link TypeKind#UNKNOWN}
   */
  public static TypeInfo unknown(int oid) {
    return new TypeInfo(
        oid,
        "unknown type " + Integer.toUnsignedString(oid),
        TypeKind.UNKNOWN,
        'X',
        0,
        ',',
        0,
        0,
        0,
        List.of(),
        false);
  }

  /**
   * Returns the type's name and oid for messages, for example {@code numeric (oid 1700)}.
   *
   * @return the label
   */
  public String label() {
    return kind == TypeKind.UNKNOWN ? name : name + " (oid " + Integer.toUnsignedString(oid) + ")";
  }
}
