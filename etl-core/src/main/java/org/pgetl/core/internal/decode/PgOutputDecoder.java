package org.pgetl.core.internal.decode;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Objects;
import org.jspecify.annotations.Nullable;
import org.pgetl.core.internal.decode.PgOutputMessage.Kind;
import org.pgetl.core.internal.decode.PgOutputMessage.OldTupleKind;
import org.pgetl.error.ErrorKind;
import org.pgetl.error.EtlException;
import org.pgetl.model.Lsn;

/**
 * Decodes the messages of one {@code pgoutput} replication stream, protocol versions 1 to 4, into
 * {@link PgOutputMessage}s.
 *
 * <p>A decoder belongs to one stream: it is built with the protocol version and streaming mode the
 * stream was started with, and it follows the stream's Stream Start ... Stream Stop blocks, because
 * inside a block the data messages carry an extra xid. Build a new decoder whenever a stream is
 * started again. Not thread-safe: the thread that owns the stream decodes its messages.
 *
 * <p>Implementation notes. The decoder reads straight from the message's array with big-endian
 * {@link VarHandle} views: it allocates the message record, its {@link Lsn}s and strings, and per
 * tuple two small arrays, but nothing per byte and never a copy of a column value ({@link
 * TupleData} points into the array). Every length and count is checked against the bytes that
 * remain before it is used, so malformed input ends in an {@link EtlException} of kind {@link
 * ErrorKind#INVALID_DATA} that names the message type and byte offset, never in an index or
 * allocation error. A well-formed message that the stream cannot carry at that point (a type the
 * protocol version lacks, a Begin inside a stream block, a Stream Stop outside one) ends in {@link
 * ErrorKind#REPLICATION_PROTOCOL_ERROR}. A failed decode leaves the stream-block state unchanged.
 */
public final class PgOutputDecoder {
  /** The lowest pgoutput protocol version this decoder reads. */
  public static final int MIN_PROTOCOL_VERSION = 1;

  /** The highest pgoutput protocol version this decoder reads (PostgreSQL 16 to 18). */
  public static final int MAX_PROTOCOL_VERSION = 4;

  private static final VarHandle I16 =
      MethodHandles.byteArrayViewVarHandle(short[].class, ByteOrder.BIG_ENDIAN);
  private static final VarHandle I32 =
      MethodHandles.byteArrayViewVarHandle(int[].class, ByteOrder.BIG_ENDIAN);
  private static final VarHandle I64 =
      MethodHandles.byteArrayViewVarHandle(long[].class, ByteOrder.BIG_ENDIAN);

  private static final byte[] NO_KINDS = new byte[0];
  private static final int[] NO_RANGES = new int[0];
  private static final int NO_VALUE = -1;
  // flags byte, name NUL, type oid, type modifier: the least a Relation column takes
  private static final int MIN_RELATION_COLUMN_BYTES = 1 + 1 + 4 + 4;
  private static final String PG_CATALOG = "pg_catalog";

  private final int protocolVersion;
  private final StreamingMode streaming;
  private final boolean streamAbortHasAbortInfo;

  private boolean inStreamBlock;
  private long streamBlockXid;

  private static final byte[] NO_BYTES = new byte[0];

  // the message being decoded; valid only during decode()
  private byte[] buf = NO_BYTES;
  private int start;
  private int pos;
  private int end;
  private @Nullable Kind kind;
  private Lsn walStart = Lsn.ZERO;
  private long relationId;

