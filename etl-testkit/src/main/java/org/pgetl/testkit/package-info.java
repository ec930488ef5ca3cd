/**
 * A real PostgreSQL server for tests and demos, without Docker: {@link
 * org.pgetl.testkit.EmbeddedPostgres} starts one from the {@code io.zonky.test.postgres} binaries
 * (also when the JVM runs as root), {@link org.pgetl.testkit.WithPostgres} gives each test class
 * its own {@link org.pgetl.testkit.TestDatabase} on a server shared by the JVM, and {@link
 * org.pgetl.testkit.PostgresServer} is what both hand out, also for an external server named by
 * {@code PGETL_TEST_DATABASE_URL}.
 */
@NullMarked
package org.pgetl.testkit;

import org.jspecify.annotations.NullMarked;
