package org.pgetl.model;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * A PostgreSQL array of any dimension, with its lower bounds and NULL elements.
 *
 * <p>Elements are flattened in row-major order (the last index varies fastest), and each element is
 * the Java value of the element type (see {@code docs/types.md}), or null. An empty array has no
 * dimensions. Immutable.
 *
 * @param elementTypeOid the oid of the element type
 * @param dimensions the length of each dimension, outermost first
 * @param lowerBounds the lower bound of each dimension (1 unless the array was written with
 *     explicit bounds such as {@code [0:2]={...}})
 * @param elements the elements in row-major order; may contain nulls
 */
// its signatures carry @Nullable of org.jspecify, read at compile time only (requires static)
@SuppressWarnings("exports")
public record PgArray(
    int elementTypeOid,
    List<Integer> dimensions,
    List<Integer> lowerBounds,
    List<@Nullable Object> elements) {

  /**
   * Validates the components.
   *
   * @param elementTypeOid the oid of the element type
   * @param dimensions the length of each dimension, outermost first
   * @param lowerBounds the lower bound of each dimension (1 unless the array was written with
   *     explicit bounds such as {@code [0:2]={...}})
   * @param elements the elements in row-major order; may contain nulls
   */
  public PgArray {
    dimensions = List.copyOf(dimensions);
    lowerBounds = List.copyOf(lowerBounds);
    Objects.requireNonNull(elements, "elements");
    elements = Collections.unmodifiableList(new ArrayList<>(elements));
    if (dimensions.size() != lowerBounds.size()) {
      throw new IllegalArgumentException(
          "array has " + dimensions.size() + " dimensions but " + lowerBounds.size() + " bounds");
    }
    long count = dimensions.isEmpty() ? 0 : 1;
    for (int d : dimensions) {
      if (d < 0) {
        throw new IllegalArgumentException("array dimension must be >= 0, was " + d);
      }
      count *= d;
    }
    if (count != elements.size()) {
      throw new IllegalArgumentException(
          "array shape " + dimensions + " needs " + count + " elements, has " + elements.size());
    }
  }

  /**
   * Returns a one-dimensional array with lower bound 1.
   *
   * @param elementTypeOid the oid of the element type
   * @param elements the elements; may contain nulls
   * @return the array
   */
  public static PgArray ofList(int elementTypeOid, List<?> elements) {
    List<@Nullable Object> copy = new ArrayList<>(elements);
    return elements.isEmpty()
        ? new PgArray(elementTypeOid, List.of(), List.of(), copy)
        : new PgArray(elementTypeOid, List.of(elements.size()), List.of(1), copy);
  }

  /**
   * Returns the number of dimensions (0 for an empty array).
   *
   * @return the number of dimensions
   */
  public int dimensionCount() {
    return dimensions.size();
  }

  /**
   * Returns true when every lower bound is 1, the default.
   *
   * @return whether the bounds are the default ones
   */
  public boolean hasDefaultLowerBounds() {
    for (int lb : lowerBounds) {
      if (lb != 1) {
        return false;
      }
    }
    return true;
  }
}
