/**
 * Errors: the one unchecked {@link org.pgetl.error.EtlException}, its {@link
 * org.pgetl.error.ErrorKind}, and the retry directive and operator hint of each kind.
 */
@NullMarked
package org.pgetl.error;

import org.jspecify.annotations.NullMarked;
