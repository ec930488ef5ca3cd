package org.pgetl.core.internal.apply;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.HashMap;
import java.util.Map;
import java.util.Objects;
import org.jspecify.annotations.Nullable;
import org.pgetl.error.ErrorKind;
import org.pgetl.error.EtlException;
import org.pgetl.model.Lsn;

/**
 * The changes of the in-progress transactions one stream receives from the server (pgoutput {@code
 * streaming}), kept on disk until their Stream Commit, dropped at their Stream Abort.
 *
 * <h2>Implementation notes</h2>
 *
 * Each streamed transaction has its own file in the pipeline's {@link SpoolFolder}, written
 * sequentially: per change a record of its length (4 bytes), the WAL start of its message (8) and
 * the message as it came from the server (its type byte, its xid, the rest). Writes go through one
 * in-heap buffer of {@value #BUFFER_BYTES} bytes that is flushed at every Stream Stop, and a replay
 * reads through a second one, so the heap this spool takes does not grow with the transactions,
 * their number or their size: only the disk does, against {@code spoolMaxBytes}. Nothing is ever
 * synced to disk: a crash loses the files, and the server sends every transaction whose commit was
 * not confirmed again, from its first change.
 *
 * <p>A file is created (never opened twice: its name is unique to this process) at the
 * transaction's first Stream Start and stays open until the transaction ends, one file descriptor
 * per pending streamed transaction; every read and write goes through that channel. So another
 * process that empties the same folder at its start (two processes running the same pipeline id
 * with the same {@code spoolDirectory}) only unlinks the names: the data stays readable here.
 *
 * <p>Each change keeps the xid it was sent with (the top-level or a subtransaction xid); the spool
 * remembers the file offset of the first change of every subtransaction (three {@code long}s per
 * subtransaction that has changes). Aborting a subtransaction truncates the file at its first
 * change, as PostgreSQL's own apply worker does: every later change of the transaction belongs to
 * it or to its children. Aborting the transaction deletes its file. Owned by the stream's thread.
 */
final class StreamSpool implements AutoCloseable {
  /** The size of the write buffer and of the read buffer. */
  static final int BUFFER_BYTES = 64 * 1024;

  /** Per change: its length and its message's WAL start. */
  static final int HEADER_BYTES = 4 + 8;

  /** One change read back from a spool file. */
  @SuppressWarnings("ArrayRecordComponent") // internal, read once by the replay, never compared
  record Change(Lsn walStart, byte[] message) {}

  private final class Txn {
    final long xid;
    final Path path;
    @Nullable FileChannel channel;
    // the bytes of its changes, and how many of them are in the file (the rest is buffered)
    long size;
    long flushed;
    long changes;
    // the subtransactions with changes, in the order of their first change
    long[] subXids = new long[4];
    long[] subOffsets = new long[4];
    long[] subChanges = new long[4];
    int subCount;
    long lastSubXid;

    /** The transaction's file channel, open from its first write until its file is deleted. */
    FileChannel openChannel() {
      return Objects.requireNonNull(channel, "the file of a pending transaction is open");
    }

    Txn(long xid) {
      this.xid = xid;
      this.path = folder.newFile(streamTag, xid);
    }

    void noteChangeOf(long subXid) {
      if (subXid == xid || subXid == lastSubXid || subXid == 0) {
        return;
      }
      lastSubXid = subXid;
      for (int i = subCount - 1; i >= 0; i--) {
        if (subXids[i] == subXid) {
          return;
        }
      }
      if (subCount == subXids.length) {
        int grown = subCount * 2;
        subXids = java.util.Arrays.copyOf(subXids, grown);
        subOffsets = java.util.Arrays.copyOf(subOffsets, grown);
        subChanges = java.util.Arrays.copyOf(subChanges, grown);
      }
      subXids[subCount] = subXid;
      subOffsets[subCount] = size;
      subChanges[subCount] = changes;
      subCount++;
    }

    int subIndex(long subXid) {
      for (int i = subCount - 1; i >= 0; i--) {
        if (subXids[i] == subXid) {
          return i;
        }
      }
      return -1;
    }
  }

  private final SpoolFolder folder;
  private final String streamTag;
  private final Map<Long, Txn> transactions = new HashMap<>();
  private final ByteBuffer writeBuffer = ByteBuffer.allocate(BUFFER_BYTES);
  private final ByteBuffer readBuffer = ByteBuffer.allocate(BUFFER_BYTES);
  private @Nullable Txn current;
  private @Nullable Replay replay;

  /**
   * Creates the spool of one stream.
   *
   * @param folder the pipeline's spool folder
   * @param streamTag names this stream's files, like {@code apply} or {@code sync-16384}
   */
  StreamSpool(SpoolFolder folder, String streamTag) {
    this.folder = folder;
    this.streamTag = streamTag;
  }

