package org.pgetl.testkit.destination;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import org.jspecify.annotations.Nullable;
import org.pgetl.model.ColumnSchema;
import org.pgetl.model.IdentityKind;
import org.pgetl.model.Lsn;
import org.pgetl.model.ReplicatedTableSchema;
import org.pgetl.model.TableId;
import org.pgetl.model.TableName;
import org.pgetl.model.TableSchema;

/**
 * Builds a {@link ReplicatedTableSchema} for tests that call a destination without a pipeline.
 *
 * <pre>{@code
 * ReplicatedTableSchema orders =
 *     SchemaBuilder.table(16401, "public.orders").key("id", "int8").column("note", "text").build();
 * ReplicatedTableSchema withPrice = SchemaBuilder.from(orders).column("price", "numeric").build();
 * }</pre>
 *
 * <p>Every column is published. The identity is the primary key (the {@code key} columns, in the
 * order given), or NOTHING without key columns, unless {@link #identity(IdentityKind)} or {@link
 * #identityIndex(String...)} says otherwise. Type names are {@code pg_type} names ({@code int8},
 * {@code text}, ...; see {@link #column(String, String)}) or any type given by oid.
 */
public final class SchemaBuilder {
  private static final Map<String, Object[]> TYPES =
      Map.ofEntries(
          type("bool", 16, "boolean"),
          type("bytea", 17, "bytea"),
          type("int8", 20, "bigint"),
          type("int2", 21, "smallint"),
          type("int4", 23, "integer"),
          type("text", 25, "text"),
          type("oid", 26, "oid"),
          type("json", 114, "json"),
          type("float4", 700, "real"),
          type("float8", 701, "double precision"),
          type("varchar", 1043, "character varying"),
          type("date", 1082, "date"),
          type("time", 1083, "time without time zone"),
          type("timestamp", 1114, "timestamp without time zone"),
          type("timestamptz", 1184, "timestamp with time zone"),
          type("interval", 1186, "interval"),
          type("numeric", 1700, "numeric"),
          type("uuid", 2950, "uuid"),
          type("jsonb", 3802, "jsonb"),
          type("_int4", 1007, "integer[]"),
          type("_int8", 1016, "bigint[]"),
          type("_text", 1009, "text[]"));

  private static Map.Entry<String, Object[]> type(String name, int oid, String formatted) {
    return Map.entry(name, new Object[] {oid, formatted});
  }

  private final TableId id;
  private TableName name;
  private final List<ColumnSchema> columns = new ArrayList<>();
  private final List<String> keyColumns = new ArrayList<>();
  private @Nullable IdentityKind identity; // null: from the key columns
  private List<String> identityColumns = List.of();
  private Lsn snapshotLsn = Lsn.ZERO;
  private int nextAttnum = 1;

  private SchemaBuilder(TableId id, TableName name) {
    this.id = id;
    this.name = name;
  }

  /**
   * Starts a table.
   *
   * @param oid the table's oid
   * @param name the table's name
   * @return a builder without columns
   */
  public static SchemaBuilder table(long oid, TableName name) {
    return new SchemaBuilder(new TableId(oid), Objects.requireNonNull(name, "name"));
  }

  /**
   * Starts a table.
   *
   * @param oid the table's oid
   * @param name the table's name in SQL form, for example {@code public.orders}
   * @return a builder without columns
   */
  public static SchemaBuilder table(long oid, String name) {
    return table(oid, TableName.parse(name));
  }

  /**
   * Starts from an existing schema: same oid, name, columns and identity, so that a test can add or
   * drop columns for a schema change.
   *
   * @param schema the schema to start from
   * @return a builder holding its columns
   */
  public static SchemaBuilder from(ReplicatedTableSchema schema) {
    SchemaBuilder b = new SchemaBuilder(schema.id(), schema.name());
    int maxAttnum = 0;
    for (ColumnSchema c : schema.columns()) {
      b.columns.add(c);
      maxAttnum = Math.max(maxAttnum, c.ordinalPosition());
    }
    ColumnSchema[] keys =
        schema.columns().stream()
            .filter(ColumnSchema::isPrimaryKey)
            .sorted((x, y) -> Integer.compare(x.primaryKeyOrdinal(), y.primaryKeyOrdinal()))
            .toArray(ColumnSchema[]::new);
    for (ColumnSchema k : keys) {
      b.keyColumns.add(k.name());
    }
    b.nextAttnum = maxAttnum + 1;
    b.snapshotLsn = schema.tableSchema().snapshotLsn();
    b.identity = schema.identity();
    List<String> ids = new ArrayList<>();
    for (int i : schema.identityColumnIndexes()) {
      ids.add(schema.columns().get(i).name());
    }
    b.identityColumns = ids;
    return b;
  }

  /**
   * Adds a primary key column (NOT NULL); key columns form the key in the order added.
   *
   * @param column the column name
   * @param typeName a {@code pg_type} name, see {@link #column(String, String)}
   * @return this builder
   */
  public SchemaBuilder key(String column, String typeName) {
    Object[] t = lookup(typeName);
    keyColumns.add(column);
    columns.add(
        new ColumnSchema(
            column,
            (Integer) t[0],
            -1,
            (String) t[1],
            nextAttnum++,
            keyColumns.size(),
            false,
            null));
    return this;
  }

