/**
 * The destination SPI: implement {@link org.pgetl.destination.Destination} to receive the initial
 * copy of each published table and then every committed change, and answer each call through its
 * {@link org.pgetl.destination.AsyncResult}.
 */
@NullMarked
package org.pgetl.destination;

import org.jspecify.annotations.NullMarked;
