package org.pgetl.store.postgres;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import org.jspecify.annotations.Nullable;
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
 * One stored schema version as its rows hold it ({@code table_schemas} and its {@code
 * table_columns}), turned back into the {@link ReplicatedTableSchema} it was stored from; and the
 * column values that store a replicated schema.
 *
 * <p>A version stored before store version 2 has no identity kind: it is read as every column
 * published and the primary key as identity, which is what such a version meant.
 */
final class SchemaRows {
  final TableId table;
  final TableName name;
  final Lsn snapshot;
  private final String identityCode;
  private final List<ColumnSchema> columns = new ArrayList<>();
  private final List<Boolean> replicated = new ArrayList<>();
  private final List<Integer> identityOrdinals = new ArrayList<>();

  SchemaRows(TableId table, TableName name, Lsn snapshot, String identityCode) {
    this.table = table;
    this.name = name;
    this.snapshot = snapshot;
    this.identityCode = identityCode;
  }

  /** Adds the next column, in {@code column_index} order. */
  void add(ColumnSchema column, boolean isReplicated, int identityOrdinal) {
    columns.add(column);
    replicated.add(isReplicated);
    identityOrdinals.add(identityOrdinal);
  }

  /** Builds the replicated schema these rows describe. */
  ReplicatedTableSchema build() {
    TableSchema schema = new TableSchema(table, name, columns, snapshot);
    if (identityCode == null) {
      return ReplicatedTableSchema.allColumns(schema);
    }
    boolean[] mask = new boolean[columns.size()];
    int keyColumns = 0;
    for (int i = 0; i < mask.length; i++) {
      mask[i] = replicated.get(i);
      if (identityOrdinals.get(i) > keyColumns) {
        keyColumns = identityOrdinals.get(i);
      }
    }
    int[] identity = new int[keyColumns];
    int replicatedIndex = 0;
    for (int i = 0; i < mask.length; i++) {
      int ordinal = identityOrdinals.get(i);
      if (ordinal > 0) {
        if (!mask[i]) {
          throw corrupt("identity column " + columns.get(i).name() + " is not replicated");
        }
        identity[ordinal - 1] = replicatedIndex;
      }
      if (mask[i]) {
        replicatedIndex++;
      }
    }
    try {
      return ReplicatedTableSchema.of(schema, mask, identityKind(identityCode), identity);
    } catch (IllegalArgumentException e) {
      throw corrupt(e.getMessage());
    }
  }

  private EtlException corrupt(@Nullable String what) {
    return new EtlException(
        ErrorKind.INVALID_STATE,
        "the stored schema version of table "
            + name
            + " ("
            + table
            + ") at "
            + snapshot
            + " cannot be read by this version of pgetl",
        what);
  }

  /**
   * Returns the {@code identity_kind} value of a kind: its name in lower case.
   *
   * @param kind the kind
   * @return the stored value
   */
  static String identityCode(IdentityKind kind) {
    return kind.name().toLowerCase(Locale.ROOT);
  }

  private IdentityKind identityKind(String code) {
    for (IdentityKind k : IdentityKind.values()) {
      if (identityCode(k).equals(code)) {
        return k;
      }
    }
    throw corrupt("unknown identity kind '" + code + "'");
  }

  /**
   * Returns, per column of the full table schema, its 1-based position in the replica identity, 0
   * when it is not part of it.
   *
   * @param schema the replicated schema
   * @return one ordinal per column of {@code schema.tableSchema()}
   */
  static int[] identityOrdinals(ReplicatedTableSchema schema) {
    int n = schema.tableSchema().columns().size();
    int[] replicatedToTable = new int[schema.columnCount()];
    int r = 0;
    for (int i = 0; i < n; i++) {
      if (schema.isReplicated(i)) {
        replicatedToTable[r++] = i;
      }
    }
    int[] out = new int[n];
    int[] identity = schema.identityColumnIndexes();
    for (int k = 0; k < identity.length; k++) {
      out[replicatedToTable[identity[k]]] = k + 1;
    }
    return out;
  }
}
