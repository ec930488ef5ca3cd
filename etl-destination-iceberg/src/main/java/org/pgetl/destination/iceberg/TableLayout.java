package org.pgetl.destination.iceberg;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.iceberg.Schema;
import org.apache.iceberg.Table;
import org.apache.iceberg.Transaction;
import org.apache.iceberg.UpdateSchema;
import org.apache.iceberg.types.Type;
import org.apache.iceberg.types.Types;
import org.jspecify.annotations.Nullable;
import org.pgetl.error.ErrorKind;
import org.pgetl.error.EtlException;
import org.pgetl.model.ColumnSchema;
import org.pgetl.model.IdentityKind;
import org.pgetl.model.ReplicatedTableSchema;

/**
 * How a source table's columns sit in its Iceberg table: the Iceberg schema made for a replicated
 * schema, the field of each source column, and the schema changes that follow a source change.
 *
 * <p>Source columns are matched to Iceberg fields by {@code attnum}, kept in the table property
 * {@code pgetl.attnums} ({@code attnum:fieldId,...}), so that a renamed column is renamed and a
 * dropped and re-added column of the same name is a new field. Key columns (the replica identity of
 * a table with a primary key or an identity index) are required fields and the table's identifier
 * fields. In changelog mode three more fields lead the row: {@code _pgetl_op}, {@code
 * _pgetl_commit_lsn}, {@code _pgetl_tx_ordinal}, and one ends it: {@code _pgetl_unchanged}.
 */
final class TableLayout {
  /** The table property that maps attnums to field ids. */
  static final String ATTNUMS = "pgetl.attnums";

  /** The column of a table without source columns (Parquet needs one): always null. */
  static final String NO_COLUMNS = "_pgetl_no_columns";

  static final String OP = "_pgetl_op";
  static final String COMMIT_LSN = "_pgetl_commit_lsn";
  static final String TX_ORDINAL = "_pgetl_tx_ordinal";
  static final String UNCHANGED = "_pgetl_unchanged";

  /** The changelog's own column names, which a source column cannot take there. */
  private static final Set<String> RESERVED = Set.of(OP, COMMIT_LSN, TX_ORDINAL, UNCHANGED);

  private TableLayout() {}

  /** Whether the table is written by key in upsert mode: a primary key or an identity index. */
  static boolean keyed(ReplicatedTableSchema schema) {
    return (schema.identity() == IdentityKind.PRIMARY_KEY
            || schema.identity() == IdentityKind.INDEX)
        && schema.identityColumnIndexes().length > 0;
  }

  /**
   * The Iceberg schema of a new table for a replicated schema.
   *
   * @param schema the source table
   * @param changelog whether the table is a changelog
   * @return the schema (Iceberg assigns fresh field ids when it creates the table)
   */
  static Schema create(ReplicatedTableSchema schema, boolean changelog) {
    List<Types.NestedField> fields = new ArrayList<>();
    Set<Integer> identifiers = new HashSet<>();
    int id = 1;
    if (changelog) {
      fields.add(Types.NestedField.required(id++, OP, Types.StringType.get()));
      fields.add(Types.NestedField.required(id++, COMMIT_LSN, Types.LongType.get()));
      fields.add(Types.NestedField.required(id++, TX_ORDINAL, Types.LongType.get()));
    }
    Set<Integer> keyIndexes = new HashSet<>();
    if (!changelog && keyed(schema)) {
      for (int i : schema.identityColumnIndexes()) {
        keyIndexes.add(i);
      }
    }
    List<ColumnSchema> columns = schema.columns();
    for (int i = 0; i < columns.size(); i++) {
      ColumnSchema c = columns.get(i);
      if (changelog && RESERVED.contains(c.name())) {
        throw new EtlException(
            ErrorKind.DESTINATION_SCHEMA_ERROR,
            "table " + schema.name() + " has a column named " + c.name(),
            "a changelog table's own columns are "
                + String.join(", ", List.of(OP, COMMIT_LSN, TX_ORDINAL, UNCHANGED))
                + "; rename the column, leave it out of the publication's column list, or use"
                + " upsert mode",
            null);
      }
      Type type = IcebergTypes.forColumn(c);
      int fieldId = id++;
      if (keyIndexes.contains(i)) {
        if (type.typeId() == Type.TypeID.FLOAT || type.typeId() == Type.TypeID.DOUBLE) {
          throw new EtlException(
              ErrorKind.DESTINATION_SCHEMA_ERROR,
              "table " + schema.name() + " has a key column of a floating-point type: " + c.name(),
              "Iceberg's identifier fields cannot be float or double; use changelog mode, or"
                  + " give the table another primary key or REPLICA IDENTITY USING INDEX",
              null);
        }
        fields.add(Types.NestedField.required(fieldId, c.name(), type));
        identifiers.add(fieldId);
      } else {
        fields.add(Types.NestedField.optional(fieldId, c.name(), type));
      }
    }
    if (columns.isEmpty() && !changelog) {
      fields.add(Types.NestedField.optional(id++, NO_COLUMNS, Types.BooleanType.get()));
    }
    if (changelog) {
      fields.add(Types.NestedField.optional(id, UNCHANGED, Types.StringType.get()));
    }
    return new Schema(fields, identifiers);
  }

