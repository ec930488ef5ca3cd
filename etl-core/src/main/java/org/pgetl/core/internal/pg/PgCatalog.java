package org.pgetl.core.internal.pg;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import org.jspecify.annotations.Nullable;
import org.pgetl.core.internal.decode.ReplicaIdentity;
import org.pgetl.error.ErrorKind;
import org.pgetl.error.EtlException;
import org.pgetl.model.ColumnSchema;
import org.pgetl.model.IdentityKind;
import org.pgetl.model.Lsn;
import org.pgetl.model.ReplicatedTableSchema;
import org.pgetl.model.TableId;
import org.pgetl.model.TableName;
import org.pgetl.model.TableSchema;

/**
 * Catalog queries pgetl needs from the source: publications and their tables, table schemas and
 * replica identities, partitions, size estimates, and server facts.
 *
 * <p>Works on any JDBC connection to the source database: a plain one, a copy connection inside an
 * imported snapshot (then schemas are read as of the snapshot), or the replication connection
 * inside its slot's snapshot transaction. Not thread-safe; the caller owns the connection.
 */
public final class PgCatalog {
  private final Connection connection;
  private final ServerVersion version;

  /**
   * Creates a catalog reader over a connection.
   *
   * @param connection an open connection to the source database
   * @throws EtlException when the server version cannot be read
   */
  public PgCatalog(Connection connection) {
    this.connection = Objects.requireNonNull(connection, "connection");
    this.version = serverVersion(connection);
  }

  /** Reads {@code server_version_num} on a connection. */
  static ServerVersion serverVersion(Connection connection) {
    try (Statement st = connection.createStatement();
        ResultSet rs = st.executeQuery("SELECT current_setting('server_version_num')")) {
      rs.next();
      return new ServerVersion(Integer.parseInt(rs.getString(1)));
    } catch (SQLException e) {
      throw PgErrors.map(e, "could not read the server version");
    }
  }

  /**
   * Returns the server's version.
   *
   * @return the version
   */
  public ServerVersion serverVersion() {
    return version;
  }

  /**
   * Returns the server's {@code wal_sender_timeout} as this role's sessions see it.
   *
   * @return the timeout; {@link Duration#ZERO} when disabled
   * @throws EtlException when the query fails
   */
  public Duration walSenderTimeout() {
    return GucDurations.parse(
        "wal_sender_timeout", queryString("SELECT current_setting('wal_sender_timeout')"));
  }

  /**
   * Returns the current WAL position: {@code pg_current_wal_lsn()}, or on a standby the last
   * replayed position.
   *
   * @return the LSN
   * @throws EtlException when the query fails
   */
  public Lsn currentWalLsn() {
    return Lsn.parse(
        queryString(
            "SELECT (CASE WHEN pg_is_in_recovery() THEN pg_last_wal_replay_lsn()"
                + " ELSE pg_current_wal_lsn() END)::text"));
  }

  /**
   * Returns the publication of that name, or empty when it does not exist.
   *
   * @param name the publication's name, exactly as stored
   * @return the publication, or empty
   * @throws EtlException when the query fails
   */
  public Optional<PublicationInfo> publication(String name) {
    String sql =
        "SELECT pubname, puballtables, pubviaroot, pubinsert, pubupdate, pubdelete, pubtruncate"
            + " FROM pg_publication WHERE pubname = ?";
    try (PreparedStatement ps = connection.prepareStatement(sql)) {
      ps.setString(1, name);
      try (ResultSet rs = ps.executeQuery()) {
        if (!rs.next()) {
          return Optional.empty();
        }
        return Optional.of(
            new PublicationInfo(
                rs.getString(1),
                rs.getBoolean(2),
                rs.getBoolean(3),
                rs.getBoolean(4),
                rs.getBoolean(5),
                rs.getBoolean(6),
                rs.getBoolean(7)));
      }
    } catch (SQLException e) {
      throw PgErrors.map(e, "could not read publication " + name);
    }
  }

  /**
   * Returns the publication, or fails with {@link ErrorKind#PUBLICATION_NOT_FOUND}.
   *
   * @param name the publication's name
   * @return the publication
   * @throws EtlException of kind {@link ErrorKind#PUBLICATION_NOT_FOUND} when it does not exist
   */
  public PublicationInfo requirePublication(String name) {
    return publication(name)
        .orElseThrow(
            () ->
                new EtlException(
                    ErrorKind.PUBLICATION_NOT_FOUND,
                    "publication '" + name + "' does not exist in the source database"));
  }

