package org.pgetl.core.internal.apply;

import java.util.List;
import org.jspecify.annotations.Nullable;
import org.pgetl.core.internal.codec.ValueCodec;
import org.pgetl.core.internal.decode.PgOutputMessage;
import org.pgetl.model.Lsn;
import org.pgetl.model.ReplicatedTableSchema;

/**
 * Turns a RELATION message into the table's replicated schema and the value codecs of its columns.
 * Implementations may consult the catalog for what the message lacks (attnum, nullability,
 * defaults, primary key, non-built-in types), by attnum. Owned by one stream's thread.
 */
public interface SchemaResolver extends AutoCloseable {

  /**
   * Resolves the schema a RELATION message describes. The message names its columns but does not
   * number them: each column's attnum, and what the message leaves out, come from the version in
   * effect before the message, and from the catalog by attnum, never by a column's name alone.
   *
   * @param relation the message
   * @param snapshotLsn the LSN from which this schema version applies
   * @param previous the version of the table in effect just before the message (the one an earlier
   *     RELATION on this stream gave, or the stored one), or null when none is known
   * @return the replicated schema, whose columns are exactly the message's columns in order
   */
  ReplicatedTableSchema resolve(
      PgOutputMessage.Relation relation, Lsn snapshotLsn, @Nullable ReplicatedTableSchema previous);

  /**
   * Returns the codecs of the given column types.
   *
   * @param typeOids the type oids, in column order
   * @return one codec per type
   */
  List<ValueCodec> codecs(int[] typeOids);

  /** Releases the resolver's catalog connection. */
  @Override
  void close();
}