  /**
   * Creates a decoder for a stream started with the given options.
   *
   * @param protocolVersion the {@code proto_version} option, 1 to 4
   * @param streaming the {@code streaming} option
   * @throws EtlException of kind {@link ErrorKind#CONFIG_ERROR} when the version is out of range or
   *     too low for the streaming mode
   */
  public PgOutputDecoder(int protocolVersion, StreamingMode streaming) {
    Objects.requireNonNull(streaming, "streaming");
    if (protocolVersion < MIN_PROTOCOL_VERSION || protocolVersion > MAX_PROTOCOL_VERSION) {
      throw new EtlException(
          ErrorKind.CONFIG_ERROR,
          "pgoutput protocol version must be between "
              + MIN_PROTOCOL_VERSION
              + " and "
              + MAX_PROTOCOL_VERSION
              + ", was "
              + protocolVersion);
    }
    if (protocolVersion < streaming.minProtocolVersion()) {
      throw new EtlException(
          ErrorKind.CONFIG_ERROR,
          "pgoutput streaming '"
              + streaming.optionValue()
              + "' needs protocol version "
              + streaming.minProtocolVersion()
              + " or later, was "
              + protocolVersion);
    }
    this.protocolVersion = protocolVersion;
    this.streaming = streaming;
    // pgoutput writes the abort LSN and time only for streaming = parallel, which needs version 4
    this.streamAbortHasAbortInfo = streaming == StreamingMode.PARALLEL;
  }

  /**
   * Returns the protocol version this decoder reads.
   *
   * @return 1 to 4
   */
  public int protocolVersion() {
    return protocolVersion;
  }

  /**
   * Returns the streaming mode this decoder reads.
   *
   * @return the mode
   */
  public StreamingMode streaming() {
    return streaming;
  }

  /**
   * Returns true between a Stream Start and its Stream Stop.
   *
   * @return whether the last decoded block-delimiting message was a Stream Start
   */
  public boolean inStreamBlock() {
    return inStreamBlock;
  }

  /**
   * Returns the xid of the open stream block.
   *
   * @return the xid of the last Stream Start, or 0 outside a stream block
   */
  public long streamBlockXid() {
    return inStreamBlock ? streamBlockXid : 0;
  }

  /**
   * Decodes one message as pgjdbc's {@code PGReplicationStream.read()} or {@code readPending()}
   * returns it: the bytes from the buffer's position to its limit. The buffer is not modified. For
   * a heap buffer the decoded message points into its backing array, which nobody may write to
   * while the message is in use; any other buffer is copied first.
   *
   * @param message the message bytes, from its type byte to its last byte
   * @param walStart the WAL start of the message's XLogData frame ({@code getLastReceiveLSN()}
   *     right after the read)
   * @return the message
   * @throws EtlException of kind {@link ErrorKind#INVALID_DATA} when the bytes are not a valid
   *     message, or {@link ErrorKind#REPLICATION_PROTOCOL_ERROR} when the message cannot occur at
   *     this point of the stream
   */
  public PgOutputMessage decode(ByteBuffer message, Lsn walStart) {
    if (message.hasArray()) {
      return decode(
          message.array(),
          message.arrayOffset() + message.position(),
          message.remaining(),
          walStart);
    }
    byte[] copy = new byte[message.remaining()];
    message.duplicate().get(copy);
    return decode(copy, 0, copy.length, walStart);
  }

  /**
   * Decodes one message held in a range of an array.
   *
   * @param array the array; decoded tuples and message contents point into it
   * @param offset the index of the message's type byte
   * @param length the message's length in bytes
   * @param walStart the WAL start of the message's XLogData frame
   * @return the message
   * @throws IndexOutOfBoundsException when the range does not lie inside the array
   * @throws EtlException of kind {@link ErrorKind#INVALID_DATA} when the bytes are not a valid
   *     message, or {@link ErrorKind#REPLICATION_PROTOCOL_ERROR} when the message cannot occur at
   *     this point of the stream
   */
  public PgOutputMessage decode(byte[] array, int offset, int length, Lsn walStart) {
    Objects.checkFromIndexSize(offset, length, array.length);
    Objects.requireNonNull(walStart, "walStart");
    this.buf = array;
    this.start = offset;
    this.pos = offset;
    this.end = offset + length;
    this.walStart = walStart;
    this.kind = null;
    this.relationId = -1;
    try {
      return decodeMessage();
    } finally {
      this.buf = NO_BYTES;
    }
  }

