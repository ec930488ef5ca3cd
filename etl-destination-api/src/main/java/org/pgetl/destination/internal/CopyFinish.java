package org.pgetl.destination.internal;

import org.pgetl.destination.TableCopyWrite;
import org.pgetl.error.ErrorKind;
import org.pgetl.error.EtlException;
import org.pgetl.model.TableName;

/**
 * The check a destination that records its copy batches makes at a copy's {@code Finish}: every
 * batch the engine counts must be stored, or the copy is not whole.
 */
public final class CopyFinish {
  private CopyFinish() {}

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
}
