package org.pgetl.core.internal.apply;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.pgetl.core.internal.decode.PgOutputMessage;
import org.pgetl.error.ErrorKind;
import org.pgetl.error.EtlException;

/**
 * The changes of in-progress transactions that the server streams (pgoutput {@code streaming}),
 * kept until their Stream Commit or dropped at their Stream Abort.
 *
 * <p>Each change keeps the xid it was sent with (the top-level or a subtransaction xid); aborting a
 * subtransaction drops everything from its first change on, as PostgreSQL's own apply worker does
 * (later changes of that transaction belong to the subtransaction or its children). Owned by the
 * stream's thread.
 */
final class StreamSpool {
  private static final class Txn {
    final List<PgOutputMessage.StreamableMessage> changes = new ArrayList<>();
    final List<Integer> sizes = new ArrayList<>();
    long bytes;
  }

  private final Map<Long, Txn> transactions = new HashMap<>();
  private final long maxBytes;
  private long bytes;
  private Txn current;

  StreamSpool(long maxBytes) {
    this.maxBytes = maxBytes;
  }

  /**
   * Starts (or continues) the streamed transaction {@code xid}.
   *
   * @param xid the top-level xid
   */
  void start(long xid) {
    current = transactions.computeIfAbsent(xid, k -> new Txn());
  }

  /** Ends the current stream block. */
  void stop() {
    current = null;
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
   * Keeps a change of the current stream block.
   *
   * @param m the change
   * @param size its size in bytes
   */
  void add(PgOutputMessage.StreamableMessage m, int size) {
    if (current == null) {
      throw new EtlException(
          ErrorKind.REPLICATION_PROTOCOL_ERROR, "streamed change outside a stream block");
    }
    current.changes.add(m);
    current.sizes.add(size);
    current.bytes += size;
    bytes += size;
    if (bytes > maxBytes) {
      throw new EtlException(
          ErrorKind.CONFIG_ERROR,
          "streamed in-progress transactions hold more than " + maxBytes + " bytes in memory",
          "raise the server's logical_decoding_work_mem or turn pgoutputStreaming off, so that"
              + " the server spills large transactions instead");
    }
  }

  /**
   * Removes and returns the changes of a committed transaction.
   *
   * @param xid the top-level xid
   * @return its changes in order (empty when none were streamed)
   */
  List<PgOutputMessage.StreamableMessage> commit(long xid) {
    Txn t = transactions.remove(xid);
    if (t == null) {
      return List.of();
    }
    bytes -= t.bytes;
    return t.changes;
  }

  /**
   * Drops an aborted transaction, or the changes of an aborted subtransaction.
   *
   * @param xid the top-level xid
   * @param subXid the aborted (sub)transaction's xid
   */
  void abort(long xid, long subXid) {
    Txn t = transactions.get(xid);
    if (t == null) {
      return;
    }
    if (xid == subXid) {
      transactions.remove(xid);
      bytes -= t.bytes;
      return;
    }
    for (int i = 0; i < t.changes.size(); i++) {
      if (t.changes.get(i).streamXid() == subXid) {
        long dropped = 0;
        for (int j = i; j < t.sizes.size(); j++) {
          dropped += t.sizes.get(j);
        }
        t.changes.subList(i, t.changes.size()).clear();
        t.sizes.subList(i, t.sizes.size()).clear();
        t.bytes -= dropped;
        bytes -= dropped;
        return;
      }
    }
  }

  /**
   * Returns true when no streamed transaction is pending.
   *
   * @return whether the spool is empty
   */
  boolean isEmpty() {
    return transactions.isEmpty();
  }

  /** Drops everything (the stream is abandoned; the server sends it again next time). */
  void clear() {
    transactions.clear();
    current = null;
    bytes = 0;
  }
}
