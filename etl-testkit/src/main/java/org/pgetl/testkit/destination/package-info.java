/**
 * Destinations for testing a pipeline, and helpers to build and compare what they receive.
 *
 * <ul>
 *   <li>{@link org.pgetl.testkit.destination.RecordingDestination}: records every call and keeps
 *       each table's rows by key, deduplicating like an idempotent destination; tests compare its
 *       {@code rows(table)} with {@link org.pgetl.testkit.destination.SourceTables#read}.
 *   <li>{@link org.pgetl.testkit.destination.FaultyDestination}: wraps any destination and injects
 *       faults at named points ({@link org.pgetl.testkit.destination.DestinationOperation}) —
 *       reject, fail, hold, delay, abandon, never answer.
 *   <li>{@link org.pgetl.testkit.destination.SchemaBuilder}, {@link
 *       org.pgetl.testkit.destination.Transactions} and {@link
 *       org.pgetl.testkit.destination.InMemoryDestinationContext}: drive a destination without a
 *       pipeline.
 * </ul>
 */
@NullMarked
package org.pgetl.testkit.destination;

import org.jspecify.annotations.NullMarked;
