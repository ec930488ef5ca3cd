package org.pgetl.examples.cli;

import java.util.List;
import org.pgetl.model.TableName;

/**
 * One table of the demo's sample schema.
 *
 * @param name the table
 * @param key the primary key columns, in key order (rows are compared in this order)
 * @param columns every column, in table order
 * @param rows how many rows the sample data holds at the start
 */
record DemoTable(TableName name, List<String> key, List<String> columns, long rows) {
  DemoTable {
    key = List.copyOf(key);
    columns = List.copyOf(columns);
  }

  /** The select list: every column, quoted. */
  String selectList() {
    return String.join(", ", columns.stream().map(TableName::quoteIdentifier).toList());
  }

  /** The {@code ORDER BY} list: the key columns, quoted. */
  String orderBy() {
    return String.join(", ", key.stream().map(TableName::quoteIdentifier).toList());
  }
}
