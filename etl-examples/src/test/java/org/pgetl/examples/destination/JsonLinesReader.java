package org.pgetl.examples.destination;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import org.jspecify.annotations.Nullable;

/**
 * A consumer of {@link StdoutJsonDestination}'s lines, as a downstream program would write one: it
 * rebuilds each table's rows and deduplicates with the keys the lines carry ({@code batch} for
 * copied rows, {@code seq} per table for events), so that at-least-once output yields each change
 * once. It keeps the last row per key: while a table is copied (between its drop line and its
 * {@code copy_finished} line), which a table copied in chunks is while its changes come, copied and
 * inserted rows replace the row of their key, and updates and deletes of keys it does not hold are
 * skipped, as the destination's javadoc says.
 */
final class JsonLinesReader {
  private static final class TableState {
    final Set<String> batches = new HashSet<>();
    final List<Map<String, Object>> rows = new ArrayList<>();
    final Map<Long, String> columnsByAttnum = new LinkedHashMap<>();
    final List<String> key = new ArrayList<>();
    String lastSeq;
    String attempt; // named by the last drop line: copy lines of another attempt are stale
    boolean copying; // between the drop line and copy_finished
  }

  private final Map<Long, TableState> tables = new HashMap<>();
  final Map<String, String> messages = new LinkedHashMap<>();

  void read(String output) {
    for (String line : output.split("\n")) {
      if (!line.isEmpty()) {
        line(StrictJson.object(line));
      }
    }
  }

  private void line(Map<String, Object> l) {
    String kind = (String) l.get("kind");
    switch (kind) {
      case "drop_table_for_copy" -> {
        tables.remove(tableId(l));
        TableState t = table(tableId(l));
        t.attempt = (String) l.get("attempt");
        t.copying = true;
        for (Object name : (List<?>) l.get("key")) {
          t.key.add((String) name);
        }
      }
      case "copy_finished" -> {
        TableState t = table(tableId(l));
        if (t.attempt == null || t.attempt.equals(l.get("attempt"))) {
          t.copying = false;
        }
      }
      case "copy" -> {
        TableState t = table(tableId(l));
        String batch = (String) l.get("batch");
        if (t.attempt != null && !batch.startsWith(t.attempt + "#")) {
          return; // a late batch of an abandoned attempt
        }
        if (t.batches.add(batch + "/" + l.get("batch_row"))) {
          upsert(t, obj(l.get("row")));
        }
      }
      case "message" ->
          messages.putIfAbsent((String) l.get("seq"), l.get("prefix") + "|" + l.get("content"));
      case "truncate" -> {
        for (Object id : (List<?>) l.get("table_ids")) {
          TableState t = table(((Number) id).longValue());
          if (claim(t, l)) {
            t.rows.clear();
          }
        }
      }
      case "relation" -> {
        TableState t = table(tableId(l));
        if (isNew(t, l)) { // shares the seq of the change after it: leaves lastSeq alone
          relation(t, l);
        }
      }
      case "insert", "update", "delete" -> {
        TableState t = table(tableId(l));
        if (claim(t, l)) {
          apply(t, kind, l);
        }
      }
      default -> {} // begin, commit, copy_chunk_end
    }
  }

  private static boolean isNew(TableState t, Map<String, Object> l) {
    return t.lastSeq == null || ((String) l.get("seq")).compareTo(t.lastSeq) > 0;
  }

  private static boolean claim(TableState t, Map<String, Object> l) {
    if (!isNew(t, l)) {
      return false;
    }
    t.lastSeq = (String) l.get("seq");
    return true;
  }

