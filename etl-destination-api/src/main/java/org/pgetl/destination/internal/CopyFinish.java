package org.pgetl.destination.internal;

import java.util.UUID;
import org.jspecify.annotations.Nullable;
import org.pgetl.destination.TableCopyWrite;
import org.pgetl.error.ErrorKind;
import org.pgetl.error.EtlException;
import org.pgetl.model.TableName;

/**
 * The checks a destination that records its copy attempts and batches makes: whether a copy write
 * belongs to an abandoned attempt, and, at a copy's {@code Finish}, that every batch the engine
 * counts is stored, or the copy is not whole.
 */
public final class CopyFinish {
  private CopyFinish() {}

  /**
   * Tells whether a copy write of {@code attemptId} belongs to an attempt a later drop abandoned:
   * the destination records another attempt as the table's current one. Such a write is skipped.
   *
   * @param current the table's current attempt as the destination records it; null when it records
   *     none (a destination written before attempts were kept), which abandons nothing
   * @param attemptId the attempt the write belongs to
   * @return true if the write must be skipped
   */
  public static boolean isAbandoned(@Nullable UUID current, UUID attemptId) {
    return current != null && !current.equals(attemptId);
  }

  /**
   * Throws unless the destination stored as many batches of the attempt as the {@code Finish}
   * counts.
   *
   * @param table the copied table
   * @param finish the copy's {@code Finish}
   * @param stored the batches of the attempt the destination stored
   * @param where where they are stored, for the message ({@code "DuckDB file x.duckdb"})
   * @param noun what the destination is, for the hint ({@code "file"}, {@code "mirror"})
   * @throws EtlException a {@link ErrorKind#DESTINATION_ERROR} if the counts differ
   */
  public static void requireAllBatches(
      TableName table, TableCopyWrite.Finish finish, long stored, String where, String noun) {
    if (stored != finish.batches()) {
      throw new EtlException(
          ErrorKind.DESTINATION_ERROR,
          "the copy of table "
              + table
              + " (attempt "
              + finish.attemptId()
              + ") ends with "
              + finish.batches()
              + " batches, but "
              + where
              + " stored "
              + stored,
          "a batch that the engine counts is not in the " + noun);
    }
  }

  /**
   * Throws unless the destination stored every batch a chunk read's {@code ChunkEnd} counts.
   *
   * @param table the copied table
   * @param end the chunk read's {@code ChunkEnd}
   * @param stored the batches of that read the destination stored
   * @param where where they are stored, for the message ({@code "DuckDB file x.duckdb"})
   * @param noun what the destination is, for the hint ({@code "file"}, {@code "mirror"})
   * @throws EtlException a {@link ErrorKind#DESTINATION_ERROR} if the counts differ
   */
  public static void requireAllBatches(
      TableName table, TableCopyWrite.ChunkEnd end, long stored, String where, String noun) {
    if (stored != end.batches()) {
      throw new EtlException(
          ErrorKind.DESTINATION_ERROR,
          "chunk "
              + end.chunk()
              + " of the copy of table "
              + table
              + " (attempt "
              + end.attemptId()
              + ") ends with "
              + end.batches()
              + " batches from "
              + end.firstBatch()
              + ", but "
              + where
              + " stored "
              + stored,
          "a batch that the engine counts is not in the " + noun);
    }
  }
}
