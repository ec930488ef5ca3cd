package org.pgetl.core.internal.apply;

import org.jspecify.annotations.Nullable;
import org.pgetl.core.internal.chunk.ChunkKey;
import org.pgetl.core.internal.chunk.ChunkTracker;
import org.pgetl.destination.StreamId;
import org.pgetl.model.Lsn;
import org.pgetl.model.ReplicatedTableSchema;
import org.pgetl.model.TableId;
import org.pgetl.model.TableName;
import org.pgetl.store.PipelineStore.ProgressKey;

/**
 * What distinguishes the apply worker's stream from a table-sync worker's catch-up stream: which
 * tables it owns, where its progress is stored, and what it does at the hand-off points. The {@link
 * ApplyLoop} calls these on its own thread.
 */
public interface StreamRole {

  /**
   * Returns a short description for logs, such as {@code apply} or {@code table sync of
   * public.orders}.
   *
   * @return the description
   */
  String describe();

  /**
   * Returns the id the destination sees on this stream's writes.
   *
   * @return the stream id
   */
  StreamId streamId();

  /**
   * Returns where this stream's durable progress is stored.
   *
   * @return the progress key
   */
  ProgressKey progressKey();

  /**
   * Returns true when this stream applies changes of the table in a transaction with this commit
   * LSN.
   *
   * @param table the table
   * @param commitLsn the transaction's commit LSN
   * @return whether the change is this stream's to deliver
   */
  boolean owns(TableId table, Lsn commitLsn);

  /**
   * Returns true when this stream delivers user logical messages (only the apply stream does, so
   * that a message is delivered once).
   *
   * @return whether messages are delivered
   */
  boolean deliversMessages();

  /**
   * Called after each COMMIT, before its Commit event is batched. May block (the apply worker waits
   * here for a table to catch up).
   *
   * @param commitEndLsn the commit's end LSN
   * @param commitTime the transaction's commit time
   * @param control the loop
   */
  void afterCommit(Lsn commitEndLsn, java.time.Instant commitTime, Control control);

  /**
   * Called after the durable point advanced (and was stored).
   *
   * @param durableLsn the new durable point
   * @param control the loop
   */
  void afterDurable(Lsn durableLsn, Control control);

  /**
   * Called when the stream is idle: no open transaction, nothing buffered, in flight or waiting for
   * durability; {@code lastReceived} is confirmed to the server.
   *
   * @param lastReceived the last LSN the server sent
   * @param control the loop
   */
  void whenIdle(Lsn lastReceived, Control control);

  /**
   * Called when the stream is idle but for streamed transactions that have not committed, between
   * their stream blocks: they commit after {@code lastReceived}, so everything that committed up to
   * it is durable, but the position is not confirmed to the server (a restart streams again from
   * the confirmed one, those transactions' changes included). By default the same as {@link
   * #whenIdle}; a role that records state which a restart must find consistent with the confirmed
   * position does less.
   *
   * @param lastReceived the last LSN the server sent, not confirmed
   * @param control the loop
   */
  default void whenIdleButForOpenStreamedTransactions(Lsn lastReceived, Control control) {
    whenIdle(lastReceived, control);
  }

  /**
   * Called once per loop iteration, for timers (due retries).
   *
   * @param control the loop
   */
  default void tick(Control control) {}

  /**
   * Returns true when nothing but the stream's own messages needs the loop soon: no table is copied
   * or handed over and no command waits. The loop then spaces its checks out while the stream stays
   * quiet; anything it would notice late is noticed within 100 ms.
   *
   * @return whether the role is settled
   */
  default boolean settled() {
    return false;
  }

  /**
   * Called for every RELATION message: the stream is about to carry changes of this table.
   *
   * @param table the table
   * @param name its name in the message
   * @param control the loop
   */
  default void relationSeen(TableId table, TableName name, Control control) {}