  /**
   * Returns the field id of each published column of {@code schema}, in column order, from the
   * table's attnum map; -1 for a column the table does not have yet.
   */
  static int[] fieldIds(Table table, ReplicatedTableSchema schema) {
    Map<Integer, Integer> attnums = attnums(table, schema);
    Schema current = table.schema();
    int[] ids = new int[schema.columnCount()];
    for (int i = 0; i < ids.length; i++) {
      Integer id = attnums.get(schema.columns().get(i).ordinalPosition());
      ids[i] = id != null && current.findField(id) != null ? id : -1;
    }
    return ids;
  }

  /**
   * Brings the table's schema to {@code schema}: adds, drops, renames and widens columns, in one
   * schema update with the new attnum map. Throws when the change has no Iceberg form (a narrowed
   * or retyped column, a changed key).
   *
   * @return whether anything changed
   */
  static boolean evolve(Table table, ReplicatedTableSchema schema, boolean changelog) {
    Map<Integer, Integer> attnums = attnums(table, schema);
    Schema current = table.schema();
    Transaction tx = table.newTransaction();
    UpdateSchema update = tx.updateSchema();
    boolean changed = false;
    Map<Integer, Integer> next = new HashMap<>();
    Set<Integer> wantKeys = new HashSet<>();
    if (!changelog && keyed(schema)) {
      for (int i : schema.identityColumnIndexes()) {
        wantKeys.add(schema.columns().get(i).ordinalPosition());
      }
    }
    Set<String> names = new HashSet<>();
    for (ColumnSchema c : schema.columns()) {
      names.add(c.name());
    }
    // fields that lose their source column: dropped first, so that their names are free
    for (Map.Entry<Integer, Integer> e : attnums.entrySet()) {
      boolean present = false;
      for (ColumnSchema c : schema.columns()) {
        present |= c.ordinalPosition() == e.getKey();
      }
      Types.NestedField f = current.findField(e.getValue());
      if (!present && f != null) {
        if (current.identifierFieldIds().contains(f.fieldId())) {
          throw keyChange(schema, "key column " + f.name() + " was dropped");
        }
        update.deleteColumn(f.name());
        changed = true;
      }
    }
    for (ColumnSchema c : schema.columns()) {
      Type type = IcebergTypes.forColumn(c);
      Integer id = attnums.get(c.ordinalPosition());
      Types.NestedField f = id == null ? null : current.findField(id);
      if (f == null) {
        if (wantKeys.contains(c.ordinalPosition())) {
          throw keyChange(schema, "column " + c.name() + " joined the key");
        }
        if (current.findField(c.name()) != null && !names.contains(c.name())) {
          throw keyChange(schema, "column " + c.name() + " clashes with a field of the table");
        }
        update.addColumn(c.name(), type);
        changed = true;
        continue;
      }
      next.put(c.ordinalPosition(), f.fieldId());
      if (!IcebergTypes.sameType(f.type(), type)) {
        if (!IcebergTypes.canPromote(f.type(), type)) {
          throw new EtlException(
              ErrorKind.DESTINATION_SCHEMA_ERROR,
              "column "
                  + c.name()
                  + " of table "
                  + schema.name()
                  + " changed to a type its Iceberg column "
                  + f.type()
                  + " cannot take ("
                  + type
                  + ")",
              "Iceberg widens int to long, float to double and decimal(p,s) to a greater p only;"
                  + " copy the table again (pgetl tables resync) to re-create it with the new type",
              null);
        }
        update.updateColumn(f.name(), type.asPrimitiveType());
        changed = true;
      }
      if (!f.name().equals(c.name())) {
        update.renameColumn(f.name(), c.name());
        changed = true;
      }
      boolean wasKey = current.identifierFieldIds().contains(f.fieldId());
      if (wasKey != wantKeys.contains(c.ordinalPosition())) {
        throw keyChange(schema, "the key of the table changed at column " + c.name());
      }
    }
    if (!changed) {
      return false;
    }
    update.commit();
    // the added columns got their ids now: record them in the same commit
    Schema after = tx.table().schema();
    for (ColumnSchema c : schema.columns()) {
      if (!next.containsKey(c.ordinalPosition())) {
        Types.NestedField f = after.findField(c.name());
        if (f != null) {
          next.put(c.ordinalPosition(), f.fieldId());
        }
      }
    }
    tx.updateProperties().set(ATTNUMS, encode(next)).commit();
    tx.commitTransaction();
    table.refresh();
    return true;
  }

