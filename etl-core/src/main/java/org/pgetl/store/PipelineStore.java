package org.pgetl.store;

import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.UUID;
import org.jspecify.annotations.Nullable;
import org.pgetl.destination.DestinationTableMetadataStore;
import org.pgetl.lifecycle.LifecycleState;
import org.pgetl.model.Lsn;
import org.pgetl.model.ReplicatedTableSchema;
import org.pgetl.model.TableId;

/**
 * The store SPI: everything a pipeline persists, scoped to one pipeline id — table states with
 * their history and the workers' durable progress, schema versions, destination table metadata (the
 * inherited {@link DestinationTableMetadataStore}), the multi-row operations of a table's life, the
 * operator's table requests and destination lifecycle rows, and the pipeline's lease. {@link
 * MemoryStore} keeps it in memory; {@code PostgresStore} (module etl-postgres-store) in PostgreSQL.
 * A store implementer implements this one interface; the records it trades are nested in it.
 *
 * <p>Implementations are thread-safe and never hold a global lock across I/O. Reads of table states
 * are served from a cache that stays consistent with the backing storage after every write. Every
 * method may throw {@link org.pgetl.error.EtlException} of kind {@code STATE_STORE_ERROR} when the
 * backing storage fails.
 */
// its signatures carry @Nullable of org.jspecify, read at compile time only (requires static)
@SuppressWarnings("exports")
public interface PipelineStore extends DestinationTableMetadataStore, AutoCloseable {

  // --- table states and durable progress

  /**
   * Returns the pipeline this store is scoped to.
   *
   * @return the pipeline id
   */
  String pipelineId();

  /**
   * Reads every current table state from the backing storage and refreshes the cache. Called at
   * pipeline start.
   *
   * @return the current state of every table that has one
   */
  Map<TableId, TableState> loadTableStates();

  /**
   * Returns the cached current state of every table.
   *
   * @return an immutable snapshot
   */
  Map<TableId, TableState> tableStates();

  /**
   * Returns the cached current state of a table.
   *
   * @param table the table
   * @return the state, or empty when the table has none
   */
  Optional<TableState> tableState(TableId table);

  /**
   * Stores a new current state for a table; the previous one stays in the history, so it can be
   * rolled back to.
   *
   * @param table the table
   * @param state a persisted state (not {@code SyncWait} or {@code Catchup})
   * @throws IllegalArgumentException for a memory-only state
   */
  void updateTableState(TableId table, TableState state);

  /**
   * Stores new current states for several tables atomically.
   *
   * @param states the new states; each persisted
   */
  void updateTableStates(Map<TableId, TableState> states);

  /**
   * Makes a table's previous state current again (one step), deleting the current one.
   *
   * @param table the table
   * @return the state that is current now
   * @throws org.pgetl.error.EtlException of kind {@code STATE_ROLLBACK_ERROR} when there is no
   *     previous state
   */
  TableState rollbackTableState(TableId table);

  /**
   * Deletes a table's state history and makes {@code Init} its current state: the table is copied
   * again.
   *
   * @param table the table
   */
  void resetTableState(TableId table);

  /**
   * Returns a table's state history, the current state first.
   *
   * @param table the table
   * @return the states, newest first; empty when the table has none
   */
  List<TableState> tableStateHistory(TableId table);

  /**
   * Returns the durable progress of a worker: every change before this LSN is durable in the
   * destination.
   *
   * @param key the worker
   * @return the LSN, or empty when none was stored
   */
  Optional<Lsn> progress(ProgressKey key);

  /**
   * Advances the durable progress of a worker. Monotonic: a smaller LSN than the stored one leaves
   * it unchanged.
   *
   * @param key the worker
   * @param lsn the new durable point
   * @return the stored progress after the call (at least {@code lsn})
   */
  Lsn advanceProgress(ProgressKey key, Lsn lsn);

  /**
   * Deletes the progress of a worker.
   *
   * @param key the worker
   */
  void deleteProgress(ProgressKey key);

  // --- schema versions. A version is a ReplicatedTableSchema exactly as the destination received
  // it (columns, published columns, replica identity), keyed by the LSN from which it applies
  // (schema.tableSchema().snapshotLsn()), so that a restart decodes old WAL with the schema of its
  // time and asks the destination to drop exactly what it was told to create. A store returns what
  // it was given, field for field.

  /**
   * Returns the version of a table's schema that applies at {@code lsn}: the newest one whose
   * snapshot LSN is at or before it.
   *
   * @param table the table
   * @param lsn the position
   * @return the schema, or empty when no version is that old
   */
  Optional<ReplicatedTableSchema> tableSchema(TableId table, Lsn lsn);

