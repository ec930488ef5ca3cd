/**
 * Value codecs: decode PostgreSQL values from their text and binary forms (built-in types, arrays,
 * ranges, composites, enums and domains, resolved through a type registry read from the catalog)
 * and parse rows of {@code COPY} in either format. Internal to pgetl; not a public API.
 */
@NullMarked
package org.pgetl.core.internal.codec;

import org.jspecify.annotations.NullMarked;
