package org.pgetl.core.internal.pg;

/**
 * Size estimates of one table, for planning a parallel copy.
 *
 * @param estimatedRows {@code pg_class.reltuples}, or -1 when the table was never analyzed (on
 *     PostgreSQL 13, 0 for a never-analyzed table too)
 * @param relPages {@code pg_class.relpages}, the page count at the last VACUUM or ANALYZE
 * @param blocks the current number of blocks: {@code pg_relation_size / block_size}
 * @param totalBytes the table's bytes with its TOAST table: {@code pg_table_size}
 */
public record TableSize(long estimatedRows, long relPages, long blocks, long totalBytes) {}
