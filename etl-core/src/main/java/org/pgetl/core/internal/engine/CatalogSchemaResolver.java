package org.pgetl.core.internal.engine;

import java.sql.Connection;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import org.jspecify.annotations.Nullable;
import org.pgetl.core.internal.apply.SchemaResolver;
import org.pgetl.core.internal.codec.TypeRegistry;
import org.pgetl.core.internal.codec.ValueCodec;
import org.pgetl.core.internal.decode.PgOutputMessage;
import org.pgetl.core.internal.pg.Attribute;
import org.pgetl.core.internal.pg.PgCatalog;
import org.pgetl.core.internal.pg.PgConnector;
import org.pgetl.core.internal.pg.TableIdentity;
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
 * Builds a table's replicated schema from a RELATION message: each published column keeps the
 * message's name, type, modifier and key flag, and takes its attnum from {@link ColumnAlignment}
 * (the version in effect before the message, and the catalog's rows by attnum, dropped ones
 * included). Nullability, default and primary-key position come from the previous version when the
 * column is unchanged there, else from the catalog when the column is unchanged there (the catalog
 * may be ahead of the WAL being decoded), else they are unknown (nullable, no default).
 * Non-built-in types are loaded on demand. One catalog connection, opened lazily, owned by the
 * stream's thread.
 */
public final class CatalogSchemaResolver implements SchemaResolver {
  private static final Logger LOG = LoggerFactory.getLogger(CatalogSchemaResolver.class);

  private final PgConnector connector;
  private final String applicationName;
  private final TypeRegistry types = new TypeRegistry();
  private @Nullable Connection connection;
  private @Nullable PgCatalog catalog;

  /**
   * Creates a resolver that opens its catalog connection on first use.
   *
   * @param connector opens the connection
   * @param applicationName the connection's application name
   */
  public CatalogSchemaResolver(PgConnector connector, String applicationName) {
    this.connector = connector;
    this.applicationName = applicationName;
  }

  private Connection connection() {
    if (connection == null) {
      connection = connector.openPlain(applicationName);
    }
    return connection;
  }

  private PgCatalog catalog() {
    if (catalog == null) {
      catalog = new PgCatalog(connection());
    }
    return catalog;
  }

  @Override
  public ReplicatedTableSchema resolve(
      PgOutputMessage.Relation relation,
      Lsn snapshotLsn,
      @Nullable ReplicatedTableSchema previous) {
    TableId id = new TableId(relation.relationId());
    TableName name = new TableName(relation.namespace(), relation.name());
    // every attnum the table ever had; empty when the table is gone
    List<Attribute> attributes = catalog().attributes(id);
    List<PgOutputMessage.Relation.Column> rc = relation.columns();
    int[] attnums = ColumnAlignment.align(previous, rc, attributes);
    Map<Integer, ColumnSchema> before = new HashMap<>();
    if (previous != null) {
      for (ColumnSchema c : previous.tableSchema().columns()) {
        before.put(c.ordinalPosition(), c);
      }
    }
    Map<Integer, Attribute> now = new HashMap<>();
    for (Attribute a : attributes) {
      if (a.alive()) {
        now.put(a.attnum(), a);
      }
    }
    IdentityKind identity =
        switch (relation.replicaIdentity()) {
          case FULL -> IdentityKind.FULL;
          case NOTHING -> IdentityKind.NOTHING;
          case INDEX -> IdentityKind.INDEX;
          case DEFAULT ->
              rc.stream().anyMatch(PgOutputMessage.Relation.Column::isKey)
                  ? IdentityKind.PRIMARY_KEY
                  : IdentityKind.NOTHING;
        };
    Map<Integer, Integer> pkOrdinals = primaryKeyOrdinals(identity, rc, attnums, before, now);
    List<ColumnSchema> columns = new ArrayList<>();
    for (int i = 0; i < rc.size(); i++) {
      PgOutputMessage.Relation.Column c = rc.get(i);
      ColumnSchema p = before.get(attnums[i]);
      Attribute a = now.get(attnums[i]);
      String typeName;
      if (a != null && sameType(a.typeOid(), a.typeModifier(), c)) {
        typeName = a.typeName();
      } else if (p != null && sameType(p.typeOid(), p.typeModifier(), c)) {
        typeName = p.typeName();
      } else {
        typeName = typeName(c);
      }
      boolean nullable;
      String defaultExpression;
      if (p != null && p.name().equals(c.name()) && sameType(p.typeOid(), p.typeModifier(), c)) {
        nullable = p.nullable();
        defaultExpression = p.defaultExpression();
      } else if (a != null
          && a.name().equals(c.name())
          && sameType(a.typeOid(), a.typeModifier(), c)) {
        nullable = !a.notNull();
        defaultExpression = a.defaultExpression();
      } else {
        // identity columns of a key are NOT NULL; anything else is unknown
        nullable = !(c.isKey() && identity != IdentityKind.FULL);
        defaultExpression = null;
      }
      columns.add(
          new ColumnSchema(
              c.name(),
              c.typeOid(),
              c.typeModifier(),
              typeName,
              attnums[i],
              pkOrdinals.getOrDefault(attnums[i], 0),
              nullable,
              defaultExpression));
    }
    int[] identityIdx =
        identity == IdentityKind.FULL || identity == IdentityKind.NOTHING
            ? new int[0]
            : identityOrder(id, identity, rc, attnums, columns, previous);
    boolean[] mask = new boolean[columns.size()];
    Arrays.fill(mask, true);
    return ReplicatedTableSchema.of(
        new TableSchema(id, name, columns, snapshotLsn), mask, identity, identityIdx);
  }

