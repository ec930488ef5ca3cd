package org.pgetl.destination;

import java.util.Objects;
import java.util.UUID;
import org.jspecify.annotations.Nullable;
import org.pgetl.model.TableId;

/**
 * The replication stream a {@link Destination#writeEvents} call belongs to: the pipeline's apply
 * stream, or the catch-up stream of one table's copy attempt.
 *
 * <p>Acknowledgements are cumulative per stream: a {@code durable()} answer covers the earlier
 * writes of the <em>same</em> stream that were answered {@code accepted()}, never those of another
 * stream. A destination that defers durability keeps its pending work per stream id.
 *
 * <p>A catch-up stream belongs to the copy attempt that {@code dropTableForCopy} named: once a
 * later drop of the table named another attempt, a write of the older attempt's stream is stale
 * (its table-sync worker gave up waiting for the answer) and must not be applied.
 *
 * @param kind which kind of stream
 * @param table the table of a catch-up stream; null for the apply stream
 * @param copyAttempt the copy attempt of a catch-up stream; null for the apply stream
 */
// its signatures carry @Nullable of org.jspecify, read at compile time only (requires static)
@SuppressWarnings("exports")
public record StreamId(Kind kind, @Nullable TableId table, @Nullable UUID copyAttempt) {

  /** The kinds of streams. */
  public enum Kind {
    /** The apply stream: every change of every table that finished its copy. */
    APPLY,
    /** The catch-up stream of one table, between its copy and its hand-off to the apply stream. */
    TABLE_SYNC
  }

  /** The apply stream's id. */
  public static final StreamId APPLY = new StreamId(Kind.APPLY, null, null);

  /**
   * Validates that exactly the catch-up streams name a table and a copy attempt.
   *
   * @param kind which kind of stream
   * @param table the table of a catch-up stream; null for the apply stream
   * @param copyAttempt the copy attempt of a catch-up stream; null for the apply stream
   */
  public StreamId {
    Objects.requireNonNull(kind, "kind");
    boolean apply = kind == Kind.APPLY;
    if (apply != (table == null) || apply != (copyAttempt == null)) {
      throw new IllegalArgumentException(
          "a table-sync stream names a table and a copy attempt, the apply stream neither");
    }
  }

  /**
   * Returns the id of the catch-up stream of a table's copy attempt.
   *
   * @param table the table
   * @param copyAttempt the copy attempt, as {@code dropTableForCopy} named it
   * @return the id
   */
  public static StreamId tableSync(TableId table, UUID copyAttempt) {
    return new StreamId(
        Kind.TABLE_SYNC,
        Objects.requireNonNull(table, "table"),
        Objects.requireNonNull(copyAttempt, "copyAttempt"));
  }

  /** Returns {@code apply} or {@code table_sync:<oid>/<attempt>}. */
  @Override
  public String toString() {
    return kind == Kind.APPLY ? "apply" : "table_sync:" + table + "/" + copyAttempt;
  }
}
