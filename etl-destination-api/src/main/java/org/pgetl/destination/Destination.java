package org.pgetl.destination;

import java.util.List;
import java.util.UUID;
import org.pgetl.error.EtlException;
import org.pgetl.model.Event;
import org.pgetl.model.ReplicatedTableSchema;

/**
 * Where a pipeline delivers data: implement this to receive the initial copy of every published
 * table and then every committed change.
 *
 * <h2>Calls, threads and order</h2>
 *
 * <ol>
 *   <li>{@link #checkTables(List)} with every published table, during the start's checks, before
 *       any slot or state row exists.
 *   <li>{@link #startup(DestinationContext)} once, on the thread that calls {@code
 *       Pipeline.start()}, before any other call.
 *   <li>For each copy attempt of a table: {@link #dropTableForCopy} (remove whatever an earlier
 *       attempt wrote; it names the new attempt), then {@link #writeTableRows} batches from several
 *       copy threads at once (one per copy partition), then the {@link TableCopyWrite.Finish}
 *       barrier once every batch was answered.
 *   <li>{@link #writeEvents} from the apply thread and, while tables catch up after their copy,
 *       from their table-sync threads: several streams may call concurrently; each call names its
 *       {@link StreamId}.
 *   <li>{@link #shutdown()} once, after the last write was answered or abandoned, on the thread
 *       that stops the pipeline.
 * </ol>
 *
 * <p>Methods must return quickly: queue the work and answer the {@link AsyncResult} later, from any
 * thread. A method may also throw {@link EtlException} for a failure it detects at once; that is
 * equivalent to {@code result.fail(e)}.
 *
 * <h2>Acknowledgements</h2>
 *
 * Each call carries an {@link AsyncResult} that must be answered exactly once: {@code accepted()}
 * (owned, not yet durable), {@code durable()} (this and every earlier accepted write of the same
 * stream are durable), {@code fail(e)} or {@code shutdown()} (abandoned because the destination is
 * stopping). The pipeline's durable progress — and so what PostgreSQL may discard — only advances
 * on {@code durable()}.
 *
 * <h2>Delivery guarantees</h2>
 *
 * <ul>
 *   <li>At-least-once: after a restart, everything after the last durable point is delivered again.
 *       Deduplicate copy batches on {@link TableCopyBatchId} and events on {@link
 *       Event#sequenceKey()}.
 *   <li>A copy batch of an abandoned attempt can still arrive after the next attempt's {@link
 *       #dropTableForCopy} (the engine waits for in-flight answers only up to its shutdown
 *       timeout): a batch whose {@link TableCopyBatchId#attemptId()} is not the attempt the last
 *       drop named is stale; do not apply it.
 *   <li>Per-table order of events is preserved. BEGIN and COMMIT may repeat across streams while
 *       tables catch up; batches follow size and time limits, not transaction boundaries.
 *   <li>Each copy partition waits for the answer to a batch before it sends its next batch.
 * </ul>
 *
 * <p>Implementations must be thread-safe. See {@code docs/destination-contract.md} for the full
 * guide.
 */
public interface Destination {

  /**
   * Returns a short name for logs, metrics and the lifecycle table ({@code destination_name}).
   * Called from any thread; must be constant.
   *
   * @return the name
   */
  String name();

  /**
   * Says whether this destination can hold these tables, before the pipeline creates anything: one
   * of the checks {@code Pipeline.start()} runs before any slot or state row exists (see {@code
   * org.pgetl.Preflight}), with the replicated schema of every table the publication publishes (as
   * the catalog shows it at that moment). Throw an {@link EtlException} of kind {@code
   * DESTINATION_SCHEMA_ERROR} that names every table it cannot hold and why (a column type it has
   * no form for, a key it cannot index), with a hint: the start then fails with it, next to every
   * other failed check, and nothing was created. Called before {@link #startup}, on the thread that
   * starts the pipeline, at every start (a restart included); it must not write anything.
   *
   * <p>A table added to the publication later, or a column change, is only seen by the writes: a
   * destination refuses those as it would without this check.
   *
   * @param tables the published tables, in no particular order; empty when the publication is
   * @throws EtlException when a table cannot be held
   */
  default void checkTables(List<ReplicatedTableSchema> tables) {}

  /**
   * Prepares the destination, once, before any write: open connections, create namespaces. Called
   * on the thread that runs {@code Pipeline.start()}. A thrown {@link EtlException} fails the
   * start.
   *
   * @param context the pipeline's id and its store for destination table metadata
   */
  default void startup(DestinationContext context) {}