  /**
   * Returns the xid of a data message (Relation, Insert, Update, Delete, Truncate, Message) inside
   * the current stream block, read without decoding the rest: for a caller that keeps such messages
   * aside undecoded and decodes them later with {@link #decodeSpooled}. The message is not checked
   * beyond its type byte and xid.
   *
   * @param message the message bytes, from its type byte to its last byte (not modified)
   * @return the (sub)transaction xid, or 0 outside a stream block, for any other kind of message,
   *     and for an xid of 0 (which {@link #decode} rejects)
   */
  public long streamedChangeXid(ByteBuffer message) {
    if (!inStreamBlock || message.remaining() < 5) {
      return 0;
    }
    int p = message.position();
    switch (message.get(p)) {
      case 'R', 'I', 'U', 'D', 'T', 'M' -> {
        long xid = 0;
        for (int i = 1; i <= 4; i++) {
          xid = (xid << 8) | (message.get(p + i) & 0xFF);
        }
        return xid;
      }
      default -> {
        return 0;
      }
    }
  }

  /**
   * Decodes a data message that arrived inside a stream block and was kept aside until its
   * transaction's Stream Commit (spooled): its bytes carry the (sub)transaction xid after the type
   * byte. The decoder's own stream-block state is left as it was.
   *
   * @param array the array; the decoded message points into it
   * @param offset the index of the message's type byte
   * @param length the message's length in bytes
   * @param walStart the WAL start of the message's XLogData frame, as it was received
   * @return the message, whose {@link PgOutputMessage.StreamableMessage#streamXid()} is the xid
   * @throws EtlException of kind {@link ErrorKind#INVALID_DATA} when the bytes are not a valid
   *     message, or {@link ErrorKind#REPLICATION_PROTOCOL_ERROR} when they are not a data message
   *     that a stream block can carry
   */
  public PgOutputMessage.StreamableMessage decodeSpooled(
      byte[] array, int offset, int length, Lsn walStart) {
    boolean wasInBlock = inStreamBlock;
    long wasXid = streamBlockXid;
    inStreamBlock = true;
    try {
      PgOutputMessage m = decode(array, offset, length, walStart);
      if (!(m instanceof PgOutputMessage.StreamableMessage s)) {
        throw protocolError(m.kind().displayName() + " message among the spooled changes");
      }
      return s;
    } finally {
      inStreamBlock = wasInBlock;
      streamBlockXid = wasXid;
    }
  }

  private PgOutputMessage decodeMessage() {
    if (pos == end) {
      throw malformed(0, "the message is empty");
    }
    int code = buf[pos] & 0xFF;
    Kind kind = Kind.ofCode(code);
    if (kind == null) {
      throw malformed(0, "unknown message type " + describeByte(code));
    }
    this.kind = kind;
    checkAllowedHere(kind);
    pos++;
    PgOutputMessage message =
        switch (kind) {
          case BEGIN -> begin();
          case COMMIT -> commit();
          case ORIGIN -> origin();
          case RELATION -> relation();
          case TYPE -> type();
          case INSERT -> insert();
          case UPDATE -> update();
          case DELETE -> delete();
          case TRUNCATE -> truncate();
          case MESSAGE -> logicalMessage();
          case STREAM_START -> streamStart();
          case STREAM_STOP -> new PgOutputMessage.StreamStop(walStart);
          case STREAM_COMMIT -> streamCommit();
          case STREAM_ABORT -> streamAbort();
          case BEGIN_PREPARE -> beginPrepare();
          case PREPARE -> prepare();
          case COMMIT_PREPARED -> commitPrepared();
          case ROLLBACK_PREPARED -> rollbackPrepared();
          case STREAM_PREPARE -> streamPrepare();
        };
    if (pos != end) {
      throw malformed(pos - start, (end - pos) + " unexpected bytes follow the end of the message");
    }
    if (kind == Kind.STREAM_START) {
      inStreamBlock = true;
      streamBlockXid = ((PgOutputMessage.StreamStart) message).xid();
    } else if (kind == Kind.STREAM_STOP) {
      inStreamBlock = false;
      streamBlockXid = 0;
    }
    return message;
  }

