package org.pgetl.core.internal.apply;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.locks.LockSupport;
import org.pgetl.core.internal.decode.PgOutputDecoder;
import org.pgetl.core.internal.decode.PgOutputMessage;
import org.pgetl.core.internal.decode.PgTime;
import org.pgetl.core.internal.engine.DestinationCalls;
import org.pgetl.core.internal.engine.StopSignal;
import org.pgetl.core.internal.pg.ReplicationStream;
import org.pgetl.destination.StreamId;
import org.pgetl.destination.WriteDurability;
import org.pgetl.error.ErrorKind;
import org.pgetl.error.EtlException;
import org.pgetl.model.Event;
import org.pgetl.model.Lsn;
import org.pgetl.model.OldRow;
import org.pgetl.model.ReplicatedTableSchema;
import org.pgetl.model.TableRow;
import org.pgetl.model.UpdatedRow;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The change loop of one replication stream, shared by the apply worker and the table-sync workers'
 * catch-up: it reads pgoutput messages, turns the changes this stream owns into events, batches
 * them by size and time, dispatches them to the destination with a bounded number of writes in
 * flight, advances and stores durable progress from the answers, and reports feedback to the
 * server.
 *
 * <h2>Implementation notes</h2>
 *
 * One thread runs {@link #run()} and owns the stream; answers arrive on any thread and are queued
 * by the {@link WriteWindow}, which wakes this thread. A batch is dispatched when it reaches {@code
 * batchMaxBytes}, when it waited {@code batchMaxFill}, or as soon as the stream has nothing more to
 * read — so a lone change goes out at once and a busy stream sends large batches. Durable progress
 * moves only at commit boundaries; when the stream is fully idle (no open or streamed transaction,
 * nothing buffered, in flight or accepted-not-durable) the feedback is the last received LSN, so an
 * idle slot does not hold WAL. Once anything was discarded (a pause, an abandoned write) the
 * feedback never passes the durable point again on this stream. Transaction ordinals count every
 * data message of a transaction, owned or not, so that every stream numbers the same change alike.
 *
 * <p>The changes of a streamed in-progress transaction go to its file in the {@link StreamSpool} as
 * they arrive, undecoded beyond their kind and xid. At its Stream Commit the transaction opens like
 * any other, and until its last change the loop reads from the spool instead of the stream: the
 * same number of changes per iteration as it could read, the same batch limits, write window and
 * back-pressure, the same stops, and status updates in between; the commit ends it. So a streamed
 * transaction of any size reaches the destination in batches of {@code batchMaxBytes}, the heap
 * holds at most (in-flight writes + 1) batches of it, and durable progress moves at its commit
 * only. A failure of the spool (its disk cap, an I/O error) is no table's fault: it stops the
 * pipeline.
 */
public final class ApplyLoop {
  private static final Logger LOG = LoggerFactory.getLogger(ApplyLoop.class);
  private static final long READ_WAIT_IDLE_NANOS = 20_000_000L;
  private static final long READ_WAIT_BUSY_NANOS = 1_000_000L;
  private static final long PARK_NANOS = 5_000_000L;

  /** The most spooled changes delivered per iteration of the loop. */
  private static final int REPLAY_CHUNK = 1024;

  /** The least time between two writes of the durable point to the store. */
  static final long PERSIST_INTERVAL_NANOS = 200_000_000L;

  /** How the loop ended. */
  public enum Exit {
    /** The role finished its work (a table caught up). */
    COMPLETED,
    /** The loop stopped (shutdown, lifecycle stop, abandoned write); the next start resumes. */
    PAUSED
  }

  private final LoopEnv env;
  private final StreamRole role;
  private final ReplicationStream stream;
  private final PgOutputDecoder decoder;
  private final RelationCache relations;
  private final StreamSpool spool;
  private final WriteWindow window;
  private final Thread owner;
  private final String pipelineId;

  // the open transaction
  private boolean inTx;
  private Lsn txCommitLsn = Lsn.ZERO;
  private long txOrdinal;
  private java.time.Instant txCommitTime;
  private long txXid;
  private Lsn txBeginWalStart = Lsn.ZERO;
  private boolean beginEmitted;

  // the streamed transaction being delivered from the spool
  private StreamSpool.Replay replay;
  private PgOutputMessage.StreamCommit replayCommit;

  // the batch being filled
  private List<Event> buffer = new ArrayList<>();
  private long bufferBytes;
  private int bufferMarkers;
  private long bufferStartedNanos;
  private Lsn bufferCommitEnd;

  private Lsn durable;
  private Lsn persisted;
  private long lastPersistNanos;
  private boolean discarded;
  private boolean abandoned;
  private boolean completing;
  private boolean finished;
  private boolean stopBarrierSent;
  private long stopStartedNanos;
  private long lastDispatchNanos = System.nanoTime();
  private final Control control = new Control();

  /**
   * Creates the loop of a started stream.
   *
   * @param env what every loop shares
   * @param role the stream's role
   * @param stream the started stream; this loop's thread becomes its owner
   * @param decoder a decoder for the stream's protocol version and streaming mode
   * @param resolver turns RELATION messages into schemas and codecs
   * @param startDurable the durable point the stream started from
   */
  public ApplyLoop(
      LoopEnv env,
      StreamRole role,
      ReplicationStream stream,
      PgOutputDecoder decoder,
      SchemaResolver resolver,
      Lsn startDurable) {
    this.env = env;
    this.role = role;
    this.stream = stream;
    this.decoder = decoder;
    this.relations = new RelationCache(resolver, env.store());
    this.owner = Thread.currentThread();
    this.window =
        new WriteWindow(env.config().maxInFlightWrites(), () -> LockSupport.unpark(owner));
    this.durable = startDurable;
    this.persisted = startDurable;
    this.pipelineId = env.config().pipelineId();
    StreamId id = role.streamId();
    this.spool =
        new StreamSpool(
            env.spool(), id.kind() == StreamId.Kind.APPLY ? "apply" : "sync-" + id.table().oid());
  }

  /**
   * Runs the loop on the calling thread until the role completes or the loop stops.
   *
   * @return how it ended
   * @throws EtlException when the stream, the destination or the store fails
   */
  public Exit run() {
    Runnable unregister = env.stop().onRequest(() -> LockSupport.unpark(owner));
    try {
      return loop();
    } finally {
      unregister.run();
      closeSpool();
    }
  }

  private Exit loop() {
    boolean caughtUp = false;
    while (true) {
      if (env.stop().mode() == StopSignal.Mode.FENCED) {
        // the lease is lost: no answer is applied, no store write, no feedback, no write
        LOG.info("pipeline {}: {} stream fenced", pipelineId, role.describe());
        return Exit.PAUSED;
      }
      applyAnswers();
      persistIfDue();
      if (abandoned) {
        finalFeedback();
        return Exit.PAUSED;
      }
      StopSignal.Mode stopMode = env.stop().mode();
      if (stopMode != StopSignal.Mode.NONE && stopStartedNanos == 0) {
        stopStartedNanos = System.nanoTime();
        LOG.info(
            "pipeline {}: {} stream stopping ({}), {} writes in flight",
            pipelineId,
            role.describe(),
            stopMode,
            window.inFlight());
      }
      if (stopMode == StopSignal.Mode.DISCARD) {
        discardBuffered();
      }
      if (finished && window.inFlight() == 0 && buffer.isEmpty()) {
        finalFeedback();
        return Exit.COMPLETED;
      }
      if (stopMode != StopSignal.Mode.NONE && stopSettled()) {
        finalFeedback();
        return Exit.PAUSED;
      }
      role.tick(control);
      if (isIdle()) {
        Lsn received = stream.lastReceivedLsn();
        stream.advanceFlushed(received);
        role.whenIdle(received, control);
        if (finished) {
          continue;
        }
      }
      maybeDispatch(caughtUp, stopMode);
      maybeBarrier();
      // while writes are in flight the next batch keeps filling, up to its size limit: memory
      // stays bounded by (in-flight writes + 1) batches
      boolean canRead =
          (stopMode == StopSignal.Mode.NONE || finishingTransaction(stopMode))
              && !completing
              && !finished
              && bufferBytes < env.config().batchMaxBytes();
      if (canRead) {
        long wait =
            buffer.isEmpty()
                ? (window.inFlight() > 0 ? READ_WAIT_BUSY_NANOS : READ_WAIT_IDLE_NANOS)
                : 0;
        if (replay != null) {
          replayChanges();
          caughtUp = false;
        } else {
          ByteBuffer msg = stream.readNext(wait);
          caughtUp = msg == null;
          if (msg != null) {
            handle(msg);
          }
        }
      } else {
        stream.sendStatusIfDue();
        LockSupport.parkNanos(PARK_NANOS);
      }
    }
  }

  // ---- answers and progress

  private void applyAnswers() {
    WriteWindow.Progress p = window.poll();
    if (p.durableAdvancedTo() != null) {
      advanceDurable(p.durableAdvancedTo());
    }
    if (p.failure() != null) {
      throw p.failure();
    }
    if (p.abandoned() && !abandoned) {
      abandoned = true;
      // the batch behind the abandoned write is never sent: a durable answer to it would claim
      // progress for events the destination never got
      discardBuffered();
      LOG.info(
          "pipeline {}: destination abandoned a write of the {} stream; stopping (resumes from {})",
          pipelineId,
          role.describe(),
          durable);
      env.shutdown().request();
    }
  }

  private void advanceDurable(Lsn lsn) {
    if (!lsn.isAfter(durable)) {
      return;
    }
    durable = lsn;
    stream.advanceFlushed(durable);
    persistIfDue();
  }

  /**
   * Stores the durable point when it moved and the last write is {@link #PERSIST_INTERVAL_NANOS}
   * old (or the stream is completing), then runs the role's hand-off step with the stored point.
   * The server learns the durable point at once through feedback; the store only serves restarts,
   * so a busy stream writes it at most a few times a second instead of once per batch.
   */
  private void persistIfDue() {
    if (!durable.isAfter(persisted)) {
      return;
    }
    long now = System.nanoTime();
    if (!completing && now - lastPersistNanos < PERSIST_INTERVAL_NANOS) {
      return;
    }
    persist();
  }

  private void persist() {
    if (!durable.isAfter(persisted)) {
      return;
    }
    Lsn stored = env.store().advanceProgress(role.progressKey(), durable);
    persisted = Lsn.max(persisted, stored);
    lastPersistNanos = System.nanoTime();
    role.afterDurable(persisted, control);
  }

  /**
   * While a drain (or a shutdown) stops the stream, the transaction being read is read to its
   * commit, within the grace period, so that the stream stops at a commit boundary and everything
   * it delivered can become durable.
   */
  private boolean finishingTransaction(StopSignal.Mode stopMode) {
    return stopMode == StopSignal.Mode.DRAIN && inTx && !graceOver();
  }

  private boolean graceOver() {
    return System.nanoTime() - stopStartedNanos > env.config().shutdownTimeout().toNanos();
  }

  /**
   * Returns true once a stopping stream may end: nothing in flight, nothing buffered (or a
   * discard), and everything answered {@code accepted} made durable by a last {@code
   * REQUIRE_DURABLE} barrier — or the grace period is over, which is then noted as an incomplete
   * stop.
   */
  private boolean stopSettled() {
    boolean discard = env.stop().mode() == StopSignal.Mode.DISCARD;
    if (window.inFlight() == 0
        && (buffer.isEmpty() || discard)
        && !finishingTransaction(env.stop().mode())) {
      if (window.isClear()) {
        return true;
      }
      if (!stopBarrierSent) {
        // accepted work would otherwise stay non-durable: the destination makes it durable now
        stopBarrierSent = true;
        dispatch(WriteDurability.REQUIRE_DURABLE);
        return false;
      }
    }
    if (!graceOver()) {
      return false;
    }
    String problem =
        window.inFlight() > 0
            ? window.inFlight() + " writes unanswered"
            : inTx && !discard
                ? "a transaction read only in part"
                : "writes accepted but not durable";
    env.stop()
        .noteIncomplete(
            "the "
                + role.describe()
                + " stream stopped with "
                + problem
                + " after "
                + env.config().shutdownTimeout()
                + " (durable up to "
                + durable
                + ")");
    LOG.warn(
        "pipeline {}: {} stream stops with {} after {}; they are delivered again from {} at the"
            + " next start",
        pipelineId,
        role.describe(),
        problem,
        env.config().shutdownTimeout(),
        durable);
    return true;
  }

  private void finalFeedback() {
    try {
      persist();
    } catch (EtlException e) {
      LOG.warn(
          "pipeline {}: could not store the {} stream's progress {} ({}); the next start resumes"
              + " from the slot's confirmed position",
          pipelineId,
          role.describe(),
          durable,
          e.getMessage());
    }
    try {
      if (isIdle()) {
        stream.advanceFlushed(stream.lastReceivedLsn());
      }
      stream.forceStatusUpdate();
    } catch (EtlException e) {
      LOG.debug("pipeline {}: final status update failed: {}", pipelineId, e.getMessage());
    }
  }

  private boolean isIdle() {
    return !inTx
        && !discarded
        && !abandoned
        && spool.isEmpty()
        && replay == null
        && buffer.isEmpty()
        && window.isClear();
  }

  private void discardBuffered() {
    if (!buffer.isEmpty() || inTx || !spool.isEmpty() || replay != null) {
      long n = buffer.size();
      if (n > 0) {
        env.metrics().eventsDiscarded(n);
      }
      buffer = new ArrayList<>();
      bufferBytes = 0;
      bufferMarkers = 0;
      bufferCommitEnd = null;
      replay = null;
      replayCommit = null;
      try {
        spool.clear();
      } catch (EtlException e) {
        throw stopPipeline(e);
      }
      discarded = true;
    }
  }

  // ---- dispatch

  private void maybeDispatch(boolean caughtUp, StopSignal.Mode stopMode) {
    if (buffer.isEmpty()) {
      if (completing && !inTx && bufferCommitEnd != null && !window.isFull()) {
        // the catch-up target was reached by a transaction without events of this table: the
        // final write is an empty durability barrier that carries its commit LSN
        dispatch(WriteDurability.REQUIRE_DURABLE);
      }
      return;
    }
    if (window.isFull()) {
      return;
    }
    long now = System.nanoTime();
    boolean due =
        bufferBytes >= env.config().batchMaxBytes()
            || now - bufferStartedNanos >= env.config().batchMaxFill().toNanos()
            || caughtUp
            || stopMode == StopSignal.Mode.DRAIN
            || completing;
    if (due) {
      dispatch(completing && !inTx ? WriteDurability.REQUIRE_DURABLE : WriteDurability.MAY_DEFER);
    }
  }

  private void maybeBarrier() {
    if (inTx
        || !buffer.isEmpty()
        || window.inFlight() > 0
        || !window.hasAcceptedNotDurable()
        || env.stop().isRequested()) {
      return;
    }
    boolean quiet = System.nanoTime() - lastDispatchNanos >= env.config().batchMaxFill().toNanos();
    if (quiet || role.wantsDurabilityBarrier(stream.lastReceivedLsn())) {
      dispatch(WriteDurability.REQUIRE_DURABLE);
    }
  }

  private void dispatch(WriteDurability durability) {
    List<Event> events = buffer;
    Lsn commitEnd = bufferCommitEnd;
    long bytes = bufferBytes;
    int markers = bufferMarkers;
    buffer = new ArrayList<>();
    bufferBytes = 0;
    bufferMarkers = 0;
    bufferCommitEnd = null;
    List<Event> batch = Collections.unmodifiableList(events);
    lastDispatchNanos = System.nanoTime();
    long started = lastDispatchNanos;
    env.metrics().inFlight(1);
    if (!events.isEmpty()) {
      env.metrics().eventsDelivered(events.size() - markers, markers, bytes);
    }
    // the window registers the result before the destination can answer it
    DestinationCalls.invoke(
        env.destination(),
        "writeEvents",
        r -> {
          window.track(r, commitEnd, durability);
          r.completion()
              .thenRun(
                  () -> {
                    env.metrics().inFlight(-1);
                    env.metrics().batchLatency("events", System.nanoTime() - started);
                  });
          env.destination().writeEvents(role.streamId(), batch, durability, r);
        });
  }

  private void append(Event e) {
    if (buffer.isEmpty()) {
      bufferStartedNanos = System.nanoTime();
    }
    buffer.add(e);
    bufferBytes += EventSizes.estimate(e);
    Event.Kind k = e.kind();
    if (k == Event.Kind.BEGIN || k == Event.Kind.COMMIT || k == Event.Kind.RELATION) {
      bufferMarkers++;
    }
  }

  // ---- messages

  private void handle(ByteBuffer buf) {
    Lsn walStart = stream.lastMessageLsn();
    long streamedXid = decoder.streamedChangeXid(buf);
    if (streamedXid != 0) {
      // a change of a streamed transaction: into its spool file as it came, decoded at its commit
      try {
        spool.add(streamedXid, walStart, buf);
      } catch (EtlException e) {
        throw stopPipeline(e);
      }
      return;
    }
    PgOutputMessage m = decoder.decode(buf, walStart);
    if (m.kind() == PgOutputMessage.Kind.TYPE || m.kind() == PgOutputMessage.Kind.ORIGIN) {
      // type announcements and origins carry nothing a destination needs (codecs come from the
      // catalog by oid), in or out of a stream block
      return;
    }
    switch (m.kind()) {
      case BEGIN -> {
        PgOutputMessage.Begin b = (PgOutputMessage.Begin) m;
        beginTx(b.walStart(), b.finalLsn(), PgTime.toInstant(b.commitTime()), b.xid());
      }
      case COMMIT -> {
        PgOutputMessage.Commit c = (PgOutputMessage.Commit) m;
        if (!inTx || !c.commitLsn().equals(txCommitLsn)) {
          throw new EtlException(
              ErrorKind.REPLICATION_PROTOCOL_ERROR,
              "COMMIT " + c.commitLsn() + " does not match the open transaction " + txCommitLsn,
              "stream of slot " + stream.slotName());
        }
        commitTx(c.walStart(), c.endLsn(), PgTime.toInstant(c.commitTime()), c.flags());
      }
      case STREAM_START -> {
        try {
          spool.start(((PgOutputMessage.StreamStart) m).xid());
        } catch (EtlException e) {
          throw stopPipeline(e);
        }
      }
      case STREAM_STOP -> {
        try {
          spool.stop();
        } catch (EtlException e) {
          throw stopPipeline(e);
        }
      }
      case STREAM_COMMIT -> {
        PgOutputMessage.StreamCommit sc = (PgOutputMessage.StreamCommit) m;
        StreamSpool.Replay r;
        try {
          r = spool.commit(sc.xid());
        } catch (EtlException e) {
          throw stopPipeline(e);
        }
        beginTx(sc.walStart(), sc.commitLsn(), PgTime.toInstant(sc.commitTime()), sc.xid());
        replay = r;
        replayCommit = sc;
        LOG.info(
            "pipeline {}: {} stream delivers streamed transaction {} committed at {}: {} changes"
                + " ({} bytes) from the spool",
            pipelineId,
            role.describe(),
            sc.xid(),
            sc.commitLsn(),
            r.changes(),
            r.bytes());
      }
      case STREAM_ABORT -> {
        PgOutputMessage.StreamAbort a = (PgOutputMessage.StreamAbort) m;
        try {
          spool.abort(a.xid(), a.subXid());
        } catch (EtlException e) {
          throw stopPipeline(e);
        }
      }
      case RELATION, INSERT, UPDATE, DELETE, TRUNCATE, MESSAGE ->
          handleChange((PgOutputMessage.StreamableMessage) m);
      default ->
          throw new EtlException(
              ErrorKind.REPLICATION_PROTOCOL_ERROR,
              "unexpected " + m.kind().displayName() + " message (two-phase is not enabled)",
              "stream of slot " + stream.slotName());
    }
  }

  /**
   * Delivers the next changes of the streamed transaction being replayed — at most {@link
   * #REPLAY_CHUNK}, and no more once the batch is full — and after its last change, its commit. The
   * loop calls this instead of reading the stream while the replay lasts.
   */
  private void replayChanges() {
    long limit = env.config().batchMaxBytes();
    for (int n = 0; n < REPLAY_CHUNK && bufferBytes < limit; n++) {
      StreamSpool.Change c;
      try {
        c = replay.next();
      } catch (EtlException e) {
        throw stopPipeline(e);
      }
      if (c == null) {
        endReplay();
        break;
      }
      byte[] bytes = c.message();
      handleChange(decoder.decodeSpooled(bytes, 0, bytes.length, c.walStart()));
    }
    stream.sendStatusIfDue();
  }

  private void endReplay() {
    PgOutputMessage.StreamCommit sc = replayCommit;
    try {
      replay.close();
    } catch (EtlException e) {
      throw stopPipeline(e);
    } finally {
      replay = null;
      replayCommit = null;
    }
    commitTx(sc.walStart(), sc.endLsn(), PgTime.toInstant(sc.commitTime()), sc.flags());
  }

  /**
   * Records a failure of the spool as the pipeline's and requests its shutdown before the failure
   * leaves the loop: the spool is shared by the pipeline's streams, so it is no table's error, and
   * a retry would only stream the same transaction into the same limit again.
   */
  private EtlException stopPipeline(EtlException e) {
    LOG.error(
        "pipeline {}: {} stream: {} — {}", pipelineId, role.describe(), e.getMessage(), e.hint());
    env.errors().fatal(e);
    env.shutdown().request();
    return e;
  }

  /** Deletes the spool files of this stream; they would be streamed again anyway. */
  private void closeSpool() {
    replay = null;
    replayCommit = null;
    try {
      spool.close();
    } catch (EtlException e) {
      LOG.warn(
          "pipeline {}: could not delete the spool files of the {} stream: {}; the next start"
              + " deletes them",
          pipelineId,
          role.describe(),
          e.getMessage());
    }
  }

  private void beginTx(Lsn walStart, Lsn commitLsn, java.time.Instant commitTime, long xid) {
    if (inTx) {
      throw new EtlException(
          ErrorKind.REPLICATION_PROTOCOL_ERROR,
          "BEGIN " + commitLsn + " inside the open transaction " + txCommitLsn,
          "stream of slot " + stream.slotName());
    }
    inTx = true;
    txCommitLsn = commitLsn;
    txOrdinal = 0;
    txCommitTime = commitTime;
    txXid = xid;
    txBeginWalStart = walStart;
    beginEmitted = false;
  }

  private void commitTx(Lsn walStart, Lsn endLsn, java.time.Instant commitTime, int flags) {
    long ordinal = ++txOrdinal;
    role.afterCommit(endLsn, commitTime, control);
    if (beginEmitted) {
      append(new Event.Commit(walStart, txCommitLsn, ordinal, endLsn, commitTime, flags));
    }
    bufferCommitEnd = endLsn;
    inTx = false;
  }

  private void ensureBegin() {
    if (!beginEmitted) {
      append(new Event.Begin(txBeginWalStart, txCommitLsn, 0, txCommitTime, txXid));
      beginEmitted = true;
    }
  }

  private void announce(RelationCache.Entry e, Lsn walStart, long ordinal) {
    if (!e.announced) {
      append(new Event.Relation(walStart, txCommitLsn, ordinal, e.schema));
      e.announced = true;
    }
  }

  private void handleChange(PgOutputMessage.StreamableMessage m) {
    switch (m.kind()) {
      case RELATION -> onRelation((PgOutputMessage.Relation) m);
      case INSERT -> {
        PgOutputMessage.Insert ins = (PgOutputMessage.Insert) m;
        RelationCache.Entry e = relations.get(ins.relationId(), m.kind());
        long ordinal = ++txOrdinal;
        if (owned(e)) {
          TableRow row = RowConverter.full(e, ins.newTuple(), "Insert");
          emit(e, ins.walStart(), ordinal);
          append(new Event.Insert(ins.walStart(), txCommitLsn, ordinal, e.schema, row));
        }
      }
      case UPDATE -> {
        PgOutputMessage.Update up = (PgOutputMessage.Update) m;
        RelationCache.Entry e = relations.get(up.relationId(), m.kind());
        long ordinal = ++txOrdinal;
        if (owned(e)) {
          UpdatedRow row = RowConverter.updated(e, up.newTuple(), up.oldTuple());
          OldRow old = RowConverter.old(e, up.oldTupleKind(), up.oldTuple(), "Update");
          emit(e, up.walStart(), ordinal);
          append(new Event.Update(up.walStart(), txCommitLsn, ordinal, e.schema, row, old));
        }
      }
      case DELETE -> {
        PgOutputMessage.Delete del = (PgOutputMessage.Delete) m;
        RelationCache.Entry e = relations.get(del.relationId(), m.kind());
        long ordinal = ++txOrdinal;
        if (owned(e)) {
          OldRow old = RowConverter.old(e, del.oldTupleKind(), del.oldTuple(), "Delete");
          if (old == null) {
            throw new EtlException(
                ErrorKind.SOURCE_REPLICA_IDENTITY_ERROR,
                "DELETE on " + e.schema.name() + " carries no old row",
                "give the table a primary key or REPLICA IDENTITY FULL");
          }
          emit(e, del.walStart(), ordinal);
          append(new Event.Delete(del.walStart(), txCommitLsn, ordinal, e.schema, old));
        }
      }
      case TRUNCATE -> {
        PgOutputMessage.Truncate t = (PgOutputMessage.Truncate) m;
        long ordinal = ++txOrdinal;
        List<ReplicatedTableSchema> tables = new ArrayList<>();
        List<RelationCache.Entry> entries = new ArrayList<>();
        for (long relId : t.relationIds()) {
          RelationCache.Entry e = relations.get(relId, m.kind());
          if (owned(e)) {
            tables.add(e.schema);
            entries.add(e);
          }
        }
        if (!tables.isEmpty()) {
          ensureBegin();
          for (RelationCache.Entry e : entries) {
            announce(e, t.walStart(), ordinal);
          }
          append(new Event.Truncate(t.walStart(), txCommitLsn, ordinal, tables, t.options()));
        }
      }
      case MESSAGE -> {
        PgOutputMessage.LogicalMessage lm = (PgOutputMessage.LogicalMessage) m;
        if (lm.transactional() && inTx) {
          long ordinal = ++txOrdinal;
          if (role.deliversMessages()) {
            ensureBegin();
            byte[] content = lm.content().toByteArray();
            append(
                new Event.Message(lm.walStart(), txCommitLsn, ordinal, true, lm.prefix(), content));
          }
        } else if (role.deliversMessages()) {
          byte[] content = lm.content().toByteArray();
          append(new Event.Message(lm.walStart(), lm.messageLsn(), 0, false, lm.prefix(), content));
        }
      }
      default ->
          throw new EtlException(
              ErrorKind.REPLICATION_PROTOCOL_ERROR,
              "unexpected " + m.kind().displayName() + " message in a transaction",
              "stream of slot " + stream.slotName());
    }
  }

  private void onRelation(PgOutputMessage.Relation r) {
    RelationCache.Entry e = relations.update(r, txCommitLsn);
    role.relationSeen(e.table, e.schema.name(), control);
    if (owned(e)) {
      env.store().storeTableSchema(e.schema);
    }
  }

  private boolean owned(RelationCache.Entry e) {
    return role.owns(e.table, txCommitLsn);
  }

  private void emit(RelationCache.Entry e, Lsn walStart, long ordinal) {
    ensureBegin();
    announce(e, walStart, ordinal);
  }

  // ---- the role's view

  private final class Control implements StreamRole.Control {
    @Override
    public void completeAfterThisTransaction() {
      completing = true;
    }

    @Override
    public void finish() {
      finished = true;
    }

    @Override
    public void keepAlive() {
      stream.sendStatusIfDue();
    }

    @Override
    public boolean stopRequested() {
      return env.stop().isRequested() || abandoned;
    }

    @Override
    public long writeFence() {
      return window.dispatched() + (buffer.isEmpty() ? 0 : 1);
    }

    @Override
    public boolean answeredBefore(long fence) {
      return window.answeredBefore(fence);
    }
  }

  /**
   * Returns the durable point of this stream.
   *
   * @return the LSN up to which everything is durable
   */
  public Lsn durable() {
    return durable;
  }
}
