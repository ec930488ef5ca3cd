package org.pgetl.destination.internal;

import java.util.Objects;
import org.jspecify.annotations.Nullable;
import org.pgetl.model.TableRow;

/**
 * Makes rows that keep their values' wire bytes and decode each value when it is first read (the
 * engine's copy and change decoders). Not API.
 */
public final class WireRows {
  /** What {@link TableRow} hands out to build such rows. */
  public interface Factory {
    /**
     * Makes a row.
     *
     * @param buffer the bytes the values are in; the row keeps it, the caller must not change it
     * @param spans from {@code spanBase} on, per column, {@link #span} of its value, or {@link
     *     #NULL}
     * @param spanBase where the row's spans start in {@code spans}
     * @param columns the row's column count
     * @param decoder the decoder of the row's columns
     * @param sizeHintBytes an estimate of the heap the row holds
     * @return the row
     */
    TableRow make(
        byte[] buffer,
        long[] spans,
        int spanBase,
        int columns,
        WireDecoder decoder,
        long sizeHintBytes);
  }

  /** The span of an SQL NULL. */
  public static final long NULL = -1L;

  private static volatile @Nullable Factory factory;

  private WireRows() {}

  /**
   * Returns the span of a value: where it starts in the buffer and its length.
   *
   * @param offset where the value starts
   * @param length its length in bytes
   * @return the span
   */
  public static long span(int offset, int length) {
    return ((long) offset << 32) | (length & 0xFFFFFFFFL);
  }

  /**
   * Returns where a span starts.
   *
   * @param span a span (not {@link #NULL})
   * @return the offset
   */
  public static int offset(long span) {
    return (int) (span >>> 32);
  }

  /**
   * Returns a span's length.
   *
   * @param span a span (not {@link #NULL})
   * @return the length
   */
  public static int length(long span) {
    return (int) span;
  }

  /**
   * Makes a row whose values are decoded when first read.
   *
   * @param buffer the bytes the values are in; the row keeps it, the caller must not change it
   * @param spans per column, {@link #span} of its value, or {@link #NULL}; the row keeps it
   * @param decoder the decoder of the row's columns
   * @param sizeHintBytes an estimate of the heap the row holds
   * @return the row
   */
  public static TableRow row(byte[] buffer, long[] spans, WireDecoder decoder, long sizeHintBytes) {
    return row(buffer, spans, 0, spans.length, decoder, sizeHintBytes);
  }

  /**
   * Makes a row whose values are decoded when first read, with its spans in a slice of an array
   * that rows read one after the other share (one allocation for many rows).
   *
   * @param buffer the bytes the values are in; the row keeps it, the caller must not change it
   * @param spans from {@code spanBase} on, per column, {@link #span} of its value, or {@link
   *     #NULL}; the row keeps it, the caller must not change that slice
   * @param spanBase where the row's spans start
   * @param columns the row's column count
   * @param decoder the decoder of the row's columns
   * @param sizeHintBytes an estimate of the heap the row holds
   * @return the row
   */
  public static TableRow row(
      byte[] buffer,
      long[] spans,
      int spanBase,
      int columns,
      WireDecoder decoder,
      long sizeHintBytes) {
    Objects.checkFromIndexSize(spanBase, columns, spans.length);
    Factory f = factory;
    if (f == null) {
      TableRow.of(); // initialises TableRow, which registers its factory
      f = Objects.requireNonNull(factory, "TableRow registers its factory");
    }
    return f.make(buffer, spans, spanBase, columns, decoder, sizeHintBytes);
  }

  /**
   * Called once by {@link TableRow}'s initialisation.
   *
   * @param f the factory
   */
  public static void register(Factory f) {
    if (factory != null) {
      throw new IllegalStateException("registered already");
    }
    factory = f;
  }
}
