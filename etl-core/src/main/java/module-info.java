/**
 * The pgetl pipeline: {@link org.pgetl.Pipeline} and its configuration, the lifecycle listener and
 * the store SPI with its memory store. Everything under {@code org.pgetl.core.internal} is the
 * engine's implementation and is not exported; one package of it is shared with the PostgreSQL
 * store, which is released together with this module.
 */
module org.pgetl.core {
  // @NullMarked and @Nullable, read by javac and NullAway only
  requires static org.jspecify;
  requires transitive org.pgetl.destination.api;
  requires java.sql;
  requires org.postgresql.jdbc;
  requires org.slf4j;
  // Metrics are optional: the engine looks for Micrometer at run time and does without it.
  requires static micrometer.core;

  exports org.pgetl;
  exports org.pgetl.lifecycle;
  exports org.pgetl.store;
  // connection settings and secret redaction, shared with the store so that both treat a password
  // the same way
  exports org.pgetl.core.internal.pg to
      org.pgetl.store.postgres;
}
