package org.pgetl.core.internal.apply;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import org.jspecify.annotations.Nullable;
import org.pgetl.core.internal.chunk.ChunkKey;
import org.pgetl.core.internal.chunk.ChunkTracker;
import org.pgetl.core.internal.decode.PgOutputDecoder;
import org.pgetl.core.internal.decode.PgOutputMessage;
import org.pgetl.core.internal.decode.PgTime;
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
 * The intake half of an {@link ApplyLoop}: turns the pgoutput messages of one stream into the
 * events this stream owns, appended to its {@link EventBatch}.
 *
 * <p>It keeps the open transaction (commit LSN, commit time, xid), numbers every data message of it
 * — owned or not, so that every stream numbers the same change alike — and emits a transaction's
 * Begin before its first owned change, a Relation before the first change of each table version,
 * and its Commit only when a Begin went out. The changes of a streamed in-progress transaction go
 * to the {@link StreamSpool} as they arrive; at their Stream Commit the transaction opens and is
 * {@linkplain #replay(long) replayed} from the spool in chunks, instead of reading the stream,
 * until its commit. Owned by the loop's thread; it never dispatches and never reads time.
 */
final class TransactionAssembler {
  private static final Logger LOG = LoggerFactory.getLogger(TransactionAssembler.class);

  /** The most spooled changes delivered per call of {@link #replay(long)}. */
  static final int REPLAY_CHUNK = 1024;

  private final LoopEnv env;
  private final StreamRole role;
  private final StreamRole.Control control;
  private final PgOutputDecoder decoder;
  private final RelationCache relations;
  private final StreamSpool spool;
  private final EventBatch batch;
  private final String slotName;

  // the open transaction
  private boolean inTx;
  private Lsn txCommitLsn = Lsn.ZERO;
  private long txOrdinal;
  private @Nullable Instant txCommitTime;
  private long txXid;
  private Lsn txBeginWalStart = Lsn.ZERO;
  private boolean beginEmitted;

  // the streamed transaction being delivered from the spool
  private StreamSpool.@Nullable Replay replay;
  private PgOutputMessage.@Nullable StreamCommit replayCommit;
  // a change of a table copied in chunks that waits for a chunk being written
  private PgOutputMessage.@Nullable StreamableMessage held;

  TransactionAssembler(
      LoopEnv env,
      StreamRole role,
      StreamRole.Control control,
      PgOutputDecoder decoder,
      RelationCache relations,
      StreamSpool spool,
      EventBatch batch,
      String slotName) {
    this.env = env;
    this.role = role;
    this.control = control;
    this.decoder = decoder;
    this.relations = relations;
    this.spool = spool;
    this.batch = batch;
    this.slotName = slotName;
  }

  /** True while a transaction is open: between its Begin (or Stream Commit) and its commit. */
  boolean inTransaction() {
    return inTx;
  }

  /** True while a streamed transaction is being delivered from the spool. */
  boolean replaying() {
    return replay != null;
  }

  /** True when neither the spool nor a replay holds changes not yet in the batch. */
  boolean spoolEmpty() {
    return spool.isEmpty() && replay == null;
  }

  /**
   * True when the spool holds streamed transactions that have not committed, none of them in a
   * stream block or being replayed, and no change is held.
   */
  boolean onlyOpenStreamedTransactionsSpooled() {
    return !spool.isEmpty() && !spool.inBlock() && replay == null && held == null;
  }

  /** True when a discard would drop something: an open transaction, spooled or replayed changes. */
  boolean holdsWork() {
    return inTx || held != null || !spoolEmpty();
  }

  /**
   * Drops the spooled transactions and the replay in progress (a discarding stop, an abandoned
   * write). The open transaction stays open: the stream reads no further.
   */
  void discard() {
    held = null;
    replay = null;
    replayCommit = null;
    try {
      spool.clear();
    } catch (EtlException e) {
      throw stopPipeline(e);
    }
  }

  /**
   * Handles one message of the stream.
   *
   * @param buf the message, at its first byte
   * @param walStart the WAL start LSN the server sent with it
   */
  void handle(ByteBuffer buf, Lsn walStart) {
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
              "stream of slot " + slotName);
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
            env.config().pipelineId(),
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
              "stream of slot " + slotName);
    }
  }

  /**
   * Delivers the next changes of the streamed transaction being replayed — at most {@link
   * #REPLAY_CHUNK}, and no more once the batch holds {@code batchMaxBytes} — and after its last
   * change, its commit. The loop calls this instead of reading the stream while {@link
   * #replaying()}.
   *
   * @param batchMaxBytes the batch size limit
   */
  void replay(long batchMaxBytes) {
    for (int n = 0; n < REPLAY_CHUNK && batch.bytes() < batchMaxBytes; n++) {
      StreamSpool.Change c;
      try {
        c = Objects.requireNonNull(replay, "replay() is called while replaying()").next();
      } catch (EtlException e) {
        throw stopPipeline(e);
      }
      if (c == null) {
        endReplay();
        break;
      }
      byte[] bytes = c.message();
      handleChange(decoder.decodeSpooled(bytes, 0, bytes.length, c.walStart()));
      if (held != null) {
        break;
      }
    }
  }

  private void endReplay() {
    PgOutputMessage.StreamCommit sc =
        Objects.requireNonNull(replayCommit, "a replay in progress has its commit");
    try {
      Objects.requireNonNull(replay, "a replay is in progress").close();
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
        "pipeline {}: {} stream: {} — {}",
        env.config().pipelineId(),
        role.describe(),
        e.getMessage(),
        e.hint());
    env.errors().fatal(e);
    env.shutdown().request();
    return e;
  }

  /** Deletes the spool files of this stream; they would be streamed again anyway. */
  void close() {
    held = null;
    replay = null;
    replayCommit = null;
    try {
      spool.close();
    } catch (EtlException e) {
      LOG.warn(
          "pipeline {}: could not delete the spool files of the {} stream: {}; the next start"
              + " deletes them",
          env.config().pipelineId(),
          role.describe(),
          e.getMessage());
    }
  }

  private void beginTx(Lsn walStart, Lsn commitLsn, Instant commitTime, long xid) {
    if (inTx) {
      throw new EtlException(
          ErrorKind.REPLICATION_PROTOCOL_ERROR,
          "BEGIN " + commitLsn + " inside the open transaction " + txCommitLsn,
          "stream of slot " + slotName);
    }
    inTx = true;
    txCommitLsn = commitLsn;
    txOrdinal = 0;
    txCommitTime = commitTime;
    txXid = xid;
    txBeginWalStart = walStart;
    beginEmitted = false;
  }

  private void commitTx(Lsn walStart, Lsn endLsn, Instant commitTime, int flags) {
    long ordinal = ++txOrdinal;
    role.afterCommit(endLsn, commitTime, control);
    if (beginEmitted) {
      batch.append(new Event.Commit(walStart, txCommitLsn, ordinal, endLsn, commitTime, flags));
    }
    batch.commitEnded(endLsn);
    inTx = false;
  }

  private void ensureBegin() {
    if (!beginEmitted) {
      Instant commitTime =
          Objects.requireNonNull(txCommitTime, "the transaction's BEGIN set its commit time");
      batch.append(new Event.Begin(txBeginWalStart, txCommitLsn, 0, commitTime, txXid));
      beginEmitted = true;
    }
  }

  private void announce(RelationCache.Entry e, Lsn walStart, long ordinal) {
    if (!e.announced) {
      batch.append(new Event.Relation(walStart, txCommitLsn, ordinal, e.schema));
      e.announced = true;
    }
  }

  private void handleChange(PgOutputMessage.StreamableMessage m) {
    switch (m.kind()) {
      case RELATION -> onRelation((PgOutputMessage.Relation) m);
      case INSERT -> {
        PgOutputMessage.Insert ins = (PgOutputMessage.Insert) m;
        RelationCache.Entry e = relations.get(ins.relationId(), m.kind());
        if (owned(e)) {
          TableRow row = RowConverter.full(e, ins.newTuple(), "Insert");
          ChunkKey key = role.chunkKey(e.schema);
          ChunkTracker.Admission a =
              key == null ? ChunkTracker.Admission.APPLY : admit(e, key.of(row), null, false);
          if (a == ChunkTracker.Admission.HOLD) {
            held = m;
            return;
          }
          long ordinal = ++txOrdinal;
          if (a == ChunkTracker.Admission.APPLY) {
            emit(e, ins.walStart(), ordinal);
            batch.append(new Event.Insert(ins.walStart(), txCommitLsn, ordinal, e.schema, row));
          }
        } else {
          ++txOrdinal;
        }
      }
      case UPDATE -> {
        PgOutputMessage.Update up = (PgOutputMessage.Update) m;
        RelationCache.Entry e = relations.get(up.relationId(), m.kind());
        if (owned(e)) {
          UpdatedRow row = RowConverter.updated(e, up.newTuple(), up.oldTuple());
          OldRow old = RowConverter.old(e, up.oldTupleKind(), up.oldTuple(), "Update");
          ChunkKey key = role.chunkKey(e.schema);
          ChunkTracker.Admission a =
              key == null
                  ? ChunkTracker.Admission.APPLY
                  : admit(e, key.of(row), key.of(old), row instanceof UpdatedRow.Partial);
          if (a == ChunkTracker.Admission.HOLD) {
            held = m;
            return;
          }
          long ordinal = ++txOrdinal;
          if (a == ChunkTracker.Admission.APPLY) {
            emit(e, up.walStart(), ordinal);
            batch.append(new Event.Update(up.walStart(), txCommitLsn, ordinal, e.schema, row, old));
          }
        } else {
          ++txOrdinal;
        }
      }
      case DELETE -> {
        PgOutputMessage.Delete del = (PgOutputMessage.Delete) m;
        RelationCache.Entry e = relations.get(del.relationId(), m.kind());
        if (owned(e)) {
          OldRow old = RowConverter.old(e, del.oldTupleKind(), del.oldTuple(), "Delete");
          if (old == null) {
            throw new EtlException(
                ErrorKind.SOURCE_REPLICA_IDENTITY_ERROR,
                "DELETE on " + e.schema.name() + " carries no old row",
                "give the table a primary key or REPLICA IDENTITY FULL");
          }
          ChunkKey key = role.chunkKey(e.schema);
          ChunkTracker.Admission a =
              key == null ? ChunkTracker.Admission.APPLY : admit(e, key.of(old), null, false);
          if (a == ChunkTracker.Admission.HOLD) {
            held = m;
            return;
          }
          long ordinal = ++txOrdinal;
          if (a == ChunkTracker.Admission.APPLY) {
            emit(e, del.walStart(), ordinal);
            batch.append(new Event.Delete(del.walStart(), txCommitLsn, ordinal, e.schema, old));
          }
        } else {
          ++txOrdinal;
        }
      }
      case TRUNCATE -> {
        PgOutputMessage.Truncate t = (PgOutputMessage.Truncate) m;
        List<ReplicatedTableSchema> tables = new ArrayList<>();
        List<RelationCache.Entry> entries = new ArrayList<>();
        for (long relId : t.relationIds()) {
          RelationCache.Entry e = relations.get(relId, m.kind());
          if (owned(e)) {
            if (role.chunkKey(e.schema) != null
                && role.admitTruncate(e.table, txCommitLsn, txXid) == ChunkTracker.Admission.HOLD) {
              held = m;
              return;
            }
            tables.add(e.schema);
            entries.add(e);
          }
        }
        long ordinal = ++txOrdinal;
        if (!tables.isEmpty()) {
          ensureBegin();
          for (RelationCache.Entry e : entries) {
            announce(e, t.walStart(), ordinal);
          }
          batch.append(new Event.Truncate(t.walStart(), txCommitLsn, ordinal, tables, t.options()));
        }
      }
      case MESSAGE -> {
        PgOutputMessage.LogicalMessage lm = (PgOutputMessage.LogicalMessage) m;
        if (ChunkTracker.isProtocolMessage(lm.prefix())) {
          // a chunk read's watermark (or its flush): for the chunk protocol only, never delivered
          if (!lm.transactional() && ChunkTracker.WATERMARK_PREFIX.equals(lm.prefix())) {
            role.watermark(
                new String(lm.content().toByteArray(), StandardCharsets.UTF_8), lm.messageLsn());
          } else if (inTx) {
            ++txOrdinal;
          }
          return;
        }
        if (lm.transactional() && inTx) {
          long ordinal = ++txOrdinal;
          if (role.deliversMessages()) {
            ensureBegin();
            byte[] content = lm.content().toByteArray();
            batch.append(
                new Event.Message(lm.walStart(), txCommitLsn, ordinal, true, lm.prefix(), content));
          }
        } else if (role.deliversMessages()) {
          byte[] content = lm.content().toByteArray();
          batch.append(
              new Event.Message(lm.walStart(), lm.messageLsn(), 0, false, lm.prefix(), content));
        }
      }
      default ->
          throw new EtlException(
              ErrorKind.REPLICATION_PROTOCOL_ERROR,
              "unexpected " + m.kind().displayName() + " message in a transaction",
              "stream of slot " + slotName);
    }
  }

  private void onRelation(PgOutputMessage.Relation r) {
    RelationCache.Entry e = relations.update(r, txCommitLsn);
    role.relationSeen(e.table, e.schema.name(), control);
    if (owned(e)) {
      env.store().storeTableSchema(e.schema);
    }
  }

  private ChunkTracker.Admission admit(
      RelationCache.Entry e, @Nullable Object key, @Nullable Object oldKey, boolean partial) {
    return role.admit(e.schema, txCommitLsn, txXid, key, oldKey, partial);
  }

  /** True while a change waits to be admitted ({@link #retryHeld()}); nothing is read meanwhile. */
  boolean holding() {
    return held != null;
  }

  /** Asks again about the held change; it stays held or goes into the batch. */
  void retryHeld() {
    PgOutputMessage.StreamableMessage m = held;
    if (m != null) {
      held = null;
      handleChange(m);
    }
  }

  private boolean owned(RelationCache.Entry e) {
    return role.owns(e.table, txCommitLsn);
  }

  private void emit(RelationCache.Entry e, Lsn walStart, long ordinal) {
    ensureBegin();
    announce(e, walStart, ordinal);
  }
}
