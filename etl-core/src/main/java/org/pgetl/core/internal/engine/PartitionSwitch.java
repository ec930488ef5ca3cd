package org.pgetl.core.internal.engine;

import java.util.ArrayList;
import java.util.Collection;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.pgetl.core.internal.pg.PgCatalog;
import org.pgetl.model.TableId;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Tells the operator when the publication starts publishing a partitioned table through its root
 * while its partitions were tables of the pipeline, or the other way round: the sign of {@code
 * ALTER PUBLICATION ... SET (publish_via_partition_root = ...)}, or of an ancestor of a published
 * partition joining or leaving a publication that publishes through the root.
 *
 * <p>pgetl follows such a change as it follows any change of the publication's table list: the
 * tables that left lose their state (the destination keeps what it holds of them, and they receive
 * no more changes), the tables that joined are copied in full. So the destination then holds the
 * same rows twice, under the partitions' tables and under the root's; this warning is what says so.
 */
final class PartitionSwitch {
  private static final Logger LOG = LoggerFactory.getLogger(PartitionSwitch.class);

  private PartitionSwitch() {}

  /**
   * Logs a warning when a table that joins is an ancestor or a partition of a table the pipeline
   * already has; does nothing otherwise. A failure to read the catalog is logged and ignored: the
   * warning is advice, the table changes go on.
   *
   * @param pipelineId the pipeline, for the log
   * @param publication the publication, for the log
   * @param catalog a catalog reader on the source
   * @param joined the tables that join the pipeline now
   * @param known the tables the pipeline had
   * @return the pairs found, each as {@code [partition, ancestor]}, for tests
   */
  static List<List<TableId>> warnOnOverlap(
      String pipelineId,
      String publication,
      PgCatalog catalog,
      Collection<TableId> joined,
      Collection<TableId> known) {
    List<List<TableId>> pairs = new ArrayList<>();
    if (joined.isEmpty() || known.isEmpty()) {
      return pairs;
    }
    try {
      Set<TableId> joinedSet = new HashSet<>(joined);
      Set<TableId> knownSet = new HashSet<>(known);
      List<TableId> all = new ArrayList<>(joinedSet);
      all.addAll(knownSet);
      for (Map.Entry<TableId, List<TableId>> e : catalog.partitionAncestors(all).entrySet()) {
        TableId table = e.getKey();
        for (TableId ancestor : e.getValue()) {
          boolean rootJoined = knownSet.contains(table) && joinedSet.contains(ancestor);
          boolean leafJoined = joinedSet.contains(table) && knownSet.contains(ancestor);
          if (rootJoined || leafJoined) {
            pairs.add(List.of(table, ancestor));
          }
        }
      }
    } catch (RuntimeException e) {
      LOG.debug("pipeline {}: could not compare partitions: {}", pipelineId, e.getMessage());
      return pairs;
    }
    if (!pairs.isEmpty()) {
      LOG.warn(
          "pipeline {}: publication {} now publishes partitions as other tables"
              + " (publish_via_partition_root changed, or a partition's ancestor joined or left"
              + " it):"
              + " partition and ancestor pairs {} are both tables of the pipeline for now; the"
              + " tables that left the publication keep their rows at the destination but receive"
              + " no more changes, and the tables that joined are copied in full, so the"
              + " destination holds these rows under both tables",
          pipelineId,
          publication,
          pairs);
    }
    return pairs;
  }
}
