package org.pgetl.core.internal.engine;

import java.sql.Connection;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.pgetl.core.internal.apply.SchemaResolver;
import org.pgetl.core.internal.codec.TypeRegistry;
import org.pgetl.core.internal.codec.ValueCodec;
import org.pgetl.core.internal.decode.PgOutputMessage;
import org.pgetl.core.internal.pg.PgCatalog;
import org.pgetl.core.internal.pg.PgConnector;
import org.pgetl.error.EtlException;
import org.pgetl.model.ColumnSchema;
import org.pgetl.model.IdentityKind;
import org.pgetl.model.Lsn;
import org.pgetl.model.ReplicatedTableSchema;
import org.pgetl.model.TableId;
import org.pgetl.model.TableName;
import org.pgetl.model.TableSchema;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Builds a table's replicated schema from a RELATION message, completed from the catalog: each
 * published column keeps the message's name, type and modifier, and takes its attnum, formatted
 * type, nullability, default and primary-key position from the catalog when a column of that name
 * and type still exists there (the catalog may already be ahead of the WAL being decoded; a column
 * it no longer has gets attnum 0). Non-built-in types are loaded on demand. One catalog connection,
 * opened lazily, owned by the stream's thread.
 */
final class CatalogSchemaResolver implements SchemaResolver {
  private static final Logger LOG = LoggerFactory.getLogger(CatalogSchemaResolver.class);

  private final PgConnector connector;
  private final String applicationName;
  private final TypeRegistry types = new TypeRegistry();
  private Connection connection;

  CatalogSchemaResolver(PgConnector connector, String applicationName) {
    this.connector = connector;
    this.applicationName = applicationName;
  }

  private Connection connection() {
    if (connection == null) {
      connection = connector.openPlain(applicationName);
    }
    return connection;
  }

  @Override
  public ReplicatedTableSchema resolve(PgOutputMessage.Relation relation, Lsn snapshotLsn) {
    TableId id = new TableId(relation.relationId());
    TableName name = new TableName(relation.namespace(), relation.name());
    Map<String, ColumnSchema> catalog = new HashMap<>();
    try {
      for (ColumnSchema c : new PgCatalog(connection()).tableSchema(id).columns()) {
        catalog.put(c.name(), c);
      }
    } catch (EtlException e) {
      // the table may be gone from the catalog already: the message alone describes it
      LOG.debug("catalog lookup of {} failed: {}", name, e.getMessage());
    }
    List<ColumnSchema> columns = new ArrayList<>();
    List<Integer> keys = new ArrayList<>();
    List<PgOutputMessage.Relation.Column> rc = relation.columns();
    for (int i = 0; i < rc.size(); i++) {
      PgOutputMessage.Relation.Column c = rc.get(i);
      ColumnSchema known = catalog.get(c.name());
      if (known != null && known.typeOid() == c.typeOid()) {
        columns.add(
            new ColumnSchema(
                c.name(),
                c.typeOid(),
                c.typeModifier(),
                known.typeModifier() == c.typeModifier() ? known.typeName() : typeName(c),
                known.ordinalPosition(),
                known.primaryKeyOrdinal(),
                known.nullable(),
                known.defaultExpression()));
      } else {
        columns.add(
            new ColumnSchema(
                c.name(), c.typeOid(), c.typeModifier(), typeName(c), 0, 0, true, null));
      }
      if (c.isKey()) {
        keys.add(i);
      }
    }
    IdentityKind identity =
        switch (relation.replicaIdentity()) {
          case FULL -> IdentityKind.FULL;
          case NOTHING -> IdentityKind.NOTHING;
          case INDEX -> IdentityKind.INDEX;
          case DEFAULT -> keys.isEmpty() ? IdentityKind.NOTHING : IdentityKind.PRIMARY_KEY;
        };
    int[] identityIdx =
        identity == IdentityKind.FULL || identity == IdentityKind.NOTHING
            ? new int[0]
            : keys.stream().mapToInt(Integer::intValue).toArray();
    boolean[] mask = new boolean[columns.size()];
    Arrays.fill(mask, true);
    return ReplicatedTableSchema.of(
        new TableSchema(id, name, columns, snapshotLsn), mask, identity, identityIdx);
  }

  private String typeName(PgOutputMessage.Relation.Column c) {
    try (var ps = connection().prepareStatement("SELECT format_type(?::oid, ?)")) {
      ps.setLong(1, Integer.toUnsignedLong(c.typeOid()));
      ps.setInt(2, c.typeModifier());
      try (var rs = ps.executeQuery()) {
        return rs.next() && rs.getString(1) != null ? rs.getString(1) : "oid " + c.typeOid();
      }
    } catch (SQLException e) {
      return "oid " + c.typeOid();
    }
  }

  @Override
  public List<ValueCodec> codecs(int[] typeOids) {
    List<Integer> unknown = new ArrayList<>();
    for (int oid : typeOids) {
      if (!TypeRegistry.isBuiltin(oid)) {
        unknown.add(oid);
      }
    }
    if (!unknown.isEmpty()) {
      types.load(connection(), unknown);
    }
    return types.codecs(typeOids);
  }

  /**
   * Returns true when every given type decodes from binary.
   *
   * @param typeOids the types
   * @return whether binary transfer can be used for them
   */
  boolean allDecodeBinary(List<Integer> typeOids) {
    List<Integer> unknown = new ArrayList<>();
    for (int oid : typeOids) {
      if (!TypeRegistry.isBuiltin(oid)) {
        unknown.add(oid);
      }
    }
    if (!unknown.isEmpty()) {
      types.load(connection(), unknown);
    }
    for (int oid : typeOids) {
      if (!types.canDecodeBinary(oid)) {
        return false;
      }
    }
    return true;
  }

  @Override
  public void close() {
    if (connection != null) {
      try {
        connection.close();
      } catch (SQLException e) {
        LOG.debug("closing the catalog connection failed: {}", e.getMessage());
      }
      connection = null;
    }
  }
}
