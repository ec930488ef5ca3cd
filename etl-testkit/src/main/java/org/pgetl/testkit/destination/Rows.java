package org.pgetl.testkit.destination;

import java.util.AbstractList;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.Collections;
import java.util.Comparator;
import java.util.List;
import java.util.RandomAccess;
import org.jspecify.annotations.Nullable;
import org.pgetl.model.PgArray;
import org.pgetl.model.TableRow;

/**
 * Rows as tests compare them: immutable lists of column values whose {@code equals} compares {@code
 * byte[]} values (also inside {@link PgArray} elements) by content, and one total order to sort
 * them by.
 *
 * <p>{@link RecordingDestination#rows} and {@link SourceTables#read} return rows built here, so
 * {@code assertThat(destination.rows(t)).isEqualTo(SourceTables.read(db, t))} works for every
 * column type, {@code bytea} included. Build expected rows with {@link #row(Object...)}; a plain
 * {@code List.of(...)} holding a {@code byte[]} compares by identity (the comparison is only deep
 * when the list on the left of {@code equals} is one of these rows).
 */
public final class Rows {
  private static final Comparator<List<?>> ORDER = Rows::compareRows;

  private Rows() {}

  /**
   * Returns a row of these values (nulls allowed).
   *
   * @param values the values in column order
   * @return the row
   */
  public static List<@Nullable Object> row(@Nullable Object... values) {
    return new Row(values.clone());
  }

  /**
   * Returns a row of the values of a list (copied; nulls allowed).
   *
   * @param values the values in column order
   * @return the row
   */
  public static List<@Nullable Object> copyOf(List<?> values) {
    if (values instanceof Row r) {
      return r;
    }
    return new Row(values.toArray());
  }

  /**
   * Returns the row of a {@link TableRow}.
   *
   * @param row the table row
   * @return its values as a row
   */
  public static List<@Nullable Object> of(TableRow row) {
    return new Row(row.values().toArray());
  }

  /**
   * Returns rows sorted by {@link #order()}, each converted by {@link #copyOf(List)}; an
   * unmodifiable list.
   *
   * @param rows the rows, in any order
   * @return the sorted rows
   */
  public static List<List<@Nullable Object>> sorted(Collection<? extends List<?>> rows) {
    List<List<@Nullable Object>> out = new ArrayList<>(rows.size());
    for (List<?> r : rows) {
      out.add(copyOf(r));
    }
    out.sort(ORDER);
    return Collections.unmodifiableList(out);
  }

  /**
   * Returns the order rows are sorted by: column by column, nulls first; values of one {@link
   * Comparable} class by their natural order, {@code byte[]} unsigned lexicographically, {@link
   * PgArray} element by element, anything else by class name then text form. A shorter row sorts
   * before a longer one it starts.
   *
   * @return the comparator
   */
  public static Comparator<List<?>> order() {
    return ORDER;
  }

  /**
   * Returns true when two values are equal as row values: {@code byte[]} by content, {@link
   * PgArray} by element type, shape and elements (compared by this method), anything else by {@code
   * equals}.
   *
   * @param a one value, or null
   * @param b another value, or null
   * @return whether they are equal
   */
  public static boolean valueEquals(@Nullable Object a, @Nullable Object b) {
    if (a == b) {
      return true;
    }
    if (a == null || b == null) {
      return false;
    }
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
        if (!valueEquals(x.elements().get(i), y.elements().get(i))) {
          return false;
        }
      }
      return true;
    }
    if (a.getClass().isArray() && b.getClass().isArray()) {
      return Arrays.deepEquals(new Object[] {a}, new Object[] {b});
    }
    return a.equals(b);
  }

  /**
   * Returns a hash code consistent with {@link #valueEquals(Object, Object)}.
   *
   * @param v a value, or null
   * @return the hash code
   */
  public static int valueHash(@Nullable Object v) {
    if (v == null) {
      return 0;
    }
    if (v instanceof byte[] b) {
      return Arrays.hashCode(b);
    }
    if (v instanceof PgArray a) {
      int h = a.elementTypeOid() * 31 + a.dimensions().hashCode();
      for (Object e : a.elements()) {
        h = h * 31 + valueHash(e);
      }
      return h;
    }
    if (v.getClass().isArray()) {
      return Arrays.deepHashCode(new Object[] {v});
    }
    return v.hashCode();
  }

  private static int compareRows(List<?> a, List<?> b) {
    int n = Math.min(a.size(), b.size());
    for (int i = 0; i < n; i++) {
      int c = compareValues(a.get(i), b.get(i));
      if (c != 0) {
        return c;
      }
    }
    return Integer.compare(a.size(), b.size());
  }

  @SuppressWarnings({"unchecked", "rawtypes"})
  static int compareValues(@Nullable Object a, @Nullable Object b) {
    if (a == b) {
      return 0;
    }
    if (a == null) {
      return -1;
    }
    if (b == null) {
      return 1;
    }
    if (a instanceof byte[] x && b instanceof byte[] y) {
      return Arrays.compareUnsigned(x, y);
    }
    if (a instanceof PgArray x && b instanceof PgArray y) {
      int c = compareRows(x.elements(), y.elements());
      return c != 0 ? c : compareRows(x.dimensions(), y.dimensions());
    }
    if (a.getClass() == b.getClass() && a instanceof Comparable cmp) {
      return cmp.compareTo(b);
    }
    int c = a.getClass().getName().compareTo(b.getClass().getName());
    return c != 0 ? c : String.valueOf(a).compareTo(String.valueOf(b));
  }

  /** A row: an immutable list with deep value equality. */
  private static final class Row extends AbstractList<@Nullable Object> implements RandomAccess {
    private final @Nullable Object[] values;

    Row(@Nullable Object[] values) {
      this.values = values;
    }

    @Override
    public @Nullable Object get(int index) {
      return values[index];
    }

    @Override
    public int size() {
      return values.length;
    }

    @Override
    public boolean equals(@Nullable Object o) {
      if (o == this) {
        return true;
      }
      if (!(o instanceof List<?> other) || other.size() != values.length) {
        return false;
      }
      for (int i = 0; i < values.length; i++) {
        if (!valueEquals(values[i], other.get(i))) {
          return false;
        }
      }
      return true;
    }

    @Override
    public int hashCode() {
      int h = 1;
      for (Object v : values) {
        h = 31 * h + valueHash(v);
      }
      return h;
    }

    @Override
    public String toString() {
      StringBuilder sb = new StringBuilder("[");
      for (int i = 0; i < values.length; i++) {
        if (i > 0) {
          sb.append(", ");
        }
        Object v = values[i];
        sb.append(v instanceof byte[] b ? "\\x" + hex(b) : String.valueOf(v));
      }
      return sb.append(']').toString();
    }

    private static String hex(byte[] b) {
      StringBuilder sb = new StringBuilder(b.length * 2);
      for (byte x : b) {
        sb.append(Character.forDigit((x >> 4) & 0xF, 16)).append(Character.forDigit(x & 0xF, 16));
      }
      return sb.toString();
    }
  }
}
