package org.pgetl.core.internal.apply;

import org.pgetl.core.internal.decode.PgOutputMessage;
import org.pgetl.model.Lsn;
import org.pgetl.model.TableName;
import org.pgetl.store.MemoryStore;

/**
 * The apply loop's tuple conversion, for tests of other packages: RELATION messages go into a
 * {@link RelationCache} (through the given {@link SchemaResolver}) and INSERT tuples become rows
 * through {@link RowConverter#full}, exactly as {@code ApplyLoop} does.
 */
public final class InsertRows {
  private final RelationCache relations;

  /**
   * Creates a converter with an empty relation cache, as at the start of a stream.
   *
   * @param resolver resolves RELATION messages into schemas and codecs
   */
  public InsertRows(SchemaResolver resolver) {
    this.relations = new RelationCache(resolver, new MemoryStore("insert-rows"));
  }

  /**
   * Records a RELATION message.
   *
   * @param relation the message
   * @param commitLsn the commit LSN of the transaction it came in
   */
  public void relation(PgOutputMessage.Relation relation, Lsn commitLsn) {
    relations.update(relation, commitLsn);
  }

  /**
   * Returns the qualified name of a relation seen on this stream.
   *
   * @param relationId the relation's oid
   * @return {@code schema.table}
   */
  public String tableName(long relationId) {
    TableName name = relations.get(relationId, PgOutputMessage.Kind.INSERT).schema.name();
    return name.schema() + "." + name.name();
  }

  /**
   * Converts an INSERT's new tuple into the row's values, in the RELATION's column order.
   *
   * @param insert the message
   * @return the values (null for SQL NULL)
   */
  public Object[] values(PgOutputMessage.Insert insert) {
    RelationCache.Entry e = relations.get(insert.relationId(), PgOutputMessage.Kind.INSERT);
    return RowConverter.full(e, insert.newTuple(), "Insert").values().toArray();
  }
}
