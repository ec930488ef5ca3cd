package org.pgetl.core.internal.engine;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.jspecify.annotations.Nullable;
import org.pgetl.PipelineConfig;
import org.pgetl.core.internal.apply.ApplyLoop;
import org.pgetl.core.internal.decode.PgOutputDecoder;
import org.pgetl.core.internal.decode.StreamingMode;
import org.pgetl.core.internal.pg.ApplicationNames;
import org.pgetl.core.internal.pg.CreatedSlot;
import org.pgetl.core.internal.pg.PgErrors;
import org.pgetl.core.internal.pg.ReplicationConnection;
import org.pgetl.core.internal.pg.ReplicationStream;
import org.pgetl.core.internal.pg.ServerVersion;
import org.pgetl.core.internal.pg.SlotAdmin;
import org.pgetl.core.internal.pg.SlotInfo;
import org.pgetl.core.internal.pg.SlotNames;
import org.pgetl.core.internal.pg.SnapshotMode;
import org.pgetl.error.ErrorKind;
import org.pgetl.error.EtlException;
import org.pgetl.error.RetryDirective;
import org.pgetl.model.Lsn;
import org.pgetl.model.TableId;
import org.pgetl.store.PipelineStore.ProgressKey;
import org.pgetl.store.TableState;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The apply worker of one generation: connects, finds (or creates) the pipeline's apply slot,
 * starts streaming at {@code max(stored progress, slot confirmed_flush_lsn)} and runs the {@link
 * ApplyLoop} with the {@link ApplyStreamRole}. A failure whose kind is retried {@code TIMED}
 * reconnects after a growing delay and resumes from the durable point, so nothing is lost: an
 * outage of the source or of the store (connection lost, server shut down or in recovery) is
 * retried for as long as it lasts, other timed failures {@code retryMaxAttempts} times in a row.
 * Any other failure stops the pipeline, and so does an {@link Error}.
 *
 * <p>A slot that is gone (invalidated by the server, or missing) while tables had been synced
 * through it means changes were lost: the worker fails with a clear error, or — with {@code
 * RECREATE} — asks the supervisor to stop the generation, copy every table again and start anew
 * ({@link EngineContext#requestResync}), so that no table-sync worker runs while states are reset.
 */
final class ApplyWorker implements Runnable {
  private static final Logger LOG = LoggerFactory.getLogger(ApplyWorker.class);

  private final EngineContext ctx;
  private final String pipelineId;
  private final String slotName;

  ApplyWorker(EngineContext ctx) {
    this.ctx = ctx;
    this.pipelineId = ctx.config.pipelineId();
    this.slotName = SlotNames.apply(pipelineId);
  }

  @Override
  public void run() {
    // retries in a row: all of them set the delay; only those of bounded kinds count against
    // retryMaxAttempts, so an outage before a destination failure does not use up its budget
    int attempts = 0;
    int bounded = 0;
    while (!ctx.stop.isRequested()) {
      Lsn[] progressed = {null};
      try {
        runOnce(progressed);
        return;
      } catch (EtlException e) {
        if (ctx.stop.isRequested()) {
          LOG.info("pipeline {}: apply worker stopped ({})", pipelineId, e.getMessage());
          ctx.stop.noteIncomplete(e.getMessage());
          return;
        }
        if (progressed[0] != null) {
          attempts = 0;
          bounded = 0;
        }
        boolean outage = Backoff.isOutage(e.kind());
        if (e.directive() == RetryDirective.TIMED
            && (outage || bounded < ctx.config.retryMaxAttempts())) {
          Duration delay = Backoff.delay(ctx.config, attempts);
          attempts++;
          if (!outage) {
            bounded++;
          }
          ctx.errors.record(e);
          LOG.warn(
              "pipeline {}: apply worker failed ({}); reconnecting in {} (attempt {}{})",
              pipelineId,
              e.getMessage(),
              delay,
              outage ? attempts : bounded,
              outage ? ", retried while the outage lasts" : " of " + ctx.config.retryMaxAttempts());
          if (!pause(delay)) {
            return;
          }
        } else {
          LOG.error(
              "pipeline {}: apply worker failed: {} — {}", pipelineId, e.getMessage(), e.hint());
          ctx.errors.fatal(e);
          ctx.shutdown.request();
          return;
        }
      } catch (RuntimeException | Error e) {
        EtlException panic =
            new EtlException(ErrorKind.WORKER_PANIC, "apply worker died", e.toString(), e);
        LOG.error("pipeline {}: apply worker died", pipelineId, e);
        ctx.errors.fatal(panic);
        ctx.shutdown.request();
        return;
      }
    }
  }

  /** Waits for the delay unless a stop comes first; false when it did. */
  private boolean pause(Duration delay) {
    java.util.concurrent.CountDownLatch stopped = new java.util.concurrent.CountDownLatch(1);
    Runnable unregister = ctx.stop.onRequest(stopped::countDown);
    try {
      return !ctx.stop.isRequested()
          && !stopped.await(delay.toNanos(), java.util.concurrent.TimeUnit.NANOSECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return false;
    } finally {
      unregister.run();
    }
  }

  @SuppressWarnings("try") // the StopSignal.Guard is held only for its close()
  private void runOnce(Lsn[] progressed) {
    ctx.board.clearReceived(); // a new stream reads again from the durable point
    FoundSlot found;
    try (Connection admin = ctx.connector.openPlain(ApplicationNames.catalog(pipelineId))) {
      found = findSlot(admin);
    } catch (SQLException e) {
      throw PgErrors.map(e, "apply worker connection failed");
    }
    if (found.lost()) {
      return; // the supervisor copies every table again with a new slot
    }
    if (found.slot() == null) {
      ctx.store.deleteProgress(ProgressKey.apply());
      // the tables' copies start now, beside the slot's creation: a copy under its own snapshot
      // does not need the apply slot until its hand-off, and a chunked one waits for it
      new ApplyStreamRole(ctx).startNeededWorkers();
    }
    try (ReplicationConnection repl =
        ctx.connector.openReplication(ApplicationNames.apply(pipelineId))) {
      Lsn start;
      try (StopSignal.Guard guard = ctx.stop.abortOnStop(repl.jdbc(), "apply slot creation")) {
        start = startLsn(repl, found.slot());
      }
      ctx.applySlotExists();
      // reads of chunks whose rows wait for this stream's durability go back: it replays
      ctx.chunks.streamStarted(start);
      ReplicationStream stream = repl.startStreaming(ctx.streamOptions(slotName, start));
      LOG.info("pipeline {}: apply worker streams slot {} from {}", pipelineId, slotName, start);
      ctx.board.progressed();
      ApplyStreamRole role = new ApplyStreamRole(ctx);
      role.startNeededWorkers();
      try (CatalogSchemaResolver resolver =
          new CatalogSchemaResolver(ctx.connector, ApplicationNames.apply(pipelineId))) {
        ApplyLoop loop =
            new ApplyLoop(
                ctx.env,
                role,
                stream,
                new PgOutputDecoder(ctx.streams.protocolVersion(), ctx.streams.streaming()),
                resolver,
                start);
        try {
          loop.run();
        } finally {
          if (loop.durable().isAfter(start)) {
            progressed[0] = loop.durable();
          }
        }
      } finally {
        stream.close();
      }
    }
  }

  /** Whether the apply slot is a failover slot on the server this connection reached. */
  private boolean failover(ReplicationConnection repl) {
    return repl.serverVersion()
        .failoverSlots(ctx.config.failoverSlots(), ctx.config.temporarySlots());
  }

  /**
   * The apply slot as found before streaming: the slot, or null when it must be created; {@code
   * lost} when it was lost and the supervisor must copy every table again.
   */
  private record FoundSlot(@Nullable SlotInfo slot, boolean lost) {}

  /**
   * Looks the apply slot up; a slot invalidated, or missing although changes were streamed through
   * it, either fails the pipeline or asks the supervisor to copy every table again.
   */
  private FoundSlot findSlot(Connection admin) {
    SlotAdmin slots = new SlotAdmin(admin, ctx.ticker);
    Optional<SlotInfo> slot = slots.find(slotName);
    String lost = null;
    if (slot.isPresent() && slot.get().isInvalidated()) {
      lost =
          "the apply slot "
              + slotName
              + " was invalidated by the server (wal_status lost, reason: "
              + slot.get().invalidationReason()
              + ")";
    } else if (slot.isEmpty() && streamedBefore()) {
      lost =
          "the apply slot "
              + slotName
              + " is missing although tables were replicated through it (dropped by hand, or"
              + " lost in a failover): the changes made since are gone from the server";
    }
    if (lost != null) {
      if (ctx.config.invalidatedSlotBehavior() == PipelineConfig.InvalidatedSlotBehavior.FAIL) {
        throw new EtlException(
            slot.isPresent()
                ? ErrorKind.REPLICATION_SLOT_INVALIDATED
                : ErrorKind.REPLICATION_SLOT_NOT_FOUND,
            lost,
            "copy every table again: set invalidatedSlotBehavior=RECREATE (it does so by itself),"
                + " or reset the pipeline's table states");
      }
      LOG.warn("pipeline {}: {}; every table is copied again with a new slot", pipelineId, lost);
      ctx.requestResync(lost);
      return new FoundSlot(null, true);
    }
    return new FoundSlot(slot.orElse(null), false);
  }

  /** Returns where to start streaming, creating the slot when there is none yet. */
  private Lsn startLsn(ReplicationConnection repl, @Nullable SlotInfo slot) {
    if (slot == null) {
      CreatedSlot created =
          repl.createSlot(
              slotName,
              SnapshotMode.NOEXPORT_SNAPSHOT,
              ctx.config.temporarySlots(),
              failover(repl));
      LOG.info(
          "pipeline {}: created apply slot {} at {}",
          pipelineId,
          slotName,
          created.consistentPoint());
      return created.consistentPoint();
    }
    repl.matchFailover(slot, failover(repl));
    Lsn progress = ctx.store.progress(ProgressKey.apply()).orElse(Lsn.ZERO);
    Lsn confirmed = slot.confirmedFlushLsn() == null ? Lsn.ZERO : slot.confirmedFlushLsn();
    return Lsn.max(progress, confirmed);
  }

  /**
   * True when changes were already streamed through the apply slot: a table is {@code SyncDone} or
   * {@code Ready} (or was, before an error), or apply progress was stored.
   */
  private boolean streamedBefore() {
    if (ctx.store.progress(ProgressKey.apply()).isPresent()) {
      return true;
    }
    for (Map.Entry<TableId, TableState> e : ctx.tables.snapshot().entrySet()) {
      TableState s = e.getValue();
      if (s.type() == TableState.Type.READY || s.type() == TableState.Type.SYNC_DONE) {
        return true;
      }
      if (s.type() == TableState.Type.ERRORED) {
        for (TableState earlier : ctx.store.tableStateHistory(e.getKey())) {
          if (earlier.type() == TableState.Type.READY
              || earlier.type() == TableState.Type.SYNC_DONE) {
            return true;
          }
        }
      }
    }
    return false;
  }

  /**
   * Decides the stream settings of a generation from the configuration and the server: protocol 1,
   * or 2 with streaming; binary only when the server supports it and every published column's type
   * decodes from binary.
   *
   * @param config the configuration
   * @param version the server version
   * @param admin a plain connection to the source
   * @param resolver resolves types
   * @return the settings
   */
  static StreamSettings decide(
      PipelineConfig config,
      ServerVersion version,
      Connection admin,
      CatalogSchemaResolver resolver) {
    boolean pg14 = version.major() >= 14;
    boolean streaming = config.pgoutputStreaming() && pg14;
    boolean binary = config.pgoutputBinary() && pg14;
    if (config.pgoutputStreaming() && !pg14) {
      LOG.info(
          "pipeline {}: streaming large transactions needs PostgreSQL 14+; protocol 1 is used",
          config.pipelineId());
    }
    if (binary) {
      List<Integer> types = publishedTypes(admin, config.publication());
      if (!resolver.allDecodeBinary(types)) {
        LOG.warn(
            "pipeline {}: a published column has a type without a binary decoder; pgoutput values"
                + " stay in text form",
            config.pipelineId());
        binary = false;
      }
    }
    int proto = streaming ? 2 : 1;
    return new StreamSettings(
        proto, binary, streaming ? StreamingMode.ON : StreamingMode.OFF, pg14);
  }

  private static List<Integer> publishedTypes(Connection admin, String publication) {
    String sql =
        "SELECT DISTINCT a.atttypid::bigint FROM pg_attribute a"
            + " JOIN (SELECT DISTINCT relid FROM pg_get_publication_tables(?)) p"
            + " ON a.attrelid = p.relid WHERE a.attnum > 0 AND NOT a.attisdropped";
    List<Integer> out = new ArrayList<>();
    try (PreparedStatement ps = admin.prepareStatement(sql)) {
      ps.setString(1, publication);
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          out.add((int) rs.getLong(1));
        }
      }
    } catch (SQLException e) {
      throw PgErrors.map(e, "could not read the column types of publication " + publication);
    }
    return out;
  }
}
