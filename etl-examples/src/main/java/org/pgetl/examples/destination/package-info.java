/**
 * Example destinations, written to be read as guides for writing your own: {@link
 * org.pgetl.examples.destination.StdoutJsonDestination} (one JSON line per row and event) and
 * {@link org.pgetl.examples.destination.DuckDbDestination} (a DuckDB mirror of every table, exactly
 * once across restarts). Each class comment explains how the destination answers the engine and how
 * it makes repeated deliveries harmless.
 */
package org.pgetl.examples.destination;
