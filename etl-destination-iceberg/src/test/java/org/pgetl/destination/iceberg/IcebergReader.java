package org.pgetl.destination.iceberg;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.iceberg.Table;
import org.apache.iceberg.catalog.Catalog;
import org.apache.iceberg.catalog.Namespace;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.data.IcebergGenerics;
import org.apache.iceberg.data.Record;
import org.apache.iceberg.io.CloseableIterable;
import org.jspecify.annotations.Nullable;
import org.pgetl.model.ColumnSchema;
import org.pgetl.model.ReplicatedTableSchema;

/**
 * Reads Iceberg tables back the way a user would: an {@link IcebergTableReader} (a catalog of its
 * own, Iceberg's generic reader), plus the raw tables and records the tests look into.
 */
final class IcebergReader {
  private final IcebergTableReader reader;
  private final Catalog catalog;

  private IcebergReader(IcebergTableReader reader) {
    this.reader = reader;
    this.catalog = reader.catalog();
  }

  static IcebergReader hadoop(Path warehouse) {
    return new IcebergReader(IcebergTableReader.hadoop(warehouse));
  }

  static IcebergReader of(Map<String, String> properties) {
    return new IcebergReader(
        IcebergTableReader.of(properties, IcebergDestination.DEFAULT_CATALOG_NAME));
  }

  TableIdentifier identifier(ReplicatedTableSchema table) {
    return TableIdentifier.of(Namespace.of(table.name().schema()), table.name().name());
  }

  @Nullable Table table(ReplicatedTableSchema table) {
    TableIdentifier id = identifier(table);
    return catalog.tableExists(id) ? catalog.loadTable(id) : null;
  }

  boolean exists(TableIdentifier id) {
    return catalog.tableExists(id);
  }

  Table table(TableIdentifier id) {
    return catalog.loadTable(id);
  }

  /**
   * The table's rows, the source's columns in order, bytes as arrays (an absent table has none).
   */
  List<List<@Nullable Object>> rows(ReplicatedTableSchema table) {
    List<List<@Nullable Object>> out = new ArrayList<>();
    if (!reader.exists(table.name())) {
      return out;
    }
    List<String> columns = table.columns().stream().map(ColumnSchema::name).toList();
    reader.forEachRow(
        table.name(),
        columns,
        row -> {
          row.replaceAll(
              v -> {
                if (v instanceof ByteBuffer b) {
                  byte[] bytes = new byte[b.remaining()];
                  b.duplicate().get(bytes);
                  return bytes;
                }
                return v;
              });
          out.add(row);
        });
    return out;
  }

  /** All records of an Iceberg table, every field, as the generic reader returns them. */
  List<Record> records(TableIdentifier id) {
    List<Record> out = new ArrayList<>();
    try (CloseableIterable<Record> rs = IcebergGenerics.read(catalog.loadTable(id)).build()) {
      rs.forEach(out::add);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    return out;
  }
}
