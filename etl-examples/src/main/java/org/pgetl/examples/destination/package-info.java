/**
 * The command line's JSON-lines destination, {@link
 * org.pgetl.examples.destination.StdoutJsonDestination} (one JSON line per row and event), written
 * to be read as a guide for writing your own. The PostgreSQL mirror and the DuckDB destination are
 * modules of their own ({@code etl-destination-postgres}, {@code etl-destination-duckdb}); {@code
 * docs/custom-destination.md} puts the three side by side.
 */
@NullMarked
package org.pgetl.examples.destination;

import org.jspecify.annotations.NullMarked;
