package org.pgetl.store;

import java.util.List;
import java.util.Optional;
import org.pgetl.model.Lsn;
import org.pgetl.model.ReplicatedTableSchema;
import org.pgetl.model.TableId;

/**
 * Where a pipeline keeps the versions of its tables' schemas, each keyed by the LSN from which it
 * applies ({@code schema.tableSchema().snapshotLsn()}), so that a restart decodes old WAL with the
 * schema of its time and asks the destination to drop exactly what it was told to create. Scoped to
 * one pipeline; thread-safe.
 *
 * <p>A version is a {@link ReplicatedTableSchema} exactly as the destination received it: the
 * table's columns, which of them are published (the publication's column list) and the replica
 * identity (its kind and its columns). A store returns what it was given, field for field.
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
  Optional<ReplicatedTableSchema> tableSchema(TableId table, Lsn lsn);

  /**
   * Returns every stored version of a table's schema, oldest first.
   *
   * @param table the table
   * @return the versions
   */
  List<ReplicatedTableSchema> tableSchemas(TableId table);

  /**
   * Stores a version of a table's schema. Storing the same (table, snapshot LSN) again replaces it.
   *
   * @param schema the version, as the destination is told it
   */
  void storeTableSchema(ReplicatedTableSchema schema);

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