  private void checkAllowedHere(Kind kind) {
    if (kind.minProtocolVersion() > protocolVersion) {
      throw protocolError(
          kind.displayName()
              + " messages need protocol version "
              + kind.minProtocolVersion()
              + " but the stream was started with version "
              + protocolVersion);
    }
    boolean streamKind =
        kind == Kind.STREAM_START
            || kind == Kind.STREAM_STOP
            || kind == Kind.STREAM_COMMIT
            || kind == Kind.STREAM_ABORT
            || kind == Kind.STREAM_PREPARE;
    if (streamKind && streaming == StreamingMode.OFF) {
      throw protocolError(
          kind.displayName() + " message on a stream that was started with streaming off");
    }
    if (inStreamBlock) {
      boolean allowedInBlock =
          switch (kind) {
            case RELATION, TYPE, INSERT, UPDATE, DELETE, TRUNCATE, MESSAGE, ORIGIN, STREAM_STOP ->
                true;
            default -> false;
          };
      if (!allowedInBlock) {
        throw protocolError(
            kind.displayName()
                + " message inside the stream block of xid "
                + streamBlockXid
                + " (Stream Stop expected first)");
      }
    } else if (kind == Kind.STREAM_STOP) {
      throw protocolError("Stream Stop message without a Stream Start");
    }
  }

  // ---- messages

  private PgOutputMessage begin() {
    Lsn finalLsn = lsn("final LSN");
    long commitTime = i64("commit time");
    long xid = u32("xid");
    return new PgOutputMessage.Begin(walStart, finalLsn, commitTime, xid);
  }

  private PgOutputMessage commit() {
    int flags = u8("flags");
    Lsn commitLsn = lsn("commit LSN");
    Lsn endLsn = lsn("end LSN");
    long commitTime = i64("commit time");
    return new PgOutputMessage.Commit(walStart, flags, commitLsn, endLsn, commitTime);
  }

  private PgOutputMessage origin() {
    Lsn originLsn = lsn("origin LSN");
    String name = string("origin name");
    return new PgOutputMessage.Origin(walStart, originLsn, name);
  }

  private PgOutputMessage relation() {
    long xid = streamXid();
    long relid = u32("relation id");
    relationId = relid;
    String namespace = namespace("namespace");
    String name = string("relation name");
    int identityAt = pos - start;
    int identityCode = u8("replica identity");
    ReplicaIdentity identity = ReplicaIdentity.ofCode(identityCode);
    if (identity == null) {
      throw malformed(identityAt, "unknown replica identity " + describeByte(identityCode));
    }
    int countAt = pos - start;
    int count = u16("column count");
    if ((long) count * MIN_RELATION_COLUMN_BYTES > end - pos) {
      throw malformed(
          countAt,
          "column count " + count + " exceeds what the " + (end - pos) + " remaining bytes hold");
    }
    PgOutputMessage.Relation.Column[] columns = new PgOutputMessage.Relation.Column[count];
    for (int i = 0; i < count; i++) {
      int flags = u8("column flags");
      String columnName = string("column name");
      int typeOid = i32("column type oid");
      int typeModifier = i32("column type modifier");
      columns[i] = new PgOutputMessage.Relation.Column(flags, columnName, typeOid, typeModifier);
    }
    return new PgOutputMessage.Relation(
        walStart, xid, relid, namespace, name, identity, List.of(columns));
  }

  private PgOutputMessage type() {
    long xid = streamXid();
    int typeOid = i32("type oid");
    String namespace = namespace("namespace");
    String name = string("type name");
    return new PgOutputMessage.Type(walStart, xid, typeOid, namespace, name);
  }

  private PgOutputMessage insert() {
    long xid = streamXid();
    long relid = u32("relation id");
    relationId = relid;
    int tagAt = pos - start;
    int tag = u8("tuple tag");
    if (tag != 'N') {
      throw malformed(tagAt, "expected new tuple tag 'N', found " + describeByte(tag));
    }
    TupleData newTuple = tuple("new tuple");
    return new PgOutputMessage.Insert(walStart, xid, relid, newTuple);
  }

