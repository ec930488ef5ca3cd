package org.pgetl.destination.iceberg;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.function.Consumer;
import org.apache.hadoop.conf.Configuration;
import org.apache.iceberg.CatalogUtil;
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
        List<@Nullable Object> values = new ArrayList<>(columns.size());
        for (String c : columns) {
          values.add(r.getField(c));
        }
        row.accept(values);
      }
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}
