package org.pgetl.examples.destination;

import java.io.StringWriter;
import java.math.BigDecimal;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.pgetl.model.ColumnSchema;
import org.pgetl.model.ReplicatedTableSchema;
import org.pgetl.testkit.tck.DestinationConformanceTests;

/**
 * The conformance kit on {@link StdoutJsonDestination}: its contents are what a downstream reader
 * ({@link JsonLinesReader}) rebuilds from the lines, deduplicating on the keys they carry. A
 * restart is a new instance that appends to the same output, as a process restart appends to the
 * same pipe.
 */
class StdoutJsonDestinationConformanceTest
    extends DestinationConformanceTests<StdoutJsonDestination> {
  private final StringWriter out = new StringWriter(); // synchronized: safe from the writer thread

  @Override
  protected StdoutJsonDestination newDestination() {
    return new StdoutJsonDestination(out);
  }

  @Override
  protected StdoutJsonDestination restart(StdoutJsonDestination previous) {
    return new StdoutJsonDestination(out);
  }

  @Override
  protected List<List<Object>> contents(
      StdoutJsonDestination destination, ReplicatedTableSchema table) {
    JsonLinesReader reader = new JsonLinesReader();
    reader.read(out.toString());
    List<List<Object>> rows = new ArrayList<>();
    for (Map<String, Object> row : reader.rows(table.id().oid())) {
      List<Object> values = new ArrayList<>();
      for (ColumnSchema c : table.columns()) {
        Object v = row.get(c.name());
        values.add(v instanceof BigDecimal n ? (Object) n.longValueExact() : v);
      }
      rows.add(values);
    }
    return rows;
  }
}