  private PgOutputMessage update() {
    long xid = streamXid();
    long relid = u32("relation id");
    relationId = relid;
    int tagAt = pos - start;
    int tag = u8("tuple tag");
    OldTupleKind oldKind;
    TupleData oldTuple = null;
    if (tag == 'K' || tag == 'O') {
      oldKind = tag == 'K' ? OldTupleKind.KEY : OldTupleKind.FULL;
      oldTuple = tuple(tag == 'K' ? "old key tuple" : "old tuple");
      tagAt = pos - start;
      tag = u8("new tuple tag");
      if (tag != 'N') {
        throw malformed(tagAt, "expected new tuple tag 'N', found " + describeByte(tag));
      }
    } else if (tag == 'N') {
      oldKind = OldTupleKind.NONE;
    } else {
      throw malformed(tagAt, "expected tuple tag 'K', 'O' or 'N', found " + describeByte(tag));
    }
    TupleData newTuple = tuple("new tuple");
    return new PgOutputMessage.Update(walStart, xid, relid, oldKind, oldTuple, newTuple);
  }

  private PgOutputMessage delete() {
    long xid = streamXid();
    long relid = u32("relation id");
    relationId = relid;
    int tagAt = pos - start;
    int tag = u8("tuple tag");
    OldTupleKind oldKind;
    if (tag == 'K') {
      oldKind = OldTupleKind.KEY;
    } else if (tag == 'O') {
      oldKind = OldTupleKind.FULL;
    } else {
      throw malformed(tagAt, "expected tuple tag 'K' or 'O', found " + describeByte(tag));
    }
    TupleData oldTuple = tuple(tag == 'K' ? "old key tuple" : "old tuple");
    return new PgOutputMessage.Delete(walStart, xid, relid, oldKind, oldTuple);
  }

  private PgOutputMessage truncate() {
    long xid = streamXid();
    int countAt = pos - start;
    int count = i32("relation count");
    if (count < 0) {
      throw malformed(countAt, "negative relation count " + count);
    }
    int options = u8("options");
    if ((long) count * 4 > end - pos) {
      throw malformed(
          countAt,
          "relation count " + count + " exceeds what the " + (end - pos) + " remaining bytes hold");
    }
    Long[] ids = new Long[count];
    for (int i = 0; i < count; i++) {
      ids[i] = u32("relation id");
    }
    return new PgOutputMessage.Truncate(walStart, xid, options, List.of(ids));
  }

  private PgOutputMessage logicalMessage() {
    long xid = streamXid();
    int flags = u8("flags");
    Lsn messageLsn = lsn("message LSN");
    String prefix = string("prefix");
    int lengthAt = pos - start;
    int length = i32("content length");
    if (length < 0) {
      throw malformed(lengthAt, "negative content length " + length);
    }
    if (length > end - pos) {
      throw malformed(
          lengthAt,
          "content length " + length + " exceeds the " + (end - pos) + " remaining bytes");
    }
    ByteSlice content = length == 0 ? ByteSlice.EMPTY : new ByteSlice(buf, pos, length);
    pos += length;
    boolean transactional = (flags & PgOutputMessage.LogicalMessage.TRANSACTIONAL_FLAG) != 0;
    return new PgOutputMessage.LogicalMessage(
        walStart, xid, transactional, messageLsn, prefix, content);
  }

  private PgOutputMessage streamStart() {
    int xidAt = pos - start;
    long xid = u32("xid");
    if (xid == 0) {
      throw malformed(xidAt, "invalid transaction id 0");
    }
    int first = u8("first segment flag");
    return new PgOutputMessage.StreamStart(walStart, xid, first == 1);
  }

  private PgOutputMessage streamCommit() {
    long xid = u32("xid");
    int flags = u8("flags");
    Lsn commitLsn = lsn("commit LSN");
    Lsn endLsn = lsn("end LSN");
    long commitTime = i64("commit time");
    return new PgOutputMessage.StreamCommit(walStart, xid, flags, commitLsn, endLsn, commitTime);
  }

