/** The engine's time source. */
@NullMarked
package org.pgetl.core.internal.time;

import org.jspecify.annotations.NullMarked;
