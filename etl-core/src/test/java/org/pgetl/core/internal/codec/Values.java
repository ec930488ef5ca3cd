package org.pgetl.core.internal.codec;

import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.time.LocalTime;
import java.time.OffsetTime;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.UUID;
import org.pgetl.model.PgArray;
import org.pgetl.model.PgInterval;
import org.pgetl.model.PgNumeric;

/** Test helpers: value equality that looks into byte arrays, and the documented Java types. */
final class Values {
  private Values() {}

  /** Equal values, byte arrays compared by content (also inside arrays). */
  static boolean same(Object a, Object b) {
    if (a instanceof byte[] x && b instanceof byte[] y) {
      return Arrays.equals(x, y);
    }
    if (a instanceof PgArray x && b instanceof PgArray y) {
      if (x.elementTypeOid() != y.elementTypeOid()
          || !x.dimensions().equals(y.dimensions())
          || !x.lowerBounds().equals(y.lowerBounds())
          || x.elements().size() != y.elements().size()) {
        return false;
      }
      for (int i = 0; i < x.elements().size(); i++) {
        if (!same(x.elements().get(i), y.elements().get(i))) {
          return false;
        }
      }
      return true;
    }
    return a == null ? b == null : a.equals(b);
  }

  /** Renders a value for assertion messages (these are test values, never user data). */
  static String show(Object v) {
    if (v instanceof byte[] b) {
      return "bytes[" + HexFormat.of().formatHex(b) + "]";
    }
    if (v instanceof PgArray a) {
      StringBuilder sb = new StringBuilder("PgArray[" + a.elementTypeOid() + " ");
      sb.append(a.dimensions()).append(a.lowerBounds()).append(" ");
      for (Object e : a.elements()) {
        sb.append(show(e)).append(';');
      }
      return sb.append(']').toString();
    }
    return v == null ? "null" : v.getClass().getSimpleName() + "(" + v + ")";
  }

  /** The Java class docs/types.md promises for a built-in type oid. */
  static Class<?> javaType(TypeRegistry registry, int oid) {
    TypeInfo t = registry.typeInfo(oid);
    if (t.kind() == TypeKind.ARRAY && oid != 22 && oid != 30) {
      return PgArray.class;
    }
    return switch (oid) {
      case 16 -> Boolean.class;
      case 21 -> Short.class;
      case 23 -> Integer.class;
      case 20, 26, 28, 29, 5069 -> Long.class;
      case 700 -> Float.class;
      case 701 -> Double.class;
      case 1700 -> PgNumeric.class;
      case 17 -> byte[].class;
      case 1082 -> LocalDate.class;
      case 1083 -> LocalTime.class;
      case 1266 -> OffsetTime.class;
      case 1114 -> LocalDateTime.class;
      case 1184 -> Instant.class;
      case 1186 -> PgInterval.class;
      case 2950 -> UUID.class;
      default -> String.class;
    };
  }

  static byte[] utf8(String s) {
    return s.getBytes(StandardCharsets.UTF_8);
  }
}
