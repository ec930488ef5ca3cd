package org.pgetl.core.internal.apply;

import org.pgetl.error.ErrorKind;
import org.pgetl.error.EtlException;
import org.pgetl.model.Event;
import org.pgetl.model.UpdatedRow;

/**
 * The size the loop counts for an event against {@code batchMaxBytes}: an estimate of its heap
 * size, from its rows' own estimates ({@code TableRow.sizeHintBytes()}) plus a fixed amount for
 * markers. A batch is sent once these add up to {@code batchMaxBytes}, so no batch exceeds the
 * limit by more than its last event.
 */
public final class EventSizes {
  /** Begin, Commit and Truncate events, and a message without its content. */
  static final long MARKER_BYTES = 64;

  /** A Relation event, and the new row of an update that misses unchanged TOAST values. */
  static final long SCHEMA_BYTES = 256;

  private EventSizes() {}

  /**
   * Returns the size counted for an event.
   *
   * @param e the event
   * @return its estimated size in bytes
   */
  public static long estimate(Event e) {
    if (e instanceof Event.Insert i) {
      return i.row().sizeHintBytes();
    } else if (e instanceof Event.Update u) {
      long row = u.row() instanceof UpdatedRow.Full f ? f.row().sizeHintBytes() : SCHEMA_BYTES;
      return row + (u.oldRow() == null ? 0 : u.oldRow().row().sizeHintBytes());
    } else if (e instanceof Event.Delete d) {
      return d.oldRow().row().sizeHintBytes();
    } else if (e instanceof Event.Relation) {
      return SCHEMA_BYTES;
    } else if (e instanceof Event.Message m) {
      return MARKER_BYTES + m.content().length;
    } else if (e instanceof Event.Begin
        || e instanceof Event.Commit
        || e instanceof Event.Truncate) {
      return MARKER_BYTES;
    }
    throw new EtlException(ErrorKind.INVALID_STATE, "unknown event kind " + e.kind());
  }
}
