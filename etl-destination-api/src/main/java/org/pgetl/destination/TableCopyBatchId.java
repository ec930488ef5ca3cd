package org.pgetl.destination;

import java.util.Objects;
import java.util.UUID;

/**
 * The identity of one batch of an initial table copy: the copy attempt and the batch's sequence
 * number inside that attempt.
 *
 * <p>Every copy attempt of a table gets a fresh {@code attemptId}; sequence numbers start at 0 and
 * are unique across the attempt's parallel partitions. A batch that is delivered again keeps its
 * id, so a destination can make copy writes idempotent by remembering the ids it stored.
 *
 * <p>The batches of a table copied in chunks (see {@link Destination#supportsChunkedCopy()}) are
 * numbered by their chunk and by the read of that chunk that sent them, so that a destination knows
 * which read a batch belongs to before the read's {@link TableCopyWrite.ChunkEnd}: bits 40 to 62 of
 * the sequence hold the chunk ({@link #chunk()}), bits 24 to 39 the read ({@link #chunkRead()}: a
 * chunk read again, after a lost connection or a restart, gets a higher number), bits 0 to 23 the
 * batch inside the read. A read that ended without its {@code ChunkEnd} sends nothing more.
 *
 * @param attemptId the copy attempt, new for every attempt
 * @param sequence the batch number inside the attempt, from 0
 */
public record TableCopyBatchId(UUID attemptId, long sequence) {
  /**
   * Validates the components.
   *
   * @param attemptId the copy attempt, new for every attempt
   * @param sequence the batch number inside the attempt, from 0
   */
  public TableCopyBatchId {
    Objects.requireNonNull(attemptId, "attemptId");
    if (sequence < 0) {
      throw new IllegalArgumentException("sequence must be >= 0, was " + sequence);
    }
  }

  /**
   * Returns the sequence number of the first batch of one read of a chunk (see the class notes).
   *
   * @param chunk the chunk's number in the attempt, below 2<sup>23</sup>
   * @param read the read's number for that chunk, below 2<sup>16</sup>
   * @return the first sequence number of that read's batches
   * @throws IllegalArgumentException when a number is out of range
   */
  public static long firstOfChunkRead(int chunk, int read) {
    if (chunk < 0 || chunk >= (1 << 23) || read < 0 || read >= (1 << 16)) {
      throw new IllegalArgumentException(
          "chunk must be in [0, 2^23) and read in [0, 2^16), were " + chunk + " and " + read);
    }
    return ((long) chunk << 40) | ((long) read << 24);
  }

  /**
   * Returns, for a batch of a table copied in chunks, the chunk it belongs to (0 for a table copied
   * under one snapshot).
   *
   * @return the chunk's number in the attempt
   */
  public int chunk() {
    return (int) (sequence >>> 40);
  }

  /**
   * Returns, for a batch of a table copied in chunks, which read of its chunk sent it.
   *
   * @return the read's number for the chunk
   */
  public int chunkRead() {
    return (int) ((sequence >>> 24) & 0xFFFF);
  }

  /** Returns {@code attemptId#sequence}. */
  @Override
  public String toString() {
    return attemptId + "#" + sequence;
  }
}
