/**
 * Helpers shared by pgetl's own destinations (the PostgreSQL mirror, DuckDB, JSON lines): a writer
 * thread that answers {@link org.pgetl.destination.AsyncResult}s, the key columns of a table and
 * the masking of database error text; and the rows of wire bytes the engine makes ({@link
 * org.pgetl.destination.internal.WireRows}). Not API: the module exports this package only to those
 * destinations' modules, the engine and the testkit, and it may change in any release.
 */
@NullMarked
package org.pgetl.destination.internal;

import org.jspecify.annotations.NullMarked;
