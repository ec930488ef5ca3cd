/**
 * The destination conformance kit: extend {@link org.pgetl.testkit.tck.DestinationConformanceTests}
 * to run your {@link org.pgetl.destination.Destination} through the destination contract without
 * PostgreSQL.
 */
package org.pgetl.testkit.tck;
