package org.pgetl.destination.iceberg;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.function.Consumer;
import org.apache.hadoop.conf.Configuration;
import org.apache.iceberg.CatalogUtil;
import org.apache.iceberg.Table;
import org.apache.iceberg.catalog.Catalog;
import org.apache.iceberg.catalog.Namespace;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.data.IcebergGenerics;
import org.apache.iceberg.data.Record;
import org.apache.iceberg.io.CloseableIterable;
import org.jspecify.annotations.Nullable;
import org.pgetl.model.TableName;

/**
 * Reads the tables an {@link IcebergDestination} wrote, with Iceberg's generic reader (equality
 * deletes applied): to check a replica, or to read it from code without a query engine. Values are
 * Iceberg's Java values: {@code Integer}, {@code Long}, {@code String}, {@code BigDecimal}, {@code
 * LocalDate}, {@code OffsetDateTime}, {@code ByteBuffer}, {@code List} and so on.
 */
public final class IcebergTableReader {
  private final Catalog catalog;

  private IcebergTableReader(Map<String, String> catalogProperties, String catalogName) {
    this.catalog =
        CatalogUtil.buildIcebergCatalog(catalogName, catalogProperties, new Configuration());
  }

  /**
   * Opens a reader over a filesystem (Hadoop) catalog.
   *
   * @param warehouse the warehouse directory
   * @return the reader
   */
  public static IcebergTableReader hadoop(Path warehouse) {
    return new IcebergTableReader(
        Map.of("type", "hadoop", "warehouse", warehouse.toAbsolutePath().toUri().toString()),
        IcebergDestination.DEFAULT_CATALOG_NAME);
  }

  /**
   * Opens a reader over any catalog, with the properties and name the destination was given.
   *
   * @param catalogProperties the catalog's properties
   * @param catalogName the catalog's name
   * @return the reader
   */
  public static IcebergTableReader of(Map<String, String> catalogProperties, String catalogName) {
    return new IcebergTableReader(
        Objects.requireNonNull(catalogProperties, "catalogProperties"), catalogName);
  }

  /** The catalog this reader reads, for the module's tests. */
  Catalog catalog() {
    return catalog;
  }

  private static TableIdentifier identifier(TableName source) {
    return TableIdentifier.of(Namespace.of(source.schema()), source.name());
  }

  /**
   * Tells whether the Iceberg table of a source table exists (in the namespace named after its
   * schema).
   *
   * @param source the source table's name
   * @return whether it exists
   */
  public boolean exists(TableName source) {
    return catalog.tableExists(identifier(source));
  }

  /**
   * Drops the Iceberg table of a source table and deletes its files.
   *
   * @param source the source table's name
   * @return false when there was no such table
   */
  public boolean drop(TableName source) {
    TableIdentifier id = identifier(source);
    return catalog.tableExists(id) && catalog.dropTable(id, true);
  }

