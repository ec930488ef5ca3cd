package org.pgetl.testkit.destination;

/**
 * The kinds of call a pipeline makes on a {@link org.pgetl.destination.Destination}: the fault
 * points of {@link FaultyDestination} and the kinds of {@link DestinationCall}.
 */
public enum DestinationOperation {
  /** {@code startup(DestinationContext)}. */
  STARTUP,
  /** {@code dropTableForCopy(table, result)}. */
  DROP_TABLE_FOR_COPY,
  /** {@code writeTableRows(table, batch, result)} with a {@code TableCopyWrite.Batch}. */
  WRITE_TABLE_ROWS,
  /**
   * {@code writeTableRows(table, finish, result)} with the {@code TableCopyWrite.Finish} barrier.
   */
  FINISH,
  /**
   * {@code writeTableRows(table, chunkEnd, result)} with a {@code TableCopyWrite.ChunkEnd} barrier
   * (a table copied in chunks).
   */
  CHUNK_END,
  /** {@code writeEvents(events, durability, result)}. */
  WRITE_EVENTS,
  /** {@code shutdown()}. */
  SHUTDOWN;

  /**
   * Returns true for the operations that carry an {@link org.pgetl.destination.AsyncResult}.
   *
   * @return false for {@link #STARTUP} and {@link #SHUTDOWN}
   */
  public boolean hasResult() {
    return this != STARTUP && this != SHUTDOWN;
  }
}
