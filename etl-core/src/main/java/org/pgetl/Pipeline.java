package org.pgetl;

import java.time.Duration;
import java.util.Objects;
import java.util.Optional;
import org.jspecify.annotations.Nullable;
import org.pgetl.core.internal.engine.Engine;
import org.pgetl.core.internal.engine.EngineMetrics;
import org.pgetl.destination.Destination;
import org.pgetl.error.ErrorKind;
import org.pgetl.error.EtlException;
import org.pgetl.model.TableName;
import org.pgetl.store.PipelineStore;
import org.pgetl.store.PipelineStore.TableRequest;

/**
 * A replication pipeline: copies every table of a publication into a {@link Destination}, then
 * streams every committed change, keeping its progress in a {@link PipelineStore}.
 *
 * <pre>{@code
 * try (Pipeline pipeline = Pipeline.create(config, store, destination)) {
 *   pipeline.start();
 *   ...                      // runs on its own threads
 * }                          // close(): shut down cleanly and wait
 * }</pre>
 *
 * <p>{@link #start()} runs on the caller's thread and fails fast on a wrong password, a missing
 * publication or a destination that does not start. Then the pipeline runs until {@link
 * #shutdown()} (or {@code close()}), a fatal failure, or a destination answering {@code
 * shutdown()}. Every method is thread-safe.
 */
// its signatures carry @Nullable of org.jspecify, read at compile time only (requires static)
@SuppressWarnings("exports")
public final class Pipeline implements AutoCloseable {
  private final PipelineConfig config;
  private final Shutdown shutdown = new Shutdown();
  private final Engine engine;

  private Pipeline(
      PipelineConfig config, PipelineStore store, Destination destination, EngineMetrics metrics) {
    this.config = config;
    this.engine = new Engine(config, store, destination, metrics, shutdown);
  }

  /**
   * Creates a pipeline; nothing is connected until {@link #start()}.
   *
   * @param config the configuration
   * @param store the store, scoped to the same pipeline id as the configuration
   * @param destination the destination
   * @return the pipeline
   * @throws EtlException of kind {@code CONFIG_ERROR} when the store belongs to another pipeline
   */
  public static Pipeline create(
      PipelineConfig config, PipelineStore store, Destination destination) {
    return create(config, store, destination, null);
  }

  /**
   * Creates a pipeline that reports metrics to a Micrometer {@code MeterRegistry}.
   *
   * @param config the configuration
   * @param store the store, scoped to the same pipeline id as the configuration
   * @param destination the destination
   * @param meterRegistry an {@code io.micrometer.core.instrument.MeterRegistry}, or null for none
   * @return the pipeline
   * @throws EtlException of kind {@code CONFIG_ERROR} when the store belongs to another pipeline or
   *     the registry is not a Micrometer registry
   */
  public static Pipeline create(
      PipelineConfig config,
      PipelineStore store,
      Destination destination,
      @Nullable Object meterRegistry) {
    Objects.requireNonNull(config, "config");
    Objects.requireNonNull(store, "store");
    Objects.requireNonNull(destination, "destination");
    if (!config.pipelineId().equals(store.pipelineId())) {
      throw new EtlException(
          ErrorKind.CONFIG_ERROR,
          "the store belongs to pipeline '"
              + store.pipelineId()
              + "', the configuration to '"
              + config.pipelineId()
              + "'");
    }
    EngineMetrics metrics =
        meterRegistry == null
            ? EngineMetrics.NONE
            : org.pgetl.core.internal.engine.Metrics.micrometer(
                meterRegistry, config.pipelineId(), destination.name());
    return new Pipeline(config, store, destination, metrics);
  }

  /**
   * Starts the pipeline: connects, runs the {@link Preflight} checks, sets up the store when it
   * needs it ({@link PipelineStore#setUp()}, after the checks passed), prepares the table states,
   * calls the destination's {@code startup}, and starts the workers. Returns once the workers run.
   * A failed preflight check leaves nothing behind: no slot, no state row, no store schema.
   *
   * @throws EtlException when the source cannot be reached (wrong password, no server), preflight
   *     checks fail (one exception naming every failed check, see {@link Preflight#failure}), the
   *     store fails, the destination fails to start, or the pipeline was already started
   */
  public void start() {
    engine.start();
  }

