package org.pgetl.core.internal.preflight;

import java.util.List;
import org.jspecify.annotations.Nullable;
import org.pgetl.error.ErrorKind;
import org.pgetl.error.EtlException;

/**
 * The decisions and texts of the preflight checks that need no server: whether there is room for
 * the pipeline's slots and walsenders, and what fixes a table without a replica identity. Kept
 * apart from the queries so that each case is tested without a server.
 */
final class PreflightMessages {
  /** How many tables a message names before it says "and N more". */
  static final int MAX_NAMED = 10;

  private PreflightMessages() {}

  /**
   * A server resource the pipeline needs a number of: replication slots or WAL senders.
   *
   * @param name the check's name, such as {@code replication slots}
   * @param setting the server setting that bounds it, such as {@code max_replication_slots}
   * @param applyUnit what the apply worker holds of it, such as {@code the apply slot}
   */
  record Resource(String name, String setting, String applyUnit) {}

  /**
   * Decides whether a resource has room for the pipeline: {@code applyNeeded} units for the apply
   * worker plus one per table-sync worker that runs now, {@code min(maxTableSyncWorkers,
   * tablesToCopy)}.
   *
   * @param r the resource
   * @param max the server's limit
   * @param inUse how many are in use now
   * @param reclaimed how many of those the start releases before it needs new ones (leftover
   *     table-sync slots of this pipeline)
   * @param applyNeeded 1 when the apply worker needs a new one, 0 when it has it already
   * @param tablesToCopy how many tables need a table-sync worker
   * @param maxTableSyncWorkers the configured limit of table-sync workers
   * @return the check
   */
  static CheckResult capacity(
      Resource r,
      int max,
      int inUse,
      int reclaimed,
      int applyNeeded,
      int tablesToCopy,
      int maxTableSyncWorkers) {
    int workers = Math.min(maxTableSyncWorkers, tablesToCopy);
    int needed = applyNeeded + workers;
    int free = Math.max(0, max - inUse + reclaimed);
    String what = needs(r, applyNeeded, workers);
    if (free >= needed) {
      return new CheckResult(
          r.name(),
          CheckResult.Outcome.PASSED,
          r.name()
              + ": "
              + needed
              + " needed ("
              + what
              + "), "
              + free
              + " of "
              + r.setting()
              + " = "
              + max
              + " free",
          null);
    }
    int raiseTo = max + (needed - free);
    String fix;
    if (free - applyNeeded >= 1) {
      fix =
          "set maxTableSyncWorkers to "
              + (free - applyNeeded)
              + " (copies fewer tables at once), or raise "
              + r.setting()
              + " to at least "
              + raiseTo
              + " (a server restart)";
    } else {
      fix =
          "raise "
              + r.setting()
              + " to at least "
              + raiseTo
              + " (a server restart)"
              + (inUse >= needed - free
                  ? ", or free " + (needed - free) + " of the " + inUse + " in use"
                  : "");
    }
    EtlException e =
        new EtlException(
            ErrorKind.SOURCE_CONFIGURATION_LIMIT_EXCEEDED,
            "the pipeline needs "
                + needed
                + " "
                + r.name()
                + " ("
                + what
                + "), but only "
                + free
                + " of "
                + r.setting()
                + " = "
                + max
                + " "
                + (free == 1 ? "is" : "are")
                + " free ("
                + inUse
                + " in use): "
                + fix);
    return new CheckResult(r.name(), CheckResult.Outcome.FAILED, e.description(), e);
  }

  private static String needs(Resource r, int applyNeeded, int workers) {
    String sync = workers + " table-sync worker" + (workers == 1 ? "" : "s");
    if (applyNeeded > 0) {
      return r.applyUnit() + " and " + sync;
    }
    return sync + "; " + r.applyUnit() + " exists";
  }

  /**
   * Says why a table has no usable replica identity and what fixes it, or returns null when it has
   * one.
   *
   * @param table the table's name as SQL (quoted where needed)
   * @param relreplident {@code d} (default), {@code n} (nothing), {@code f} (full) or {@code i}
   *     (index)
   * @param hasPrimaryKey whether the table has a primary key
   * @param hasIdentityIndex whether an index of the table is marked as its replica identity
   * @return the problem and its fix, or null
   */
  static @Nullable String replicaIdentityProblem(
      String table, char relreplident, boolean hasPrimaryKey, boolean hasIdentityIndex) {
    String full = "ALTER TABLE " + table + " REPLICA IDENTITY FULL";
    String usingIndex = "ALTER TABLE " + table + " REPLICA IDENTITY USING INDEX <a unique index>";
    return switch (relreplident) {
      case 'f' -> null;
      case 'd' ->
          hasPrimaryKey
              ? null
              : "table "
                  + table
                  + " has no primary key: add one (ALTER TABLE "
                  + table
                  + " ADD PRIMARY KEY (...)), or run "
                  + full
                  + " or "
                  + usingIndex;
      case 'i' ->
          hasIdentityIndex
              ? null
              : "the replica identity index of table "
                  + table
                  + " is gone: run "
                  + usingIndex
                  + ", or "
                  + full
                  + (hasPrimaryKey
                      ? ", or ALTER TABLE " + table + " REPLICA IDENTITY DEFAULT"
                      : "");
      default ->
          hasPrimaryKey
              ? "table "
                  + table
                  + " has REPLICA IDENTITY NOTHING: run ALTER TABLE "
                  + table
                  + " REPLICA IDENTITY DEFAULT (its primary key), or "
                  + full
              : "table "
                  + table
                  + " has REPLICA IDENTITY NOTHING and no primary key: run "
                  + full
                  + " or "
                  + usingIndex
                  + ", or add a primary key and run ALTER TABLE "
                  + table
                  + " REPLICA IDENTITY DEFAULT";
    };
  }

  /**
   * Names the row-changing operations a publication publishes besides INSERT.
   *
   * @param updates whether it publishes UPDATE
   * @param deletes whether it publishes DELETE
   * @return {@code UPDATE and DELETE}, {@code UPDATE} or {@code DELETE}
   */
  static String changeOperations(boolean updates, boolean deletes) {
    return updates && deletes ? "UPDATE and DELETE" : updates ? "UPDATE" : "DELETE";
  }

  /**
   * Joins names into one list, naming at most {@link #MAX_NAMED} of them.
   *
   * @param names the names
   * @return {@code a, b, c} or {@code a, b, ... and 3 more}
   */
  static String listed(List<String> names) {
    if (names.size() <= MAX_NAMED) {
      return String.join(", ", names);
    }
    return String.join(", ", names.subList(0, MAX_NAMED))
        + " and "
        + (names.size() - MAX_NAMED)
        + " more";
  }
}