  /**
   * Returns true when this role needs every accepted write made durable now (the loop then sends an
   * empty {@code REQUIRE_DURABLE} barrier).
   *
   * @param lastReceived the last LSN the server sent
   * @return whether a barrier is wanted
   */
  default boolean wantsDurabilityBarrier(Lsn lastReceived) {
    return false;
  }

  /**
   * Decides whether a change of a table this stream owns is applied now, skipped or held (a table
   * copied in chunks, see {@link org.pgetl.core.internal.chunk.ChunkTracker}). A held change is
   * asked about again until it is not held; the stream reads nothing further meanwhile.
   *
   * @param schema the table's schema
   * @param commitLsn the transaction's commit LSN
   * @param xid the transaction's id
   * @param key the row's key after the change (before it, for a DELETE), or null
   * @param oldKey the key before an UPDATE that changed it, or null
   * @param partial whether an UPDATE left values out
   * @return what to do
   */
  default ChunkTracker.Admission admit(
      ReplicatedTableSchema schema,
      Lsn commitLsn,
      long xid,
      @Nullable Object key,
      @Nullable Object oldKey,
      boolean partial) {
    return ChunkTracker.Admission.APPLY;
  }

  /**
   * Returns the key column of a table copied in chunks, or null for any other table (its changes
   * are applied without asking {@link #admit}).
   *
   * @param schema the table's schema
   * @return the key, or null
   */
  default @Nullable ChunkKey chunkKey(ReplicatedTableSchema schema) {
    return null;
  }

  /**
   * Decides whether a TRUNCATE of a table this stream owns is applied now or held.
   *
   * @param table the table
   * @param commitLsn the transaction's commit LSN
   * @param xid the transaction's id
   * @return {@code APPLY} or {@code HOLD}
   */
  default ChunkTracker.Admission admitTruncate(TableId table, Lsn commitLsn, long xid) {
    return ChunkTracker.Admission.APPLY;
  }

  /**
   * Called for a watermark message of a chunk read ({@link ChunkTracker#WATERMARK_PREFIX}); such
   * messages are never delivered.
   *
   * @param content the message's content
   * @param lsn the message's LSN
   */
  default void watermark(String content, Lsn lsn) {}

  /**
   * Called when the durable point advanced, before it is stored (a chunk read waits for it; the
   * stored point, {@link #afterDurable}, comes at most a few times a second).
   *
   * @param durable the new durable point
   */
  default void durableInMemory(Lsn durable) {}

  /**
   * Returns true while something outside the stream waits for every write it made so far to be
   * durable (a chunk read, see {@link ChunkTracker}): the stream dispatches its batch at once, and
   * an empty {@code REQUIRE_DURABLE} barrier when accepted work waits, inside a transaction too.
   *
   * @return whether durability is urgent
   */
  default boolean urgentDurability() {
    return false;
  }

  /** The loop, as a role sees it. */
  interface Control {
    /**
     * Ends the stream after the current transaction: its last batch is sent with {@code
     * REQUIRE_DURABLE}; {@link #finish()} must follow once the role is satisfied.
     */
    void completeAfterThisTransaction();

    /** Marks the role's work done: the loop exits as completed once nothing is in flight. */
    void finish();

    /**
     * Keeps the replication connection alive while the role blocks (sends a status update when one
     * is due). Call it at least every few seconds while blocking.
     */
    void keepAlive();

    /**
     * Returns true when the loop must stop (shutdown, pause): a blocking role returns at once.
     *
     * @return whether to stop
     */
    boolean stopRequested();

    /**
     * Returns a fence covering every change buffered or dispatched so far: once {@link
     * #answeredBefore} holds for it, the destination has answered every write that could carry
     * them.
     *
     * @return the fence
     */
    long writeFence();

    /**
     * Returns true when every write before the fence was answered.
     *
     * @param fence a value of {@link #writeFence()}
     * @return whether they were
     */
    boolean answeredBefore(long fence);
  }
}
