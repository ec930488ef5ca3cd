/**
 * The DuckDB destination: {@link org.pgetl.destination.duckdb.DuckDbDestination} keeps a copy of
 * every replicated table in a DuckDB file, exactly once across restarts.
 */
module org.pgetl.destination.duckdb {
  // @NullMarked and @Nullable, read by javac and NullAway only
  requires static org.jspecify;
  requires transitive org.pgetl.destination.api;
  requires java.sql;
  // DuckDB's JDBC driver declares no module name; this is the name Java derives from its jar.
  requires duckdb.jdbc;
  requires org.slf4j;

  exports org.pgetl.destination.duckdb;
}
