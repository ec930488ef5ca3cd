package org.pgetl.model;

import java.math.BigDecimal;
import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * A PostgreSQL {@code numeric} value: a finite decimal with its exact scale, or one of the special
 * values {@code NaN}, {@code Infinity} and {@code -Infinity} that {@link BigDecimal} cannot hold.
 *
 * <p>Finite values keep their display scale: {@code 1.50} stays {@code 1.50}, so the value
 * round-trips to PostgreSQL unchanged. Immutable.
 */
// its signatures carry @Nullable of org.jspecify, read at compile time only (requires static)
@SuppressWarnings("exports")
public final class PgNumeric implements Comparable<PgNumeric> {
  /** The kind of a numeric value. */
  public enum Kind {
    /** An ordinary decimal number. */
    FINITE,
    /** {@code NaN}. */
    NAN,
    /** {@code Infinity}. */
    POSITIVE_INFINITY,
    /** {@code -Infinity}. */
    NEGATIVE_INFINITY
  }

  /** {@code NaN}. */
  public static final PgNumeric NAN = new PgNumeric(Kind.NAN, null);

  /** {@code Infinity}. */
  public static final PgNumeric POSITIVE_INFINITY = new PgNumeric(Kind.POSITIVE_INFINITY, null);

  /** {@code -Infinity}. */
  public static final PgNumeric NEGATIVE_INFINITY = new PgNumeric(Kind.NEGATIVE_INFINITY, null);

  private final Kind kind;
  private final @Nullable BigDecimal value;

  private PgNumeric(Kind kind, @Nullable BigDecimal value) {
    this.kind = kind;
    this.value = value;
  }

  /**
   * Returns the finite numeric of a decimal.
   *
   * @param value the decimal, with the scale to keep
   * @return the numeric
   */
  public static PgNumeric of(BigDecimal value) {
    return new PgNumeric(Kind.FINITE, Objects.requireNonNull(value, "value"));
  }

  /**
   * Parses PostgreSQL's text form: a decimal number, {@code NaN}, {@code Infinity} or {@code
   * -Infinity} (also {@code inf}, {@code +inf}, {@code -inf}, any case).
   *
   * @param text the text form
   * @return the numeric
   * @throws NumberFormatException when the text is not a numeric
   */
  public static PgNumeric parse(String text) {
    String t = text.trim();
    return switch (t.toLowerCase(java.util.Locale.ROOT)) {
      case "nan" -> NAN;
      case "infinity", "+infinity", "inf", "+inf" -> POSITIVE_INFINITY;
      case "-infinity", "-inf" -> NEGATIVE_INFINITY;
      default -> of(new BigDecimal(t));
    };
  }

  /**
   * Returns the kind of this value.
   *
   * @return the kind
   */
  public Kind kind() {
    return kind;
  }

  /**
   * Returns true for an ordinary decimal.
   *
   * @return whether the value is finite
   */
  public boolean isFinite() {
    return kind == Kind.FINITE;
  }

  /**
   * Returns the decimal value.
   *
   * @return the decimal, with its scale
   * @throws ArithmeticException when the value is NaN or infinite
   */
  public BigDecimal bigDecimalValue() {
    if (value == null) {
      throw new ArithmeticException("numeric " + this + " has no BigDecimal value");
    }
    return value;
  }

  /**
   * Orders as PostgreSQL does: {@code -Infinity} &lt; finite values &lt; {@code Infinity} &lt;
   * {@code NaN}; finite values by numeric value.
   */
  @Override
  public int compareTo(PgNumeric o) {
    int r = Integer.compare(rank(), o.rank());
    if (r != 0 || kind != Kind.FINITE) {
      return r;
    }
    return bigDecimalValue().compareTo(o.bigDecimalValue());
  }

  private int rank() {
    return switch (kind) {
      case NEGATIVE_INFINITY -> 0;
      case FINITE -> 1;
      case POSITIVE_INFINITY -> 2;
      case NAN -> 3;
    };
  }

  /** Equal when the kind and, for finite values, the decimal and its scale are equal. */
  @Override
  public boolean equals(@Nullable Object o) {
    return o instanceof PgNumeric n && kind == n.kind && Objects.equals(value, n.value);
  }

  @Override
  public int hashCode() {
    return Objects.hash(kind, value);
  }

  /**
   * Returns PostgreSQL's text form: the plain decimal (no exponent), {@code NaN}, {@code Infinity}
   * or {@code -Infinity}.
   */
  @Override
  public String toString() {
    return switch (kind) {
      case FINITE -> bigDecimalValue().toPlainString();
      case NAN -> "NaN";
      case POSITIVE_INFINITY -> "Infinity";
      case NEGATIVE_INFINITY -> "-Infinity";
    };
  }
}
