package org.pgetl.core.internal.apply;

import org.jspecify.annotations.Nullable;
import org.pgetl.core.internal.engine.DestinationCalls;
import org.pgetl.core.internal.engine.StopSignal;
import org.pgetl.core.internal.pg.MessageSource;
import org.pgetl.core.internal.time.Ticker;
import org.pgetl.destination.WriteDurability;
import org.pgetl.error.EtlException;
import org.pgetl.model.Lsn;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The output half of an {@link ApplyLoop}: decides when the {@link EventBatch} goes out, keeps the
 * writes in flight in its {@link WriteWindow}, moves and stores the durable point from their
 * answers, reports the flush position to the {@link MessageSource}, and decides when a stopping
 * stream may end.
 *
 * <ul>
 *   <li><b>Triggers.</b> A batch is dispatched when it reaches {@code batchMaxBytes}, when it
 *       waited {@code batchMaxFill}, when the stream had nothing more to read, at the commit of a
 *       lone transaction (one whose first message the stream had to wait for, or that began after a
 *       read found the stream quiet, with no write in flight: asking the stream for more would only
 *       wait in pgjdbc's poll), while draining, or when the role completes; never while the window
 *       is full.
 *   <li><b>Barriers.</b> Writes answered {@code accepted} get an empty {@code REQUIRE_DURABLE}
 *       write once the stream was quiet for {@code batchMaxFill}, when the role asks, and before a
 *       stop ends.
 *   <li><b>Feedback.</b> The flush position is the durable point; when the stream is fully idle it
 *       is the last received LSN; once anything was discarded it never passes the durable point
 *       again on this stream.
 *   <li><b>Progress.</b> The durable point is stored at most every {@link #PERSIST_INTERVAL_NANOS}
 *       (at once when the role completes, and when the loop ends).
 * </ul>
 *
 * Every reading of time comes from the environment's {@link Ticker}. Owned by the loop's thread;
 * only the window's answer queue is written by other threads.
 */
final class BatchDispatcher {
  private static final Logger LOG = LoggerFactory.getLogger(BatchDispatcher.class);

  /** The least time between two writes of the durable point to the store. */
  static final long PERSIST_INTERVAL_NANOS = 200_000_000L;

  private final LoopEnv env;
  private final StreamRole role;
  private final StreamRole.Control control;
  private final MessageSource source;
  private final EventBatch batch;
  private final TransactionAssembler intake;
  private final WriteWindow window;
  private final Ticker ticker;
  private final String pipelineId;

  private Lsn durable;
  private Lsn persisted;
  private long lastPersistNanos;
  private boolean discarded;
  private boolean abandoned;
  private boolean completing;
  private boolean finished;
  private boolean stopBarrierSent;
  private boolean stopping;
  private long stopStartedNanos;
  private long lastDispatchNanos;

  BatchDispatcher(
      LoopEnv env,
      StreamRole role,
      StreamRole.Control control,
      MessageSource source,
      EventBatch batch,
      TransactionAssembler intake,
      WriteWindow window,
      Lsn startDurable) {
    this.env = env;
    this.role = role;
    this.control = control;
    this.source = source;
    this.batch = batch;
    this.intake = intake;
    this.window = window;
    this.ticker = env.ticker();
    this.pipelineId = env.config().pipelineId();
    this.durable = startDurable;
    this.persisted = startDurable;
    this.lastDispatchNanos = ticker.nanoTime();
  }

  Lsn durable() {
    return durable;
  }

  boolean abandoned() {
    return abandoned;
  }

  boolean finished() {
    return finished;
  }

  /** The role's {@link StreamRole.Control#completeAfterThisTransaction()}. */
  void completeAfterThisTransaction() {
    completing = true;
  }

  /** The role's {@link StreamRole.Control#finish()}. */
  void finish() {
    finished = true;
  }

  /** The role's {@link StreamRole.Control#writeFence()}. */
  long writeFence() {
    return window.dispatched() + (batch.isEmpty() ? 0 : 1);
  }

  /** The role's {@link StreamRole.Control#answeredBefore(long)}. */
  boolean answeredBefore(long fence) {
    return window.answeredBefore(fence);
  }

  int inFlight() {
    return window.inFlight();
  }

  // ---- answers and progress

  /**
   * Applies the answers that arrived: moves the durable point, throws a failure answer, and turns a
   * {@code shutdown} answer into a pipeline shutdown with the batch behind it dropped.
   */
  void applyAnswers() {
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
    role.durableInMemory(durable);
    source.advanceFlushed(durable);
    persistIfDue();
  }

  /**
   * Stores the durable point when it moved and the last write is {@link #PERSIST_INTERVAL_NANOS}
   * old (or the stream is completing), then runs the role's hand-off step with the stored point.
   * The server learns the durable point at once through feedback; the store only serves restarts,
   * so a busy stream writes it at most a few times a second instead of once per batch.
   */
  void persistIfDue() {
    if (!durable.isAfter(persisted)) {
      return;
    }
    if (!completing && ticker.nanoTime() - lastPersistNanos < PERSIST_INTERVAL_NANOS) {
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
    lastPersistNanos = ticker.nanoTime();
    role.afterDurable(persisted, control);
  }

  /**
   * Stores the durable point and sends a last status update (with the last received LSN when idle).
   * Failures are logged: the next start resumes from what the slot and the store hold.
   */
  void finalFeedback() {
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
        source.advanceFlushed(source.lastReceivedLsn());
      }
      source.forceStatusUpdate();
    } catch (EtlException e) {
      LOG.debug("pipeline {}: final status update failed: {}", pipelineId, e.getMessage());
    }
  }

  /**
   * When the stream is fully idle, confirms everything received to the source.
   *
   * @return the confirmed (last received) LSN, or null when the stream is not idle
   */
  @Nullable Lsn confirmIfIdle() {
    if (!isIdle()) {
      return null;
    }
    Lsn received = source.lastReceivedLsn();
    source.advanceFlushed(received);
    return received;
  }

  /**
   * When the stream is idle but for streamed transactions that have not committed (between their
   * stream blocks), returns the last received position, which is not confirmed.
   *
   * <p>Such a transaction commits after every position received so far (the server sends a commit
   * before any later position), so everything committed up to the returned position is durable, as
   * a table's hand-off and a chunk's watermark need; but its changes lie behind that position, so a
   * restart must receive them again, and the position is not confirmed. Without this a long
   * streamed transaction held back every table's hand-off until its commit, as PostgreSQL's own
   * apply worker, which syncs tables between stream blocks, does not.
   *
   * @return the last received LSN, or null
   */
  @Nullable Lsn idleButForOpenStreamedTransactions() {
    if (!settledButForTheSpool() || !intake.onlyOpenStreamedTransactionsSpooled()) {
      return null;
    }
    return source.lastReceivedLsn();
  }

  /**
   * True when nothing received is unconfirmed for a reason of this stream: no open or streamed
   * transaction, nothing buffered, in flight or accepted-not-durable, nothing ever discarded.
   */
  private boolean isIdle() {
    return settledButForTheSpool() && intake.spoolEmpty();
  }

  /**
   * No open transaction, nothing buffered, in flight or accepted-not-durable, nothing discarded.
   */
  private boolean settledButForTheSpool() {
    return !intake.inTransaction()
        && !discarded
        && !abandoned
        && batch.isEmpty()
        && window.isClear();
  }

  // ---- stops

  /**
   * Notes the stop mode of this iteration: the first time a stop is seen its grace period starts; a
   * discarding stop drops what is buffered.
   *
   * @param stopMode the mode
   */
  void observeStop(StopSignal.Mode stopMode) {
    if (stopMode != StopSignal.Mode.NONE && !stopping) {
      stopping = true;
      stopStartedNanos = ticker.nanoTime();
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
  }

  /** True once the role finished and its last writes were answered. */
  boolean completed() {
    return finished && window.inFlight() == 0 && batch.isEmpty();
  }

  /**
   * While a drain (or a shutdown) stops the stream, the transaction being read is read to its
   * commit, within the grace period, so that the stream stops at a commit boundary and everything
   * it delivered can become durable.
   */
  private boolean finishingTransaction(StopSignal.Mode stopMode) {
    return stopMode == StopSignal.Mode.DRAIN && intake.inTransaction() && !graceOver();
  }

  private boolean graceOver() {
    return ticker.nanoTime() - stopStartedNanos > env.config().shutdownTimeout().toNanos();
  }

  /**
   * Returns true once a stopping stream may end: nothing in flight, nothing buffered (or a
   * discard), and everything answered {@code accepted} made durable by a last {@code
   * REQUIRE_DURABLE} barrier — or the grace period is over, which is then noted as an incomplete
   * stop.
   */
  boolean stopSettled() {
    boolean discard = env.stop().mode() == StopSignal.Mode.DISCARD;
    if (window.inFlight() == 0
        && (batch.isEmpty() || discard)
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
            : intake.inTransaction() && !discard
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

  private void discardBuffered() {
    if (!batch.isEmpty() || intake.holdsWork()) {
      long n = batch.discard();
      if (n > 0) {
        env.metrics().eventsDiscarded(n);
      }
      intake.discard();
      discarded = true;
    }
  }

  // ---- reading

  /**
   * True when the loop may take in more changes: no stop (or a drain finishing its transaction),
   * the role is not completing, and the batch is below its size limit. While writes are in flight
   * the next batch keeps filling, so memory stays bounded by (in-flight writes + 1) batches.
   *
   * @param stopMode the stop mode of this iteration
   * @return whether to read
   */
  boolean canRead(StopSignal.Mode stopMode) {
    return (stopMode == StopSignal.Mode.NONE || finishingTransaction(stopMode))
        && !completing
        && !finished
        && batch.bytes() < env.config().batchMaxBytes();
  }

  // ---- dispatch

  /**
   * Dispatches the batch when a trigger fires and the window has room.
   *
   * @param caughtUp whether the last read found nothing
   * @param stopMode the stop mode of this iteration
   */
  void maybeDispatch(boolean caughtUp, StopSignal.Mode stopMode) {
    boolean wanted = role.urgentDurability();
    if (batch.isEmpty()) {
      // (a chunk read waiting for this stream's durable point needs the commit ends of
      // transactions without events durable too)
      if (((completing && !intake.inTransaction()) || wanted)
          && batch.hasCommitEnd()
          && !window.isFull()) {
        // the catch-up target was reached by a transaction without events of this table: the
        // final write is an empty durability barrier that carries its commit LSN
        dispatch(WriteDurability.REQUIRE_DURABLE);
      }
      return;
    }
    if (window.isFull()) {
      return;
    }
    boolean due =
        batch.bytes() >= env.config().batchMaxBytes()
            || ticker.nanoTime() - batch.startedNanos() >= env.config().batchMaxFill().toNanos()
            || caughtUp
            || wanted
            || stopMode == StopSignal.Mode.DRAIN
            || completing;
    if (due) {
      dispatch(
          completing && !intake.inTransaction()
              ? WriteDurability.REQUIRE_DURABLE
              : WriteDurability.MAY_DEFER);
    }
  }

  /**
   * Sends an empty {@code REQUIRE_DURABLE} write when accepted work waits for durability and the
   * stream was quiet for {@code batchMaxFill}, or the role wants one.
   */
  void maybeBarrier() {
    // a chunk read waits for this stream's writes to be durable: also inside a transaction
    boolean urgent = role.urgentDurability();
    if ((intake.inTransaction() && !urgent)
        || !batch.isEmpty()
        || window.inFlight() > 0
        || !window.hasAcceptedNotDurable()
        || env.stop().isRequested()) {
      return;
    }
    boolean quiet = ticker.nanoTime() - lastDispatchNanos >= env.config().batchMaxFill().toNanos();
    if (quiet || urgent || role.wantsDurabilityBarrier(source.lastReceivedLsn())) {
      dispatch(WriteDurability.REQUIRE_DURABLE);
    }
  }

  private void dispatch(WriteDurability durability) {
    EventBatch.Taken taken = batch.take();
    lastDispatchNanos = ticker.nanoTime();
    long started = lastDispatchNanos;
    env.metrics().inFlight(1);
    if (!taken.events().isEmpty()) {
      env.metrics()
          .eventsDelivered(taken.events().size() - taken.markers(), taken.markers(), taken.bytes());
    }
    // the window registers the result before the destination can answer it
    DestinationCalls.invoke(
        env.destination(),
        "writeEvents",
        r -> {
          window.track(r, taken.commitEnd(), durability);
          r.completion()
              .thenRun(
                  () -> {
                    env.metrics().inFlight(-1);
                    env.metrics().batchLatency("events", ticker.nanoTime() - started);
                  });
          env.destination().writeEvents(role.streamId(), taken.events(), durability, r);
        });
  }
}
