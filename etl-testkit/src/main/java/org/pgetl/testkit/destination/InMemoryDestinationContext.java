package org.pgetl.testkit.destination;

import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import org.pgetl.destination.DestinationContext;
import org.pgetl.destination.DestinationTableMetadataStore;
import org.pgetl.destination.DestinationTableMetadataStore.TableMetadata;
import org.pgetl.model.TableId;

/**
 * A {@link DestinationContext} for testing a destination without a pipeline: a pipeline id, table
 * metadata kept in memory, and a count of shutdown requests. Thread-safe.
 */
public final class InMemoryDestinationContext implements DestinationContext {
  private final String pipelineId;
  private final Map<TableId, TableMetadata> metadata = new ConcurrentHashMap<>();
  private final AtomicInteger shutdownRequests = new AtomicInteger();
  private volatile long epoch = 1;
  private final DestinationTableMetadataStore store =
      new DestinationTableMetadataStore() {
        @Override
        public Optional<TableMetadata> get(TableId table) {
          return Optional.ofNullable(metadata.get(Objects.requireNonNull(table, "table")));
        }

        @Override
        public void put(TableId table, TableMetadata value) {
          metadata.put(Objects.requireNonNull(table, "table"), Objects.requireNonNull(value));
        }
      };

  /**
   * Creates a context.
   *
   * @param pipelineId the pipeline id the destination sees
   */
  public InMemoryDestinationContext(String pipelineId) {
    this.pipelineId = Objects.requireNonNull(pipelineId, "pipelineId");
  }

  @Override
  public String pipelineId() {
    return pipelineId;
  }

  @Override
  public DestinationTableMetadataStore tableMetadata() {
    return store;
  }

  /** Returns the epoch set by {@link #setEpoch} (1 at first). */
  @Override
  public long epoch() {
    return epoch;
  }

  /**
   * Sets the epoch {@link #epoch()} returns (1 at first), to play an instance that took over.
   *
   * @param epoch the epoch
   */
  public void setEpoch(long epoch) {
    this.epoch = epoch;
  }

  /** Counts the request; a test reads it with {@link #shutdownRequests()}. */
  @Override
  public void requestShutdown() {
    shutdownRequests.incrementAndGet();
  }

  /**
   * Returns how many times the destination asked the pipeline to shut down.
   *
   * @return the count
   */
  public int shutdownRequests() {
    return shutdownRequests.get();
  }

  /**
   * Returns the table metadata the destination stored, by table.
   *
   * @return a snapshot of the metadata
   */
  public Map<TableId, TableMetadata> metadata() {
    return Map.copyOf(metadata);
  }
}
