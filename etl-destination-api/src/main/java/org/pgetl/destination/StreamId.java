package org.pgetl.destination;

import java.util.Objects;
import org.pgetl.model.TableId;

/**
 * The replication stream a {@link Destination#writeEvents} call belongs to: the pipeline's apply
 * stream, or the catch-up stream of one table after its copy.
 *
 * <p>Acknowledgements are cumulative per stream: a {@code durable()} answer covers the earlier
 * writes of the <em>same</em> stream that were answered {@code accepted()}, never those of another
 * stream. A destination that defers durability keeps its pending work per stream id. A table has at
 * most one catch-up stream at a time; a later copy attempt of the same table reuses the id.
 *
 * @param kind which kind of stream
 * @param table the table of a catch-up stream; null for the apply stream
 */
public record StreamId(Kind kind, TableId table) {

  /** The kinds of streams. */
  public enum Kind {
    /** The apply stream: every change of every table that finished its copy. */
    APPLY,
    /** The catch-up stream of one table, between its copy and its hand-off to the apply stream. */
    TABLE_SYNC
  }

  /** The apply stream's id. */
  public static final StreamId APPLY = new StreamId(Kind.APPLY, null);

  /**
   * Validates that exactly the catch-up streams name a table.
   *
   * @param kind which kind of stream
   * @param table the table of a catch-up stream; null for the apply stream
   */
  public StreamId {
    Objects.requireNonNull(kind, "kind");
    if ((kind == Kind.APPLY) != (table == null)) {
      throw new IllegalArgumentException("only a table-sync stream names a table");
    }
  }

  /**
   * Returns the id of a table's catch-up stream.
   *
   * @param table the table
   * @return the id
   */
  public static StreamId tableSync(TableId table) {
    return new StreamId(Kind.TABLE_SYNC, Objects.requireNonNull(table, "table"));
  }

  /** Returns {@code apply} or {@code table_sync:<oid>}. */
  @Override
  public String toString() {
    return kind == Kind.APPLY ? "apply" : "table_sync:" + table;
  }
}
