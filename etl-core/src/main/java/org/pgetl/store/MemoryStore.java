package org.pgetl.store;

import java.time.Clock;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.TreeMap;
import java.util.concurrent.locks.ReentrantLock;
import org.jspecify.annotations.Nullable;
import org.pgetl.destination.DestinationTableMetadataStore.TableMetadata;
import org.pgetl.error.ErrorKind;
import org.pgetl.error.EtlException;
import org.pgetl.lifecycle.LifecycleState;
import org.pgetl.model.Lsn;
import org.pgetl.model.ReplicatedTableSchema;
import org.pgetl.model.TableId;

/**
 * A {@link PipelineStore} in memory, for tests, demos and pipelines whose state may be lost with
 * the process (a restart then copies every table again).
 *
 * <p>One instance holds one pipeline's state; reuse the instance across {@code Pipeline} runs in
 * the same process to resume. All methods take one short lock (there is no I/O).
 */
// its signatures carry @Nullable of org.jspecify, read at compile time only (requires static)
@SuppressWarnings("exports")
public final class MemoryStore implements PipelineStore {
  private final String pipelineId;
  private final ReentrantLock lock = new ReentrantLock();
  private final Map<TableId, Deque<TableState>> states = new HashMap<>();
  private final Map<ProgressKey, Lsn> progress = new HashMap<>();
  private final Map<TableId, TreeMap<Lsn, ReplicatedTableSchema>> schemas = new HashMap<>();
  private final Map<TableId, TableMetadata> metadata = new HashMap<>();
  private final Map<String, LifecycleRecord> lifecycle = new HashMap<>();
  private final Map<Long, TableRequest> requests = new TreeMap<>();
  private final Map<TableId, CopyRecord> copies = new HashMap<>();
  private final Map<TableId, List<ChunkRecord>> chunks = new HashMap<>();
  private final Clock clock;
  private long nextRequestId = 1;

  /**
   * Creates an empty store for a pipeline, stamping what it records with the system clock.
   *
   * @param pipelineId the pipeline id
   */
  public MemoryStore(String pipelineId) {
    this(pipelineId, Clock.systemUTC());
  }

  /**
   * Creates an empty store for a pipeline that stamps what it records (the time of a table request,
   * of a lifecycle change, of a lease acquisition) with {@code clock}: a test can then assert those
   * times exactly.
   *
   * @param pipelineId the pipeline id
   * @param clock where the recorded times are read
   */
  public MemoryStore(String pipelineId, Clock clock) {
    this.pipelineId = Objects.requireNonNull(pipelineId, "pipelineId");
    this.clock = Objects.requireNonNull(clock, "clock");
  }

  @Override
  public String pipelineId() {
    return pipelineId;
  }

  @Override
  public Map<TableId, TableState> loadTableStates() {
    return tableStates();
  }

  @Override
  public Map<TableId, TableState> tableStates() {
    lock.lock();
    try {
      Map<TableId, TableState> out = new TreeMap<>();
      states.forEach((t, h) -> out.put(t, h.peekFirst()));
      return Map.copyOf(out);
    } finally {
      lock.unlock();
    }
  }

  @Override
  public Optional<TableState> tableState(TableId table) {
    lock.lock();
    try {
      Deque<TableState> h = states.get(table);
      return h == null ? Optional.empty() : Optional.of(h.peekFirst());
    } finally {
      lock.unlock();
    }
  }

  @Override
  public void updateTableState(TableId table, TableState state) {
    updateTableStates(Map.of(table, state));
  }

  @Override
  public void updateTableStates(Map<TableId, TableState> newStates) {
    for (TableState s : newStates.values()) {
      if (!s.type().isPersisted()) {
        throw new IllegalArgumentException(s.type() + " is a memory-only state");
      }
    }
    lock.lock();
    try {
      newStates.forEach((t, s) -> states.computeIfAbsent(t, k -> new ArrayDeque<>()).addFirst(s));
    } finally {
      lock.unlock();
    }
  }

  @Override
  public TableState rollbackTableState(TableId table) {
    lock.lock();
    try {
      Deque<TableState> h = states.get(table);
      if (h == null || h.size() < 2) {
        throw new EtlException(
            ErrorKind.STATE_ROLLBACK_ERROR,
            "table " + table + " has no earlier state to roll back to",
            "pipeline " + pipelineId);
      }
      h.removeFirst();
      return h.peekFirst();
    } finally {
      lock.unlock();
    }
  }

  @Override
  public void resetTableState(TableId table) {
    lock.lock();
    try {
      Deque<TableState> h = new ArrayDeque<>();
      h.add(TableState.INIT);
      states.put(table, h);
    } finally {
      lock.unlock();
    }
  }

