/**
 * The pipeline store in PostgreSQL: {@link org.pgetl.store.postgres.PostgresStore}, built with
 * {@link org.pgetl.store.postgres.PostgresStore#builder()} from a {@link
 * org.pgetl.store.postgres.PostgresStoreConfig}. Its tables live in one schema (default {@code
 * etl}) of the source database or of any other database, created and upgraded by the Flyway
 * migrations shipped in this jar.
 */
@NullMarked
package org.pgetl.store.postgres;

import org.jspecify.annotations.NullMarked;