  /**
   * Adds a nullable column. Known type names: bool, bytea, int2, int4, int8, oid, float4, float8,
   * numeric, text, varchar, json, jsonb, uuid, date, time, timestamp, timestamptz, interval, _int4,
   * _int8, _text.
   *
   * @param column the column name
   * @param typeName a {@code pg_type} name
   * @return this builder
   */
  public SchemaBuilder column(String column, String typeName) {
    Object[] t = lookup(typeName);
    return column(column, (Integer) t[0], (String) t[1]);
  }

  /**
   * Adds a nullable column of any type.
   *
   * @param column the column name
   * @param typeOid the type's oid
   * @param formattedType the type as {@code format_type} prints it
   * @return this builder
   */
  public SchemaBuilder column(String column, int typeOid, String formattedType) {
    columns.add(new ColumnSchema(column, typeOid, -1, formattedType, nextAttnum++, 0, true, null));
    return this;
  }

  /**
   * Removes a column (a later {@code ADD COLUMN} gets a new attnum, as in PostgreSQL).
   *
   * @param column the column name
   * @return this builder
   * @throws IllegalArgumentException when there is no such column
   */
  public SchemaBuilder dropColumn(String column) {
    boolean removed = columns.removeIf(c -> c.name().equals(column));
    if (!removed) {
      throw new IllegalArgumentException("no column " + column + " in " + name);
    }
    keyColumns.remove(column);
    identityColumns = identityColumns.stream().filter(c -> !c.equals(column)).toList();
    return this;
  }

  /**
   * Renames the table.
   *
   * @param newName the new name
   * @return this builder
   */
  public SchemaBuilder name(TableName newName) {
    this.name = Objects.requireNonNull(newName, "newName");
    return this;
  }

  /**
   * Sets the replica identity to {@link IdentityKind#FULL}, {@link IdentityKind#NOTHING} or {@link
   * IdentityKind#PRIMARY_KEY} (the key columns).
   *
   * @param kind the identity; use {@link #identityIndex(String...)} for an index
   * @return this builder
   */
  public SchemaBuilder identity(IdentityKind kind) {
    if (kind == IdentityKind.INDEX) {
      throw new IllegalArgumentException("use identityIndex(columns) for an index identity");
    }
    this.identity = Objects.requireNonNull(kind, "kind");
    this.identityColumns = List.of();
    return this;
  }

  /**
   * Sets the replica identity to a unique index over these columns.
   *
   * @param indexColumns the index's columns, in index order
   * @return this builder
   */
  public SchemaBuilder identityIndex(String... indexColumns) {
    if (indexColumns.length == 0) {
      throw new IllegalArgumentException("an identity index has at least one column");
    }
    this.identity = IdentityKind.INDEX;
    this.identityColumns = List.copyOf(Arrays.asList(indexColumns));
    return this;
  }

  /**
   * Sets the snapshot LSN of the table schema version.
   *
   * @param lsn the LSN from which the version applies; default {@code 0/0}
   * @return this builder
   */
  public SchemaBuilder snapshotLsn(Lsn lsn) {
    this.snapshotLsn = Objects.requireNonNull(lsn, "lsn");
    return this;
  }

  /**
   * Builds the schema.
   *
   * @return the replicated schema
   */
  public ReplicatedTableSchema build() {
    List<ColumnSchema> cols = new ArrayList<>(columns.size());
    for (ColumnSchema c : columns) {
      int pk = keyColumns.indexOf(c.name()) + 1;
      cols.add(
          new ColumnSchema(
              c.name(),
              c.typeOid(),
              c.typeModifier(),
              c.typeName(),
              c.ordinalPosition(),
              pk,
              pk == 0 && c.nullable(),
              c.defaultExpression()));
    }
    TableSchema table = new TableSchema(id, name, cols, snapshotLsn);
    boolean[] mask = new boolean[cols.size()];
    Arrays.fill(mask, true);
    IdentityKind kind =
        identity != null
            ? identity
            : keyColumns.isEmpty() ? IdentityKind.NOTHING : IdentityKind.PRIMARY_KEY;
    List<String> idCols =
        switch (kind) {
          case PRIMARY_KEY -> keyColumns;
          case INDEX -> identityColumns;
          case FULL, NOTHING -> List.of();
        };
    if (kind == IdentityKind.PRIMARY_KEY && idCols.isEmpty()) {
      throw new IllegalStateException(name + ": PRIMARY_KEY identity without key columns");
    }
    int[] idx = new int[idCols.size()];
    for (int i = 0; i < idx.length; i++) {
      idx[i] = table.indexOf(idCols.get(i));
      if (idx[i] < 0) {
        throw new IllegalStateException(name + ": identity column " + idCols.get(i) + " missing");
      }
    }
    return ReplicatedTableSchema.of(table, mask, kind, idx);
  }

  private static Object[] lookup(String typeName) {
    Object[] t = TYPES.get(typeName.toLowerCase(Locale.ROOT));
    if (t == null) {
      throw new IllegalArgumentException(
          "unknown type name " + typeName + "; use column(name, oid, formattedType)");
    }
    return t;
  }
}
