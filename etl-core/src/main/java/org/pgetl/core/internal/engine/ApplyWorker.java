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
import org.pgetl.core.internal.pg.StreamOptions;
import org.pgetl.error.ErrorKind;
import org.pgetl.error.EtlException;
import org.pgetl.error.RetryDirective;
import org.pgetl.model.Lsn;
import org.pgetl.model.TableId;
import org.pgetl.store.ProgressKey;
import org.pgetl.store.TableState;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The apply worker of one generation: connects, finds (or creates) the pipeline's apply slot,
 * starts streaming at {@code max(stored progress, slot confirmed_flush_lsn)} and runs the {@link
 * ApplyLoop} with the {@link ApplyStreamRole}. A failure whose kind is retried {@code TIMED}
 * (connection lost, server restarting) reconnects after a growing delay and resumes from the
 * durable point, so nothing is lost; any other failure stops the pipeline.
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
    int attempts = 0;
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
        }
        if (e.directive() == RetryDirective.TIMED && attempts < ctx.config.retryMaxAttempts()) {
          Duration delay = Backoff.delay(ctx.config, attempts);
          attempts++;
          ctx.errors.record(e);
          LOG.warn(
              "pipeline {}: apply worker failed ({}); reconnecting in {} (attempt {} of {})",
              pipelineId,
              e.getMessage(),
              delay,
              attempts,
              ctx.config.retryMaxAttempts());
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
      } catch (RuntimeException e) {
        EtlException panic =
            new EtlException(ErrorKind.WORKER_PANIC, "apply worker died", e.toString(), e);
        LOG.error("pipeline {}: apply worker died", pipelineId, e);
        ctx.errors.fatal(panic);
        ctx.shutdown.request();
        return;
      }
    }
  }

  private boolean pause(Duration delay) {
    long end = System.nanoTime() + delay.toNanos();
    while (!ctx.stop.isRequested()) {
      long left = end - System.nanoTime();
      if (left <= 0) {
        return true;
      }
      java.util.concurrent.locks.LockSupport.parkNanos(Math.min(left, 50_000_000L));
    }
    return false;
  }

  private void runOnce(Lsn[] progressed) {
    try (ReplicationConnection repl =
        ctx.connector.openReplication(ApplicationNames.apply(pipelineId))) {
      Lsn start;
      try (Connection admin = ctx.connector.openPlain(ApplicationNames.catalog(pipelineId))) {
        start = startLsn(repl, admin);
      }
      ReplicationStream stream = repl.startStreaming(streamOptions(ctx, slotName, start));
      LOG.info("pipeline {}: apply worker streams slot {} from {}", pipelineId, slotName, start);
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
    } catch (SQLException e) {
      throw PgErrors.map(e, "apply worker connection failed");
    }
  }

  private Lsn startLsn(ReplicationConnection repl, Connection admin) {
    SlotAdmin slots = new SlotAdmin(admin);
    Optional<SlotInfo> slot = slots.find(slotName);
    if (slot.isPresent() && slot.get().isInvalidated()) {
      if (ctx.config.invalidatedSlotBehavior() == PipelineConfig.InvalidatedSlotBehavior.FAIL) {
        throw new EtlException(
            ErrorKind.REPLICATION_SLOT_INVALIDATED,
            "the apply slot " + slotName + " was invalidated by the server (wal_status lost)",
            "reason: "
                + slot.get().invalidationReason()
                + "; set invalidatedSlotBehavior=RECREATE to copy every table again");
      }
      LOG.warn(
          "pipeline {}: apply slot {} was invalidated; recreating it and copying every table again",
          pipelineId,
          slotName);
      ctx.store.resetAllTablesForResync();
      for (Map.Entry<TableId, TableState> e : ctx.store.loadTableStates().entrySet()) {
        ctx.tables.publish(e.getKey(), e.getValue());
      }
      slots.dropIfExists(slotName, SlotAdmin.DROP_TIMEOUT);
      slot = Optional.empty();
    }
    if (slot.isEmpty()) {
      long ready =
          ctx.tables.snapshot().values().stream()
              .filter(
                  s -> s.type() == TableState.Type.READY || s.type() == TableState.Type.SYNC_DONE)
              .count();
      if (ready > 0) {
        LOG.warn(
            "pipeline {}: apply slot {} is missing while {} tables were synced; changes made while"
                + " it was missing are not replicated (reset those tables to copy them again)",
            pipelineId,
            slotName,
            ready);
      }
      ctx.store.deleteProgress(ProgressKey.apply());
      CreatedSlot created = repl.createSlot(slotName, SnapshotMode.NOEXPORT_SNAPSHOT);
      LOG.info(
          "pipeline {}: created apply slot {} at {}",
          pipelineId,
          slotName,
          created.consistentPoint());
      return created.consistentPoint();
    }
    Lsn progress = ctx.store.progress(ProgressKey.apply()).orElse(Lsn.ZERO);
    Lsn confirmed =
        slot.get().confirmedFlushLsn() == null ? Lsn.ZERO : slot.get().confirmedFlushLsn();
    return Lsn.max(progress, confirmed);
  }

  /**
   * Returns the options of a stream of this generation.
   *
   * @param ctx the generation
   * @param slot the slot
   * @param start where to start
   * @return the options
   */
  static StreamOptions streamOptions(EngineContext ctx, String slot, Lsn start) {
    StreamSettings s = ctx.streams;
    return StreamOptions.of(slot, start, List.of(ctx.config.publication()))
        .withProtoVersion(s.protocolVersion())
        .withMessages(s.messages())
        .withBinary(s.binary())
        .withStreaming(
            s.streaming() == StreamingMode.OFF
                ? StreamOptions.Streaming.OFF
                : StreamOptions.Streaming.ON)
        .withStatusInterval(ctx.config.statusInterval());
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
      LOG.warn(
          "pipeline {}: pgoutputStreaming needs PostgreSQL 14+; streaming stays off",
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
