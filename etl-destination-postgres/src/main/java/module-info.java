/**
 * The PostgreSQL mirror destination: {@link
 * org.pgetl.destination.postgres.PostgresMirrorDestination} keeps a copy of every replicated table
 * in another PostgreSQL database, exactly once across restarts.
 */
module org.pgetl.destination.postgres {
  // @NullMarked and @Nullable, read by javac and NullAway only
  requires static org.jspecify;
  requires transitive org.pgetl.destination.api;
  // PgConnectionConfig, which addresses the mirror the way a source is addressed
  requires transitive org.pgetl.core;
  requires java.sql;
  requires org.postgresql.jdbc;
  requires com.zaxxer.hikari;
  requires org.slf4j;

  exports org.pgetl.destination.postgres;
}