  /**
   * Returns every stored version of a table's schema, oldest first.
   *
   * @param table the table
   * @return the versions
   */
  List<ReplicatedTableSchema> tableSchemas(TableId table);

  /**
   * Stores a version of a table's schema. Storing the same (table, snapshot LSN) again replaces it.
   *
   * @param schema the version, as the destination is told it
   */
  void storeTableSchema(ReplicatedTableSchema schema);

  /**
   * Deletes the versions that no restart can need: those older than the newest version at or before
   * {@code durableLsn}.
   *
   * @param table the table
   * @param durableLsn a position every restart resumes at or after
   * @return how many versions were deleted
   */
  int pruneTableSchemas(TableId table, Lsn durableLsn);

  // --- the multi-row operations of a table's life in the pipeline, each atomic

  /**
   * Prepares a table for a copy from scratch: deletes its destination metadata, its stored schema
   * versions, its table-sync progress and its chunks; keeps its state. Called after the destination
   * dropped what an earlier attempt wrote.
   *
   * @param table the table
   */
  void prepareTableForCopy(TableId table);

  /**
   * Makes {@code Init} the current state of every table and deletes the apply progress and every
   * table's chunks: every table is copied again (used when the apply slot had to be recreated).
   * Schemas, metadata and table-sync progress stay, so each copy can still drop what the
   * destination holds.
   */
  void resetAllTablesForResync();

  /**
   * Deletes everything of a table: its state history, schema versions, destination metadata,
   * table-sync progress and chunks (used when a table leaves the publication).
   *
   * @param table the table
   */
  void deleteTable(TableId table);

  /**
   * Deletes every row of the pipeline except its destination lifecycle rows (used when a
   * destination is retired): states, progress, schemas, destination metadata, chunks.
   */
  void deletePipelineState();

  /**
   * Records an operator's request for a table, for the running pipeline (which reads requests with
   * its lifecycle poll) or the next start.
   *
   * @param table the table
   * @param action what to do
   * @param requestedBy who asks, or null
   * @return the request as stored
   */
  TableRequest requestTableAction(TableId table, TableRequest.Action action, String requestedBy);

  /**
   * Returns the requests not yet carried out, oldest first.
   *
   * @return the pending requests
   */
  List<TableRequest> tableRequests();

  /**
   * Deletes a request that was carried out (or could not apply). Unknown ids are ignored.
   *
   * @param requestId the request's id
   */
  void completeTableRequest(long requestId);

  /**
   * Records the last finished copy of a table, replacing the one before.
   *
   * @param table the table
   * @param copy the copy
   */
  void recordCopy(TableId table, CopyRecord copy);

  /**
   * Returns the last finished copy of every table that has one.
   *
   * @return the copies, by table
   */
  Map<TableId, CopyRecord> copies();

  // --- the chunks of a table copied in chunks (a large table, see PipelineConfig)

  /**
   * Returns the chunks of the table's chunked copy, in index order; empty when the table has none
   * (it is not copied in chunks, or its chunked copy finished).
   *
   * @param table the table
   * @return the chunks
   */
  List<ChunkRecord> chunks(TableId table);

  /**
   * Starts a chunked copy of a table: replaces whatever chunks the table had with these, all not
   * done and never read. Their indexes must be {@code 0..n-1} and their attempt {@code attemptId}.
   *
   * @param table the table
   * @param attemptId the copy attempt the chunks belong to
   * @param chunks the planned chunks
   */
  void planChunks(TableId table, UUID attemptId, List<ChunkRecord> chunks);

  /**
   * Adds a chunk of one key to the table's chunked copy (a row to read again), with the next free
   * index.
   *
   * @param table the table
   * @param attemptId the copy attempt the table's chunks belong to
   * @param key the key's values, in the text form of PostgreSQL
   * @return the chunk as stored
   * @throws org.pgetl.error.EtlException when the table has no chunks of this attempt
   */
  ChunkRecord addKeyChunk(TableId table, UUID attemptId, List<String> key);

  /**
   * Counts one more read of a chunk and returns the new count (1 for its first read): each read
   * numbers its batches apart from every earlier read's, also across restarts.
   *
   * @param table the table
   * @param attemptId the copy attempt
   * @param index the chunk
   * @return the chunk's reads, this one included
   * @throws org.pgetl.error.EtlException when the chunk does not exist
   */
  int startChunkRead(TableId table, UUID attemptId, int index);

