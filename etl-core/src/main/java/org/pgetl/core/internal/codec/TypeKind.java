package org.pgetl.core.internal.codec;

/** The shape of a PostgreSQL type, from {@code pg_type.typtype} (arrays told apart). */
public enum TypeKind {
  /** A base (scalar) type, built in or from an extension. */
  BASE,
  /** An array of another type. */
  ARRAY,
  /** A domain over another type. */
  DOMAIN,
  /** An enum. */
  ENUM,
  /** A composite (row) type. */
  COMPOSITE,
  /** A range type. */
  RANGE,
  /** A multirange type (PostgreSQL 14+). */
  MULTIRANGE,
  /** A pseudo type ({@code record}, {@code unknown}, ...). */
  PSEUDO,
  /** A type the registry has not seen: decoded as its text form, never from binary. */
  UNKNOWN
}
