/**
 * The initial copy of a table: plans ctid ranges over its physical tables and copies them in
 * parallel from an exported snapshot, in batches the destination answers. Internal to pgetl; not a
 * public API.
 */
@NullMarked
package org.pgetl.core.internal.copy;

import org.jspecify.annotations.NullMarked;