  private static void apply(TableState t, String kind, Map<String, Object> l) {
    if (kind.equals("insert")) {
      upsert(t, obj(l.get("row")));
      return;
    }
    Map<String, Object> row = find(t, l);
    if (row == null && t.copying) {
      // copied in chunks: the key's chunk brings the row, unless it moves with every value
      if (kind.equals("update") && l.containsKey("old_key") && !l.containsKey("missing")) {
        upsert(t, obj(l.get("row")));
      }
      return;
    }
    if (row == null) {
      throw new AssertionError("no row matches the " + kind + " line " + l);
    }
    if (kind.equals("update")) {
      t.rows.remove(row);
      Map<String, Object> changed = new LinkedHashMap<>(row);
      changed.putAll(obj(l.get("row")));
      upsert(t, changed); // a row moving onto a key replaces that key's row
    } else {
      t.rows.remove(row);
    }
  }

  /** Adds a row, replacing the row of its key (a table without a key keeps every row). */
  private static void upsert(TableState t, Map<String, Object> row) {
    if (!t.key.isEmpty()) {
      t.rows.removeIf(r -> t.key.stream().allMatch(k -> Objects.equals(r.get(k), row.get(k))));
    }
    t.rows.add(new LinkedHashMap<>(row));
  }

  /** Follows a schema change: columns matched by attnum are renamed, dropped or added. */
  private static void relation(TableState t, Map<String, Object> l) {
    Map<Long, String> now = new LinkedHashMap<>();
    t.key.clear();
    for (Object o : (List<?>) l.get("columns")) {
      Map<String, Object> c = obj(o);
      now.put(((Number) c.get("attnum")).longValue(), (String) c.get("name"));
      if (Boolean.TRUE.equals(c.get("primary_key"))) {
        t.key.add((String) c.get("name"));
      }
    }
    if (!t.columnsByAttnum.isEmpty()) {
      for (Map<String, Object> row : t.rows) {
        Map<String, Object> moved = new LinkedHashMap<>();
        now.forEach(
            (attnum, name) -> {
              String before = t.columnsByAttnum.get(attnum);
              moved.put(name, before == null ? null : row.get(before));
            });
        row.clear();
        row.putAll(moved);
      }
    }
    t.columnsByAttnum.clear();
    t.columnsByAttnum.putAll(now);
  }

  private static @Nullable Map<String, Object> find(TableState t, Map<String, Object> l) {
    Map<String, Object> match;
    if (l.containsKey("old_key")) {
      match = obj(l.get("old_key"));
    } else if (l.containsKey("old_row")) {
      match = new HashMap<>(obj(l.get("old_row")));
      if (!t.key.isEmpty()) {
        match.keySet().retainAll(t.key);
      }
    } else {
      match = new HashMap<>(obj(l.get("row")));
      match.keySet().retainAll(t.key);
    }
    for (Map<String, Object> row : t.rows) {
      if (match.entrySet().stream()
          .allMatch(e -> Objects.equals(row.get(e.getKey()), e.getValue()))) {
        return row;
      }
    }
    return null;
  }

  private TableState table(long id) {
    return tables.computeIfAbsent(id, k -> new TableState());
  }

  private static long tableId(Map<String, Object> l) {
    return ((Number) l.get("table_id")).longValue();
  }

  @SuppressWarnings("unchecked")
  private static Map<String, Object> obj(Object o) {
    return (Map<String, Object>) o;
  }

  /** Returns a table's rows, each a map from column name to its JSON value. */
  List<Map<String, Object>> rows(long tableId) {
    TableState t = tables.get(tableId);
    return t == null ? List.of() : t.rows;
  }

  /** Returns a table's rows as {@code {name=value, ...}} in the given column order, sorted. */
  List<String> render(long tableId, List<String> columns) {
    List<String> out = new ArrayList<>();
    for (Map<String, Object> row : tables.get(tableId).rows) {
      assertColumns(row, columns);
      Map<String, String> named = new LinkedHashMap<>();
      columns.forEach(c -> named.put(c, String.valueOf(row.get(c))));
      out.add(named.toString());
    }
    out.sort(null);
    return out;
  }

  private static void assertColumns(Map<String, Object> row, List<String> columns) {
    if (!row.keySet().equals(new HashSet<>(columns))) {
      throw new AssertionError("row has columns " + row.keySet() + ", expected " + columns);
    }
  }
}
