package org.pgetl.core.internal.codec;

import org.pgetl.error.ErrorKind;
import org.pgetl.error.EtlException;

/**
 * Turns the bytes of one PostgreSQL value, in text or binary form, into its Java value (see {@code
 * docs/types.md}). Resolve one codec per column with {@link TypeRegistry#codec(int)} and call it
 * for every value of that column; codecs are immutable and safe to share between threads.
 *
 * <p>Both forms of a value decode to equal Java values. Malformed input raises {@link EtlException}
 * of kind {@link ErrorKind#INVALID_DATA} (or {@link ErrorKind#CONVERSION_ERROR} when a valid value
 * does not fit its Java type) naming the type but never the value; no other exception escapes.
 */
public abstract class ValueCodec {
  private final String label;

  /** The heap of a boxed primitive or a small value object (header and fields, aligned). */
  static final long BOXED = 24;

  /** The heap of an empty String: the String and its byte[]'s header, aligned. */
  static final long STRING = 48;

  ValueCodec(String label) {
    this.label = label;
  }

  /**
   * Returns the type this codec decodes, for messages, for example {@code numeric (oid 1700)}.
   *
   * @return the type's label
   */
  public final String typeLabel() {
    return label;
  }

  /**
   * Returns true when this codec can decode the binary form of its type into the same value as the
   * text form.
   *
   * @return whether {@link #decodeBinary} is supported
   */
  public abstract boolean canDecodeBinary();

  /**
   * Decodes the text form of a value (the bytes of the type's output function, UTF-8).
   *
   * @param buf the buffer holding the value
   * @param off where the value starts
   * @param len the value's length in bytes
   * @return the Java value, never null
   * @throws EtlException when the bytes are not a valid text value of the type
   */
  public final Object decodeText(byte[] buf, int off, int len) {
    checkBounds(buf, off, len, "text");
    try {
      return text(buf, off, len);
    } catch (BadValue e) {
      throw failure("text", e);
    } catch (EtlException e) {
      throw e;
    } catch (RuntimeException e) {
      throw failure("text", e);
    } catch (StackOverflowError e) {
      // records nested in records (or arrays of them) without end: only corrupt data does that
      throw failure("text", BadValue.of("value nested too deeply"));
    }
  }

  /**
   * Decodes the binary form of a value (the bytes of the type's send function).
   *
   * @param buf the buffer holding the value
   * @param off where the value starts
   * @param len the value's length in bytes
   * @return the Java value, never null
   * @throws EtlException when the bytes are not a valid binary value of the type, or the type has
   *     no binary decoding ({@link #canDecodeBinary()} is false)
   */
  public final Object decodeBinary(byte[] buf, int off, int len) {
    checkBounds(buf, off, len, "binary");
    try {
      return binary(buf, off, len);
    } catch (BadValue e) {
      throw failure("binary", e);
    } catch (EtlException e) {
      throw e;
    } catch (RuntimeException e) {
      throw failure("binary", e);
    } catch (StackOverflowError e) {
      // records nested in records (or arrays of them) without end: only corrupt data does that
      throw failure("binary", BadValue.of("value nested too deeply"));
    }
  }

  /**
   * Decodes a value in the form a pgoutput tuple names: {@code 't'} text or {@code 'b'} binary.
   *
   * @param format {@code 't'} or {@code 'b'}
   * @param buf the buffer holding the value
   * @param off where the value starts
   * @param len the value's length in bytes
   * @return the Java value, never null
   * @throws EtlException when the format is unknown or the bytes are invalid
   */
  public final Object decode(byte format, byte[] buf, int off, int len) {
    if (format == 'b') {
      return decodeBinary(buf, off, len);
    }
    if (format == 't') {
      return decodeText(buf, off, len);
    }
    throw new EtlException(
        ErrorKind.INVALID_DATA,
        "unknown value format '" + (char) (format & 0xFF) + "' for type " + label,
        "expected 't' (text) or 'b' (binary)");
  }

  /**
   * Estimates the heap the decoded value of {@code len} bytes (in either form) takes, headers and
   * referenced objects included, so that a batch of rows can be bounded by the memory it holds
   * rather than by its wire bytes. The default suits the containers (arrays, records, ranges) and
   * the types printed as text; the scalar codecs override it.
   *
   * @param len the value's length in bytes
   * @return the estimate in bytes
   */
  long heapEstimate(int len) {
    return 48 + 2L * len;
  }

  /** Decodes a text value; may throw {@link BadValue} or any runtime exception on bad input. */
  abstract Object text(byte[] b, int off, int len);

  /** Decodes a binary value; may throw {@link BadValue} or any runtime exception on bad input. */
  abstract Object binary(byte[] b, int off, int len);

  private void checkBounds(byte[] buf, int off, int len, String form) {
    if (buf == null || off < 0 || len < 0 || off > buf.length - len) {
      throw new EtlException(
          ErrorKind.INVALID_DATA,
          "invalid " + form + " value of type " + label,
          "value bounds outside the buffer: offset "
              + off
              + ", length "
              + len
              + ", buffer "
              + (buf == null ? "null" : buf.length));
    }
  }

  private EtlException failure(String form, BadValue e) {
    return new EtlException(
        e.isConversion() ? ErrorKind.CONVERSION_ERROR : ErrorKind.INVALID_DATA,
        (e.isConversion() ? "cannot convert " : "invalid ") + form + " value of type " + label,
        e.getMessage());
  }

  /** The JDK's own messages may quote the value, so only the exception's class is kept. */
  private EtlException failure(String form, RuntimeException e) {
    return new EtlException(
        ErrorKind.INVALID_DATA,
        "invalid " + form + " value of type " + label,
        "rejected by " + e.getClass().getSimpleName());
  }

  /** A failure for a binary form this codec does not decode. */
  static BadValue noBinary() {
    return BadValue.of("binary form not supported for this type: decode it in text form");
  }
}
