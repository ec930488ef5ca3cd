/**
 * The destination SPI and the data model of pgetl: what a {@link org.pgetl.destination.Destination}
 * receives, the rows, schemas and LSNs it sees, and the errors it reports. Depends on {@code
 * java.base} alone.
 */
module org.pgetl.destination.api {
  exports org.pgetl.destination;
  exports org.pgetl.error;
  exports org.pgetl.model;
}