  @Override
  public List<TableState> tableStateHistory(TableId table) {
    lock.lock();
    try {
      Deque<TableState> h = states.get(table);
      return h == null ? List.of() : List.copyOf(h);
    } finally {
      lock.unlock();
    }
  }

  @Override
  public Optional<Lsn> progress(ProgressKey key) {
    lock.lock();
    try {
      return Optional.ofNullable(progress.get(key));
    } finally {
      lock.unlock();
    }
  }

  @Override
  public Lsn advanceProgress(ProgressKey key, Lsn lsn) {
    lock.lock();
    try {
      return progress.merge(key, lsn, Lsn::max);
    } finally {
      lock.unlock();
    }
  }

  @Override
  public void deleteProgress(ProgressKey key) {
    lock.lock();
    try {
      progress.remove(key);
    } finally {
      lock.unlock();
    }
  }

  @Override
  public Optional<ReplicatedTableSchema> tableSchema(TableId table, Lsn lsn) {
    lock.lock();
    try {
      TreeMap<Lsn, ReplicatedTableSchema> versions = schemas.get(table);
      if (versions == null) {
        return Optional.empty();
      }
      Map.Entry<Lsn, ReplicatedTableSchema> e = versions.floorEntry(lsn);
      return e == null ? Optional.empty() : Optional.of(e.getValue());
    } finally {
      lock.unlock();
    }
  }

  @Override
  public List<ReplicatedTableSchema> tableSchemas(TableId table) {
    lock.lock();
    try {
      TreeMap<Lsn, ReplicatedTableSchema> versions = schemas.get(table);
      return versions == null ? List.of() : List.copyOf(versions.values());
    } finally {
      lock.unlock();
    }
  }

  @Override
  public void storeTableSchema(ReplicatedTableSchema schema) {
    lock.lock();
    try {
      schemas
          .computeIfAbsent(schema.id(), k -> new TreeMap<>())
          .put(schema.tableSchema().snapshotLsn(), schema);
    } finally {
      lock.unlock();
    }
  }

  @Override
  public int pruneTableSchemas(TableId table, Lsn durableLsn) {
    lock.lock();
    try {
      TreeMap<Lsn, ReplicatedTableSchema> versions = schemas.get(table);
      if (versions == null) {
        return 0;
      }
      Lsn keep = versions.floorKey(durableLsn);
      if (keep == null) {
        return 0;
      }
      Map<Lsn, ReplicatedTableSchema> older = versions.headMap(keep, false);
      int n = older.size();
      older.clear();
      return n;
    } finally {
      lock.unlock();
    }
  }

  @Override
  public Optional<TableMetadata> get(TableId table) {
    lock.lock();
    try {
      return Optional.ofNullable(metadata.get(table));
    } finally {
      lock.unlock();
    }
  }

  @Override
  public void put(TableId table, TableMetadata value) {
    Objects.requireNonNull(value, "metadata");
    lock.lock();
    try {
      metadata.put(table, value);
    } finally {
      lock.unlock();
    }
  }

  @Override
  public void prepareTableForCopy(TableId table) {
    lock.lock();
    try {
      metadata.remove(table);
      schemas.remove(table);
      progress.remove(ProgressKey.tableSync(table));
      chunks.remove(table);
    } finally {
      lock.unlock();
    }
  }

  @Override
  public void resetAllTablesForResync() {
    lock.lock();
    try {
      for (Deque<TableState> h : states.values()) {
        h.addFirst(TableState.INIT);
      }
      progress.remove(ProgressKey.apply());
      chunks.clear();
    } finally {
      lock.unlock();
    }
  }

  @Override
  public TableRequest requestTableAction(
      TableId table, TableRequest.Action action, String requestedBy) {
    Objects.requireNonNull(table, "table");
    Objects.requireNonNull(action, "action");
    lock.lock();
    try {
      TableRequest r =
          new TableRequest(nextRequestId++, table, action, requestedBy, clock.instant());
      requests.put(r.id(), r);
      return r;
    } finally {
      lock.unlock();
    }
  }

  @Override
  public List<TableRequest> tableRequests() {
    lock.lock();
    try {
      return List.copyOf(requests.values());
    } finally {
      lock.unlock();
    }
  }

  @Override
  public void completeTableRequest(long requestId) {
    lock.lock();
    try {
      requests.remove(requestId);
    } finally {
      lock.unlock();
    }
  }

  @Override
  public void recordCopy(TableId table, CopyRecord copy) {
    Objects.requireNonNull(copy, "copy");
    lock.lock();
    try {
      copies.put(table, copy);
    } finally {
      lock.unlock();
    }
  }