  /**
   * Marks a chunk done: its rows, read under a snapshot whose watermark the apply stream met at
   * {@code watermark}, are durable at the destination.
   *
   * @param table the table
   * @param attemptId the copy attempt
   * @param index the chunk
   * @param watermark the LSN of the read's watermark message
   * @param rows the rows the read copied
   * @param bytes the bytes of those rows as the binary COPY sent them
   * @throws org.pgetl.error.EtlException when the chunk does not exist
   */
  void completeChunk(
      TableId table, UUID attemptId, int index, Lsn watermark, long rows, long bytes);

  /**
   * Marks every done chunk of the table whose watermark is after {@code lsn} as not done (a
   * TRUNCATE at {@code lsn} replayed after a restart empties rows that those chunks copied later).
   *
   * @param table the table
   * @param attemptId the copy attempt
   * @param lsn the TRUNCATE's commit LSN
   * @return how many chunks were reopened
   */
  int reopenChunksAfter(TableId table, UUID attemptId, Lsn lsn);

  /**
   * Deletes the table's chunks (its chunked copy finished, or it is copied from scratch).
   *
   * @param table the table
   */
  void deleteChunks(TableId table);

  // --- the operator's lifecycle rows of the pipeline's destinations

  /**
   * Reads the lifecycle row of a destination.
   *
   * @param destinationName the destination's {@code name()}
   * @return the row, or empty when none exists (which means {@link LifecycleState#ACTIVE})
   * @throws org.pgetl.error.EtlException of kind {@code STATE_STORE_ERROR} when the read fails
   */
  Optional<LifecycleRecord> readLifecycle(String destinationName);

  /**
   * Writes (upserts) the lifecycle row of a destination. Refuses {@link LifecycleState#RETIRED}:
   * only an operator retires a destination, with SQL.
   *
   * @param destinationName the destination's {@code name()}
   * @param state {@code ACTIVE}, {@code PAUSED} or {@code DRAINING}
   * @param reason why, or null
   * @param updatedBy who, or null
   * @throws org.pgetl.error.EtlException of kind {@code CONFIG_ERROR} for {@code RETIRED}
   */
  void writeLifecycle(
      String destinationName,
      LifecycleState state,
      @Nullable String reason,
      @Nullable String updatedBy);

  // --- the lease

  /**
   * Returns a new handle on the pipeline's lease, for one pipeline instance.
   *
   * @param holder how the instance describes itself to others (host, process id, application)
   * @return the handle, not yet holding the lease
   */
  Lease lease(String holder);

  // --- set-up

  /**
   * Says, reading only, what the store must create before a pipeline can use it: nothing for a
   * store that is ready, or one line such as {@code schema etl does not exist; start will create
   * it}. {@link org.pgetl.Preflight} reports it as the state store check, and {@link
   * org.pgetl.Pipeline#start()} calls {@link #setUp()} only after every preflight check passed, so
   * a start that fails a check creates nothing and reports the store's problem with the others. The
   * default says nothing is needed.
   *
   * @return what {@link #setUp()} would create, or empty when the store is ready
   * @throws org.pgetl.error.EtlException of kind {@code STATE_STORE_ERROR} when the store cannot be
   *     read, or of kind {@code PERMISSION_DENIED} when the set-up is needed and the store's role
   *     may not do it (the description names the grant)
   */
  default Optional<String> setupNeeded() {
    return Optional.empty();
  }

  /**
   * Creates what {@link #setupNeeded()} said was missing (for a database store: its schema and
   * tables). {@link org.pgetl.Pipeline#start()} calls it after the preflight checks passed, before
   * it takes the lease. Idempotent; safe when several processes call it at once. The default does
   * nothing.
   *
   * @throws org.pgetl.error.EtlException of kind {@code STATE_STORE_ERROR} when the set-up fails
   */
  default void setUp() {}

  /** Releases the store's resources (connection pool). Idempotent. */
  @Override
  default void close() {}

  /**
   * Whose durable progress a stored LSN is: the apply worker's, or one table-sync worker's.
   *
   * @param worker the worker kind
   * @param table the table of a table-sync worker, null for the apply worker
   */
  record ProgressKey(WorkerKind worker, @Nullable TableId table) {
    /** The kind of worker that owns a progress row. */
    public enum WorkerKind {
      /** The apply worker (one per pipeline). */
      APPLY,
      /** A table-sync worker (one per table while it syncs). */
      TABLE_SYNC
    }

    private static final ProgressKey APPLY = new ProgressKey(WorkerKind.APPLY, null);

