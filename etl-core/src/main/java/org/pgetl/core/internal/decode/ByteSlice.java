package org.pgetl.core.internal.decode;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;

/**
 * A read-only view of a range of a byte array: the content of a logical decoding message, kept in
 * the buffer it arrived in instead of being copied.
 *
 * <p>The view does not copy: it stays valid as long as nobody writes to the underlying array.
 * pgjdbc hands out a new array for every replication message, so a view taken from a decoded
 * message stays valid for as long as the message is kept. {@link #toString()} shows the length
 * only, never the bytes: message content may carry user data.
 */
public final class ByteSlice {
  private static final byte[] NO_BYTES = new byte[0];

  /** The empty slice. */
  public static final ByteSlice EMPTY = new ByteSlice(NO_BYTES, 0, 0);

  private final byte[] array;
  private final int offset;
  private final int length;

  ByteSlice(byte[] array, int offset, int length) {
    this.array = array;
    this.offset = offset;
    this.length = length;
  }

  /**
   * Returns a slice over a copy of the given bytes; for tests and for callers that build messages.
   *
   * @param bytes the bytes
   * @return a slice that owns its copy
   */
  public static ByteSlice copyOf(byte[] bytes) {
    return bytes.length == 0 ? EMPTY : new ByteSlice(bytes.clone(), 0, bytes.length);
  }

  /**
   * Returns the number of bytes in this slice.
   *
   * @return the length, 0 or more
   */
  public int length() {
    return length;
  }

  /**
   * Returns the byte at an index of this slice.
   *
   * @param index from 0 to {@code length() - 1}
   * @return the byte
   * @throws IndexOutOfBoundsException when the index is outside the slice
   */
  public byte byteAt(int index) {
    java.util.Objects.checkIndex(index, length);
    return array[offset + index];
  }

  /**
   * Returns a copy of the bytes of this slice.
   *
   * @return a new array
   */
  public byte[] toByteArray() {
    return Arrays.copyOfRange(array, offset, offset + length);
  }

  /**
   * Returns a read-only buffer over the bytes of this slice, without copying them.
   *
   * @return a buffer positioned at the first byte, its limit at the end of the slice
   */
  public ByteBuffer asReadOnlyBuffer() {
    return ByteBuffer.wrap(array, offset, length).slice().asReadOnlyBuffer();
  }

  /**
   * Decodes the bytes of this slice as UTF-8; malformed sequences become U+FFFD.
   *
   * @return the text
   */
  public String toUtf8String() {
    return new String(array, offset, length, StandardCharsets.UTF_8);
  }

  /**
   * Returns true when the other object is a slice with the same bytes.
   *
   * @param other the other object
   * @return whether the bytes are equal
   */
  @Override
  public boolean equals(Object other) {
    if (this == other) {
      return true;
    }
    if (!(other instanceof ByteSlice that)) {
      return false;
    }
    return Arrays.equals(
        array, offset, offset + length, that.array, that.offset, that.offset + that.length);
  }

  /**
   * Returns a hash of the bytes of this slice.
   *
   * @return the hash
   */
  @Override
  public int hashCode() {
    int h = 1;
    for (int i = offset; i < offset + length; i++) {
      h = 31 * h + array[i];
    }
    return h;
  }

  /**
   * Returns the length only, never the bytes.
   *
   * @return a description like {@code ByteSlice[length=12]}
   */
  @Override
  public String toString() {
    return "ByteSlice[length=" + length + "]";
  }
}
