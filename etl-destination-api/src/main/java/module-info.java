/**
 * The destination SPI and the data model of pgetl: what a {@link org.pgetl.destination.Destination}
 * receives, the rows, schemas and LSNs it sees, and the errors it reports. Depends on {@code
 * java.base} alone at run time.
 */
module org.pgetl.destination.api {
  // @NullMarked and @Nullable, read by javac and NullAway only
  requires static org.jspecify;

  exports org.pgetl.destination;
  exports org.pgetl.error;
  exports org.pgetl.model;
  // helpers of pgetl's own destinations and the engine's rows of wire bytes, not API
  exports org.pgetl.destination.internal to
      org.pgetl.core,
      org.pgetl.testkit,
      org.pgetl.destination.postgres,
      org.pgetl.destination.duckdb,
      org.pgetl.examples;
}
