package org.pgetl.store;

import java.util.List;
import java.util.Optional;
import org.pgetl.model.Lsn;
import org.pgetl.model.TableId;
import org.pgetl.model.TableSchema;

/**
 * Where a pipeline keeps the versions of its tables' schemas, each keyed by the LSN from which it
 * applies ({@link TableSchema#snapshotLsn()}), so that a restart decodes old WAL with the schema of
 * its time. Scoped to one pipeline; thread-safe.
 */
public interface SchemaStore {

  /**
   * Returns the version of a table's schema that applies at {@code lsn}: the newest one whose
   * snapshot LSN is at or before it.
   *
   * @param table the table
   * @param lsn the position
   * @return the schema, or empty when no version is that old
   */
  Optional<TableSchema> tableSchema(TableId table, Lsn lsn);

  /**
   * Returns every stored version of a table's schema, oldest first.
   *
   * @param table the table
   * @return the versions
   */
  List<TableSchema> tableSchemas(TableId table);

  /**
   * Stores a version of a table's schema. Storing the same (table, snapshot LSN) again replaces it.
   *
   * @param schema the version
   */
  void storeTableSchema(TableSchema schema);

  /**
   * Deletes the versions that no restart can need: those older than the newest version at or before
   * {@code durableLsn}.
   *
   * @param table the table
   * @param durableLsn a position every restart resumes at or after
   * @return how many versions were deleted
   */
  int pruneTableSchemas(TableId table, Lsn durableLsn);
}