  private PgOutputMessage streamAbort() {
    long xid = u32("xid");
    long subXid = u32("subtransaction xid");
    if (!streamAbortHasAbortInfo) {
      return new PgOutputMessage.StreamAbort(walStart, xid, subXid, false, Lsn.ZERO, 0);
    }
    Lsn abortLsn = lsn("abort LSN");
    long abortTime = i64("abort time");
    return new PgOutputMessage.StreamAbort(walStart, xid, subXid, true, abortLsn, abortTime);
  }

  private PgOutputMessage beginPrepare() {
    Lsn prepareLsn = lsn("prepare LSN");
    Lsn endLsn = lsn("end LSN");
    long prepareTime = i64("prepare time");
    long xid = u32("xid");
    String gid = string("gid");
    return new PgOutputMessage.BeginPrepare(walStart, prepareLsn, endLsn, prepareTime, xid, gid);
  }

  private PgOutputMessage prepare() {
    int flags = u8("flags");
    Lsn prepareLsn = lsn("prepare LSN");
    Lsn endLsn = lsn("end LSN");
    long prepareTime = i64("prepare time");
    long xid = u32("xid");
    String gid = string("gid");
    return new PgOutputMessage.Prepare(walStart, flags, prepareLsn, endLsn, prepareTime, xid, gid);
  }

  private PgOutputMessage commitPrepared() {
    int flags = u8("flags");
    Lsn commitLsn = lsn("commit LSN");
    Lsn endLsn = lsn("end LSN");
    long commitTime = i64("commit time");
    long xid = u32("xid");
    String gid = string("gid");
    return new PgOutputMessage.CommitPrepared(
        walStart, flags, commitLsn, endLsn, commitTime, xid, gid);
  }

  private PgOutputMessage rollbackPrepared() {
    int flags = u8("flags");
    Lsn prepareEndLsn = lsn("prepare end LSN");
    Lsn rollbackEndLsn = lsn("rollback end LSN");
    long prepareTime = i64("prepare time");
    long rollbackTime = i64("rollback time");
    long xid = u32("xid");
    String gid = string("gid");
    return new PgOutputMessage.RollbackPrepared(
        walStart, flags, prepareEndLsn, rollbackEndLsn, prepareTime, rollbackTime, xid, gid);
  }

  private PgOutputMessage streamPrepare() {
    int flags = u8("flags");
    Lsn prepareLsn = lsn("prepare LSN");
    Lsn endLsn = lsn("end LSN");
    long prepareTime = i64("prepare time");
    long xid = u32("xid");
    String gid = string("gid");
    return new PgOutputMessage.StreamPrepare(
        walStart, flags, prepareLsn, endLsn, prepareTime, xid, gid);
  }

  // ---- parts

  /** Reads the xid that data messages carry inside a stream block; 0 outside one. */
  private long streamXid() {
    if (!inStreamBlock) {
      return 0;
    }
    int at = pos - start;
    long xid = u32("xid");
    if (xid == 0) {
      throw malformed(at, "invalid transaction id 0 inside a stream block");
    }
    return xid;
  }

