/**
 * Example destinations, written to be read as guides for writing your own: {@link
 * org.pgetl.examples.destination.StdoutJsonDestination} (one JSON line per row and event), {@link
 * org.pgetl.examples.destination.DuckDbDestination} (a DuckDB mirror of every table, exactly once
 * across restarts) and {@link org.pgetl.examples.destination.PostgresMirrorDestination} (a mirror
 * in another PostgreSQL database, with parallel copy connections, exactly once across restarts).
 * Each class comment explains how the destination answers the engine and how it makes repeated
 * deliveries harmless; {@code docs/custom-destination.md} puts them side by side.
 */
@NullMarked
package org.pgetl.examples.destination;

import org.jspecify.annotations.NullMarked;
