package org.pgetl.destination;

/** What the engine gives a destination at {@link Destination#startup(DestinationContext)}. */
public interface DestinationContext {
  /**
   * Returns the id of the pipeline this destination serves.
   *
   * @return the pipeline id
   */
  String pipelineId();

  /**
   * Returns the pipeline's store for destination table metadata.
   *
   * @return the metadata store
   */
  DestinationTableMetadataStore tableMetadata();

  /**
   * Asks the pipeline to shut down cleanly, as {@code Pipeline.shutdown()} does; for a destination
   * that learns it must stop outside of any pending write. Idempotent, thread-safe.
   */
  void requestShutdown();

  /**
   * Returns the epoch of the pipeline's lease held by this instance: a fencing token that grows
   * with every takeover. When two instances of a pipeline overlap for a moment (a rolling deploy, a
   * network cut), the older one writes with a smaller epoch: a destination that stores the greatest
   * epoch it saw, in the same transaction as the data, can refuse writes of a smaller one (answer
   * them {@code shutdown()}). Read it at each write; 0 before the lease is held.
   *
   * @return the epoch
   */
  long epoch();
}
