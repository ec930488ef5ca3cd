/**
 * The data model a destination receives: {@link org.pgetl.model.Event change events}, {@link
 * org.pgetl.model.TableRow rows}, {@link org.pgetl.model.ReplicatedTableSchema table schemas} and
 * {@link org.pgetl.model.Lsn WAL positions}, plus the value types that keep PostgreSQL values
 * without loss ({@link org.pgetl.model.PgNumeric}, {@link org.pgetl.model.PgInterval}, {@link
 * org.pgetl.model.PgArray}). All types are immutable.
 */
@NullMarked
package org.pgetl.model;

import org.jspecify.annotations.NullMarked;