  private TupleData tuple(String which) {
    int countAt = pos - start;
    if (end - pos < 2) {
      throw truncated(which + " column count", 2);
    }
    int count = ((short) I16.get(buf, pos)) & 0xFFFF;
    pos += 2;
    // every column takes at least its kind byte
    if (count > end - pos) {
      throw malformed(
          countAt,
          which + " column count " + count + " exceeds the " + (end - pos) + " remaining bytes");
    }
    if (count == 0) {
      return new TupleData(buf, NO_KINDS, NO_RANGES);
    }
    byte[] kinds = new byte[count];
    int[] ranges = new int[2 * count];
    for (int i = 0; i < count; i++) {
      if (pos == end) {
        throw truncatedColumn(which, i, "kind", 1);
      }
      int kindAt = pos - start;
      byte k = buf[pos++];
      switch (k) {
        case 'n', 'u' -> {
          ranges[2 * i] = NO_VALUE;
          ranges[2 * i + 1] = NO_VALUE;
        }
        case 't', 'b' -> {
          if (end - pos < 4) {
            throw truncatedColumn(which, i, "value length", 4);
          }
          int lengthAt = pos - start;
          int length = (int) I32.get(buf, pos);
          pos += 4;
          if (length < 0) {
            throw malformed(
                lengthAt, which + " column " + i + " has negative value length " + length);
          }
          if (length > end - pos) {
            throw malformed(
                lengthAt,
                which
                    + " column "
                    + i
                    + " value length "
                    + length
                    + " exceeds the "
                    + (end - pos)
                    + " remaining bytes");
          }
          ranges[2 * i] = pos;
          ranges[2 * i + 1] = length;
          pos += length;
        }
        default ->
            throw malformed(
                kindAt, which + " column " + i + " has unknown kind " + describeByte(k & 0xFF));
      }
      kinds[i] = k;
    }
    return new TupleData(buf, kinds, ranges);
  }

  private int u8(String field) {
    if (pos == end) {
      throw truncated(field, 1);
    }
    return buf[pos++] & 0xFF;
  }

  private int u16(String field) {
    if (end - pos < 2) {
      throw truncated(field, 2);
    }
    int v = ((short) I16.get(buf, pos)) & 0xFFFF;
    pos += 2;
    return v;
  }

  private int i32(String field) {
    if (end - pos < 4) {
      throw truncated(field, 4);
    }
    int v = (int) I32.get(buf, pos);
    pos += 4;
    return v;
  }

  private long u32(String field) {
    return Integer.toUnsignedLong(i32(field));
  }

  private long i64(String field) {
    if (end - pos < 8) {
      throw truncated(field, 8);
    }
    long v = (long) I64.get(buf, pos);
    pos += 8;
    return v;
  }

  private Lsn lsn(String field) {
    return Lsn.of(i64(field));
  }

  private String string(String field) {
    int nul = pos;
    while (nul < end && buf[nul] != 0) {
      nul++;
    }
    if (nul == end) {
      throw malformed(pos - start, field + " is not terminated by a NUL byte");
    }
    String s = nul == pos ? "" : new String(buf, pos, nul - pos, StandardCharsets.UTF_8);
    pos = nul + 1;
    return s;
  }

  /** Reads a schema name; pgoutput sends an empty one for {@code pg_catalog}. */
  private String namespace(String field) {
    String s = string(field);
    return s.isEmpty() ? PG_CATALOG : s;
  }

  // ---- errors

  private EtlException truncated(String field, int needed) {
    return malformed(
        pos - start,
        "truncated: " + field + " needs " + needed + " bytes but " + (end - pos) + " remain");
  }

  private EtlException truncatedColumn(String which, int column, String part, int needed) {
    return truncated(which + " column " + column + " " + part, needed);
  }

  private EtlException malformed(int offset, String what) {
    String type = kind == null ? "pgoutput message" : "pgoutput " + kind.displayName() + " message";
    return new EtlException(
        ErrorKind.INVALID_DATA,
        "malformed " + type + " at byte " + offset + " of " + (end - start) + ": " + what,
        context());
  }

  private EtlException protocolError(String what) {
    return new EtlException(
        ErrorKind.REPLICATION_PROTOCOL_ERROR, "unexpected pgoutput message: " + what, context());
  }

  private String context() {
    StringBuilder sb = new StringBuilder(128);
    sb.append("WAL start ").append(walStart);
    if (relationId >= 0) {
      sb.append(", relation oid ").append(relationId);
    }
    sb.append(", pgoutput protocol version ")
        .append(protocolVersion)
        .append(", streaming ")
        .append(streaming.optionValue());
    if (inStreamBlock) {
      sb.append(", inside the stream block of xid ").append(streamBlockXid);
    }
    return sb.toString();
  }

  private static String describeByte(int b) {
    String hex = String.format("0x%02X", b);
    return b >= 0x20 && b < 0x7F ? "'" + (char) b + "' (" + hex + ")" : hex;
  }
}
