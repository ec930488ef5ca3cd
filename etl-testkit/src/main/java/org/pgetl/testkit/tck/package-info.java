/**
 * The destination conformance kit: extend {@link org.pgetl.testkit.tck.DestinationConformanceTests}
 * to run your {@link org.pgetl.destination.Destination} through the destination contract without
 * PostgreSQL.
 */
@NullMarked
package org.pgetl.testkit.tck;

import org.jspecify.annotations.NullMarked;
