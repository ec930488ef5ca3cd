/**
 * The pipeline: {@link org.pgetl.Pipeline}, its configuration and its status, and the listener that
 * follows it.
 */
@NullMarked
package org.pgetl;

import org.jspecify.annotations.NullMarked;
