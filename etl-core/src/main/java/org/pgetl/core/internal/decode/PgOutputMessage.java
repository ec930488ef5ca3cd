package org.pgetl.core.internal.decode;

import java.time.Instant;
import java.util.List;
import java.util.Objects;
import org.jspecify.annotations.Nullable;
import org.pgetl.model.Lsn;

/**
 * One message of PostgreSQL's logical replication protocol as the {@code pgoutput} plugin sends it
 * (protocol versions 1 to 4), decoded but not interpreted: relation and type ids stay ids, and
 * column values stay bytes in the message buffer ({@link TupleData}).
 *
 * <p>Every message carries {@link #walStart()}, the WAL start position of the XLogData frame it
 * arrived in, as the caller passed it to {@link PgOutputDecoder#decode}. Timestamps are
 * microseconds since 2000-01-01T00:00:00Z, as on the wire; the {@code ...Instant()} methods and
 * {@link PgTime} convert them. Transaction ids and relation ids are unsigned 32-bit values held in
 * a {@code long}; type ids are held in an {@code int} (as in {@code org.pgetl.model.ColumnSchema}).
 *
 * <p>Java 17 has no pattern matching in {@code switch}: switch on {@link #kind()} or use an {@code
 * instanceof} chain.
 */
public sealed interface PgOutputMessage
    permits PgOutputMessage.Begin,
        PgOutputMessage.Commit,
        PgOutputMessage.Origin,
        PgOutputMessage.StreamableMessage,
        PgOutputMessage.StreamStart,
        PgOutputMessage.StreamStop,
        PgOutputMessage.StreamCommit,
        PgOutputMessage.StreamAbort,
        PgOutputMessage.BeginPrepare,
        PgOutputMessage.Prepare,
        PgOutputMessage.CommitPrepared,
        PgOutputMessage.RollbackPrepared,
        PgOutputMessage.StreamPrepare {

  /** The type of a message, with the byte that marks it on the wire. */
  enum Kind {
    /** {@link Begin}, {@code 'B'}. */
    BEGIN('B', "Begin", 1),
    /** {@link Commit}, {@code 'C'}. */
    COMMIT('C', "Commit", 1),
    /** {@link Origin}, {@code 'O'}. */
    ORIGIN('O', "Origin", 1),
    /** {@link Relation}, {@code 'R'}. */
    RELATION('R', "Relation", 1),
    /** {@link Type}, {@code 'Y'}. */
    TYPE('Y', "Type", 1),
    /** {@link Insert}, {@code 'I'}. */
    INSERT('I', "Insert", 1),
    /** {@link Update}, {@code 'U'}. */
    UPDATE('U', "Update", 1),
    /** {@link Delete}, {@code 'D'}. */
    DELETE('D', "Delete", 1),
    /** {@link Truncate}, {@code 'T'}. */
    TRUNCATE('T', "Truncate", 1),
    /** {@link LogicalMessage}, {@code 'M'}. */
    MESSAGE('M', "Message", 1),
    /** {@link StreamStart}, {@code 'S'}. */
    STREAM_START('S', "Stream Start", 2),
    /** {@link StreamStop}, {@code 'E'}. */
    STREAM_STOP('E', "Stream Stop", 2),
    /** {@link StreamCommit}, {@code 'c'}. */
    STREAM_COMMIT('c', "Stream Commit", 2),
    /** {@link StreamAbort}, {@code 'A'}. */
    STREAM_ABORT('A', "Stream Abort", 2),
    /** {@link BeginPrepare}, {@code 'b'}. */
    BEGIN_PREPARE('b', "Begin Prepare", 3),
    /** {@link Prepare}, {@code 'P'}. */
    PREPARE('P', "Prepare", 3),
    /** {@link CommitPrepared}, {@code 'K'}. */
    COMMIT_PREPARED('K', "Commit Prepared", 3),
    /** {@link RollbackPrepared}, {@code 'r'}. */
    ROLLBACK_PREPARED('r', "Rollback Prepared", 3),
    /** {@link StreamPrepare}, {@code 'p'}. */
    STREAM_PREPARE('p', "Stream Prepare", 3);

    private final char code;
    private final String displayName;
    private final int minProtocolVersion;

    Kind(char code, String displayName, int minProtocolVersion) {
      this.code = code;
      this.displayName = displayName;
      this.minProtocolVersion = minProtocolVersion;
    }

    /**
     * Returns the byte that starts a message of this kind.
     *
     * @return the type byte, as a character
     */
    public char code() {
      return code;
    }

    /**
     * Returns the name PostgreSQL's documentation gives this message, like {@code Stream Start}.
     *
     * @return the name
     */
    public String displayName() {
      return displayName;
    }

    /**
     * Returns the lowest pgoutput protocol version that has this message.
     *
     * @return 1, 2 or 3
     */
    public int minProtocolVersion() {
      return minProtocolVersion;
    }

    /**
     * Returns the kind of a type byte, or null when the byte starts no pgoutput message.
     *
     * @param code the type byte
     * @return the kind, or null
     */
    static @Nullable Kind ofCode(int code) {
      return switch (code) {
        case 'B' -> BEGIN;
        case 'C' -> COMMIT;
        case 'O' -> ORIGIN;
        case 'R' -> RELATION;
        case 'Y' -> TYPE;
        case 'I' -> INSERT;
        case 'U' -> UPDATE;
        case 'D' -> DELETE;
        case 'T' -> TRUNCATE;
        case 'M' -> MESSAGE;
        case 'S' -> STREAM_START;
        case 'E' -> STREAM_STOP;
        case 'c' -> STREAM_COMMIT;
        case 'A' -> STREAM_ABORT;
        case 'b' -> BEGIN_PREPARE;
        case 'P' -> PREPARE;
        case 'K' -> COMMIT_PREPARED;
        case 'r' -> ROLLBACK_PREPARED;
        case 'p' -> STREAM_PREPARE;
        default -> null;
      };
    }
  }

  /**
   * Returns the type of this message.
   *
   * @return the kind
   */
  Kind kind();

  /**
   * Returns the WAL start position of the XLogData frame this message arrived in. The server sets
   * it to {@code 0/0} for some messages (a Relation sent ahead of a change, for example): never
   * take it as progress.
   *
   * @return the WAL start given to the decoder
   */
  Lsn walStart();

  /** Which old values an Update or Delete message carries. */
  enum OldTupleKind {
    /** No old values (an Update that changed no replica identity column). */
    NONE,
    /** {@code 'K'}: the replica identity columns of the old row; other columns are null. */
    KEY,
    /** {@code 'O'}: every column of the old row (REPLICA IDENTITY FULL). */
    FULL
  }

  /**
   * A message that may be part of a streamed transaction: inside a Stream Start ... Stream Stop
   * block it carries the xid of the (sub)transaction it belongs to.
   */
  sealed interface StreamableMessage extends PgOutputMessage
      permits Relation, Type, Insert, Update, Delete, Truncate, LogicalMessage {
    /**
     * Returns the xid sent with this message inside a streamed block: the top-level or
     * subtransaction it belongs to; 0 outside a streamed block.
     *
     * @return the xid, or 0 when the message is not streamed
     */
    long streamXid();

    /**
     * Returns true when this message arrived inside a Stream Start ... Stream Stop block.
     *
     * @return whether the message is part of a streamed transaction
     */
    default boolean isStreamed() {
      return streamXid() != 0;
    }
  }

  /**
   * Begin ({@code 'B'}): the start of a transaction that committed.
   *
   * @param walStart see {@link PgOutputMessage#walStart()}
   * @param finalLsn the LSN of the transaction's commit record
   * @param commitTime the commit time, microseconds since 2000-01-01
   * @param xid the transaction id
   */
  record Begin(Lsn walStart, Lsn finalLsn, long commitTime, long xid) implements PgOutputMessage {
    /** Checks that no component is null. */
    public Begin {
      Objects.requireNonNull(walStart, "walStart");
      Objects.requireNonNull(finalLsn, "finalLsn");
    }

    @Override
    public Kind kind() {
      return Kind.BEGIN;
    }

    /**
     * Returns the commit time as an instant.
     *
     * @return the commit time
     */
    public Instant commitInstant() {
      return PgTime.toInstant(commitTime);
    }
  }

  /**
   * Commit ({@code 'C'}): the end of a transaction.
   *
   * @param walStart see {@link PgOutputMessage#walStart()}
   * @param flags the flags byte (0; no flag is defined)
   * @param commitLsn the LSN of the commit record
   * @param endLsn the end of the commit record: the position to confirm once the transaction is
   *     durable downstream
   * @param commitTime the commit time, microseconds since 2000-01-01
   */
  record Commit(Lsn walStart, int flags, Lsn commitLsn, Lsn endLsn, long commitTime)
      implements PgOutputMessage {
    /** Checks that no component is null. */
    public Commit {
      Objects.requireNonNull(walStart, "walStart");
      Objects.requireNonNull(commitLsn, "commitLsn");
      Objects.requireNonNull(endLsn, "endLsn");
    }

    @Override
    public Kind kind() {
      return Kind.COMMIT;
    }

    /**
     * Returns the commit time as an instant.
     *
     * @return the commit time
     */
    public Instant commitInstant() {
      return PgTime.toInstant(commitTime);
    }
  }

  /**
   * Origin ({@code 'O'}): the replication origin of the transaction being sent; follows Begin,
   * Begin Prepare, or the first Stream Start of a streamed transaction.
   *
   * @param walStart see {@link PgOutputMessage#walStart()}
   * @param originLsn the commit LSN of the transaction on the origin server ({@code 0/0} when
   *     unknown, as in a streamed transaction)
   * @param name the origin's name
   */
  record Origin(Lsn walStart, Lsn originLsn, String name) implements PgOutputMessage {
    /** Checks that no component is null. */
    public Origin {
      Objects.requireNonNull(walStart, "walStart");
      Objects.requireNonNull(originLsn, "originLsn");
      Objects.requireNonNull(name, "name");
    }

    @Override
    public Kind kind() {
      return Kind.ORIGIN;
    }
  }

  /**
   * Relation ({@code 'R'}): the shape of a table, sent before the first change to it on a stream
   * and again after its schema changed.
   *
   * @param walStart see {@link PgOutputMessage#walStart()}
   * @param streamXid see {@link StreamableMessage#streamXid()}
   * @param relationId the table's oid
   * @param namespace the schema name ({@code pg_catalog} when the server sent an empty name)
   * @param name the table name
   * @param replicaIdentity the table's replica identity
   * @param columns the published columns, in the order of every tuple of this table
   */
  record Relation(
      Lsn walStart,
      long streamXid,
      long relationId,
      String namespace,
      String name,
      ReplicaIdentity replicaIdentity,
      List<Column> columns)
      implements StreamableMessage {
    /** Checks that no component is null and makes the column list immutable. */
    public Relation {
      Objects.requireNonNull(walStart, "walStart");
      Objects.requireNonNull(namespace, "namespace");
      Objects.requireNonNull(name, "name");
      Objects.requireNonNull(replicaIdentity, "replicaIdentity");
      columns = List.copyOf(columns);
    }

    @Override
    public Kind kind() {
      return Kind.RELATION;
    }

    /**
     * A column of a Relation message.
     *
     * @param flags the flags byte: {@link #KEY_FLAG} marks a replica identity column
     * @param name the column name
     * @param typeOid the oid of the column's type
     * @param typeModifier the type modifier ({@code atttypmod}), -1 when none
     */
    public record Column(int flags, String name, int typeOid, int typeModifier) {
      /** The flag bit of a column that is part of the replica identity. */
      public static final int KEY_FLAG = 1;

      /** Checks that the name is not null. */
      public Column {
        Objects.requireNonNull(name, "name");
      }

      /**
       * Returns true when the column is part of the replica identity (every column under REPLICA
       * IDENTITY FULL).
       *
       * @return whether the key flag is set
       */
      public boolean isKey() {
        return (flags & KEY_FLAG) != 0;
      }
    }
  }

  /**
   * Type ({@code 'Y'}): the name of a non-built-in type used by a column, sent before the Relation
   * message that uses it.
   *
   * @param walStart see {@link PgOutputMessage#walStart()}
   * @param streamXid see {@link StreamableMessage#streamXid()}
   * @param typeOid the type's oid
   * @param namespace the schema of the type ({@code pg_catalog} when the server sent an empty name)
   * @param name the type's name (for a domain, the name of its base type)
   */
  record Type(Lsn walStart, long streamXid, int typeOid, String namespace, String name)
      implements StreamableMessage {
    /** Checks that no component is null. */
    public Type {
      Objects.requireNonNull(walStart, "walStart");
      Objects.requireNonNull(namespace, "namespace");
      Objects.requireNonNull(name, "name");
    }

    @Override
    public Kind kind() {
      return Kind.TYPE;
    }
  }

  /**
   * Insert ({@code 'I'}): a new row.
   *
   * @param walStart see {@link PgOutputMessage#walStart()}
   * @param streamXid see {@link StreamableMessage#streamXid()}
   * @param relationId the table's oid
   * @param newTuple the new row
   */
  record Insert(Lsn walStart, long streamXid, long relationId, TupleData newTuple)
      implements StreamableMessage {
    /** Checks that no component is null. */
    public Insert {
      Objects.requireNonNull(walStart, "walStart");
      Objects.requireNonNull(newTuple, "newTuple");
    }

    @Override
    public Kind kind() {
      return Kind.INSERT;
    }
  }

  /**
   * Update ({@code 'U'}): a changed row, with its old values when the replica identity asks for
   * them.
   *
   * @param walStart see {@link PgOutputMessage#walStart()}
   * @param streamXid see {@link StreamableMessage#streamXid()}
   * @param relationId the table's oid
   * @param oldTupleKind which old values {@code oldTuple} holds
   * @param oldTuple the old row or key; null exactly when {@code oldTupleKind} is {@code NONE}
   * @param newTuple the new row; {@link TupleData.Kind#UNCHANGED_TOAST} marks columns not sent
   */
  record Update(
      Lsn walStart,
      long streamXid,
      long relationId,
      OldTupleKind oldTupleKind,
      @Nullable TupleData oldTuple,
      TupleData newTuple)
      implements StreamableMessage {
    /** Checks that the old tuple is present exactly when its kind says so. */
    public Update {
      Objects.requireNonNull(walStart, "walStart");
      Objects.requireNonNull(oldTupleKind, "oldTupleKind");
      Objects.requireNonNull(newTuple, "newTuple");
      if ((oldTupleKind == OldTupleKind.NONE) != (oldTuple == null)) {
        throw new IllegalArgumentException(
            "oldTuple must be null exactly when oldTupleKind is NONE, kind was " + oldTupleKind);
      }
    }

    @Override
    public Kind kind() {
      return Kind.UPDATE;
    }
  }

  /**
   * Delete ({@code 'D'}): a deleted row, identified by its key or its full old values.
   *
   * @param walStart see {@link PgOutputMessage#walStart()}
   * @param streamXid see {@link StreamableMessage#streamXid()}
   * @param relationId the table's oid
   * @param oldTupleKind {@code KEY} or {@code FULL}
   * @param oldTuple the old key or row
   */
  record Delete(
      Lsn walStart, long streamXid, long relationId, OldTupleKind oldTupleKind, TupleData oldTuple)
      implements StreamableMessage {
    /** Checks that the old tuple is present. */
    public Delete {
      Objects.requireNonNull(walStart, "walStart");
      Objects.requireNonNull(oldTuple, "oldTuple");
      if (oldTupleKind == null || oldTupleKind == OldTupleKind.NONE) {
        throw new IllegalArgumentException("a Delete carries a KEY or FULL old tuple");
      }
    }

    @Override
    public Kind kind() {
      return Kind.DELETE;
    }
  }

  /**
   * Truncate ({@code 'T'}): one TRUNCATE statement over one or more published tables.
   *
   * @param walStart see {@link PgOutputMessage#walStart()}
   * @param streamXid see {@link StreamableMessage#streamXid()}
   * @param options bits {@link #CASCADE} and {@link #RESTART_IDENTITY}
   * @param relationIds the oids of the truncated tables
   */
  record Truncate(Lsn walStart, long streamXid, int options, List<Long> relationIds)
      implements StreamableMessage {
    /** The option bit of {@code TRUNCATE ... CASCADE}. */
    public static final int CASCADE = 1;

    /** The option bit of {@code TRUNCATE ... RESTART IDENTITY}. */
    public static final int RESTART_IDENTITY = 2;

    /** Checks that no component is null and makes the id list immutable. */
    public Truncate {
      Objects.requireNonNull(walStart, "walStart");
      relationIds = List.copyOf(relationIds);
    }

    @Override
    public Kind kind() {
      return Kind.TRUNCATE;
    }

    /**
     * Returns true when the statement said {@code CASCADE}.
     *
     * @return whether the cascade bit is set
     */
    public boolean cascade() {
      return (options & CASCADE) != 0;
    }

    /**
     * Returns true when the statement said {@code RESTART IDENTITY}.
     *
     * @return whether the restart-identity bit is set
     */
    public boolean restartIdentity() {
      return (options & RESTART_IDENTITY) != 0;
    }
  }

  /**
   * Message ({@code 'M'}): a message written with {@code pg_logical_emit_message}, sent when the
   * stream was started with the pgoutput option messages.
   *
   * @param walStart see {@link PgOutputMessage#walStart()}
   * @param streamXid see {@link StreamableMessage#streamXid()}
   * @param transactional true when the message belongs to a transaction (and arrives inside it);
   *     false when it was sent at once, outside any Begin ... Commit
   * @param messageLsn the LSN of the message's WAL record
   * @param prefix the prefix given to {@code pg_logical_emit_message}
   * @param content the content, viewed in the message buffer
   */
  record LogicalMessage(
      Lsn walStart,
      long streamXid,
      boolean transactional,
      Lsn messageLsn,
      String prefix,
      ByteSlice content)
      implements StreamableMessage {
    /** The flag bit of a transactional message. */
    public static final int TRANSACTIONAL_FLAG = 1;

    /** Checks that no component is null. */
    public LogicalMessage {
      Objects.requireNonNull(walStart, "walStart");
      Objects.requireNonNull(messageLsn, "messageLsn");
      Objects.requireNonNull(prefix, "prefix");
      Objects.requireNonNull(content, "content");
    }

    @Override
    public Kind kind() {
      return Kind.MESSAGE;
    }
  }

  /**
   * Stream Start ({@code 'S'}, protocol 2+): opens a block of changes of an in-progress
   * transaction; the messages up to Stream Stop carry an xid.
   *
   * @param walStart see {@link PgOutputMessage#walStart()}
   * @param xid the top-level transaction's id
   * @param firstSegment true for the first block of this transaction
   */
  record StreamStart(Lsn walStart, long xid, boolean firstSegment) implements PgOutputMessage {
    /** Checks that no component is null. */
    public StreamStart {
      Objects.requireNonNull(walStart, "walStart");
    }

    @Override
    public Kind kind() {
      return Kind.STREAM_START;
    }
  }

  /**
   * Stream Stop ({@code 'E'}, protocol 2+): closes the block opened by Stream Start.
   *
   * @param walStart see {@link PgOutputMessage#walStart()}
   */
  record StreamStop(Lsn walStart) implements PgOutputMessage {
    /** Checks that no component is null. */
    public StreamStop {
      Objects.requireNonNull(walStart, "walStart");
    }

    @Override
    public Kind kind() {
      return Kind.STREAM_STOP;
    }
  }

  /**
   * Stream Commit ({@code 'c'}, protocol 2+): a streamed transaction committed.
   *
   * @param walStart see {@link PgOutputMessage#walStart()}
   * @param xid the transaction id
   * @param flags the flags byte (0; no flag is defined)
   * @param commitLsn the LSN of the commit record
   * @param endLsn the end of the commit record
   * @param commitTime the commit time, microseconds since 2000-01-01
   */
  record StreamCommit(Lsn walStart, long xid, int flags, Lsn commitLsn, Lsn endLsn, long commitTime)
      implements PgOutputMessage {
    /** Checks that no component is null. */
    public StreamCommit {
      Objects.requireNonNull(walStart, "walStart");
      Objects.requireNonNull(commitLsn, "commitLsn");
      Objects.requireNonNull(endLsn, "endLsn");
    }

    @Override
    public Kind kind() {
      return Kind.STREAM_COMMIT;
    }

    /**
     * Returns the commit time as an instant.
     *
     * @return the commit time
     */
    public Instant commitInstant() {
      return PgTime.toInstant(commitTime);
    }
  }

  /**
   * Stream Abort ({@code 'A'}, protocol 2+): a streamed transaction, or one of its subtransactions,
   * rolled back; its streamed changes must be discarded.
   *
   * <p>The abort LSN and time are on the wire only with protocol version 4 and {@code streaming =
   * parallel} ({@link #hasAbortInfo()}); otherwise they read {@code 0/0} and 0.
   *
   * @param walStart see {@link PgOutputMessage#walStart()}
   * @param xid the top-level transaction's id
   * @param subXid the aborted subtransaction's id; equal to {@code xid} when the whole transaction
   *     aborted
   * @param hasAbortInfo whether the message carried the abort LSN and time
   * @param abortLsn the LSN of the abort record, or {@code 0/0}
   * @param abortTime the abort time, microseconds since 2000-01-01, or 0
   */
  record StreamAbort(
      Lsn walStart, long xid, long subXid, boolean hasAbortInfo, Lsn abortLsn, long abortTime)
      implements PgOutputMessage {
    /** Checks that no component is null. */
    public StreamAbort {
      Objects.requireNonNull(walStart, "walStart");
      Objects.requireNonNull(abortLsn, "abortLsn");
    }

    @Override
    public Kind kind() {
      return Kind.STREAM_ABORT;
    }

    /**
     * Returns true when the whole transaction aborted, not just a subtransaction.
     *
     * @return whether {@code subXid == xid}
     */
    public boolean isTopLevel() {
      return subXid == xid;
    }

    /**
     * Returns the abort time as an instant.
     *
     * @return the abort time, or null when the message carried none
     */
    public @Nullable Instant abortInstant() {
      return hasAbortInfo ? PgTime.toInstant(abortTime) : null;
    }
  }

  /**
   * Begin Prepare ({@code 'b'}, protocol 3+): the start of a transaction prepared for two-phase
   * commit ({@code PREPARE TRANSACTION}).
   *
   * @param walStart see {@link PgOutputMessage#walStart()}
   * @param prepareLsn the LSN of the prepare record
   * @param endLsn the end of the prepare record
   * @param prepareTime the prepare time, microseconds since 2000-01-01
   * @param xid the transaction id
   * @param gid the global transaction identifier given to {@code PREPARE TRANSACTION}
   */
  record BeginPrepare(
      Lsn walStart, Lsn prepareLsn, Lsn endLsn, long prepareTime, long xid, String gid)
      implements PgOutputMessage {
    /** Checks that no component is null. */
    public BeginPrepare {
      Objects.requireNonNull(walStart, "walStart");
      Objects.requireNonNull(prepareLsn, "prepareLsn");
      Objects.requireNonNull(endLsn, "endLsn");
      Objects.requireNonNull(gid, "gid");
    }

    @Override
    public Kind kind() {
      return Kind.BEGIN_PREPARE;
    }

    /**
     * Returns the prepare time as an instant.
     *
     * @return the prepare time
     */
    public Instant prepareInstant() {
      return PgTime.toInstant(prepareTime);
    }
  }

  /**
   * Prepare ({@code 'P'}, protocol 3+): the end of a prepared transaction's changes.
   *
   * @param walStart see {@link PgOutputMessage#walStart()}
   * @param flags the flags byte (0; no flag is defined)
   * @param prepareLsn the LSN of the prepare record
   * @param endLsn the end of the prepare record
   * @param prepareTime the prepare time, microseconds since 2000-01-01
   * @param xid the transaction id
   * @param gid the global transaction identifier
   */
  record Prepare(
      Lsn walStart, int flags, Lsn prepareLsn, Lsn endLsn, long prepareTime, long xid, String gid)
      implements PgOutputMessage {
    /** Checks that no component is null. */
    public Prepare {
      Objects.requireNonNull(walStart, "walStart");
      Objects.requireNonNull(prepareLsn, "prepareLsn");
      Objects.requireNonNull(endLsn, "endLsn");
      Objects.requireNonNull(gid, "gid");
    }

    @Override
    public Kind kind() {
      return Kind.PREPARE;
    }

    /**
     * Returns the prepare time as an instant.
     *
     * @return the prepare time
     */
    public Instant prepareInstant() {
      return PgTime.toInstant(prepareTime);
    }
  }

  /**
   * Commit Prepared ({@code 'K'}, protocol 3+): a prepared transaction committed ({@code COMMIT
   * PREPARED}).
   *
   * @param walStart see {@link PgOutputMessage#walStart()}
   * @param flags the flags byte (0; no flag is defined)
   * @param commitLsn the LSN of the commit record
   * @param endLsn the end of the commit record
   * @param commitTime the commit time, microseconds since 2000-01-01
   * @param xid the transaction id
   * @param gid the global transaction identifier
   */
  record CommitPrepared(
      Lsn walStart, int flags, Lsn commitLsn, Lsn endLsn, long commitTime, long xid, String gid)
      implements PgOutputMessage {
    /** Checks that no component is null. */
    public CommitPrepared {
      Objects.requireNonNull(walStart, "walStart");
      Objects.requireNonNull(commitLsn, "commitLsn");
      Objects.requireNonNull(endLsn, "endLsn");
      Objects.requireNonNull(gid, "gid");
    }

    @Override
    public Kind kind() {
      return Kind.COMMIT_PREPARED;
    }

    /**
     * Returns the commit time as an instant.
     *
     * @return the commit time
     */
    public Instant commitInstant() {
      return PgTime.toInstant(commitTime);
    }
  }

  /**
   * Rollback Prepared ({@code 'r'}, protocol 3+): a prepared transaction rolled back ({@code
   * ROLLBACK PREPARED}).
   *
   * @param walStart see {@link PgOutputMessage#walStart()}
   * @param flags the flags byte (0; no flag is defined)
   * @param prepareEndLsn the end of the prepare record
   * @param rollbackEndLsn the end of the rollback record
   * @param prepareTime the prepare time, microseconds since 2000-01-01
   * @param rollbackTime the rollback time, microseconds since 2000-01-01
   * @param xid the transaction id
   * @param gid the global transaction identifier
   */
  record RollbackPrepared(
      Lsn walStart,
      int flags,
      Lsn prepareEndLsn,
      Lsn rollbackEndLsn,
      long prepareTime,
      long rollbackTime,
      long xid,
      String gid)
      implements PgOutputMessage {
    /** Checks that no component is null. */
    public RollbackPrepared {
      Objects.requireNonNull(walStart, "walStart");
      Objects.requireNonNull(prepareEndLsn, "prepareEndLsn");
      Objects.requireNonNull(rollbackEndLsn, "rollbackEndLsn");
      Objects.requireNonNull(gid, "gid");
    }

    @Override
    public Kind kind() {
      return Kind.ROLLBACK_PREPARED;
    }

    /**
     * Returns the rollback time as an instant.
     *
     * @return the rollback time
     */
    public Instant rollbackInstant() {
      return PgTime.toInstant(rollbackTime);
    }
  }

  /**
   * Stream Prepare ({@code 'p'}, protocol 3+): a streamed transaction was prepared for two-phase
   * commit.
   *
   * @param walStart see {@link PgOutputMessage#walStart()}
   * @param flags the flags byte (0; no flag is defined)
   * @param prepareLsn the LSN of the prepare record
   * @param endLsn the end of the prepare record
   * @param prepareTime the prepare time, microseconds since 2000-01-01
   * @param xid the transaction id
   * @param gid the global transaction identifier
   */
  record StreamPrepare(
      Lsn walStart, int flags, Lsn prepareLsn, Lsn endLsn, long prepareTime, long xid, String gid)
      implements PgOutputMessage {
    /** Checks that no component is null. */
    public StreamPrepare {
      Objects.requireNonNull(walStart, "walStart");
      Objects.requireNonNull(prepareLsn, "prepareLsn");
      Objects.requireNonNull(endLsn, "endLsn");
      Objects.requireNonNull(gid, "gid");
    }

    @Override
    public Kind kind() {
      return Kind.STREAM_PREPARE;
    }

    /**
     * Returns the prepare time as an instant.
     *
     * @return the prepare time
     */
    public Instant prepareInstant() {
      return PgTime.toInstant(prepareTime);
    }
  }
}
