package org.pgetl;

import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import org.jspecify.annotations.Nullable;
import org.pgetl.lifecycle.LifecycleState;
import org.pgetl.model.Lsn;
import org.pgetl.model.TableId;
import org.pgetl.model.TableName;
import org.pgetl.store.TableState;

/**
 * A snapshot of a pipeline's progress, from {@link Pipeline#status()}.
 *
 * @param pipelineId the pipeline id
 * @param phase what the pipeline is doing
 * @param lifecycle the destination's effective lifecycle state; null until the lifecycle row was
 *     read once (nothing is read or delivered before)
 * @param tables each table's name (null while not known), state (an {@code Errored} state carries
 *     its error) and rows copied
 * @param applyLsn the apply stream's stored durable progress
 * @param lagBytes the server's WAL end minus the slot's confirmed flush position, from the last
 *     sample; -1 when unknown
 * @param lagTime how far the destination is behind in time: from the commit of the oldest
 *     transaction the apply stream received but the destination has not made durable, to now; zero
 *     when nothing waits
 * @param lagSampledAt when {@code lagBytes} was sampled, or null before the first sample
 * @param errors recent failures (table errors, retried connection losses), oldest first
 * @param epoch the epoch of the lease this instance holds; 0 while it holds none (standby)
 * @param leaseHolder while this instance is a standby, the instance that holds the lease, as last
 *     seen; null otherwise
 * @param lastError the most recent of {@code errors}, with when it happened and whether the
 *     pipeline has recovered since; null when nothing failed
 * @param heldBy what holds the apply stream back, named by the server, from the last lag sample: a
 *     standby listed in {@code synchronized_standby_slots} that has not confirmed the WAL the
 *     pipeline waits for (PostgreSQL 17+ with failover slots); null when nothing does
 */
// its signatures carry @Nullable of org.jspecify, read at compile time only (requires static)
@SuppressWarnings("exports")
public record PipelineStatus(
    String pipelineId,
    Phase phase,
    @Nullable LifecycleState lifecycle,
    Map<TableId, TableStatus> tables,
    Lsn applyLsn,
    long lagBytes,
    Duration lagTime,
    @Nullable Instant lagSampledAt,
    List<String> errors,
    long epoch,
    org.pgetl.store.PipelineStore.@Nullable LeaseHolder leaseHolder,
    @Nullable LastError lastError,
    @Nullable String heldBy) {

  /** What a pipeline is doing. */
  public enum Phase {
    /** Created, not started. */
    CREATED,
    /** Started; waiting to read the destination's lifecycle state before any intake. */
    STARTING,
    /**
     * Started as a standby: another instance holds the pipeline's lease; takes over when it frees.
     */
    STANDBY,
    /** Copying and streaming. */
    RUNNING,
    /** Paused by the lifecycle. */
    PAUSED,
    /** Drained by the lifecycle, idle. */
    DRAINED,
    /** Retired by the lifecycle. */
    RETIRED,
    /** Shutting down. */
    STOPPING,
    /** Stopped cleanly. */
    STOPPED,
    /** Stopped by a failure ({@link Pipeline#failure()}). */
    FAILED
  }

  /**
   * One table's status.
   *
   * @param name the table's name, or null while not known
   * @param state its state; an {@link TableState.Errored} state carries the error, its hint and
   *     when it is retried
   * @param rowsCopied the rows of its current (or last finished) copy
   * @param chunks the progress of its copy in chunks, or null when it is not copied in chunks now
   */
  public record TableStatus(
      @Nullable TableName name, TableState state, long rowsCopied, @Nullable ChunkProgress chunks) {

    /**
     * A table not copied in chunks now.
     *
     * @param name the table's name, or null while not known
     * @param state its state
     * @param rowsCopied the rows of its current (or last finished) copy
     */
    public TableStatus(@Nullable TableName name, TableState state, long rowsCopied) {
      this(name, state, rowsCopied, null);
    }
  }

  /**
   * The progress of a table copied in chunks.
   *
   * @param chunksDone the chunks whose rows are durable, kept ones included
   * @param chunks the chunks in all (one-key re-reads included)
   * @param chunksKept the chunks that were done when this run of the copy began (a resumed copy)
   * @param rowsCopied the rows of the chunks done, kept ones included
   * @param bytesCopied the bytes of those rows as the binary COPY sent them (close to the table's
   *     size on disk)
   * @param bytesPerSecond the rate of this run of the copy (0 until a chunk is done)
   * @param eta the time left at that rate, or null while not known
   */
  public record ChunkProgress(
      int chunksDone,
      int chunks,
      int chunksKept,
      long rowsCopied,
      long bytesCopied,
      double bytesPerSecond,
      @Nullable Duration eta) {}

  /**
   * The most recent failure of a pipeline, with its time and whether it still matters.
   *
   * <p>An error is <em>recovered</em> when, after it, the apply stream worked again (it streamed
   * after a reconnection, stored its progress, or read everything the server had), no table is in
   * its {@code Errored} state, and the pipeline has not failed: what failed is working again, and
   * the error is history rather than a current problem.
   *
   * @param message the failure's message (kind, description, detail and hint)
   * @param at when it was recorded
   * @param recovered whether the pipeline has recovered since
   */
  public record LastError(String message, Instant at, boolean recovered) {
    /** Validates the components. */
    public LastError {
      Objects.requireNonNull(message, "message");
      Objects.requireNonNull(at, "at");
    }

    /**
     * Returns how long ago the error happened, never negative.
     *
     * @param now the current time
     * @return the age
     */
    public Duration age(Instant now) {
      Duration d = Duration.between(at, now);
      return d.isNegative() ? Duration.ZERO : d;
    }
  }

  /** Copies the collections. */
  public PipelineStatus {
    tables = Map.copyOf(tables);
    errors = List.copyOf(errors);
  }

  /**
   * Creates a status without {@code lastError} and {@code heldBy}, as before they existed.
   *
   * @param pipelineId the pipeline id
   * @param phase what the pipeline is doing
   * @param lifecycle the destination's lifecycle state, or null
   * @param tables each table's status
   * @param applyLsn the stored apply progress
   * @param lagBytes the lag in bytes, -1 when unknown
   * @param lagTime the lag in time
   * @param lagSampledAt when the lag was sampled, or null
   * @param errors recent failures, oldest first
   * @param epoch the lease epoch, 0 for a standby
   * @param leaseHolder the instance holding the lease, or null
   */
  public PipelineStatus(
      String pipelineId,
      Phase phase,
      @Nullable LifecycleState lifecycle,
      Map<TableId, TableStatus> tables,
      Lsn applyLsn,
      long lagBytes,
      Duration lagTime,
      @Nullable Instant lagSampledAt,
      List<String> errors,
      long epoch,
      org.pgetl.store.PipelineStore.@Nullable LeaseHolder leaseHolder) {
    this(
        pipelineId,
        phase,
        lifecycle,
        tables,
        applyLsn,
        lagBytes,
        lagTime,
        lagSampledAt,
        errors,
        epoch,
        leaseHolder,
        null,
        null);
  }
}