  @Override
  public Map<TableId, CopyRecord> copies() {
    lock.lock();
    try {
      return Map.copyOf(copies);
    } finally {
      lock.unlock();
    }
  }

  @Override
  public List<ChunkRecord> chunks(TableId table) {
    lock.lock();
    try {
      return List.copyOf(chunks.getOrDefault(table, List.of()));
    } finally {
      lock.unlock();
    }
  }

  @Override
  public void planChunks(TableId table, java.util.UUID attemptId, List<ChunkRecord> planned) {
    Objects.requireNonNull(attemptId, "attemptId");
    for (int i = 0; i < planned.size(); i++) {
      ChunkRecord c = planned.get(i);
      if (c.index() != i || !c.attemptId().equals(attemptId)) {
        throw new IllegalArgumentException(
            "chunk " + i + " must have index " + i + " and attempt " + attemptId + ": " + c);
      }
    }
    lock.lock();
    try {
      List<ChunkRecord> list = new ArrayList<>();
      for (ChunkRecord c : planned) {
        list.add(ChunkRecord.planned(attemptId, c.index(), c.kind(), c.from(), c.to()));
      }
      chunks.put(table, list);
    } finally {
      lock.unlock();
    }
  }

  @Override
  public ChunkRecord addKeyChunk(TableId table, java.util.UUID attemptId, List<String> key) {
    lock.lock();
    try {
      List<ChunkRecord> list = attemptChunks(table, attemptId);
      ChunkRecord c = ChunkRecord.planned(attemptId, list.size(), ChunkKind.KEY, key, key);
      list.add(c);
      return c;
    } finally {
      lock.unlock();
    }
  }

  @Override
  public int startChunkRead(TableId table, java.util.UUID attemptId, int index) {
    lock.lock();
    try {
      List<ChunkRecord> list = attemptChunks(table, attemptId);
      ChunkRecord c = chunk(list, table, index);
      ChunkRecord n = with(c, c.reads() + 1, c.watermark(), c.rows(), c.bytes(), c.doneAt());
      list.set(index, n);
      return n.reads();
    } finally {
      lock.unlock();
    }
  }

  @Override
  public void completeChunk(
      TableId table, java.util.UUID attemptId, int index, Lsn watermark, long rows, long bytes) {
    Objects.requireNonNull(watermark, "watermark");
    lock.lock();
    try {
      List<ChunkRecord> list = attemptChunks(table, attemptId);
      ChunkRecord c = chunk(list, table, index);
      list.set(index, with(c, c.reads(), watermark, rows, bytes, clock.instant()));
    } finally {
      lock.unlock();
    }
  }

  @Override
  public int reopenChunksAfter(TableId table, java.util.UUID attemptId, Lsn lsn) {
    lock.lock();
    try {
      List<ChunkRecord> list = chunks.get(table);
      if (list == null) {
        return 0;
      }
      int n = 0;
      for (int i = 0; i < list.size(); i++) {
        ChunkRecord c = list.get(i);
        Lsn w = c.watermark();
        if (c.attemptId().equals(attemptId) && w != null && w.compareTo(lsn) > 0) {
          list.set(i, with(c, c.reads(), null, 0, 0, null));
          n++;
        }
      }
      return n;
    } finally {
      lock.unlock();
    }
  }

  @Override
  public void deleteChunks(TableId table) {
    lock.lock();
    try {
      chunks.remove(table);
    } finally {
      lock.unlock();
    }
  }

  private List<ChunkRecord> attemptChunks(TableId table, java.util.UUID attemptId) {
    List<ChunkRecord> list = chunks.get(table);
    if (list == null || list.isEmpty() || !list.get(0).attemptId().equals(attemptId)) {
      throw new EtlException(
          ErrorKind.STATE_STORE_ERROR,
          "table " + table + " has no chunks of copy attempt " + attemptId,
          "its chunked copy was replaced or finished");
    }
    return list;
  }

  /** The chunk with its reads and completion replaced. */
  private static ChunkRecord with(
      ChunkRecord c,
      int reads,
      @Nullable Lsn watermark,
      long rows,
      long bytes,
      java.time.@Nullable Instant doneAt) {
    return new ChunkRecord(
        c.attemptId(),
        c.index(),
        c.kind(),
        c.from(),
        c.to(),
        reads,
        watermark,
        rows,
        bytes,
        doneAt);
  }

  private static ChunkRecord chunk(List<ChunkRecord> list, TableId table, int index) {
    if (index < 0 || index >= list.size()) {
      throw new EtlException(
          ErrorKind.STATE_STORE_ERROR,
          "table " + table + " has no chunk " + index,
          "its chunked copy was replaced or finished");
    }
    return list.get(index);
  }

