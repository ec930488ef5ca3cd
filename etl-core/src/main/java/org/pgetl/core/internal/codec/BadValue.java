package org.pgetl.core.internal.codec;

/**
 * A malformed value found while decoding; turned into an {@code EtlException} that names the type
 * at the codec boundary. Carries no stack trace (it is expected, and cheap) and never the value.
 */
final class BadValue extends RuntimeException {
  private static final long serialVersionUID = 1L;

  private final boolean conversion;

  private BadValue(String reason, boolean conversion) {
    super(reason, null, false, false);
    this.conversion = conversion;
  }

  /** Returns a failure for bytes that are not a valid value of the type. */
  static BadValue of(String reason) {
    return new BadValue(reason, false);
  }

  /** Returns a failure for a valid value that the Java type cannot hold. */
  static BadValue conversion(String reason) {
    return new BadValue(reason, true);
  }

  /** Returns true when the value was valid but could not be converted to its Java type. */
  boolean isConversion() {
    return conversion;
  }
}
