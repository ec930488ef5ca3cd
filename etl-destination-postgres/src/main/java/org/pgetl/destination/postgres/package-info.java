/**
 * A mirror of the replicated tables in another PostgreSQL database: {@link
 * org.pgetl.destination.postgres.PostgresMirrorDestination}, with parallel binary COPY for the
 * initial copy and exactly-once apply across restarts. Its class comment explains how it answers
 * the engine and how it makes repeated deliveries harmless.
 */
@NullMarked
package org.pgetl.destination.postgres;

import org.jspecify.annotations.NullMarked;