  /** Whether the table's current fields match the schema, so that no schema change is needed. */
  static boolean matches(Table table, ReplicatedTableSchema schema, boolean changelog) {
    Map<Integer, Integer> attnums = attnums(table, schema);
    Schema current = table.schema();
    int sourceFields = 0;
    for (ColumnSchema c : schema.columns()) {
      Integer id = attnums.get(c.ordinalPosition());
      Types.NestedField f = id == null ? null : current.findField(id);
      if (f == null || !f.name().equals(c.name()) || !f.type().equals(IcebergTypes.forColumn(c))) {
        return false;
      }
      sourceFields++;
    }
    int extra = changelog ? 4 : schema.columns().isEmpty() ? 1 : 0;
    return current.columns().size() == sourceFields + extra;
  }

  private static EtlException keyChange(ReplicatedTableSchema schema, String what) {
    return new EtlException(
        ErrorKind.DESTINATION_SCHEMA_ERROR,
        "table " + schema.name() + ": " + what + "; its Iceberg table cannot follow",
        "the Iceberg table's identifier fields are the source's key; copy the table again"
            + " (pgetl tables resync) to re-create it",
        null);
  }

  /**
   * The table's attnum map; for a table whose map was not stored yet (a crash right after its
   * creation), the map by column name, which is right for a table just created.
   */
  static Map<Integer, Integer> attnums(Table table, ReplicatedTableSchema schema) {
    Map<Integer, Integer> map = decode(table.properties().get(ATTNUMS));
    if (map.isEmpty()) {
      for (ColumnSchema c : schema.columns()) {
        Types.NestedField f = table.schema().findField(c.name());
        if (f != null) {
          map.put(c.ordinalPosition(), f.fieldId());
        }
      }
    }
    return map;
  }

  static String encode(Map<Integer, Integer> attnums) {
    StringBuilder sb = new StringBuilder();
    attnums.entrySet().stream()
        .sorted(Map.Entry.comparingByKey())
        .forEach(
            e -> {
              if (sb.length() > 0) {
                sb.append(',');
              }
              sb.append(e.getKey()).append(':').append(e.getValue());
            });
    return sb.toString();
  }

  static Map<Integer, Integer> decode(@Nullable String text) {
    Map<Integer, Integer> out = new HashMap<>();
    if (text == null || text.isEmpty()) {
      return out;
    }
    for (String pair : text.split(",", -1)) {
      int colon = pair.indexOf(':');
      out.put(
          Integer.parseInt(pair.substring(0, colon)), Integer.parseInt(pair.substring(colon + 1)));
    }
    return out;
  }
}
