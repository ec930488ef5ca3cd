/**
 * The PostgreSQL pipeline store: {@link org.pgetl.store.postgres.PostgresStore}, the durable {@link
 * org.pgetl.store.PipelineStore} for production.
 */
module org.pgetl.store.postgres {
  requires transitive org.pgetl.core;
  requires static org.jspecify;
  requires java.sql;
  requires org.postgresql.jdbc;
  requires com.zaxxer.hikari;
  // Flyway declares no module name; this is the name Java derives from its jar's file name.
  requires flyway.core;
  requires org.slf4j;

  exports org.pgetl.store.postgres;

  // The schema migrations (resources only): Flyway finds them through the class loader, which
  // sees resources of a named module only in packages opened to everyone.
  opens db.pgetl;
}