  @Override
  public void deleteTable(TableId table) {
    lock.lock();
    try {
      copies.remove(table);
      requests.values().removeIf(r -> r.table().equals(table));
      states.remove(table);
      schemas.remove(table);
      metadata.remove(table);
      progress.remove(ProgressKey.tableSync(table));
      chunks.remove(table);
    } finally {
      lock.unlock();
    }
  }

  @Override
  public void deletePipelineState() {
    lock.lock();
    try {
      copies.clear();
      requests.clear();
      states.clear();
      schemas.clear();
      metadata.clear();
      progress.clear();
      chunks.clear();
    } finally {
      lock.unlock();
    }
  }

  @Override
  public Optional<LifecycleRecord> readLifecycle(String destinationName) {
    lock.lock();
    try {
      return Optional.ofNullable(lifecycle.get(destinationName));
    } finally {
      lock.unlock();
    }
  }

  @Override
  public void writeLifecycle(
      String destinationName,
      LifecycleState state,
      @Nullable String reason,
      @Nullable String updatedBy) {
    if (state == LifecycleState.RETIRED) {
      throw new EtlException(
          ErrorKind.CONFIG_ERROR,
          "pgetl never writes 'retired': an operator retires a destination with SQL",
          "destination " + destinationName);
    }
    setLifecycleAsOperator(destinationName, state.dbValue(), reason, updatedBy);
  }

  /**
   * Writes any lifecycle value, as an operator would with SQL (including {@code retired}). For
   * tests and demos of the memory store.
   *
   * @param destinationName the destination's name
   * @param rawState the value to store
   * @param reason why, or null
   * @param updatedBy who, or null
   */
  public void setLifecycleAsOperator(
      String destinationName,
      String rawState,
      @Nullable String reason,
      @Nullable String updatedBy) {
    lock.lock();
    try {
      lifecycle.put(
          destinationName,
          new LifecycleRecord(destinationName, rawState, reason, updatedBy, clock.instant()));
    } finally {
      lock.unlock();
    }
  }

  // the lease, held by at most one handle of this store; epochs count its acquisitions
  private @Nullable Object leaseHolder;
  private @Nullable LeaseHolder leaseInfo;
  private long leaseEpoch;
  private boolean leaseReleased = true;

  @Override
  public Lease lease(String holder) {
    Objects.requireNonNull(holder, "holder");
    return new Lease() {
      private boolean closed;
      private boolean previousReleased = true;

      @Override
      public boolean previousHolderReleased() {
        return previousReleased;
      }

      @Override
      public Optional<Long> tryAcquire() {
        lock.lock();
        try {
          if (leaseHolder == this) {
            return Optional.of(leaseEpoch);
          }
          if (leaseHolder != null || closed) {
            return Optional.empty();
          }
          leaseHolder = this;
          previousReleased = leaseReleased;
          leaseReleased = false;
          leaseEpoch++;
          leaseInfo = new LeaseHolder(holder, leaseEpoch, clock.instant());
          return Optional.of(leaseEpoch);
        } finally {
          lock.unlock();
        }
      }

      @Override
      public boolean isHeld(java.time.Duration timeout) {
        lock.lock();
        try {
          return leaseHolder == this;
        } finally {
          lock.unlock();
        }
      }

      @Override
      public Optional<LeaseHolder> holder() {
        lock.lock();
        try {
          return leaseHolder == null
              ? Optional.empty()
              : Optional.of(Objects.requireNonNull(leaseInfo, "set with leaseHolder"));
        } finally {
          lock.unlock();
        }
      }

      @Override
      public void close() {
        lock.lock();
        try {
          closed = true;
          if (leaseHolder == this) {
            leaseHolder = null;
            leaseInfo = null;
            leaseReleased = true;
          }
        } finally {
          lock.unlock();
        }
      }
    };
  }

  @Override
  public String toString() {
    return "MemoryStore[pipeline=" + pipelineId + "]";
  }

  /**
   * Returns a copy of the stored progress rows, for tests.
   *
   * @return the progress by worker
   */
  public Map<ProgressKey, Lsn> progressSnapshot() {
    lock.lock();
    try {
      return Map.copyOf(new HashMap<>(progress));
    } finally {
      lock.unlock();
    }
  }

  /**
   * Returns the tables that have destination metadata, for tests.
   *
   * @return the table ids
   */
  public List<TableId> tablesWithMetadata() {
    lock.lock();
    try {
      return new ArrayList<>(metadata.keySet());
    } finally {
      lock.unlock();
    }
  }
}
