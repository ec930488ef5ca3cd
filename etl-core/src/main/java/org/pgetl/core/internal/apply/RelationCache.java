package org.pgetl.core.internal.apply;

import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.pgetl.core.internal.codec.ValueCodec;
import org.pgetl.core.internal.decode.PgOutputMessage;
import org.pgetl.error.ErrorKind;
import org.pgetl.error.EtlException;
import org.pgetl.model.Lsn;
import org.pgetl.model.ReplicatedTableSchema;
import org.pgetl.model.TableId;

/**
 * The RELATION messages one replication stream received, with the decoding state built from each:
 * the table's replicated schema and the codecs of its columns. pgoutput sends a RELATION before the
 * first change of a table on a connection and again after each schema change, so the cache starts
 * empty with every stream. Owned by the stream's thread.
 */
final class RelationCache {

  /** The decoding state of one relation. */
  static final class Entry {
    final TableId table;
    final ReplicatedTableSchema schema;
    final ValueCodec[] codecs;
    final int[] identity;

    /** Whether a {@code Relation} event for this version went out on this stream. */
    boolean announced;

    Entry(TableId table, ReplicatedTableSchema schema, List<ValueCodec> codecs) {
      this.table = table;
      this.schema = schema;
      this.codecs = codecs.toArray(new ValueCodec[0]);
      this.identity = schema.identityColumnIndexes();
    }
  }

  private final SchemaResolver resolver;
  private final Map<Long, Entry> entries = new HashMap<>();

  RelationCache(SchemaResolver resolver) {
    this.resolver = resolver;
  }

  /**
   * Records a RELATION message.
   *
   * @param relation the message
   * @param snapshotLsn the LSN from which the schema applies (the transaction's commit LSN)
   * @return the new entry
   */
  Entry update(PgOutputMessage.Relation relation, Lsn snapshotLsn) {
    ReplicatedTableSchema schema = resolver.resolve(relation, snapshotLsn);
    int[] oids = new int[relation.columns().size()];
    for (int i = 0; i < oids.length; i++) {
      oids[i] = relation.columns().get(i).typeOid();
    }
    Entry e = new Entry(schema.id(), schema, resolver.codecs(oids));
    entries.put(relation.relationId(), e);
    return e;
  }

  /**
   * Returns the entry of a relation id.
   *
   * @param relationId the relation's oid
   * @param messageKind the message that needs it, for the error
   * @return the entry
   * @throws EtlException when no RELATION came for it on this stream
   */
  Entry get(long relationId, PgOutputMessage.Kind messageKind) {
    Entry e = entries.get(relationId);
    if (e == null) {
      throw new EtlException(
          ErrorKind.REPLICATION_PROTOCOL_ERROR,
          "received " + messageKind.displayName() + " for a relation without a RELATION message",
          "relation oid " + relationId);
    }
    return e;
  }

  /**
   * Returns the entry of a relation id, or null.
   *
   * @param relationId the relation's oid
   * @return the entry or null
   */
  Entry find(long relationId) {
    return entries.get(relationId);
  }
}
