package org.pgetl.core.internal.apply;

import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.jspecify.annotations.Nullable;
import org.pgetl.core.internal.codec.ColumnDecoder;
import org.pgetl.core.internal.codec.ValueCodec;
import org.pgetl.core.internal.decode.PgOutputMessage;
import org.pgetl.error.ErrorKind;
import org.pgetl.error.EtlException;
import org.pgetl.model.ColumnSchema;
import org.pgetl.model.IdentityKind;
import org.pgetl.model.Lsn;
import org.pgetl.model.ReplicatedTableSchema;
import org.pgetl.model.TableId;
import org.pgetl.model.TableRow.WireFormat;
import org.pgetl.store.PipelineStore;

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

    // the decoders of its rows and of its key rows, in text and in binary form
    private final ColumnDecoder textRows;
    private final ColumnDecoder binaryRows;
    private final ColumnDecoder textKeys;
    private final ColumnDecoder binaryKeys;

    /** The decoder of its rows whose values are all in one form (a row of NULLs: any). */
    ColumnDecoder rowDecoder(@Nullable WireFormat f) {
      return f == WireFormat.BINARY ? binaryRows : textRows;
    }

    /** The decoder of its key rows whose values are all in one form. */
    ColumnDecoder keyDecoder(@Nullable WireFormat f) {
      return f == WireFormat.BINARY ? binaryKeys : textKeys;
    }

    Entry(TableId table, ReplicatedTableSchema schema, List<ValueCodec> codecs) {
      this.table = table;
      this.schema = schema;
      this.codecs = codecs.toArray(new ValueCodec[0]);
      this.identity = schema.identityColumnIndexes();
      List<String> names = new ArrayList<>();
      List<ColumnSchema> columns = schema.columns();
      for (int i = 0; i < this.codecs.length; i++) {
        names.add(i < columns.size() ? columns.get(i).name() : "#" + (i + 1));
      }
      String name = schema.name().toString();
      List<ValueCodec> keyCodecs = new ArrayList<>();
      List<String> keyNames = new ArrayList<>();
      for (int i : identity) {
        keyCodecs.add(this.codecs[i]);
        keyNames.add(names.get(i));
      }
      textRows = decoder(codecs, WireFormat.TEXT, names, name);
      binaryRows = decoder(codecs, WireFormat.BINARY, names, name);
      textKeys = decoder(keyCodecs, WireFormat.TEXT, keyNames, name);
      binaryKeys = decoder(keyCodecs, WireFormat.BINARY, keyNames, name);
    }

    private static ColumnDecoder decoder(
        List<ValueCodec> codecs, WireFormat f, List<String> names, String table) {
      return new ColumnDecoder(codecs, Collections.nCopies(codecs.size(), f), names, table);
    }
  }

  private final SchemaResolver resolver;
  private final PipelineStore store;
  private final Map<Long, Entry> entries = new HashMap<>();

  RelationCache(SchemaResolver resolver, PipelineStore store) {
    this.resolver = resolver;
    this.store = store;
  }

  /**
   * Records a RELATION message.
   *
   * <p>A message decoded again (a replay after a restart) gets the version stored when it was first
   * decoded, if that version describes exactly this message: it was resolved closer to the
   * message's time. Any other message is resolved against the version in effect just before it: the
   * newer of the one an earlier RELATION on this stream gave and the newest stored before the
   * message's commit LSN.
   *
   * @param relation the message
   * @param snapshotLsn the LSN from which the schema applies (the transaction's commit LSN)
   * @return the new entry
   */
  Entry update(PgOutputMessage.Relation relation, Lsn snapshotLsn) {
    TableId table = new TableId(relation.relationId());
    Entry earlier = entries.get(relation.relationId());
    ReplicatedTableSchema schema = null;
    ReplicatedTableSchema previous = earlier == null ? null : earlier.schema;
    if (!snapshotLsn.isZero()) {
      ReplicatedTableSchema stored = store.tableSchema(table, snapshotLsn).orElse(null);
      if (stored != null && stored.tableSchema().snapshotLsn().equals(snapshotLsn)) {
        if (describes(stored, relation)) {
          schema = stored;
        }
        stored = store.tableSchema(table, Lsn.of(snapshotLsn.value() - 1)).orElse(null);
      }
      if (stored != null
          && (previous == null
              || stored
                  .tableSchema()
                  .snapshotLsn()
                  .isAfter(previous.tableSchema().snapshotLsn()))) {
        previous = stored;
      }
    } else if (previous == null) {
      previous = store.tableSchema(table, Lsn.ZERO).orElse(null);
    }
    if (schema == null) {
      schema = resolver.resolve(relation, snapshotLsn, previous);
    }
    int[] oids = new int[relation.columns().size()];
    for (int i = 0; i < oids.length; i++) {
      oids[i] = relation.columns().get(i).typeOid();
    }
    Entry e = new Entry(schema.id(), schema, resolver.codecs(oids));
    entries.put(relation.relationId(), e);
    return e;
  }

  /** Whether a stored version has exactly the names, types, key flags and identity of a message. */
  static boolean describes(ReplicatedTableSchema schema, PgOutputMessage.Relation relation) {
    if (!schema.name().schema().equals(relation.namespace())
        || !schema.name().name().equals(relation.name())
        || schema.columnCount() != relation.columns().size()) {
      return false;
    }
    IdentityKind kind =
        switch (relation.replicaIdentity()) {
          case FULL -> IdentityKind.FULL;
          case NOTHING -> IdentityKind.NOTHING;
          case INDEX -> IdentityKind.INDEX;
          case DEFAULT -> null;
        };
    if (kind != null && kind != schema.identity()) {
      return false;
    }
    Set<Integer> identity = new HashSet<>();
    for (int i : schema.identityColumnIndexes()) {
      identity.add(i);
    }
    for (int i = 0; i < schema.columnCount(); i++) {
      ColumnSchema c = schema.columns().get(i);
      PgOutputMessage.Relation.Column r = relation.columns().get(i);
      boolean key =
          schema.identity() == IdentityKind.FULL ? r.isKey() : identity.contains(i) == r.isKey();
      if (!c.name().equals(r.name())
          || c.typeOid() != r.typeOid()
          || c.typeModifier() != r.typeModifier()
          || c.ordinalPosition() <= 0
          || !key) {
        return false;
      }
    }
    return true;
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
  @Nullable Entry find(long relationId) {
    return entries.get(relationId);
  }
}
