/**
 * The replicated tables as Apache Iceberg tables: {@link
 * org.pgetl.destination.iceberg.IcebergDestination}, upserts or a changelog, exactly once across
 * restarts. Its class comment explains how it answers the engine and commits.
 */
@NullMarked
package org.pgetl.destination.iceberg;

import org.jspecify.annotations.NullMarked;
