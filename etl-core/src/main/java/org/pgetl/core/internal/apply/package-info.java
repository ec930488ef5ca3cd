/**
 * The apply loop: assembles decoded replication messages into transactions and batches, converts
 * rows, and dispatches batches to the destination. Internal to pgetl; not a public API.
 */
@NullMarked
package org.pgetl.core.internal.apply;

import org.jspecify.annotations.NullMarked;
