package org.pgetl.core.internal.chunk;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Map.Entry;
import java.util.TreeMap;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.BooleanSupplier;
import org.jspecify.annotations.Nullable;
import org.pgetl.model.Lsn;
import org.pgetl.model.TableId;
import org.pgetl.store.PipelineStore;
import org.pgetl.store.PipelineStore.ChunkKind;
import org.pgetl.store.PipelineStore.ChunkRecord;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What the apply stream and the chunk readers of the tables copied in chunks share: each table's
 * chunks (not done, being written, done at a watermark), the reads waiting for their watermark, and
 * the transactions that changed each table, for the watermark's visibility check.
 *
 * <p>The protocol (see {@code docs/design-decisions.md}, "Chunked copy", and {@code
 * spec/chunks.pml}): a reader takes a chunk, opens a {@code REPEATABLE READ} transaction, takes its
 * snapshot, {@linkplain #register registers} the read and only then writes a non-transactional
 * watermark message. When the apply stream meets the watermark ({@link #watermark}) it checks that
 * every transaction that changed the table and that it passed is visible to the snapshot, so the
 * chunk's rows are the table's state at the watermark; from then on the chunk is being written: a
 * change that touches its keys is {@linkplain Admission#HOLD held} until its rows are durable. The
 * reader writes its rows once every apply write before the watermark is durable ({@link #durable}),
 * ends them with a {@code ChunkEnd} and marks the chunk {@linkplain #done done}. A change of a key
 * whose chunk is not done is applied at once: the chunk's rows, read later, hold its effect too.
 *
 * <p>Thread-safe: one monitor; the apply stream calls it for every change of a table copied in
 * chunks, and only those.
 */
public final class ChunkTracker {
  private static final Logger LOG = LoggerFactory.getLogger(ChunkTracker.class);

  /** The prefix of the watermark messages the chunk readers write. */
  public static final String WATERMARK_PREFIX = "pgetl.chunk";

  /**
   * The prefix of the empty transactional messages that make the server flush a watermark before
   * PostgreSQL 17 ({@code pg_logical_emit_message} has no {@code flush} argument there, and a
   * non-transactional message waits in the WAL buffers for the next flush).
   */
  public static final String FLUSH_PREFIX = "pgetl.flush";

  /**
   * Returns true for the messages of the chunk protocol, which are never delivered.
   *
   * @param prefix a logical message's prefix
   * @return whether it is the protocol's
   */
  public static boolean isProtocolMessage(String prefix) {
    return WATERMARK_PREFIX.equals(prefix) || FLUSH_PREFIX.equals(prefix);
  }

  /** How many transaction ids a table keeps between two watermarks before it forgets the oldest. */
  private static final int MAX_XIDS = 1 << 20;

  /** What the apply stream does with a change of a table copied in chunks. */
  public enum Admission {
    /** Apply it. */
    APPLY,
    /** Skip it: a done chunk's rows, read after it, hold its effect (a replay after a restart). */
    SKIP,
    /** Wait: a chunk it touches is being written. Ask again later. */
    HOLD
  }

  /** What a reader does after its watermark. */
  public enum ReadOutcome {
    /** Every apply write before the watermark is durable and the check passed: write the rows. */
    WRITE,
    /** The check failed (or the table left the chunked copy): read the chunk again. */
    RETRY,
    /** The pipeline stops. */
    STOP
  }

  private enum ReadState {
    REGISTERED,
    // the watermark was met before the reader knew its snapshot
    MET,
    WRITING,
    READY,
    ABANDONED
  }

  private final PipelineStore store;
  private final Map<TableId, Table> tables = new ConcurrentHashMap<>();
  private final Map<String, Read> reads = new HashMap<>();
  private Lsn lastCommitEnd = Lsn.ZERO;
  private Lsn durable = Lsn.ZERO;

  /**
   * Creates an empty tracker.
   *
   * @param store where re-reads and reopened chunks are recorded
   */
  public ChunkTracker(PipelineStore store) {
    this.store = store;
  }

  // ---------------------------------------------------------------- tables

  /**
   * Starts tracking a table copied in chunks: from now on the apply stream applies its changes.
   *
   * @param table the table
   * @param attemptId its copy attempt
   * @param key the column it is split on
   * @param chunks its chunks as stored
   */
  public synchronized void activate(
      TableId table, UUID attemptId, ChunkKey key, List<ChunkRecord> chunks) {
    Table t = new Table(table, attemptId, key);
    for (ChunkRecord r : chunks) {
      t.add(new Chunk(r, key));
    }
    tables.put(table, t);
  }

  /**
   * Replaces a table's chunks with those of a new attempt, without a moment in which the apply
   * stream does not apply its changes (a copy that starts over: the changes in between must reach
   * the destination after the new attempt's drop). Reads of the old chunks are abandoned.
   *
   * @param table the table
   * @param attemptId the new attempt
   * @param key the column it is split on now
   * @param chunks the new attempt's chunks
   */
  public synchronized void replace(
      TableId table, UUID attemptId, ChunkKey key, List<ChunkRecord> chunks) {
    Table old = tables.get(table);
    if (old != null) {
      abandon(old);
    }
    activate(table, attemptId, key, chunks);
    Table t = tables.get(table);
    if (old != null && t != null) {
      // the transactions that changed the table stay known to the new reads' checks
      t.xids = Arrays.copyOf(old.xids, Math.max(old.xids.length, 64));
      t.xidCount = old.xidCount;
      t.forgotten = old.forgotten;
    }
  }

  /**
   * Sends back every read of the table that is not writing its rows yet, and any read whose rows
   * wait for the stream: used before a copy starts over.
   *
   * @param table the table
   */
  public synchronized void abandonReads(TableId table) {
    Table t = tables.get(table);
    if (t != null) {
      abandon(t);
    }
  }

  private void abandon(Table t) {
    for (Read r : new ArrayList<>(reads.values())) {
      if (r.table == t) {
        r.state = ReadState.ABANDONED;
        reads.remove(r.id);
      }
    }
    for (Chunk c : t.chunks) {
      c.writing = null;
    }
    notifyAll();
  }

  /**
   * The apply stream (re)started from {@code start}: a read whose watermark it met but whose rows
   * wait for its durability is sent back (the stream replays from before its watermark and would
   * hold a change of the chunk's keys that its durability needs to pass first). A read already
   * writing its rows stays: the replayed changes of its keys are held until it is done, then
   * skipped.
   *
   * @param start where the stream starts
   */
  public synchronized void streamStarted(Lsn start) {
    lastCommitEnd = start;
    for (Read r : new ArrayList<>(reads.values())) {
      if (r.state == ReadState.MET || r.state == ReadState.WRITING) {
        if (r.chunk.writing == r) {
          r.chunk.writing = null;
        }
        r.state = ReadState.ABANDONED;
        reads.remove(r.id);
      }
    }
    notifyAll();
  }

  /**
   * Returns the column a table copied in chunks is split on, or null for any other table.
   *
   * @param table the table
   * @return the key, or null
   */
  public @Nullable ChunkKey key(TableId table) {
    Table t = tables.get(table);
    return t == null ? null : t.key;
  }

  /**
   * Stops tracking a table (its chunked copy finished, failed or was replaced): reads in progress
   * are abandoned and held changes released.
   *
   * @param table the table
   */
  public synchronized void deactivate(TableId table) {
    Table t = tables.remove(table);
    if (t == null) {
      return;
    }
    for (Read r : new ArrayList<>(reads.values())) {
      if (r.table == t) {
        r.state = ReadState.ABANDONED;
        reads.remove(r.id);
      }
    }
    for (Chunk c : t.chunks) {
      c.writing = null;
    }
    notifyAll();
  }

  /**
   * Returns true while the table is copied in chunks (the apply stream applies its changes).
   *
   * @param table the table
   * @return whether it is
   */
  public boolean isActive(TableId table) {
    return tables.containsKey(table);
  }

  /**
   * Returns true when some table is copied in chunks.
   *
   * @return whether any is
   */
  public boolean anyActive() {
    return !tables.isEmpty();
  }

  /**
   * Returns the chunks done and the chunks in all, for progress.
   *
   * @param table the table
   * @return {@code {done, total}}, or null when the table is not tracked
   */
  public synchronized int @Nullable [] progress(TableId table) {
    Table t = tables.get(table);
    if (t == null) {
      return null;
    }
    int done = 0;
    for (Chunk c : t.chunks) {
      if (c.watermark != null) {
        done++;
      }
    }
    return new int[] {done, t.chunks.size()};
  }

  // ---------------------------------------------------------------- the apply stream

  /**
   * Decides what the apply stream does with an INSERT, UPDATE or DELETE of a table: hold it while a
   * chunk it touches is being written; skip it when every key it touches is in a chunk done at a
   * watermark after its commit (a replay after a restart); otherwise apply it. An UPDATE that moves
   * a row from a key whose chunk is not done to one whose chunk is done, without sending every
   * value, gets its new key read again (the destination has neither row to fill the missing values
   * from).
   *
   * @param table the table
   * @param commitLsn the transaction's commit LSN
   * @param xid the transaction's id
   * @param key the key of the row after the change (before it, for a DELETE)
   * @param oldKey the key before an UPDATE that changed it, or null
   * @param partial whether the UPDATE left values out (unchanged TOAST)
   * @return what to do
   */
  public synchronized Admission admit(
      TableId table,
      Lsn commitLsn,
      long xid,
      @Nullable Object key,
      @Nullable Object oldKey,
      boolean partial) {
    Table t = tables.get(table);
    if (t == null || key == null) {
      return Admission.APPLY;
    }
    Object moved = oldKey != null && !oldKey.equals(key) ? oldKey : null;
    if (t.writing(key) || (moved != null && t.writing(moved))) {
      return Admission.HOLD;
    }
    t.recordXid(xid);
    if (t.doneAfter(key, commitLsn) && (moved == null || t.doneAfter(moved, commitLsn))) {
      return Admission.SKIP;
    }
    if (partial && moved != null && !t.done(moved) && !t.readLater(key)) {
      ChunkRecord r = store.addKeyChunk(table, t.attemptId, List.of(t.key.format(key)));
      t.add(new Chunk(r, t.key));
      LOG.info(
          "table {}: a key-changing update without every value moved a row to key {}, whose chunk"
              + " is done: that key is read again (chunk {})",
          table,
          key,
          r.index());
    }
    return Admission.APPLY;
  }

  /**
   * Decides what the apply stream does with a TRUNCATE of a table: hold it while a chunk is being
   * written; otherwise apply it, after reopening the chunks done at a watermark after it (a replay
   * after a restart: their rows, copied after the TRUNCATE, are gone with it).
   *
   * @param table the table
   * @param commitLsn the transaction's commit LSN
   * @param xid the transaction's id
   * @return {@code APPLY} or {@code HOLD}
   */
  public synchronized Admission admitTruncate(TableId table, Lsn commitLsn, long xid) {
    Table t = tables.get(table);
    if (t == null) {
      return Admission.APPLY;
    }
    for (Chunk c : t.chunks) {
      if (c.writing != null) {
        return Admission.HOLD;
      }
    }
    t.recordXid(xid);
    boolean reopen = false;
    for (Chunk c : t.chunks) {
      reopen |= c.watermark != null && c.watermark.compareTo(commitLsn) > 0;
    }
    if (reopen) {
      int n = store.reopenChunksAfter(table, t.attemptId, commitLsn);
      for (Chunk c : t.chunks) {
        if (c.watermark != null && c.watermark.compareTo(commitLsn) > 0) {
          c.watermark = null;
        }
      }
      LOG.info("table {}: a replayed TRUNCATE at {} reopens {} chunks", table, commitLsn, n);
    }
    return Admission.APPLY;
  }

  /**
   * The apply stream met a watermark message.
   *
   * @param content the message's content (the read's id)
   * @param lsn the message's LSN
   */
  public synchronized void watermark(String content, Lsn lsn) {
    Read r = reads.get(content);
    if (r == null || r.state != ReadState.REGISTERED) {
      return; // another pipeline's, an earlier run's, or an abandoned read's
    }
    r.watermark = lsn;
    r.needDurable = lastCommitEnd;
    PgSnapshot snapshot = r.snapshot;
    if (snapshot == null) {
      r.state = ReadState.MET; // checked once the reader tells the snapshot
      return;
    }
    checkAtWatermark(r, snapshot);
  }

  /**
   * The reader learned its read's snapshot (taken in the same statement that wrote the watermark).
   *
   * @param read the read
   * @param snapshot its snapshot
   */
  public synchronized void snapshot(Read read, PgSnapshot snapshot) {
    read.snapshot = snapshot;
    if (read.state == ReadState.MET) {
      checkAtWatermark(read, snapshot);
    }
  }

  private void checkAtWatermark(Read r, PgSnapshot snapshot) {
    Table t = r.table;
    String failed = t.check(snapshot);
    if (failed != null) {
      r.state = ReadState.ABANDONED;
      reads.remove(r.id);
      LOG.info(
          "table {}: the read of chunk {} is taken again: {}",
          t.id,
          r.chunk.record.index(),
          failed);
      notifyAll();
      return;
    }
    long floor = snapshot.xmin();
    for (Read other : reads.values()) {
      if (other.table != t || other == r) {
        continue;
      }
      PgSnapshot os = other.snapshot;
      if (other.state == ReadState.MET || other.state == ReadState.REGISTERED) {
        // a read whose snapshot is not known yet may need every id: keep them all
        floor = os == null ? Long.MIN_VALUE : Math.min(floor, os.xmin());
      }
    }
    t.prune(snapshot, floor);
    Lsn need = r.needDurable;
    r.state = need == null || durable.compareTo(need) >= 0 ? ReadState.READY : ReadState.WRITING;
    r.chunk.writing = r;
    notifyAll();
  }

  /**
   * The apply stream passed a commit.
   *
   * @param commitEnd its end LSN
   */
  public synchronized void committed(Lsn commitEnd) {
    if (commitEnd.compareTo(lastCommitEnd) > 0) {
      lastCommitEnd = commitEnd;
    }
  }

  /**
   * Everything the apply stream wrote up to {@code lsn} is durable.
   *
   * @param lsn the durable point
   */
  public synchronized void durable(Lsn lsn) {
    if (lsn.compareTo(durable) <= 0) {
      return;
    }
    durable = lsn;
    boolean woke = false;
    for (Read r : reads.values()) {
      Lsn need = r.needDurable;
      if (r.state == ReadState.WRITING && need != null && need.compareTo(lsn) <= 0) {
        r.state = ReadState.READY;
        woke = true;
      }
    }
    if (woke) {
      notifyAll();
    }
  }

  /**
   * Returns true while a read waits for the apply stream's writes to become durable.
   *
   * @return whether the stream should make its writes durable now
   */
  public synchronized boolean awaitsDurability() {
    for (Read r : reads.values()) {
      if (r.state == ReadState.WRITING || r.state == ReadState.MET) {
        return true;
      }
    }
    return false;
  }

  // ---------------------------------------------------------------- the chunk readers

  /**
   * Takes a chunk that is neither done nor taken by another reader.
   *
   * @param table the table
   * @return the chunk, or null when none is left to take now
   */
  public synchronized @Nullable Chunk take(TableId table) {
    Table t = tables.get(table);
    if (t == null) {
      return null;
    }
    for (Chunk c : t.chunks) {
      if (c.watermark == null && !c.taken) {
        c.taken = true;
        return c;
      }
    }
    return null;
  }

  /**
   * Gives back a chunk taken but not done (its reader stops or failed).
   *
   * @param chunk the chunk
   */
  public synchronized void release(Chunk chunk) {
    chunk.taken = false;
    notifyAll();
  }

  /**
   * Returns true when every chunk of the table is done (no chunk can be added then).
   *
   * @param table the table
   * @return whether the chunked copy is complete
   */
  public synchronized boolean allDone(TableId table) {
    Table t = tables.get(table);
    if (t == null) {
      return false;
    }
    for (Chunk c : t.chunks) {
      if (c.watermark == null) {
        return false;
      }
    }
    return true;
  }

  /**
   * Waits until a chunk may be taken, every chunk is done, or {@code stop} holds.
   *
   * @param table the table
   * @param stop when to give up
   * @throws InterruptedException when interrupted
   */
  public synchronized void awaitWork(TableId table, BooleanSupplier stop)
      throws InterruptedException {
    while (!stop.getAsBoolean()) {
      Table t = tables.get(table);
      if (t == null) {
        return;
      }
      boolean allDone = true;
      for (Chunk c : t.chunks) {
        if (c.watermark == null) {
          allDone = false;
          if (!c.taken) {
            return;
          }
        }
      }
      if (allDone) {
        return;
      }
      wait(100);
    }
  }

  /**
   * Registers a read of a taken chunk, before its snapshot is taken and its watermark written (one
   * statement does both; {@link #snapshot} tells the snapshot then).
   *
   * @param table the table
   * @param chunk the chunk
   * @return the read; its {@link Read#id()} is the watermark's content
   */
  public synchronized Read register(TableId table, Chunk chunk) {
    Table t = tables.get(table);
    if (t == null) {
      throw new IllegalStateException("table " + table + " is not copied in chunks");
    }
    Read r = new Read(UUID.randomUUID().toString(), t, chunk);
    reads.put(r.id, r);
    return r;
  }

  /**
   * Waits until the apply stream met the read's watermark and made every write before it durable.
   *
   * @param read the read
   * @param stop when to give up
   * @return what the reader does
   * @throws InterruptedException when interrupted
   */
  public synchronized ReadOutcome await(Read read, BooleanSupplier stop)
      throws InterruptedException {
    long since = System.nanoTime();
    long nextLog = since + 10_000_000_000L;
    while (true) {
      if (System.nanoTime() > nextLog) {
        nextLog += 30_000_000_000L;
        LOG.info(
            "table {}: the read of chunk {} waits for the apply stream ({} for {} s; stream durable"
                + " at {}, the read needs {})",
            read.table.id,
            read.chunk.record.index(),
            read.state == ReadState.REGISTERED ? "its watermark" : "durability",
            (System.nanoTime() - since) / 1_000_000_000L,
            durable,
            read.needDurable);
      }
      switch (read.state) {
        case READY -> {
          return ReadOutcome.WRITE;
        }
        case ABANDONED -> {
          return ReadOutcome.RETRY;
        }
        default -> {
          if (stop.getAsBoolean()) {
            return ReadOutcome.STOP;
          }
          wait(100);
        }
      }
    }
  }

  /**
   * The read's rows are durable and the chunk is stored as done.
   *
   * @param read the read
   * @return the table's chunks done and in all, now
   */
  public synchronized int[] done(Read read) {
    Chunk c = read.chunk;
    c.watermark = read.watermark;
    c.writing = null;
    c.taken = false;
    reads.remove(read.id);
    notifyAll();
    int done = 0;
    for (Chunk k : read.table.chunks) {
      if (k.watermark != null) {
        done++;
      }
    }
    return new int[] {done, read.table.chunks.size()};
  }

  /**
   * The read failed or stopped: the chunk is not done, and changes held for it pass.
   *
   * @param read the read
   */
  public synchronized void failed(Read read) {
    if (read.chunk.writing == read) {
      read.chunk.writing = null;
    }
    read.state = ReadState.ABANDONED;
    reads.remove(read.id);
    notifyAll();
  }

  // ---------------------------------------------------------------- state

  /** One chunk: its stored record, its bounds as key values, and where it stands. */
  public static final class Chunk {
    private final ChunkRecord record;
    private final Comparator<Object> order;
    private final @Nullable Object from;
    private final @Nullable Object to;
    private @Nullable Lsn watermark;
    private boolean taken;
    private @Nullable Read writing;

    Chunk(ChunkRecord record, ChunkKey key) {
      this.record = record;
      this.order = key.order();
      this.from = record.from() == null ? null : key.parse(record.from().get(0));
      this.to = record.to() == null ? null : key.parse(record.to().get(0));
      this.watermark = record.watermark();
    }

    /**
     * Returns the stored chunk.
     *
     * @return the record
     */
    public ChunkRecord record() {
      return record;
    }

    /**
     * Returns the lower bound, or null.
     *
     * @return the bound
     */
    public @Nullable Object from() {
      return from;
    }

    /**
     * Returns the upper bound (inclusive for a key chunk), or null.
     *
     * @return the bound
     */
    public @Nullable Object to() {
      return to;
    }

    boolean contains(Object k) {
      if (record.kind() == ChunkKind.KEY) {
        return k.equals(from);
      }
      return (from == null || order.compare(k, from) >= 0)
          && (to == null || order.compare(k, to) < 0);
    }

    @Override
    public String toString() {
      return "chunk " + record.index() + " [" + from + ", " + to + ")";
    }
  }

  /** One read of a chunk, from its registration to its end. */
  public static final class Read {
    private final String id;
    private final Table table;
    private final Chunk chunk;
    private @Nullable PgSnapshot snapshot;
    private ReadState state = ReadState.REGISTERED;
    private @Nullable Lsn watermark;
    private @Nullable Lsn needDurable;

    Read(String id, Table table, Chunk chunk) {
      this.id = id;
      this.table = table;
      this.chunk = chunk;
    }

    /**
     * Returns the read's id, the content of its watermark message.
     *
     * @return the id
     */
    public String id() {
      return id;
    }

    /**
     * Returns where the apply stream met the watermark (once it did).
     *
     * @return the LSN
     */
    public Lsn watermark() {
      Lsn w = watermark;
      if (w == null) {
        throw new IllegalStateException("read " + id + " has not met its watermark");
      }
      return w;
    }
  }

  /** A table copied in chunks. */
  private static final class Table {
    final TableId id;
    final UUID attemptId;
    final ChunkKey key;
    final List<Chunk> chunks = new ArrayList<>();
    // range chunks by lower bound in the key's order (the key's lowest value for the open one)
    final TreeMap<Object, Chunk> ranges;
    final Map<Object, List<Chunk>> keyChunks = new HashMap<>();
    // 32-bit ids of the transactions that changed the table since the oldest watermark check
    long[] xids = new long[64];
    int xidCount;
    long lastXid = -1;
    // the newest id forgotten because too many were kept, or -1
    long forgotten = -1;

    Table(TableId id, UUID attemptId, ChunkKey key) {
      this.id = id;
      this.attemptId = attemptId;
      this.key = key;
      this.ranges = new TreeMap<>(key.order());
    }

    void add(Chunk c) {
      chunks.add(c);
      if (c.record.kind() == ChunkKind.KEY) {
        keyChunks.computeIfAbsent(requireBound(c), k -> new ArrayList<>()).add(c);
      } else {
        ranges.put(c.from == null ? key.lowest() : c.from, c);
      }
    }

    private static Object requireBound(Chunk c) {
      Object k = c.from;
      if (k == null) {
        throw new IllegalStateException(c + " is a key chunk without its key");
      }
      return k;
    }

    @Nullable Chunk range(Object k) {
      Entry<Object, Chunk> e = ranges.floorEntry(k);
      return e != null && e.getValue().contains(k) ? e.getValue() : null;
    }

    List<Chunk> keyed(Object k) {
      return keyChunks.getOrDefault(k, List.of());
    }

    boolean writing(Object k) {
      Chunk r = range(k);
      if (r != null && r.writing != null) {
        return true;
      }
      for (Chunk c : keyed(k)) {
        if (c.writing != null) {
          return true;
        }
      }
      return false;
    }

    /** Whether a chunk holding {@code k} is done at a watermark after {@code lsn}. */
    boolean doneAfter(Object k, Lsn lsn) {
      Chunk r = range(k);
      if (r != null && r.watermark != null && r.watermark.compareTo(lsn) > 0) {
        return true;
      }
      for (Chunk c : keyed(k)) {
        if (c.watermark != null && c.watermark.compareTo(lsn) > 0) {
          return true;
        }
      }
      return false;
    }

    /** Whether the destination holds {@code k}'s row as the source has it (a chunk is done). */
    boolean done(Object k) {
      Chunk r = range(k);
      return r == null || r.watermark != null;
    }

    /** Whether a read still to come covers {@code k}. */
    boolean readLater(Object k) {
      Chunk r = range(k);
      if (r != null && r.watermark == null) {
        return true;
      }
      for (Chunk c : keyed(k)) {
        if (c.watermark == null) {
          return true;
        }
      }
      return false;
    }

    void recordXid(long xid) {
      if (xid == lastXid) {
        return;
      }
      lastXid = xid;
      if (xidCount == xids.length) {
        if (xidCount >= MAX_XIDS) {
          // forget the older half; a check then requires a snapshot that sees all of them
          int half = xidCount / 2;
          for (int i = 0; i < half; i++) {
            forgotten = newer(forgotten, xids[i]);
          }
          System.arraycopy(xids, half, xids, 0, xidCount - half);
          xidCount -= half;
        } else {
          xids = Arrays.copyOf(xids, xids.length * 2);
        }
      }
      xids[xidCount++] = xid;
    }

    private static long newer(long a, long b) {
      if (a < 0) {
        return b;
      }
      return (int) (b - a) > 0 ? b : a;
    }

    /** Null when the snapshot sees every transaction recorded; otherwise why not. */
    @Nullable String check(PgSnapshot s) {
      if (forgotten >= 0 && s.widen(forgotten) >= s.xmin()) {
        return "too many transactions changed the table since the last chunk";
      }
      for (int i = 0; i < xidCount; i++) {
        long full = s.widen(xids[i]);
        if (!s.sees(full)) {
          return "transaction "
              + full
              + " changed the table before the watermark and the snapshot "
              + s
              + " does not see it";
        }
      }
      return null;
    }

    /** Forgets the transactions every later snapshot sees. */
    void prune(PgSnapshot s, long floorXmin) {
      int w = 0;
      for (int i = 0; i < xidCount; i++) {
        if (s.widen(xids[i]) >= floorXmin) {
          xids[w++] = xids[i];
        }
      }
      xidCount = w;
      if (forgotten >= 0 && s.widen(forgotten) < floorXmin) {
        forgotten = -1;
      }
    }
  }
}
