package org.pgetl.core.internal.copy;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import org.pgetl.model.TableId;

/**
 * Splits the physical tables behind one published table into ctid ranges that several connections
 * copy in parallel from one exported snapshot.
 *
 * <p>The number of ranges is {@code max(4 × connections, ceil(rows / 250 000))}, clamped to [1,
 * 1024] (one range when there is a single connection), shared between the physical tables by their
 * estimated rows (or blocks when some table was never analyzed), and never more ranges than a table
 * has blocks. The first range of a table is open at the start and the last one open at the end, so
 * rows in blocks added after the estimate are still copied. Ranges are returned largest first, so
 * the long ones start early.
 */
public final class CopyPlanner {
  static final long ROWS_PER_PARTITION = 250_000;
  static final int MAX_PARTITIONS = 1024;
  static final int PARTITIONS_PER_CONNECTION = 4;

  /** The block size a size without bytes assumes: PostgreSQL's default, 8 kB. */
  static final long BLOCK_BYTES = 8192;

  private CopyPlanner() {}

  /**
   * Returns how many connections copy a published table: one per {@code minBytesPerConnection} of
   * its physical tables' bytes (with TOAST), at least one and at most {@code maxConnections};
   * {@code maxConnections} when {@code minBytesPerConnection} is 0.
   *
   * @param tables the physical tables and their sizes
   * @param maxConnections {@code copyConnectionsPerTable}, at least 1
   * @param minBytesPerConnection the configured least bytes per connection, 0 or more
   * @return the number of connections
   */
  public static int connections(
      List<TableSize> tables, int maxConnections, long minBytesPerConnection) {
    if (maxConnections < 1) {
      throw new IllegalArgumentException("connections must be >= 1, was " + maxConnections);
    }
    if (minBytesPerConnection <= 0) {
      return maxConnections;
    }
    long bytes = 0;
    for (TableSize t : tables) {
      bytes += Math.max(0, t.totalBytes());
    }
    long wanted = Math.max(1, (bytes + minBytesPerConnection - 1) / minBytesPerConnection);
    return (int) Math.min(maxConnections, wanted);
  }

  /**
   * The size estimate of one physical table.
   *
   * @param table the physical table (the published table itself, or a leaf partition)
   * @param blocks the number of heap blocks ({@code pg_relation_size / block_size})
   * @param rows the estimated rows ({@code reltuples}), negative when unknown
   * @param totalBytes the table's bytes with its TOAST table ({@code pg_table_size}): what the copy
   *     reads, which decides how many connections it gets
   */
  public record TableSize(TableId table, long blocks, long rows, long totalBytes) {
    /**
     * A size whose bytes are its heap blocks of 8 kB (no TOAST known).
     *
     * @param table the physical table
     * @param blocks the number of heap blocks
     * @param rows the estimated rows, negative when unknown
     */
    public TableSize(TableId table, long blocks, long rows) {
      this(table, blocks, rows, Math.max(0, blocks) * BLOCK_BYTES);
    }
  }

  /**
   * One range to copy.
   *
   * @param table the physical table to read
   * @param startBlock the first block, or -1 for "from the start"
   * @param endBlock the block after the last one, or -1 for "to the end"
   * @param weight the estimated share of rows (or blocks) in this range, for ordering
   */
  public record Partition(TableId table, long startBlock, long endBlock, double weight) {
    /**
     * Returns the ctid predicate of this range, or an empty string for a whole table.
     *
     * @return SQL such as {@code ctid >= '(10,0)'::tid AND ctid < '(20,0)'::tid}
     */
    public String ctidPredicate() {
      if (startBlock < 0 && endBlock < 0) {
        return "";
      }
      if (startBlock < 0) {
        return "ctid < '(" + endBlock + ",0)'::tid";
      }
      if (endBlock < 0) {
        return "ctid >= '(" + startBlock + ",0)'::tid";
      }
      return "ctid >= '(" + startBlock + ",0)'::tid AND ctid < '(" + endBlock + ",0)'::tid";
    }
  }

  /**
   * Plans the ranges of a published table.
   *
   * @param tables the physical tables and their sizes
   * @param connections the number of copy connections (at least 1)
   * @return the ranges, largest first; empty tables (0 blocks) get one whole-table range so that
   *     rows written since the estimate are still seen
   */
  public static List<Partition> plan(List<TableSize> tables, int connections) {
    if (connections < 1) {
      throw new IllegalArgumentException("connections must be >= 1, was " + connections);
    }
    List<Partition> out = new ArrayList<>();
    long totalRows = 0;
    long totalBlocks = 0;
    boolean allRowsKnown = true;
    for (TableSize t : tables) {
      totalBlocks += Math.max(0, t.blocks());
      if (t.rows() < 0) {
        allRowsKnown = false;
      } else {
        totalRows += t.rows();
      }
    }
    int target;
    if (connections == 1) {
      target = 1;
    } else {
      long byRows = (Math.max(0, totalRows) + ROWS_PER_PARTITION - 1) / ROWS_PER_PARTITION;
      target =
          (int)
              Math.min(
                  MAX_PARTITIONS, Math.max((long) connections * PARTITIONS_PER_CONNECTION, byRows));
    }
    double totalWeight = allRowsKnown && totalRows > 0 ? totalRows : totalBlocks;
    for (TableSize t : tables) {
      double weight =
          allRowsKnown && totalRows > 0 ? Math.max(0, t.rows()) : Math.max(0, t.blocks());
      long blocks = Math.max(0, t.blocks());
      if (blocks == 0 || totalWeight <= 0) {
        out.add(new Partition(t.table(), -1, -1, weight));
        continue;
      }
      long share = Math.max(1, Math.round(target * (weight / totalWeight)));
      long parts = Math.min(share, blocks);
      long per = blocks / parts;
      long extra = blocks % parts;
      long start = 0;
      for (long i = 0; i < parts; i++) {
        long size = per + (i < extra ? 1 : 0);
        long end = start + size;
        long s = i == 0 ? -1 : start;
        long e = i == parts - 1 ? -1 : end;
        out.add(new Partition(t.table(), s, e, weight * size / blocks));
        start = end;
      }
    }
    out.sort(Comparator.comparingDouble(Partition::weight).reversed());
    return out;
  }
}
