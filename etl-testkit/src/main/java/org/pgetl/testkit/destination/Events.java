package org.pgetl.testkit.destination;

import org.pgetl.model.Event;
import org.pgetl.model.ReplicatedTableSchema;
import org.pgetl.model.TableId;
import org.pgetl.model.TableName;

/** Which tables an event is about. */
final class Events {
  private Events() {}

  static boolean concerns(Event e, TableName name) {
    if (e instanceof Event.Truncate t) {
      for (ReplicatedTableSchema s : t.tables()) {
        if (s.name().equals(name)) {
          return true;
        }
      }
      return false;
    }
    ReplicatedTableSchema s = e.table();
    return s != null && s.name().equals(name);
  }

  static boolean concerns(Event e, TableId id) {
    if (e instanceof Event.Truncate t) {
      for (ReplicatedTableSchema s : t.tables()) {
        if (s.id().equals(id)) {
          return true;
        }
      }
      return false;
    }
    ReplicatedTableSchema s = e.table();
    return s != null && s.id().equals(id);
  }
}