  private static boolean sameType(
      int typeOid, int typeModifier, PgOutputMessage.Relation.Column c) {
    return typeOid == c.typeOid() && typeModifier == c.typeModifier();
  }

  /**
   * Returns the primary-key position of each attnum: for a DEFAULT identity the message's key
   * columns are the primary key, in the order the previous version or the catalog gives when it has
   * exactly these key columns (attnum order otherwise); for the other identities the message does
   * not tell the primary key, so the previous version's or the catalog's is kept when all of its
   * columns are still there.
   */
  private static Map<Integer, Integer> primaryKeyOrdinals(
      IdentityKind identity,
      List<PgOutputMessage.Relation.Column> rc,
      int[] attnums,
      Map<Integer, ColumnSchema> before,
      Map<Integer, Attribute> now) {
    Map<Integer, Integer> fromBefore = new HashMap<>();
    for (ColumnSchema c : before.values()) {
      if (c.isPrimaryKey()) {
        fromBefore.put(c.ordinalPosition(), c.primaryKeyOrdinal());
      }
    }
    Map<Integer, Integer> fromNow = new HashMap<>();
    for (Attribute a : now.values()) {
      if (a.primaryKeyOrdinal() > 0) {
        fromNow.put(a.attnum(), a.primaryKeyOrdinal());
      }
    }
    Set<Integer> present = new HashSet<>();
    Set<Integer> keys = new TreeSet<>();
    for (int i = 0; i < attnums.length; i++) {
      present.add(attnums[i]);
      if (rc.get(i).isKey()) {
        keys.add(attnums[i]);
      }
    }
    if (identity == IdentityKind.PRIMARY_KEY) {
      if (fromBefore.keySet().equals(keys)) {
        return fromBefore;
      }
      if (fromNow.keySet().equals(keys)) {
        return fromNow;
      }
      Map<Integer, Integer> byAttnum = new HashMap<>();
      int k = 0;
      for (int attnum : keys) {
        byAttnum.put(attnum, ++k);
      }
      return byAttnum;
    }
    if (!fromBefore.isEmpty() && present.containsAll(fromBefore.keySet())) {
      return fromBefore;
    }
    if (!fromNow.isEmpty() && present.containsAll(fromNow.keySet())) {
      return fromNow;
    }
    return Map.of();
  }

  /**
   * Returns the indexes of the identity columns in key order: primary-key order for a primary key;
   * for an identity index, the previous version's order or the catalog's when either has exactly
   * these columns, attnum order otherwise.
   */
  private int[] identityOrder(
      TableId id,
      IdentityKind identity,
      List<PgOutputMessage.Relation.Column> rc,
      int[] attnums,
      List<ColumnSchema> columns,
      @Nullable ReplicatedTableSchema previous) {
    List<Integer> keys = new ArrayList<>();
    for (int i = 0; i < rc.size(); i++) {
      if (rc.get(i).isKey()) {
        keys.add(i);
      }
    }
    if (identity == IdentityKind.PRIMARY_KEY) {
      keys.sort((x, y) -> columns.get(x).primaryKeyOrdinal() - columns.get(y).primaryKeyOrdinal());
      return keys.stream().mapToInt(Integer::intValue).toArray();
    }
    Set<Integer> keyAttnums = new HashSet<>();
    for (int i : keys) {
      keyAttnums.add(attnums[i]);
    }
    List<Integer> order = null;
    if (previous != null && previous.identity() == IdentityKind.INDEX) {
      List<Integer> prev = new ArrayList<>();
      for (int i : previous.identityColumnIndexes()) {
        prev.add(previous.columns().get(i).ordinalPosition());
      }
      if (new HashSet<>(prev).equals(keyAttnums)) {
        order = prev;
      }
    }
    if (order == null) {
      try {
        TableIdentity ri = catalog().replicaIdentity(id);
        if (ri.kind() == IdentityKind.INDEX && new HashSet<>(ri.keyAttnums()).equals(keyAttnums)) {
          order = ri.keyAttnums();
        }
      } catch (EtlException e) {
        // the table is gone from the catalog: the message's attnum order is all there is
        LOG.debug("replica identity lookup of table {} failed: {}", id, e.getMessage());
      }
    }
    if (order == null) {
      return keys.stream().mapToInt(Integer::intValue).toArray();
    }
    int[] out = new int[order.size()];
    for (int k = 0; k < out.length; k++) {
      for (int i : keys) {
        if (attnums[i] == order.get(k)) {
          out[k] = i;
        }
      }
    }
    return out;
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
      catalog = null;
    }
  }
}
