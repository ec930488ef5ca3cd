package org.pgetl.core.internal.pg;

import java.nio.ByteBuffer;
import org.jspecify.annotations.Nullable;
import org.pgetl.error.EtlException;
import org.pgetl.model.Lsn;

/**
 * Where a stream loop reads its pgoutput messages and reports its positions: the replication stream
 * of a slot ({@link ReplicationStream}), or a scripted sequence in tests.
 *
 * <p>One thread owns a source: the first that reads it. Only {@link #advanceFlushed(Lsn)} and
 * {@link #lastReceivedLsn()} may be called from other threads.
 */
public interface MessageSource extends AutoCloseable {

  /**
   * Returns the next pgoutput message, or null when none arrived within {@code maxWaitNanos}. Waits
   * for data, not for the bound: it returns as soon as a message is there. Also answers the
   * server's keepalives and sends the status updates that are due.
   *
   * @param maxWaitNanos the longest to wait, in nanoseconds; 0 checks once
   * @return the message, positioned at its first byte, or null
   * @throws EtlException when the source fails
   */
  @Nullable ByteBuffer readNext(long maxWaitNanos);

  /**
   * Returns true when the message {@link #readNext(long)} returned last did not come at once: the
   * source found nothing pending first and waited for it. A stream loop takes that as a quiet
   * stream before the message: what follows it is not known to be on its way.
   *
   * @return true when the last message was waited for
   */
  boolean lastReadWaited();

  /**
   * Returns the WAL start LSN of the message {@link #readNext(long)} returned last. Some messages
   * (RELATION, TYPE) carry {@code 0/0}.
   *
   * @return the start LSN of the last message
   */
  Lsn lastMessageLsn();

  /**
   * Returns the greatest LSN the server has sent (message starts and keepalive WAL ends), at least
   * the start LSN. Readable from any thread.
   *
   * @return the last received LSN
   */
  Lsn lastReceivedLsn();

  /**
   * Records that everything up to {@code lsn} may be confirmed to the server. Monotonic: a smaller
   * LSN than one recorded before is ignored. Thread-safe; the owner sends it at its next status
   * update.
   *
   * @param lsn the flushed position
   * @return true when the flush LSN moved forward
   */
  boolean advanceFlushed(Lsn lsn);

  /**
   * Sends a status update if one is due, for an owner that is not reading.
   *
   * @return true when an update was sent
   * @throws EtlException when the update cannot be sent
   */
  boolean sendStatusIfDue();

  /**
   * Sends a status update now, asking the server to reply.
   *
   * @throws EtlException when the update cannot be sent
   */
  void forceStatusUpdate();

  /**
   * Returns the slot the source reads, for messages.
   *
   * @return the slot name
   */
  String slotName();

  /** Sends a last status update and ends the source. Idempotent; never throws. */
  @Override
  void close();
}
