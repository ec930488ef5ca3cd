/**
 * The pgoutput decoder: turns the bytes of each logical replication message (protocol versions 1 to
 * 4) into an immutable {@link org.pgetl.core.internal.decode.PgOutputMessage}, without copying
 * column values. Internal to pgetl; not a public API.
 */
@NullMarked
package org.pgetl.core.internal.decode;

import org.jspecify.annotations.NullMarked;
