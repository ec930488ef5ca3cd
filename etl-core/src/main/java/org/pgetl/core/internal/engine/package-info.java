/**
 * The engine: starts and stops the apply worker and the table-sync pool, and holds the shared
 * context, metrics, listeners and status. Internal to pgetl; not a public API.
 */
@NullMarked
package org.pgetl.core.internal.engine;

import org.jspecify.annotations.NullMarked;