  /**
   * Removes what earlier copy attempts of this table wrote, before the table is copied (again) from
   * scratch by the attempt {@code attemptId}. Called by a table-sync thread before every copy
   * attempt, including the first (then there may be nothing to remove: succeed anyway).
   *
   * <p>From this call on, {@code attemptId} is the table's current attempt: a later copy batch with
   * another attempt id is a leftover of an abandoned attempt and must not be applied (answer it
   * {@code durable()} and drop it). Before answering, make sure that no write accepted during an
   * earlier attempt can still change the table (wait for, cancel or reject such writes). Answer
   * {@code durable()} (or {@code accepted()}: both mean done) when the table is gone or empty.
   *
   * @param table the table's replicated schema as the earlier attempt knew it (identity and
   *     published columns included), or the current one when no attempt wrote anything yet
   * @param attemptId the copy attempt that follows; its batches and its {@code Finish} carry it
   * @param result answer once, from any thread
   */
  void dropTableForCopy(ReplicatedTableSchema table, UUID attemptId, AsyncResult result);

  /**
   * Writes one batch of a table's initial copy, or the terminal {@link TableCopyWrite.Finish}
   * barrier. Called concurrently by the copy threads of a table (and of several tables); each copy
   * partition waits for the answer before it sends its next batch. There is no order between
   * batches of different partitions.
   *
   * <p>A {@link TableCopyWrite.Batch} may be answered {@code accepted()}. After the attempt's last
   * batch was answered, the engine sends {@link TableCopyWrite.Finish} (always, with the attempt id
   * and the number of batches and rows); the table's copy is complete only when {@code Finish} is
   * answered {@code durable()} — which must mean that every batch of this attempt is durable.
   * {@code Finish} is also the only write an empty table gets, so the destination can create it.
   *
   * @param table the table's replicated schema; every row follows it
   * @param write a batch (with an id to deduplicate on) or the barrier
   * @param result answer once, from any thread
   */
  void writeTableRows(ReplicatedTableSchema table, TableCopyWrite write, AsyncResult result);

  /**
   * Writes a batch of change events of one stream, in order. Called by the apply thread and by
   * table-sync threads during catch-up; each stream makes one call at a time and has a bounded
   * number of writes in flight.
   *
   * <p>With {@link WriteDurability#MAY_DEFER} you may answer {@code accepted()} and confirm later:
   * a {@code durable()} answer covers every earlier accepted write of the same {@code stream}
   * (never an earlier write still unanswered, never another stream's). With {@link
   * WriteDurability#REQUIRE_DURABLE} you must answer {@code durable()} or fail; {@code accepted()}
   * is a contract violation that fails the stream. An empty list with {@code REQUIRE_DURABLE} is a
   * barrier: make everything this stream's writes had accepted durable.
   *
   * @param stream the stream the write belongs to
   * @param events the events, in stream order; never empty with {@code MAY_DEFER}
   * @param durability whether the answer may be deferred
   * @param result answer once, from any thread
   */
  void writeEvents(
      StreamId stream, List<Event> events, WriteDurability durability, AsyncResult result);

  /**
   * Returns true when this destination can take a table copied in chunks while its changes stream:
   * what a large table gets (see {@code PipelineConfig.chunkedCopyMinBytes}). A destination that
   * returns false gets every table copied under one snapshot, as before. Called once, after {@link
   * #startup}; must be constant.
   *
   * <p>A table copied in chunks gets one {@link #dropTableForCopy} when its chunked copy starts
   * (none when a stopped one resumes: the attempt id stays), then its chunks' batches through
   * {@link #writeTableRows}, each chunk ended by a {@link TableCopyWrite.ChunkEnd}, and at the same
   * time its changes through {@link #writeEvents}, from the first chunk on. A table gets changes
   * while its copy attempt is open (after the {@code dropTableForCopy} that named the attempt,
   * before its {@code Finish}) only when it is copied in chunks, so that is how a destination can
   * tell. A destination that returns true accepts, for such a table until its {@link
   * TableCopyWrite.Finish}:
   *
   * <ul>
   *   <li>a copied row whose key it already holds: the copied row replaces it (an upsert);
   *   <li>an INSERT of a key it already holds: the new row replaces it (an upsert);
   *   <li>an UPDATE or DELETE of a key it does not hold: ignored (for a key-changing UPDATE: the
   *       row under the new key is written if the update carries every value, otherwise ignored
   *       too); a later chunk or a change sets the row;
   *   <li>a chunk's rows read again after a restart, in batches with new ids: upserts as above;
   *   <li>{@link TableCopyWrite.ChunkEnd}: answer {@code durable()} only when every batch of that
   *       chunk read is durable. The engine writes the table's next change that touches the chunk's
   *       keys only after that answer.
   * </ul>
   *
   * <p>An append-only destination (a log, a topic) may write every row and change as it comes: a
   * reader that keeps the last row per key, deletes included, sees the source's table.
   *
   * @return whether large tables may be copied in chunks
   */
  default boolean supportsChunkedCopy() {
    return false;
  }

  /**
   * Releases the destination's resources, once, after the pipeline stopped submitting work (every
   * pending result is answered or abandoned). Called on the thread that stops the pipeline. A
   * thrown exception is reported by {@code Pipeline.awaitTermination}.
   */
  default void shutdown() {}
}
