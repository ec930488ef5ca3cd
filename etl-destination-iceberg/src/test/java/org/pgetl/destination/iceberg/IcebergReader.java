package org.pgetl.destination.iceberg;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
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
import org.pgetl.model.ColumnSchema;
import org.pgetl.model.ReplicatedTableSchema;

/**
 * Reads Iceberg tables back the way a user would: a catalog of its own, Iceberg's generic reader.
 */
final class IcebergReader {
  private final Catalog catalog;

  private IcebergReader(Map<String, String> properties) {
    this.catalog =
        CatalogUtil.buildIcebergCatalog(
            IcebergDestination.DEFAULT_CATALOG_NAME, properties, new Configuration());
  }

  static IcebergReader hadoop(Path warehouse) {
    return new IcebergReader(
        Map.of("type", "hadoop", "warehouse", warehouse.toAbsolutePath().toUri().toString()));
  }

  static IcebergReader of(Map<String, String> properties) {
    return new IcebergReader(properties);
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

  /** The table's rows, the source's columns in order (an absent table has none). */
  List<List<@Nullable Object>> rows(ReplicatedTableSchema table) {
    List<List<@Nullable Object>> out = new ArrayList<>();
    Table t = table(table);
    if (t == null) {
      return out;
    }
    try (CloseableIterable<Record> rs = IcebergGenerics.read(t).build()) {
      for (Record r : rs) {
        List<@Nullable Object> row = new ArrayList<>();
        for (ColumnSchema c : table.columns()) {
          Object v = r.getField(c.name());
          if (v instanceof ByteBuffer b) {
            byte[] bytes = new byte[b.remaining()];
            b.duplicate().get(bytes);
            v = bytes;
          }
          row.add(v);
        }
        out.add(row);
      }
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
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
