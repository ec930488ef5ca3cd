package org.pgetl.core.internal.apply;

import java.nio.ByteBuffer;
import java.util.concurrent.locks.LockSupport;
import org.pgetl.core.internal.decode.PgOutputDecoder;
import org.pgetl.core.internal.engine.StopSignal;
import org.pgetl.core.internal.pg.MessageSource;
import org.pgetl.error.EtlException;
import org.pgetl.model.Lsn;
import org.pgetl.model.TableId;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The change loop of one replication stream, shared by the apply worker and the table-sync workers'
 * catch-up: it reads pgoutput messages from a {@link MessageSource}, turns the changes this stream
 * owns into events, batches them by size and time, dispatches them to the destination with a
 * bounded number of writes in flight, advances and stores durable progress from the answers, and
 * reports feedback to the source.
 *
 * <h2>Implementation notes</h2>
 *
 * The loop is the thread and the order of steps; the work is in two parts that share the {@link
 * EventBatch} being filled:
 *
 * <ul>
 *   <li>{@link TransactionAssembler} — intake: transactions, ordinals, ownership, the Begin and
 *       Relation announcements, and the spool of streamed transactions and their replay;
 *   <li>{@link BatchDispatcher} — output: batching triggers, the {@link WriteWindow} of writes in
 *       flight, durable progress and its storage, the flush position reported to the source, and
 *       the stop rules.
 * </ul>
 *
 * One thread runs {@link #run()} and owns the source; answers arrive on any thread and are queued
 * by the window, which wakes this thread. Time is read from the environment's ticker only. Each
 * iteration: apply the answers, store progress when due, settle a stop, let the role run its
 * timers, confirm the received position when idle, dispatch when a trigger fires, send a barrier
 * when accepted work waits, then read one message (waiting in the socket for data: at most 20 ms, 1
 * ms with writes in flight, so that answers and stops, which cannot cut that wait short, are seen
 * as soon as before) — or, while intake is paused, keep the status updates going and park until
 * woken.
 *
 * <p>The changes of a streamed in-progress transaction go to its file in the {@link StreamSpool} as
 * they arrive, undecoded beyond their kind and xid. At its Stream Commit the transaction opens like
 * any other, and until its last change the loop reads from the spool instead of the source: the
 * same number of changes per iteration as it could read, the same batch limits, write window and
 * back-pressure, the same stops, and status updates in between; the commit ends it. So a streamed
 * transaction of any size reaches the destination in batches of {@code batchMaxBytes}, the heap
 * holds at most (in-flight writes + 1) batches of it, and durable progress moves at its commit
 * only. A failure of the spool (its disk cap, an I/O error) is no table's fault: it stops the
 * pipeline.
 */
public final class ApplyLoop {
  private static final Logger LOG = LoggerFactory.getLogger(ApplyLoop.class);
  private static final long READ_WAIT_IDLE_NANOS = 20_000_000L;

  /**
   * The read wait once the stream has been quiet for {@link #SETTLE_AFTER_NANOS} and the role is
   * settled: data still wakes the read at once, this only spaces out the loop's own checks.
   */
  private static final long READ_WAIT_SETTLED_NANOS = 100_000_000L;

  private static final long SETTLE_AFTER_NANOS = 1_000_000_000L;
  private static final long READ_WAIT_BUSY_NANOS = 1_000_000L;
  private static final long PARK_NANOS = 5_000_000L;
  private static final long HOLD_PARK_NANOS = 1_000_000L;

  /** How the loop ended. */
  public enum Exit {
    /** The role finished its work (a table caught up). */
    COMPLETED,
    /** The loop stopped (shutdown, lifecycle stop, abandoned write); the next start resumes. */
    PAUSED
  }

  private final LoopEnv env;
  private final StreamRole role;
  private final MessageSource source;
  private final StreamRole.Control control;
  private final Thread owner;
  private final EventBatch batch;
  private final TransactionAssembler intake;
  private final BatchDispatcher output;

  /** When the current run of reads that found nothing began (ticker nanos); 0 after a message. */
  private long quietSince;

  /**
   * Creates the loop of a started stream, owned by the calling thread (which must call {@link
   * #run()}).
   *
   * @param env what every loop shares
   * @param role the stream's role
   * @param source the started stream; this loop's thread becomes its owner
   * @param decoder a decoder for the stream's protocol version and streaming mode
   * @param resolver turns RELATION messages into schemas and codecs
   * @param startDurable the durable point the stream started from
   */
  public ApplyLoop(
      LoopEnv env,
      StreamRole role,
      MessageSource source,
      PgOutputDecoder decoder,
      SchemaResolver resolver,
      Lsn startDurable) {
    this.env = env;
    this.role = role;
    this.source = source;
    this.owner = Thread.currentThread();
    this.control = new Control();
    TableId syncTable = role.streamId().table(); // a table-sync stream's table, null for apply
    StreamSpool spool =
        new StreamSpool(env.spool(), syncTable == null ? "apply" : "sync-" + syncTable.oid());
    this.batch = new EventBatch(env.ticker());
    this.intake =
        new TransactionAssembler(
            env,
            role,
            control,
            decoder,
            new RelationCache(resolver, env.store()),
            spool,
            batch,
            source.slotName());
    WriteWindow window =
        new WriteWindow(env.config().maxInFlightWrites(), () -> LockSupport.unpark(owner));
    this.output =
        new BatchDispatcher(env, role, control, source, batch, intake, window, startDurable);
  }

  /**
   * Runs the loop on the calling thread until the role completes or the loop stops.
   *
   * @return how it ended
   * @throws EtlException when the stream, the destination or the store fails
   */
  public Exit run() {
    Runnable unregister = env.stop().onRequest(() -> LockSupport.unpark(owner));
    try {
      return loop();
    } finally {
      unregister.run();
      intake.close();
    }
  }

  private Exit loop() {
    boolean caughtUp = false;
    // the last read found the stream quiet, and the open transaction began after such a read (or
    // with a message the source had to wait for)
    boolean quiet = false;
    boolean txAfterQuiet = false;
    while (true) {
      if (env.stop().mode() == StopSignal.Mode.FENCED) {
        // the lease is lost: no answer is applied, no store write, no feedback, no write
        LOG.info("pipeline {}: {} stream fenced", env.config().pipelineId(), role.describe());
        return Exit.PAUSED;
      }
      output.applyAnswers();
      output.persistIfDue();
      if (output.abandoned()) {
        output.finalFeedback();
        return Exit.PAUSED;
      }
      StopSignal.Mode stopMode = env.stop().mode();
      output.observeStop(stopMode);
      if (output.completed()) {
        output.finalFeedback();
        return Exit.COMPLETED;
      }
      if (stopMode != StopSignal.Mode.NONE && output.stopSettled()) {
        output.finalFeedback();
        return Exit.PAUSED;
      }
      role.tick(control);
      Lsn idleAt = output.confirmIfIdle();
      if (idleAt != null) {
        role.whenIdle(idleAt, control);
        if (output.finished()) {
          continue;
        }
      } else {
        Lsn quietAt = output.idleButForOpenStreamedTransactions();
        if (quietAt != null) {
          role.whenIdleButForOpenStreamedTransactions(quietAt, control);
          if (output.finished()) {
            continue;
          }
        }
      }
      // a held change waits for a chunk whose rows wait for what is batched to be durable
      boolean holding = intake.holding();
      output.maybeDispatch(caughtUp || holding, stopMode);
      output.maybeBarrier();
      if (holding && output.canRead(stopMode)) {
        intake.retryHeld();
        if (intake.holding()) {
          source.sendStatusIfDue();
          LockSupport.parkNanos(HOLD_PARK_NANOS);
        }
        caughtUp = false;
        continue;
      }
      if (output.canRead(stopMode)) {
        if (intake.replaying()) {
          intake.replay(env.config().batchMaxBytes());
          source.sendStatusIfDue();
          caughtUp = false;
        } else {
          ByteBuffer msg = source.readNext(readWaitNanos());
          caughtUp = msg == null;
          if (msg == null) {
            quiet = true;
            if (quietSince == 0) {
              quietSince = env.ticker().nanoTime();
            }
          } else {
            quietSince = 0;
            boolean afterQuiet = quiet || source.lastReadWaited();
            boolean wasInTx = intake.inTransaction();
            intake.handle(msg, source.lastMessageLsn());
            boolean inTx = intake.inTransaction();
            if (!wasInTx && inTx) {
              txAfterQuiet = afterQuiet;
            }
            quiet = false;
            // a lone transaction (it began after a quiet read, nothing is in flight) goes out at
            // its commit: asking the stream for more would wait in pgjdbc's poll for nothing
            caughtUp = wasInTx && !inTx && txAfterQuiet && output.inFlight() == 0;
          }
        }
      } else {
        source.sendStatusIfDue();
        LockSupport.parkNanos(PARK_NANOS);
      }
    }
  }

  /**
   * A read with something buffered only checks; otherwise it waits for data a little, longer once
   * the stream has been quiet for a second with nothing in flight and the role settled (an idle
   * pipeline then wakes 10 times a second instead of 50).
   */
  private long readWaitNanos() {
    if (!batch.isEmpty()) {
      return 0;
    }
    if (output.inFlight() > 0) {
      return READ_WAIT_BUSY_NANOS;
    }
    boolean settled =
        quietSince != 0
            && env.ticker().nanoTime() - quietSince >= SETTLE_AFTER_NANOS
            && role.settled();
    return settled ? READ_WAIT_SETTLED_NANOS : READ_WAIT_IDLE_NANOS;
  }

  // ---- the role's view

  private final class Control implements StreamRole.Control {
    @Override
    public void completeAfterThisTransaction() {
      output.completeAfterThisTransaction();
    }

    @Override
    public void finish() {
      output.finish();
    }

    @Override
    public void keepAlive() {
      source.sendStatusIfDue();
    }

    @Override
    public boolean stopRequested() {
      return env.stop().isRequested() || output.abandoned();
    }

    @Override
    public long writeFence() {
      return output.writeFence();
    }

    @Override
    public boolean answeredBefore(long fence) {
      return output.answeredBefore(fence);
    }
  }

  /**
   * Returns the durable point of this stream.
   *
   * @return the LSN up to which everything is durable
   */
  public Lsn durable() {
    return output.durable();
  }
}
