/**
 * Initial table synchronisation: the pool of table-sync workers, each table's state machine, and
 * the catch-up stream that brings a copied table up to the apply worker's position. Internal to
 * pgetl; not a public API.
 */
@NullMarked
package org.pgetl.core.internal.sync;

import org.jspecify.annotations.NullMarked;
