/**
 * The engine's PostgreSQL side: connections, replication slots, publications, catalog reads, server
 * versions and error mapping.
 */
@NullMarked
package org.pgetl.core.internal.pg;

import org.jspecify.annotations.NullMarked;
