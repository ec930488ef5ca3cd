package org.pgetl.testing.destination;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.function.Function;
import org.pgetl.model.ColumnSchema;
import org.pgetl.model.Event;
import org.pgetl.model.OldRow;
import org.pgetl.model.ReplicatedTableSchema;
import org.pgetl.model.TableId;
import org.pgetl.model.TableRow;
import org.pgetl.model.UpdatedRow;

/**
 * The expected state of replicated tables: applies copy rows and events exactly once, in memory,
 * the simplest way (rows as maps from attnum to value, found by key or by whole old row).
 */
public final class ReferenceTables {
  private final Map<TableId, ReplicatedTableSchema> schemas = new HashMap<>();
  private final Map<TableId, List<Map<Integer, Object>>> rows = new HashMap<>();

  public void copy(ReplicatedTableSchema table, List<TableRow> batch) {
    schema(table);
    batch.forEach(r -> insert(table, r));
  }

  public void apply(Event e) {
    if (e instanceof Event.Relation r) {
      schema(r.table());
    } else if (e instanceof Event.Insert i) {
      schema(i.table());
      insert(i.table(), i.row());
    } else if (e instanceof Event.Update u) {
      schema(u.table());
      Map<Integer, Object> row = find(u.table(), u.oldRow(), u.row());
      for (int c = 0; c < u.row().columnCount(); c++) {
        if (u.row().isPresent(c)) {
          row.put(attnum(u.table(), c), u.row().get(c));
        }
      }
    } else if (e instanceof Event.Delete d) {
      schema(d.table());
      rows.get(d.table().id()).remove(find(d.table(), d.oldRow(), null));
    } else if (e instanceof Event.Truncate t) {
      t.tables().forEach(s -> rows.computeIfAbsent(s.id(), k -> new ArrayList<>()).clear());
    }
  }

  /** Follows a schema: columns that are gone are dropped, new ones are added as NULL. */
  private void schema(ReplicatedTableSchema s) {
    schemas.put(s.id(), s);
    List<Integer> attnums = s.columns().stream().map(ColumnSchema::ordinalPosition).toList();
    for (Map<Integer, Object> row : rows.computeIfAbsent(s.id(), k -> new ArrayList<>())) {
      row.keySet().retainAll(attnums);
      attnums.forEach(a -> row.putIfAbsent(a, null));
    }
  }

  private void insert(ReplicatedTableSchema s, TableRow r) {
    Map<Integer, Object> row = new HashMap<>();
    for (int c = 0; c < s.columnCount(); c++) {
      row.put(attnum(s, c), r.get(c));
    }
    rows.get(s.id()).add(row);
  }

  private Map<Integer, Object> find(ReplicatedTableSchema s, OldRow old, UpdatedRow newRow) {
    Map<Integer, Object> match = new HashMap<>();
    int[] key = s.identityColumnIndexes();
    if (old instanceof OldRow.Key k) {
      for (int i = 0; i < key.length; i++) {
        match.put(attnum(s, key[i]), k.row().get(i));
      }
    } else if (old instanceof OldRow.Full f) {
      int[] cols =
          key.length > 0 ? key : java.util.stream.IntStream.range(0, s.columnCount()).toArray();
      Arrays.stream(cols).forEach(c -> match.put(attnum(s, c), f.row().get(c)));
    } else {
      Arrays.stream(key).forEach(c -> match.put(attnum(s, c), newRow.get(c)));
    }
    return rows.get(s.id()).stream()
        .filter(
            row ->
                match.entrySet().stream()
                    .allMatch(m -> Objects.equals(row.get(m.getKey()), m.getValue())))
        .findFirst()
        .orElseThrow(() -> new AssertionError("reference has no row for " + match));
  }

  private static int attnum(ReplicatedTableSchema s, int column) {
    return s.columns().get(column).ordinalPosition();
  }

  /** Returns the current column names of a table. */
  public List<String> columns(TableId id) {
    return schemas.get(id).columns().stream().map(ColumnSchema::name).toList();
  }

  /**
   * Returns each row as {@code name=value} pairs in column order, values rendered by {@code
   * render}, sorted, for comparison by content.
   */
  public List<String> render(TableId id, Function<Object, String> render) {
    ReplicatedTableSchema s = schemas.get(id);
    List<String> out = new ArrayList<>();
    for (Map<Integer, Object> row : rows.get(id)) {
      Map<String, String> named = new LinkedHashMap<>();
      for (ColumnSchema c : s.columns()) {
        named.put(c.name(), render.apply(row.get(c.ordinalPosition())));
      }
      out.add(named.toString());
    }
    out.sort(null);
    return out;
  }
}