    /** Validates that only table-sync keys name a table. */
    public ProgressKey {
      Objects.requireNonNull(worker, "worker");
      if ((worker == WorkerKind.APPLY) != (table == null)) {
        throw new IllegalArgumentException("only table-sync progress names a table");
      }
    }

    /**
     * Returns the key of the apply worker's progress.
     *
     * @return the key
     */
    public static ProgressKey apply() {
      return APPLY;
    }

    /**
     * Returns the key of a table-sync worker's progress.
     *
     * @param table the table
     * @return the key
     */
    public static ProgressKey tableSync(TableId table) {
      return new ProgressKey(WorkerKind.TABLE_SYNC, Objects.requireNonNull(table, "table"));
    }

    @Override
    public String toString() {
      return worker == WorkerKind.APPLY ? "apply" : "table_sync:" + table;
    }
  }

  /**
   * The last finished copy of a table: what {@code pgetl tables list} and a monitoring query show.
   * Stored when the copy's {@code Finish} barrier was answered durable.
   *
   * @param attemptId the copy attempt
   * @param rows the rows copied
   * @param batches the batches sent
   * @param finishedAt when the copy finished
   */
  record CopyRecord(UUID attemptId, long rows, long batches, Instant finishedAt) {
    /** Validates the components. */
    public CopyRecord {
      Objects.requireNonNull(attemptId, "attemptId");
      Objects.requireNonNull(finishedAt, "finishedAt");
    }
  }

  /**
   * One chunk of a table copied in chunks: a range of the table's key, or one key to read again.
   *
   * <p>A range holds the rows whose key, compared as PostgreSQL compares the key's columns in order
   * (a row comparison), is at or above {@code from} and below {@code to}; a null bound is open. A
   * key chunk holds the one row whose key equals {@code from} ({@code to} is then equal to it).
   * Bounds are the key columns' values in PostgreSQL's text form.
   *
   * @param attemptId the copy attempt the chunk belongs to
   * @param index the chunk's number in the attempt, from 0
   * @param kind a range or one key
   * @param from the lower bound (inclusive), or null when open
   * @param to the upper bound (exclusive for a range, the key for a key chunk), or null when open
   * @param reads how many reads of the chunk were started
   * @param watermark where the apply stream met the watermark of the read that made the chunk done;
   *     null while the chunk is not done
   * @param rows the rows that read copied (0 while not done)
   * @param bytes the bytes of those rows as the binary COPY sent them (0 while not done)
   * @param doneAt when the chunk was done, or null
   */
  record ChunkRecord(
      UUID attemptId,
      int index,
      ChunkKind kind,
      @Nullable List<String> from,
      @Nullable List<String> to,
      int reads,
      @Nullable Lsn watermark,
      long rows,
      long bytes,
      @Nullable Instant doneAt) {
    /** Validates the components and copies the bounds. */
    public ChunkRecord {
      Objects.requireNonNull(attemptId, "attemptId");
      Objects.requireNonNull(kind, "kind");
      if (index < 0 || reads < 0 || rows < 0 || bytes < 0) {
        throw new IllegalArgumentException(
            "index, reads, rows and bytes must be >= 0, were "
                + index
                + ", "
                + reads
                + ", "
                + rows
                + " and "
                + bytes);
      }
      from = from == null ? null : List.copyOf(from);
      to = to == null ? null : List.copyOf(to);
      if (kind == ChunkKind.KEY && (from == null || !from.equals(to))) {
        throw new IllegalArgumentException("a key chunk has its key as both bounds");
      }
    }

    /**
     * A planned chunk: not done, never read.
     *
     * @param attemptId the copy attempt
     * @param index the chunk's number
     * @param kind a range or one key
     * @param from the lower bound, or null
     * @param to the upper bound, or null
     * @return the chunk
     */
    public static ChunkRecord planned(
        UUID attemptId,
        int index,
        ChunkKind kind,
        @Nullable List<String> from,
        @Nullable List<String> to) {
      return new ChunkRecord(attemptId, index, kind, from, to, 0, null, 0, 0, null);
    }

    /**
     * Returns true once the chunk's rows are durable at the destination.
     *
     * @return whether the chunk is done
     */
    public boolean done() {
      return watermark != null;
    }
  }

  /** What a {@link ChunkRecord} holds. */
  enum ChunkKind {
    /** A range of the table's key. */
    RANGE,
    /** One key, read again. */
    KEY
  }

