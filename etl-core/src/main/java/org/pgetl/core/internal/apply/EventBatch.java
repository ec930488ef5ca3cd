package org.pgetl.core.internal.apply;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import org.jspecify.annotations.Nullable;
import org.pgetl.core.internal.time.Ticker;
import org.pgetl.model.Event;
import org.pgetl.model.Lsn;

/**
 * The batch of events one stream is filling: the {@link TransactionAssembler} appends to it, the
 * {@link BatchDispatcher} takes it whole when a trigger fires. Owned by the loop's thread.
 */
final class EventBatch {

  /**
   * A batch taken for dispatch.
   *
   * @param events the events, unmodifiable
   * @param commitEnd the greatest commit end LSN the batch completes, or null
   * @param bytes their estimated size
   * @param markers how many of them are Begin, Commit or Relation events
   */
  record Taken(List<Event> events, @Nullable Lsn commitEnd, long bytes, int markers) {}

  private final Ticker ticker;
  private List<Event> events = new ArrayList<>();
  private long bytes;
  private int markers;
  private long startedNanos;
  private @Nullable Lsn commitEnd;

  EventBatch(Ticker ticker) {
    this.ticker = ticker;
  }

  /** Adds an event; the first one starts the batch's fill time. */
  void append(Event e) {
    if (events.isEmpty()) {
      startedNanos = ticker.nanoTime();
    }
    events.add(e);
    bytes += EventSizes.estimate(e);
    Event.Kind k = e.kind();
    if (k == Event.Kind.BEGIN || k == Event.Kind.COMMIT || k == Event.Kind.RELATION) {
      markers++;
    }
  }

  /** Notes that the batch completes a transaction ending at {@code endLsn}. */
  void commitEnded(Lsn endLsn) {
    commitEnd = endLsn;
  }

  boolean isEmpty() {
    return events.isEmpty();
  }

  long bytes() {
    return bytes;
  }

  /** The ticker reading at the first event's append; meaningless while empty. */
  long startedNanos() {
    return startedNanos;
  }

  /** True when a commit end was noted since the last take. */
  boolean hasCommitEnd() {
    return commitEnd != null;
  }

  /** Returns the batch and starts an empty one. */
  Taken take() {
    Taken t = new Taken(Collections.unmodifiableList(events), commitEnd, bytes, markers);
    reset();
    return t;
  }

  /**
   * Drops the batch.
   *
   * @return how many events were dropped
   */
  int discard() {
    int n = events.size();
    reset();
    return n;
  }

  private void reset() {
    events = new ArrayList<>();
    bytes = 0;
    markers = 0;
    commitEnd = null;
  }
}
