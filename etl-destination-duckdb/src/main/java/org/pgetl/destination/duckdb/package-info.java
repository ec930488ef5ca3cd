/**
 * A mirror of the replicated tables in a DuckDB file: {@link
 * org.pgetl.destination.duckdb.DuckDbDestination}, exactly once across restarts. Its class comment
 * explains how it answers the engine and how it makes repeated deliveries harmless.
 */
@NullMarked
package org.pgetl.destination.duckdb;

import org.jspecify.annotations.NullMarked;
