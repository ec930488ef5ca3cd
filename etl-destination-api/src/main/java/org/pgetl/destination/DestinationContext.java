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
}
