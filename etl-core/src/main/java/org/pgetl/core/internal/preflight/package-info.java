/**
 * The preflight checks of a pipeline start ({@link org.pgetl.Preflight}): what they query on the
 * source and the store, and the texts of their failures. Internal to pgetl; not a public API.
 */
@NullMarked
package org.pgetl.core.internal.preflight;

import org.jspecify.annotations.NullMarked;
