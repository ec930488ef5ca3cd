package org.pgetl.engine;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.pgetl.destination.AsyncResult;
import org.pgetl.destination.Destination;
import org.pgetl.destination.TableCopyWrite;
import org.pgetl.destination.WriteDurability;
import org.pgetl.model.Event;
import org.pgetl.model.ReplicatedTableSchema;
import org.pgetl.model.TableRow;

/** A minimal destination for smoke tests: keeps rows by first column, answers durable at once. */
final class SimpleDestination implements Destination {
  final Map<String, Map<Object, List<Object>>> tables = new ConcurrentHashMap<>();
  final List<Event> events = java.util.Collections.synchronizedList(new ArrayList<>());

  @Override
  public String name() {
    return "simple";
  }

  @Override
  public void dropTableForCopy(ReplicatedTableSchema table, AsyncResult result) {
    tables.remove(table.name().toString());
    result.durable();
  }

  @Override
  public void writeTableRows(
      ReplicatedTableSchema table, TableCopyWrite write, AsyncResult result) {
    Map<Object, List<Object>> t =
        tables.computeIfAbsent(table.name().toString(), k -> new ConcurrentHashMap<>());
    if (write instanceof TableCopyWrite.Batch b) {
      for (TableRow r : b.rows()) {
        t.put(r.get(0), new ArrayList<>(r.values()));
      }
    }
    result.durable();
  }

  @Override
  public synchronized void writeEvents(
      List<Event> batch, WriteDurability durability, AsyncResult result) {
    for (Event e : batch) {
      events.add(e);
      if (e instanceof Event.Insert i) {
        tables
            .computeIfAbsent(i.table().name().toString(), k -> new ConcurrentHashMap<>())
            .put(i.row().get(0), new ArrayList<>(i.row().values()));
      } else if (e instanceof Event.Update u) {
        Map<Object, List<Object>> t =
            tables.computeIfAbsent(u.table().name().toString(), k -> new ConcurrentHashMap<>());
        if (u.oldRow() != null) {
          t.remove(u.oldRow().row().get(0));
        }
        List<Object> row = new ArrayList<>();
        for (int c = 0; c < u.row().columnCount(); c++) {
          row.add(u.row().isPresent(c) ? u.row().get(c) : t.get(u.row().get(0)).get(c));
        }
        t.put(row.get(0), row);
      } else if (e instanceof Event.Delete d) {
        tables
            .computeIfAbsent(d.table().name().toString(), k -> new ConcurrentHashMap<>())
            .remove(d.oldRow().row().get(0));
      }
    }
    result.durable();
  }
}