  /**
   * Starts (or continues) a stream block of the streamed transaction {@code xid}.
   *
   * @param xid the top-level xid
   */
  void start(long xid) {
    if (current != null) {
      throw new EtlException(
          ErrorKind.REPLICATION_PROTOCOL_ERROR,
          "Stream Start of xid " + xid + " inside the stream block of xid " + current.xid);
    }
    Txn t = transactions.get(xid);
    if (t == null) {
      t = new Txn(xid);
      transactions.put(xid, t);
    }
    if (t.channel == null) {
      try {
        t.channel =
            FileChannel.open(
                t.path,
                StandardOpenOption.CREATE_NEW,
                StandardOpenOption.READ,
                StandardOpenOption.WRITE);
      } catch (IOException e) {
        transactions.remove(xid);
        throw folder.ioFailure("cannot create " + t.path, e);
      }
    }
    current = t;
  }

  /** Ends the current stream block: its changes are written to the file. */
  void stop() {
    if (current == null) {
      return;
    }
    try {
      flush();
    } finally {
      current = null;
    }
  }

  /**
   * Returns true inside a stream block.
   *
   * @return whether changes are being spooled
   */
  boolean inBlock() {
    return current != null;
  }

  /**
   * Appends a change of the current stream block.
   *
   * @param subXid the xid the change was sent with (the transaction's or a subtransaction's)
   * @param walStart the WAL start of its message
   * @param message the message, from its type byte to its end (read, not modified)
   * @throws EtlException of kind {@code CONFIG_ERROR} when {@code spoolMaxBytes} would be passed or
   *     the file cannot be written
   */
  void add(long subXid, Lsn walStart, ByteBuffer message) {
    Txn t = current;
    if (t == null) {
      throw new EtlException(
          ErrorKind.REPLICATION_PROTOCOL_ERROR, "streamed change outside a stream block");
    }
    int length = message.remaining();
    long record = HEADER_BYTES + (long) length;
    folder.reserve(record);
    try {
      if (writeBuffer.remaining() < record) {
        flush();
      }
      if (record > writeBuffer.capacity()) {
        writeBuffer.putInt(length).putLong(walStart.value());
        flush();
        writeFully(message.duplicate());
      } else {
        writeBuffer.putInt(length).putLong(walStart.value()).put(message.duplicate());
      }
    } catch (EtlException e) {
      folder.release(record);
      throw e;
    }
    t.noteChangeOf(subXid);
    t.size += record;
    t.changes++;
  }

  /**
   * Removes a committed transaction from the spool and opens its changes for reading. The caller
   * closes the replay, which deletes the file.
   *
   * @param xid the top-level xid
   * @return its changes in order (none when nothing was streamed)
   */
  Replay commit(long xid) {
    Txn t = transactions.remove(xid);
    if (t == current) {
      stop();
    }
    replay = new Replay(t);
    return replay;
  }

  /**
   * Drops an aborted transaction, or the changes of an aborted subtransaction from its first change
   * on.
   *
   * @param xid the top-level xid
   * @param subXid the aborted (sub)transaction's xid
   */
  void abort(long xid, long subXid) {
    Txn t = transactions.get(xid);
    if (t == null) {
      return;
    }
    if (t == current) {
      stop();
    }
    if (xid == subXid) {
      transactions.remove(xid);
      delete(t);
      return;
    }
    int i = t.subIndex(subXid);
    if (i < 0) {
      return; // no change of that subtransaction was streamed
    }
    long offset = t.subOffsets[i];
    try {
      t.openChannel().truncate(offset);
    } catch (IOException e) {
      throw folder.ioFailure("cannot truncate " + t.path, e);
    }
    folder.release(t.size - offset);
    t.size = offset;
    t.flushed = offset;
    t.changes = t.subChanges[i];
    t.subCount = i;
    t.lastSubXid = 0;
  }

  /**
   * Returns true when no streamed transaction is pending.
   *
   * @return whether the spool holds nothing
   */
  boolean isEmpty() {
    return transactions.isEmpty();
  }

  /**
   * Returns the number of changes held for a pending transaction, for tests.
   *
   * @param xid the top-level xid
   * @return the count, 0 when none
   */
  long changes(long xid) {
    Txn t = transactions.get(xid);
    return t == null ? 0 : t.changes;
  }

  /**
   * Drops everything and deletes every file, the one being replayed included (the stream is
   * abandoned or ends; the server sends the transactions again next time).
   */
  void clear() {
    try {
      if (replay != null) {
        replay.close();
      }
    } finally {
      current = null;
      writeBuffer.clear();
      for (Txn t : transactions.values()) {
        delete(t);
      }
      transactions.clear();
    }
  }