  /**
   * Reads every row of the Iceberg table of a source table: the named columns' values, in order.
   *
   * @param source the source table's name
   * @param columns the columns to read (source column names)
   * @param row called with each row's values (a new list each time)
   */
  public void forEachRow(
      TableName source, List<String> columns, Consumer<List<@Nullable Object>> row) {
    try (CloseableIterable<Record> rows =
        IcebergGenerics.read(catalog.loadTable(identifier(source))).build()) {
      for (Record r : rows) {
        row.accept(values(r, columns));
      }
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /**
   * Tells whether the Iceberg table of a source table is a changelog ({@link
   * IcebergDestination.Mode#CHANGELOG}): one row per change, to be folded.
   *
   * @param source the source table's name
   * @return whether it is a changelog table
   */
  public boolean isChangelog(TableName source) {
    return isChangelog(catalog.loadTable(identifier(source)));
  }

  private static boolean isChangelog(Table table) {
    return "changelog".equals(table.properties().get(IcebergDestination.MODE_PROPERTY));
  }

  /**
   * Folds a changelog table into the source table's rows, in memory, and calls {@code row} with
   * each row left: the changes ordered by {@code (_pgetl_commit_lsn, _pgetl_tx_ordinal)} (copied
   * rows, at 0, first; at a tie, which is the two halves of a key-changing update, the {@code
   * DELETE} first), a {@code TRUNCATE} removes every row, a {@code DELETE} removes its key's row,
   * an {@code INSERT} or {@code UPDATE} sets it, and a column an update names in {@code
   * _pgetl_unchanged} keeps the value of the row it replaces (for a key-changing update: the row
   * the {@code DELETE} of the same change removed). Without key columns (a {@code REPLICA IDENTITY
   * FULL} table without a key, or an insert-only table) rows are counted by their whole value: a
   * {@code DELETE} removes one equal row. The changelog table must fit in memory; a query engine
   * folds a large one with a window over the same order.
   *
   * @param source the source table's name
   * @param keyColumns the source table's key columns (its primary key or replica identity index),
   *     empty for a table without
   * @param columns the columns to return (source column names); every column, for a table without a
   *     key
   * @param row called with each folded row's values (a new list each time), in no particular order
   * @throws IllegalArgumentException when the table is not a changelog table
   */
  public void forEachFoldedRow(
      TableName source,
      List<String> keyColumns,
      List<String> columns,
      Consumer<List<@Nullable Object>> row) {
    Table table = catalog.loadTable(identifier(source)); // loaded once: checked, then read
    if (!isChangelog(table)) {
      throw new IllegalArgumentException(
          "the Iceberg table of " + source + " is not a changelog table: read it with forEachRow");
    }
    List<Record> changes = new ArrayList<>();
    try (CloseableIterable<Record> rows = IcebergGenerics.read(table).build()) {
      rows.forEach(changes::add);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    changes.sort(
        Comparator.comparing((Record r) -> (Long) r.getField(TableLayout.COMMIT_LSN))
            .thenComparing(r -> (Long) r.getField(TableLayout.TX_ORDINAL))
            .thenComparing(r -> !"DELETE".equals(r.getField(TableLayout.OP))));
    // key -> the row's values (in columns order); without a key: whole row -> count
    Map<List<@Nullable Object>, List<@Nullable Object>> byKey = new LinkedHashMap<>();
    Map<List<@Nullable Object>, Integer> counts = new LinkedHashMap<>();
    List<@Nullable Object> removed = null;
    long removedLsn = -1;
    long removedOrdinal = -1;
    for (Record r : changes) {
      String op = (String) r.getField(TableLayout.OP);
      long lsn = (Long) r.getField(TableLayout.COMMIT_LSN);
      long ordinal = (Long) r.getField(TableLayout.TX_ORDINAL);
      List<@Nullable Object> values = values(r, columns);
      switch (op) {
        case "TRUNCATE" -> {
          byKey.clear();
          counts.clear();
        }
        case "DELETE" -> {
          if (keyColumns.isEmpty()) {
            Integer n = counts.get(values);
            removed = n == null ? null : values;
            if (n != null && n > 1) {
              counts.put(values, n - 1);
            } else {
              counts.remove(values);
            }
          } else {
            removed = byKey.remove(values(r, keyColumns));
          }
          removedLsn = lsn;
          removedOrdinal = ordinal;
        }
        default -> {
          List<@Nullable Object> key = keyColumns.isEmpty() ? values : values(r, keyColumns);
          List<@Nullable Object> before = keyColumns.isEmpty() ? null : byKey.get(key);
          if (before == null && lsn == removedLsn && ordinal == removedOrdinal) {
            before = removed; // the other half of a key-changing update
          }
          String unchanged = (String) r.getField(TableLayout.UNCHANGED);
          if (unchanged != null && before != null) {
            List<String> kept = List.of(unchanged.split(","));
            for (int i = 0; i < columns.size(); i++) {
              if (kept.contains(columns.get(i))) {
                values.set(i, before.get(i));
              }
            }
          }
          if (keyColumns.isEmpty()) {
            counts.merge(values, 1, Integer::sum);
          } else {
            byKey.put(key, values);
          }
        }
      }
    }
    byKey.values().forEach(v -> row.accept(new ArrayList<>(v)));
    counts.forEach(
        (v, n) -> {
          for (int i = 0; i < n; i++) {
            row.accept(new ArrayList<>(v));
          }
        });
  }

  private static List<@Nullable Object> values(Record r, List<String> columns) {
    List<@Nullable Object> values = new ArrayList<>(columns.size());
    for (String c : columns) {
      values.add(r.getField(c));
    }
    return values;
  }
}