  /**
   * Asks the pipeline to stop: no new WAL intake, buffered batches flushed and their answers
   * awaited (at most {@code shutdownTimeout}), a last status update sent, then the destination's
   * {@code shutdown()}. Returns at once; idempotent.
   */
  public void shutdown() {
    shutdown.request();
  }

  /**
   * Waits until the pipeline stopped.
   *
   * @param timeout the longest wait
   * @return true when it stopped
   * @throws InterruptedException when interrupted
   */
  public boolean awaitTermination(Duration timeout) throws InterruptedException {
    return engine.awaitTermination(timeout);
  }

  /**
   * Requests shutdown and waits for it ({@code shutdownTimeout} plus a margin). Idempotent.
   *
   * @throws EtlException with the pipeline's failure, if it failed
   */
  @Override
  public void close() {
    shutdown.request();
    if (engine.phase() != PipelineStatus.Phase.CREATED) {
      try {
        if (!engine.awaitTermination(config.shutdownTimeout().plusSeconds(30))) {
          throw new EtlException(
              ErrorKind.INVALID_STATE,
              "pipeline " + config.pipelineId() + " did not stop in time",
              "its threads are named pgetl-*-" + config.pipelineId());
        }
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        return;
      }
    }
    Optional<EtlException> failure = engine.failure();
    if (failure.isPresent()) {
      throw failure.get();
    }
  }

  /**
   * Returns the shared shutdown handle: request shutdown from anywhere, or wait for it.
   *
   * @return the handle
   */
  public Shutdown shutdownHandle() {
    return shutdown;
  }

  /**
   * Returns the failure that stopped the pipeline (other workers' failures and the destination's
   * shutdown failure are suppressed in it).
   *
   * @return the failure, or empty while running or after a clean stop
   */
  public Optional<EtlException> failure() {
    return engine.failure();
  }

  /**
   * Returns a snapshot of the pipeline's state: each table's state, error and rows copied, the
   * apply LSN, the lag in bytes and in time, recent errors. Reads memory only: it never blocks on
   * the source or the store and never throws, also while they are unreachable.
   *
   * @return the status
   */
  public PipelineStatus status() {
    return engine.status();
  }

  /**
   * Registers a listener told of state changes, errors, lifecycle and phase changes and the stop,
   * on a thread of the pipeline's own. May be called before or after {@link #start()}.
   *
   * @param listener the listener
   */
  public void addListener(PipelineListener listener) {
    engine.addListener(Objects.requireNonNull(listener, "listener"));
  }

  /**
   * Copies one table again from scratch while the others keep streaming: its worker (if one runs)
   * stops, its state becomes {@code Init}, and its new copy starts with {@code dropTableForCopy}.
   * Carried out within a lifecycle poll interval by the running pipeline, or at the next start.
   *
   * @param table the table, as the publication has it
   * @return the stored request
   * @throws EtlException of kind {@code CONFIG_ERROR} when the table is not part of the pipeline,
   *     or {@code STATE_STORE_ERROR} when the store fails
   */
  public TableRequest resyncTable(TableName table) {
    return engine.request(
        Objects.requireNonNull(table, "table"), TableRequest.Action.RESYNC, "Pipeline.resyncTable");
  }

  /**
   * Retries an {@code Errored} table now (its state is rolled back one step), in the running
   * pipeline or at the next start.
   *
   * @param table the table
   * @return the stored request
   * @throws EtlException of kind {@code CONFIG_ERROR} when the table is not part of the pipeline,
   *     or {@code STATE_STORE_ERROR} when the store fails
   */
  public TableRequest retryTable(TableName table) {
    return engine.request(
        Objects.requireNonNull(table, "table"), TableRequest.Action.RETRY, "Pipeline.retryTable");
  }

  /**
   * Returns the configuration.
   *
   * @return the configuration
   */
  public PipelineConfig config() {
    return config;
  }
}