  /**
   * An operator's request for one table, kept by the store until the pipeline carried it out: the
   * running pipeline picks it up within a lifecycle poll interval, a stopped one at its next start.
   * Requests come from {@code Pipeline.resyncTable}/{@code retryTable} or from another process (the
   * {@code pgetl tables} command).
   *
   * @param id the store's id of the request
   * @param table the table
   * @param action what to do
   * @param requestedBy who asked, or null
   * @param requestedAt when
   */
  record TableRequest(
      long id, TableId table, Action action, String requestedBy, Instant requestedAt) {

    /** What an operator can ask for a table. */
    public enum Action {
      /**
       * Copy the table again from scratch: its worker (if any) stops, its state becomes {@code
       * Init}, and the destination is told through {@code dropTableForCopy}.
       */
      RESYNC,
      /** Retry an {@code Errored} table now (its state is rolled back one step). */
      RETRY
    }

    /** Validates the components. */
    public TableRequest {
      Objects.requireNonNull(table, "table");
      Objects.requireNonNull(action, "action");
      Objects.requireNonNull(requestedAt, "requestedAt");
    }
  }

  /**
   * One row of the destination lifecycle table, as stored (the state is kept raw so that an unknown
   * value can be reported).
   *
   * @param destinationName the destination's {@code name()}
   * @param rawState the stored state value
   * @param reason why the operator changed it, or null
   * @param updatedBy who changed it, or null
   * @param updatedAt when it was changed
   */
  record LifecycleRecord(
      String destinationName,
      String rawState,
      @Nullable String reason,
      @Nullable String updatedBy,
      Instant updatedAt) {
    /** Validates the components. */
    public LifecycleRecord {
      Objects.requireNonNull(destinationName, "destinationName");
      Objects.requireNonNull(rawState, "rawState");
      Objects.requireNonNull(updatedAt, "updatedAt");
    }
  }

  /**
   * The lease that lets one instance of a pipeline run at a time: before it touches a slot, a state
   * row or the destination, an instance acquires it; another instance of the same pipeline id waits
   * (standby) or fails. Each acquisition increments a persisted <em>epoch</em>, a fencing token the
   * destination sees ({@code DestinationContext.epoch()}).
   *
   * <p>A handle belongs to one pipeline instance; {@link #tryAcquire()}, {@link #isHeld} and {@link
   * #close()} are called from its supervisor, {@link #holder()} from any thread. {@code
   * PostgresStore} keeps the lease as a session advisory lock on a connection of its own (the
   * server releases it when that session ends, a kill -9 included) and the epoch in a row; {@code
   * MemoryStore} keeps it in the store instance, so that two pipelines sharing one memory store in
   * one JVM behave the same.
   */
  interface Lease extends AutoCloseable {

    /**
     * Tries to take the lease, once, without waiting.
     *
     * @return the new epoch when this handle holds the lease now (also when it already did: then
     *     the epoch of that acquisition), empty when another instance holds it
     * @throws org.pgetl.error.EtlException of kind {@code STATE_STORE_ERROR} when the store fails
     */
    Optional<Long> tryAcquire();

    /**
     * Returns true when the holder before the last successful {@link #tryAcquire()} released the
     * lease itself (a clean stop), or there was none: then it stopped before, and the new holder
     * may act at once. After a lost lease (a killed process, a cut network) the new holder waits
     * its takeover delay first.
     *
     * @return whether the previous holder released the lease
     */
    boolean previousHolderReleased();

    /**
     * Checks that this handle still holds the lease, waiting at most {@code timeout} for the store.
     * Never throws: a check that fails or does not finish in time means the lease is lost, and the
     * handle must {@link #tryAcquire()} again (with a new epoch) to hold it.
     *
     * @param timeout the longest wait
     * @return true when the lease is confirmed held
     */
    boolean isHeld(Duration timeout);

    /**
     * Returns who holds the lease now, as far as the store knows.
     *
     * @return the holder, or empty when nobody holds it
     * @throws org.pgetl.error.EtlException of kind {@code STATE_STORE_ERROR} when the store fails
     */
    Optional<LeaseHolder> holder();

    /** Releases the lease if held, and the handle's resources. Idempotent. */
    @Override
    void close();
  }

  /**
   * Who holds a pipeline's lease.
   *
   * @param holder the holder's description: host, process id and application, as it gave them
   * @param epoch the epoch of its acquisition
   * @param since when it acquired the lease
   */
  record LeaseHolder(String holder, long epoch, Instant since) {
    /** Validates the components. */
    public LeaseHolder {
      Objects.requireNonNull(holder, "holder");
      Objects.requireNonNull(since, "since");
    }
  }
}
