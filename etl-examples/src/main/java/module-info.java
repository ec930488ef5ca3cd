/**
 * Examples of using pgetl: the smallest embedding, the {@code pgetl} command line and its
 * JSON-lines destination. An application module: it exports nothing.
 */
module org.pgetl.examples {
  // @NullMarked and @Nullable, read by javac and NullAway only
  requires static org.jspecify;
  requires org.pgetl.core;
  requires org.pgetl.store.postgres;
  requires org.pgetl.testkit;
  requires org.pgetl.destination.postgres;
  requires org.pgetl.destination.duckdb;
  // an automatic module: Iceberg's jars split packages, so they stay on the class path
  requires org.pgetl.destination.iceberg;
  requires java.sql;
  requires org.postgresql.jdbc;
  requires micrometer.core;
  requires info.picocli;
  requires org.slf4j;

  // picocli reads and sets the commands' annotated fields reflectively.
  opens org.pgetl.examples.cli to
      info.picocli;
}