  /** Same as {@link #clear()}. */
  @Override
  public void close() {
    clear();
  }

  private void flush() {
    writeBuffer.flip();
    try {
      writeFully(writeBuffer);
    } finally {
      writeBuffer.clear();
    }
  }

  /** Appends bytes to the current transaction's file. */
  private void writeFully(ByteBuffer b) {
    Txn t = Objects.requireNonNull(current, "bytes are written while a transaction is current");
    try {
      while (b.hasRemaining()) {
        t.flushed += t.openChannel().write(b, t.flushed);
      }
    } catch (IOException e) {
      throw folder.ioFailure("cannot write " + t.path, e);
    }
  }

  private void delete(Txn t) {
    folder.release(t.size);
    t.size = 0;
    if (t.channel != null) {
      try {
        t.channel.close();
        Files.deleteIfExists(t.path);
      } catch (IOException e) {
        throw folder.ioFailure("cannot delete " + t.path, e);
      } finally {
        t.channel = null;
      }
    }
  }

  /** The changes of one committed transaction, read back in order through its file's channel. */
  final class Replay implements AutoCloseable {
    private final @Nullable Txn txn;
    private final long changes;
    private final long bytes;
    // the file position of the first byte not yet in the read buffer, and of the next change
    private long readAt;
    private long left;
    private boolean closed;

    /** The transaction read; there is one whenever bytes are left to read. */
    private Txn file() {
      return Objects.requireNonNull(txn, "a replay with bytes left has its transaction");
    }

    private Replay(@Nullable Txn txn) {
      this.txn = txn;
      this.changes = txn == null ? 0 : txn.changes;
      this.bytes = txn == null ? 0 : txn.size;
      this.left = bytes;
      readBuffer.clear().limit(0);
    }

    /**
     * Returns the number of changes of the transaction.
     *
     * @return the count
     */
    long changes() {
      return changes;
    }

    /**
     * Returns the bytes the transaction took in its spool file.
     *
     * @return the size
     */
    long bytes() {
      return bytes;
    }

    /**
     * Reads the next change.
     *
     * @return it, or null after the last one
     */
    @Nullable Change next() {
      if (left == 0 || closed) {
        return null;
      }
      fill(HEADER_BYTES);
      int length = readBuffer.getInt();
      long walStart = readBuffer.getLong();
      if (length < 0 || HEADER_BYTES + (long) length > left) {
        throw new EtlException(
            ErrorKind.INVALID_STATE,
            "spool file " + file().path + " is damaged: a change of " + length + " bytes",
            left + " bytes were left to read");
      }
      byte[] message = new byte[length];
      int have = Math.min(readBuffer.remaining(), length);
      readBuffer.get(message, 0, have);
      if (have < length) {
        ByteBuffer rest = ByteBuffer.wrap(message, have, length - have);
        read(rest, rest.remaining());
      }
      left -= HEADER_BYTES + (long) length;
      return new Change(Lsn.of(walStart), message);
    }

    /** Closes and deletes the file; idempotent. */
    @Override
    public void close() {
      if (closed) {
        return;
      }
      closed = true;
      if (replay == this) {
        replay = null;
      }
      if (txn != null) {
        delete(txn);
      }
    }

    /** Makes at least {@code n} bytes (at most the buffer's size) readable in the read buffer. */
    private void fill(int n) {
      if (readBuffer.remaining() >= n) {
        return;
      }
      readBuffer.compact();
      read(readBuffer, n - readBuffer.position());
      readBuffer.flip();
    }

    /**
     * Reads at least {@code atLeast} bytes into the buffer, more when the buffer and file allow.
     */
    private void read(ByteBuffer into, int atLeast) {
      Txn txn = file();
      long end = txn.flushed;
      int got = 0;
      try {
        while (got < atLeast) {
          int max = (int) Math.min(into.remaining(), end - readAt);
          if (max <= 0) {
            throw new EtlException(
                ErrorKind.INVALID_STATE,
                "spool file " + txn.path + " ended early",
                left + " bytes were left to read");
          }
          ByteBuffer window = into.duplicate().limit(into.position() + max);
          int r = txn.openChannel().read(window, readAt);
          if (r < 0) {
            throw new EtlException(
                ErrorKind.INVALID_STATE,
                "spool file " + txn.path + " ended early",
                left + " bytes were left to read");
          }
          into.position(into.position() + r);
          readAt += r;
          got += r;
        }
      } catch (IOException e) {
        throw folder.ioFailure("cannot read " + txn.path, e);
      }
    }
  }
}
