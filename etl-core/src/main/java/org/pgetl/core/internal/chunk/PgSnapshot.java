package org.pgetl.core.internal.chunk;

import java.util.Arrays;
import org.pgetl.error.ErrorKind;
import org.pgetl.error.EtlException;

/**
 * A snapshot as {@code pg_current_snapshot()} prints it ({@code xmin:xmax:xip,...}): which
 * transactions it sees. Transaction ids are 64-bit (with their epoch); the 32-bit ids of the
 * replication stream are widened against {@code xmax}.
 *
 * @param xmin every transaction below it had ended when the snapshot was taken
 * @param xmax every transaction at or above it had not started
 * @param xip the transactions between them that were running, sorted
 */
// the running list is kept sorted and never handed out
@SuppressWarnings("ArrayRecordComponent")
public record PgSnapshot(long xmin, long xmax, long[] xip) {

  /**
   * Parses the text form.
   *
   * @param text {@code xmin:xmax:xip1,xip2,...}
   * @return the snapshot
   */
  public static PgSnapshot parse(String text) {
    String[] parts = text.split(":", -1);
    if (parts.length != 3) {
      throw new EtlException(
          ErrorKind.REPLICATION_PROTOCOL_ERROR, "unexpected snapshot " + text, null);
    }
    try {
      long xmin = Long.parseLong(parts[0]);
      long xmax = Long.parseLong(parts[1]);
      long[] xip =
          parts[2].isEmpty()
              ? new long[0]
              : Arrays.stream(parts[2].split(",")).mapToLong(Long::parseLong).toArray();
      Arrays.sort(xip);
      return new PgSnapshot(xmin, xmax, xip);
    } catch (NumberFormatException e) {
      throw new EtlException(
          ErrorKind.REPLICATION_PROTOCOL_ERROR, "unexpected snapshot " + text, null, e);
    }
  }

  /**
   * Widens a 32-bit transaction id of the replication stream to the 64-bit id closest below this
   * snapshot's {@code xmax} (transactions that the stream passed recently are never far from it).
   *
   * @param xid32 the 32-bit id
   * @return the full id
   */
  public long widen(long xid32) {
    long low = xid32 & 0xffffffffL;
    long full = (xmax & ~0xffffffffL) | low;
    if (full > xmax + (1L << 31)) {
      full -= 1L << 32;
    } else if (full < xmax - (1L << 31)) {
      full += 1L << 32;
    }
    return full;
  }

  /**
   * Returns true when this snapshot sees the committed transaction {@code fullXid}.
   *
   * @param fullXid a committed transaction's 64-bit id
   * @return whether its changes are visible
   */
  public boolean sees(long fullXid) {
    if (fullXid < xmin) {
      return true;
    }
    if (fullXid >= xmax) {
      return false;
    }
    return Arrays.binarySearch(xip, fullXid) < 0;
  }

  /**
   * Returns true when one of {@code xids} was running when this snapshot was taken.
   *
   * @param sortedXids 64-bit ids, sorted
   * @return whether any of them is in this snapshot's running list
   */
  public boolean anyRunning(long[] sortedXids) {
    for (long x : sortedXids) {
      if (Arrays.binarySearch(xip, x) >= 0) {
        return true;
      }
    }
    return false;
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof PgSnapshot s
        && s.xmin == xmin
        && s.xmax == xmax
        && Arrays.equals(s.xip, xip);
  }

  @Override
  public int hashCode() {
    return Long.hashCode(xmin) * 31 + Long.hashCode(xmax) * 17 + Arrays.hashCode(xip);
  }

  @Override
  public String toString() {
    StringBuilder b = new StringBuilder().append(xmin).append(':').append(xmax).append(':');
    for (int i = 0; i < xip.length; i++) {
      b.append(i == 0 ? "" : ",").append(xip[i]);
    }
    return b.toString();
  }
}