  /**
   * Returns the tables the publication streams changes of, as {@code pg_get_publication_tables}
   * lists them: with {@code publish_via_partition_root} a partitioned table appears as its root,
   * without it as its leaf partitions. Ordered by oid.
   *
   * @param publication the publication's name
   * @return the table ids
   * @throws EtlException when the query fails
   */
  public List<TableId> publicationTables(String publication) {
    return new ArrayList<>(publishedTables(publication).keySet());
  }

  /**
   * Returns the qualified names of tables, by oid; tables that no longer exist are left out.
   *
   * @param tables the tables
   * @return their names
   * @throws EtlException when the query fails
   */
  public Map<TableId, TableName> tableNames(List<TableId> tables) {
    Map<TableId, TableName> out = new LinkedHashMap<>();
    if (tables.isEmpty()) {
      return out;
    }
    String sql =
        "SELECT c.oid::bigint, n.nspname, c.relname FROM pg_class c"
            + " JOIN pg_namespace n ON n.oid = c.relnamespace"
            + " WHERE c.oid = ANY (?::bigint[]::oid[])";
    try (PreparedStatement ps = connection.prepareStatement(sql)) {
      Long[] oids = new Long[tables.size()];
      for (int i = 0; i < oids.length; i++) {
        oids[i] = tables.get(i).oid();
      }
      ps.setArray(1, connection.createArrayOf("bigint", oids));
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          out.put(new TableId(rs.getLong(1)), new TableName(rs.getString(2), rs.getString(3)));
        }
      }
      return out;
    } catch (SQLException e) {
      throw PgErrors.map(e, "could not read the names of the published tables");
    }
  }

  /**
   * Returns every table of the publication with its row filter and column list (both null before
   * PostgreSQL 15, where publications have neither), keyed and ordered by table oid.
   *
   * <p>These are the tables pgoutput sends changes as, and so the pipeline's tables: with {@code
   * publish_via_partition_root} a partitioned table appears as its root (or as the topmost table
   * the publication names) and none of its partitions does, whether the publication names tables,
   * schemas or all tables; a partition appears on its own only when no ancestor of it is published.
   * Without the option every leaf partition appears on its own.
   *
   * @param publication the publication's name
   * @return the published tables
   * @throws EtlException when the query fails
   */
  public Map<TableId, PublishedTable> publishedTables(String publication) {
    String sql;
    if (version.supportsRowFiltersAndColumnLists()) {
      // PostgreSQL 15+: relid, attrs (null or the published attnums), qual (null or the filter).
      sql =
          "SELECT gpt.relid::bigint, "
              + "(SELECT array_agg(a.attname ORDER BY a.attnum)::text[] FROM pg_attribute a"
              + "  WHERE a.attrelid = gpt.relid AND a.attnum = ANY (gpt.attrs::int2[])), "
              + "pg_get_expr(gpt.qual, gpt.relid), "
              + "(SELECT count(*) FROM pg_attribute a WHERE a.attrelid = gpt.relid AND a.attnum > 0"
              + "  AND NOT a.attisdropped AND a.attgenerated = '') "
              + "FROM pg_get_publication_tables(?::text) gpt ORDER BY 1";
    } else {
      sql =
          "SELECT DISTINCT gpt.relid::bigint, NULL::text[], NULL::text, 0"
              + " FROM pg_get_publication_tables(?::text) gpt ORDER BY 1";
    }
    try (PreparedStatement ps = connection.prepareStatement(sql)) {
      ps.setString(1, publication);
      try (ResultSet rs = ps.executeQuery()) {
        Map<TableId, PublishedTable> out = new LinkedHashMap<>();
        while (rs.next()) {
          TableId id = new TableId(rs.getLong(1));
          java.sql.Array arr = rs.getArray(2);
          List<String> cols = arr == null ? null : Arrays.asList((String[]) arr.getArray());
          // PostgreSQL 16+ lists every column when the publication has no column list.
          if (cols != null && cols.size() == rs.getInt(4)) {
            cols = null;
          }
          out.putIfAbsent(id, new PublishedTable(id, id, rs.getString(3), cols));
        }
        if (viaRoot(publication)) {
          out.keySet().removeAll(partitionsOfListedAncestors(out.keySet()));
        }
        return out;
      }
    } catch (SQLException e) {
      throw PgErrors.map(e, "could not list the tables of publication " + publication);
    }
  }

  private boolean viaRoot(String publication) throws SQLException {
    try (PreparedStatement ps =
        connection.prepareStatement("SELECT pubviaroot FROM pg_publication WHERE pubname = ?")) {
      ps.setString(1, publication);
      try (ResultSet rs = ps.executeQuery()) {
        return rs.next() && rs.getBoolean(1);
      }
    }
  }

  /**
   * Returns the tables of {@code listed} that are partitions of another table of {@code listed}.
   * With {@code publish_via_partition_root}, pgoutput publishes such a partition's changes as its
   * topmost listed ancestor, so it is never a table of its own. PostgreSQL 15 and later leave such
   * partitions out of {@code pg_get_publication_tables} already; older servers list a partition and
   * its root both when the publication names both.
   */
  private List<TableId> partitionsOfListedAncestors(Set<TableId> listed) throws SQLException {
    List<TableId> out = new ArrayList<>();
    if (listed.isEmpty()) {
      return out;
    }
    Long[] oids = new Long[listed.size()];
    int i = 0;
    for (TableId t : listed) {
      oids[i++] = t.oid();
    }
    String sql =
        "SELECT DISTINCT c.oid::bigint FROM unnest(?::bigint[]::oid[]) AS c(oid),"
            + " pg_partition_ancestors(c.oid) a"
            + " WHERE a.relid <> c.oid AND a.relid = ANY (?::bigint[]::oid[])";
    try (PreparedStatement ps = connection.prepareStatement(sql)) {
      java.sql.Array array = connection.createArrayOf("bigint", oids);
      ps.setArray(1, array);
      ps.setArray(2, array);
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          out.add(new TableId(rs.getLong(1)));
        }
      }
    }
    return out;
  }

  /**
   * Returns how the publication publishes a table: its own entry, or for a partition of a table
   * published with {@code publish_via_partition_root} the entry of its topmost published ancestor
   * (whose row filter and column list then apply when copying the partition). Empty when the
   * publication does not publish the table.
   *
   * @param publication the publication's name
   * @param table a table, possibly a leaf partition
   * @return the entry that applies, or empty
   * @throws EtlException when a query fails
   */
  public Optional<PublishedTable> publishedTable(String publication, TableId table) {
    Map<TableId, PublishedTable> all = publishedTables(publication);
    PublishedTable own = all.get(table);
    if (own != null) {
      return Optional.of(own);
    }
    // pg_partition_ancestors lists the table first, then its parents upwards: take the topmost
    // ancestor the publication lists (it is listed only with publish_via_partition_root, or when
    // the publication names an ancestor of a partition that pgoutput publishes as itself).
    List<Long> ancestors = new ArrayList<>();
    try (PreparedStatement ps =
        connection.prepareStatement(
            "SELECT relid::bigint FROM pg_partition_ancestors(?::bigint::oid)")) {
      ps.setLong(1, table.oid());
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          ancestors.add(rs.getLong(1));
        }
      }
    } catch (SQLException e) {
      throw PgErrors.map(e, "could not read the partition ancestors of table " + table);
    }
    for (int i = ancestors.size() - 1; i >= 1; i--) {
      PublishedTable entry = all.get(new TableId(ancestors.get(i)));
      if (entry != null) {
        return Optional.of(entry.forPartition(table));
      }
    }
    return Optional.empty();
  }

  /**
   * Returns the partition ancestors of each of the tables ({@code pg_partition_ancestors}), nearest
   * first and without the table itself; a table that is not a partition has none.
   *
   * @param tables the tables
   * @return per table that has ancestors, its ancestors
   * @throws EtlException when the query fails
   */
  public Map<TableId, List<TableId>> partitionAncestors(java.util.Collection<TableId> tables) {
    Map<TableId, List<TableId>> out = new LinkedHashMap<>();
    if (tables.isEmpty()) {
      return out;
    }
    Long[] oids = new Long[tables.size()];
    int i = 0;
    for (TableId t : tables) {
      oids[i++] = t.oid();
    }
    String sql =
        "SELECT c.oid::bigint, a.relid::bigint"
            + " FROM unnest(?::bigint[]::oid[]) AS c(oid)"
            + " CROSS JOIN LATERAL pg_partition_ancestors(c.oid) WITH ORDINALITY AS a(relid, n)"
            + " WHERE a.relid <> c.oid ORDER BY 1, a.n";
    try (PreparedStatement ps = connection.prepareStatement(sql)) {
      ps.setArray(1, connection.createArrayOf("bigint", oids));
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          out.computeIfAbsent(new TableId(rs.getLong(1)), k -> new ArrayList<>())
              .add(new TableId(rs.getLong(2)));
        }
      }
      return out;
    } catch (SQLException e) {
      throw PgErrors.map(e, "could not read the partition ancestors of " + tables);
    }
  }

  /**
   * Reads a table's schema: its name and its columns in {@code attnum} order, without dropped and
   * generated columns (pgoutput publishes neither), with the primary-key position of each column.
   *
   * @param table the table
   * @return the schema, with snapshot LSN {@link Lsn#ZERO}
   * @throws EtlException of kind {@link ErrorKind#SOURCE_SCHEMA_ERROR} when the table does not
   *     exist, or the kind {@link PgErrors} decides
   */
  public TableSchema tableSchema(TableId table) {
    TableName name = tableName(table).name;
    List<Integer> pk = indexKey(table, "indisprimary");
    Map<Integer, Integer> pkOrdinal = new HashMap<>();
    for (int i = 0; i < pk.size(); i++) {
      pkOrdinal.put(pk.get(i), i + 1);
    }
    String sql =
        "SELECT a.attname, a.atttypid::bigint, a.atttypmod, format_type(a.atttypid, a.atttypmod),"
            + " a.attnum, a.attnotnull, pg_get_expr(d.adbin, d.adrelid)"
            + " FROM pg_attribute a"
            + " LEFT JOIN pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum"
            + " WHERE a.attrelid = ?::bigint::oid AND a.attnum > 0 AND NOT a.attisdropped"
            + " AND a.attgenerated = ''"
            + " ORDER BY a.attnum";
    List<ColumnSchema> columns = new ArrayList<>();
    try (PreparedStatement ps = connection.prepareStatement(sql)) {
      ps.setLong(1, table.oid());
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          int attnum = rs.getInt(5);
          columns.add(
              new ColumnSchema(
                  rs.getString(1),
                  (int) rs.getLong(2),
                  rs.getInt(3),
                  rs.getString(4),
                  attnum,
                  pkOrdinal.getOrDefault(attnum, 0),
                  !rs.getBoolean(6),
                  rs.getString(7)));
        }
      }
    } catch (SQLException e) {
      throw PgErrors.map(e, "could not read the columns of table " + name + " (" + table + ")");
    }
    return new TableSchema(table, name, columns, Lsn.ZERO);
  }

  /**
   * Reads every column of a table by attnum, dropped and generated ones included, as the catalog
   * holds them now (or as of the connection's snapshot).
   *
   * @param table the table
   * @return the columns in attnum order; empty when the table does not exist (any more)
   * @throws EtlException of the kind {@link PgErrors} decides when the query fails
   */
  public List<Attribute> attributes(TableId table) {
    List<Integer> pk = indexKey(table, "indisprimary");
    String sql =
        "SELECT a.attnum, a.attisdropped, a.attgenerated <> '', a.attname, a.atttypid::bigint,"
            + " a.atttypmod, CASE WHEN a.attisdropped THEN NULL"
            + " ELSE format_type(a.atttypid, a.atttypmod) END,"
            + " a.attnotnull, pg_get_expr(d.adbin, d.adrelid)"
            + " FROM pg_attribute a"
            + " LEFT JOIN pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum"
            + " WHERE a.attrelid = ?::bigint::oid AND a.attnum > 0"
            + " ORDER BY a.attnum";
    List<Attribute> out = new ArrayList<>();
    try (PreparedStatement ps = connection.prepareStatement(sql)) {
      ps.setLong(1, table.oid());
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          int attnum = rs.getInt(1);
          out.add(
              new Attribute(
                  attnum,
                  rs.getBoolean(2),
                  rs.getBoolean(3),
                  rs.getString(4),
                  (int) rs.getLong(5),
                  rs.getInt(6),
                  rs.getString(7),
                  rs.getBoolean(8),
                  rs.getString(9),
                  pk.indexOf(attnum) + 1));
        }
      }
    } catch (SQLException e) {
      throw PgErrors.map(e, "could not read the attributes of table " + table);
    }
    return out;
  }

  /**
   * Reads a table's replica identity and the attnums of its identity columns in key order.
   *
   * @param table the table
   * @return the replica identity
   * @throws EtlException of kind {@link ErrorKind#SOURCE_SCHEMA_ERROR} when the table does not
   *     exist, or the kind {@link PgErrors} decides
   */
  public TableIdentity replicaIdentity(TableId table) {
    char code = tableName(table).replident;
    ReplicaIdentity setting = ReplicaIdentity.ofCode(code);
    if (setting == null) {
      throw new EtlException(
          ErrorKind.SOURCE_SCHEMA_ERROR,
          "table " + table + " has an unknown replica identity '" + code + "' in pg_class");
    }
    return switch (setting) {
      case FULL -> new TableIdentity(setting, IdentityKind.FULL, List.of());
      case NOTHING -> new TableIdentity(setting, IdentityKind.NOTHING, List.of());
      case INDEX -> {
        List<Integer> key = indexKey(table, "indisreplident");
        // An identity index that was dropped leaves relreplident at 'i' and identifies nothing.
        yield key.isEmpty()
            ? new TableIdentity(setting, IdentityKind.NOTHING, List.of())
            : new TableIdentity(setting, IdentityKind.INDEX, key);
      }
      case DEFAULT -> {
        List<Integer> key = indexKey(table, "indisprimary");
        yield key.isEmpty()
            ? new TableIdentity(setting, IdentityKind.NOTHING, List.of())
            : new TableIdentity(setting, IdentityKind.PRIMARY_KEY, key);
      }
    };
  }

  /**
   * Reads a table's schema and replica identity and builds its replicated schema for the given
   * column list.
   *
   * @param table the table
   * @param publishedColumns the publication's column list, or null for every column
   * @return the replicated schema
   * @throws EtlException as {@link #tableSchema(TableId)} and {@link #replicated(TableSchema,
   *     TableIdentity, List)} do
   */
  public ReplicatedTableSchema replicatedTableSchema(
      TableId table, @Nullable List<String> publishedColumns) {
    return replicated(tableSchema(table), replicaIdentity(table), publishedColumns);
  }

  /**
   * Builds a replicated schema: the published columns of {@code schema}, and the identity columns
   * as indexes into them.
   *
   * @param schema the full table schema
   * @param identity the table's replica identity
   * @param publishedColumns the publication's column list, or null for every column
   * @return the replicated schema
   * @throws EtlException of kind {@link ErrorKind#SOURCE_SCHEMA_ERROR} when the column list names a
   *     column the table does not have, or {@link ErrorKind#SOURCE_REPLICA_IDENTITY_ERROR} when it
   *     leaves out an identity column
   */
  public static ReplicatedTableSchema replicated(
      TableSchema schema, TableIdentity identity, @Nullable List<String> publishedColumns) {
    List<ColumnSchema> cols = schema.columns();
    boolean[] mask = new boolean[cols.size()];
    if (publishedColumns == null) {
      Arrays.fill(mask, true);
    } else {
      for (String c : publishedColumns) {
        int i = schema.indexOf(c);
        if (i < 0) {
          throw new EtlException(
              ErrorKind.SOURCE_SCHEMA_ERROR,
              "the publication's column list of table "
                  + schema.name()
                  + " names column '"
                  + c
                  + "', which the table does not have");
        }
        mask[i] = true;
      }
    }
    // Index of each column in the replicated column list, by attnum.
    Map<Integer, Integer> replicatedIndex = new HashMap<>();
    int n = 0;
    for (int i = 0; i < cols.size(); i++) {
      if (mask[i]) {
        replicatedIndex.put(cols.get(i).ordinalPosition(), n++);
      }
    }
    int[] identityIndexes = new int[identity.keyAttnums().size()];
    for (int k = 0; k < identityIndexes.length; k++) {
      int attnum = identity.keyAttnums().get(k);
      Integer idx = replicatedIndex.get(attnum);
      if (idx == null) {
        throw new EtlException(
            ErrorKind.SOURCE_REPLICA_IDENTITY_ERROR,
            "the replica identity of table "
                + schema.name()
                + " uses column attnum "
                + attnum
                + ", which the publication's column list leaves out",
            "add every primary-key or identity-index column to the publication's column list");
      }
      identityIndexes[k] = idx;
    }
    return ReplicatedTableSchema.of(schema, mask, identity.kind(), identityIndexes);
  }

  /**
   * Returns the leaf partitions of a table ({@code pg_partition_tree}), ordered by oid: the table
   * itself when it is not partitioned, nothing for a partitioned table without partitions.
   *
   * @param table the table
   * @return the leaves
   * @throws EtlException when the query fails
   */
  public List<TableId> partitionLeaves(TableId table) {
    String sql =
        "SELECT relid::bigint FROM pg_partition_tree(?::bigint::oid) WHERE isleaf ORDER BY 1";
    List<TableId> out = new ArrayList<>();
    try (PreparedStatement ps = connection.prepareStatement(sql)) {
      ps.setLong(1, table.oid());
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          out.add(new TableId(rs.getLong(1)));
        }
      }
    } catch (SQLException e) {
      throw PgErrors.map(e, "could not list the partitions of table " + table);
    }
    if (out.isEmpty() && tableName(table).relkind != 'p') {
      // pg_partition_tree returns nothing for relations it does not know as tables.
      return List.of(table);
    }
    return out;
  }

  /**
   * Returns size estimates of a table: {@code reltuples}, {@code relpages}, the current block count
   * and its bytes with TOAST.
   *
   * @param table the table
   * @return the estimates
   * @throws EtlException of kind {@link ErrorKind#SOURCE_SCHEMA_ERROR} when the table does not
   *     exist, or the kind {@link PgErrors} decides
   */
  public TableSize tableSize(TableId table) {
    String sql =
        "SELECT c.reltuples::float8, c.relpages::bigint,"
            + " pg_relation_size(c.oid) / current_setting('block_size')::bigint,"
            + " pg_table_size(c.oid)"
            + " FROM pg_class c WHERE c.oid = ?::bigint::oid";
    try (PreparedStatement ps = connection.prepareStatement(sql)) {
      ps.setLong(1, table.oid());
      try (ResultSet rs = ps.executeQuery()) {
        if (!rs.next()) {
          throw missingTable(table);
        }
        double tuples = rs.getDouble(1);
        long rows = tuples < 0 ? -1 : (long) tuples;
        return new TableSize(rows, rs.getLong(2), rs.getLong(3), rs.getLong(4));
      }
    } catch (SQLException e) {
      throw PgErrors.map(e, "could not read the size of table " + table);
    }
  }

  private record RelInfo(TableName name, char relkind, char replident) {}

  private RelInfo tableName(TableId table) {
    String sql =
        "SELECT n.nspname, c.relname, c.relkind::text, c.relreplident::text"
            + " FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace"
            + " WHERE c.oid = ?::bigint::oid";
    try (PreparedStatement ps = connection.prepareStatement(sql)) {
      ps.setLong(1, table.oid());
      try (ResultSet rs = ps.executeQuery()) {
        if (!rs.next()) {
          throw missingTable(table);
        }
        return new RelInfo(
            new TableName(rs.getString(1), rs.getString(2)),
            rs.getString(3).charAt(0),
            rs.getString(4).charAt(0));
      }
    } catch (SQLException e) {
      throw PgErrors.map(e, "could not read table " + table);
    }
  }

  private static EtlException missingTable(TableId table) {
    return new EtlException(
        ErrorKind.SOURCE_SCHEMA_ERROR,
        "table with oid " + table + " does not exist in the source database",
        "it was dropped, or the publication lists a table of another database");
  }

  /**
   * Returns the attnums of the key columns of the first index of the table with the given flag, in
   * key order: the first {@code indnkeyatts} entries of {@code indkey}, without the {@code INCLUDE}
   * columns that follow them (they are stored in the index but identify nothing).
   */
  private List<Integer> indexKey(TableId table, String flag) {
    String sql =
        "SELECT i.indkey::text, i.indnkeyatts FROM pg_index i"
            + " WHERE i.indrelid = ?::bigint::oid AND i."
            + flag;
    try (PreparedStatement ps = connection.prepareStatement(sql)) {
      ps.setLong(1, table.oid());
      try (ResultSet rs = ps.executeQuery()) {
        if (!rs.next()) {
          return List.of();
        }
        List<Integer> all = parseInt2Vector(rs.getString(1));
        int keyColumns = rs.getInt(2);
        return keyColumns < all.size() ? List.copyOf(all.subList(0, keyColumns)) : all;
      }
    } catch (SQLException e) {
      throw PgErrors.map(e, "could not read the indexes of table " + table);
    }
  }

  /** Parses an {@code int2vector} text: numbers separated by spaces; 0 (an expression) is kept. */
  static List<Integer> parseInt2Vector(String text) {
    List<Integer> out = new ArrayList<>();
    if (text == null) {
      return out;
    }
    for (String part : text.trim().split("\\s+", -1)) {
      if (!part.isEmpty()) {
        out.add(Integer.parseInt(part));
      }
    }
    return out;
  }

  private String queryString(String sql) {
    try (Statement st = connection.createStatement();
        ResultSet rs = st.executeQuery(sql)) {
      rs.next();
      return rs.getString(1);
    } catch (SQLException e) {
      throw PgErrors.map(e, "query failed: " + sql);
    }
  }
}
