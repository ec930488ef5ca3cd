package org.pgetl.engine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;
import static org.pgetl.engine.PipelineHarness.WAIT;
import static org.pgetl.engine.PipelineHarness.awaitAllReady;
import static org.pgetl.engine.PipelineHarness.config;
import static org.pgetl.engine.PipelineHarness.name;

import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.pgetl.Pipeline;
import org.pgetl.model.Event;
import org.pgetl.model.OldRow;
import org.pgetl.model.TableRow;
import org.pgetl.model.TableRow.WireFormat;
import org.pgetl.model.UpdatedRow;
import org.pgetl.store.MemoryStore;
import org.pgetl.testkit.TestDatabase;
import org.pgetl.testkit.WithPostgres;
import org.pgetl.testkit.destination.DestinationCall;
import org.pgetl.testkit.destination.DestinationOperation;
import org.pgetl.testkit.destination.RecordingDestination;

/**
 * The rows a destination gets keep PostgreSQL's bytes: copied values in binary form (a type without
 * a binary decoder in text), changed values in text form (binary with {@code pgoutputBinary}); each
 * decodes to the value the eager model gave.
 */
@WithPostgres
@Timeout(value = 3, unit = TimeUnit.MINUTES)
class WireRowsIT {

  @Test
  void copiedRowsAreBinaryAndChangedRowsText(TestDatabase db) {
    run(db, "wire_text", false, WireFormat.TEXT);
  }

  @Test
  void changedRowsAreBinaryWithPgoutputBinary(TestDatabase db) {
    run(db, "wire_bin", true, WireFormat.BINARY);
  }

  private static List<Event> changes(RecordingDestination dest, String table) {
    return dest.events(name(table)).stream()
        .filter(
            e ->
                e instanceof Event.Insert || e instanceof Event.Update || e instanceof Event.Delete)
        .toList();
  }

  private static void run(TestDatabase db, String id, boolean binary, WireFormat streamed) {
    String t = id + "_t";
    db.execute(
        "DROP PUBLICATION IF EXISTS " + id + "_pub",
        "DROP TABLE IF EXISTS " + t,
        "CREATE TABLE " + t + " (id int8 PRIMARY KEY, n numeric(12,2), s text, x int4)",
        "INSERT INTO " + t + " VALUES (1, 12.50, 'copied é', NULL)",
        "CREATE PUBLICATION " + id + "_pub FOR TABLE " + t);
    MemoryStore store = new MemoryStore(id);
    RecordingDestination dest = RecordingDestination.create();
    try (Pipeline p =
        PipelineHarness.start(
            config(db, id, id + "_pub").pgoutputBinary(binary).build(), store, dest)) {
      awaitAllReady(store, 1);
      List<DestinationCall> batches = dest.calls(DestinationOperation.WRITE_TABLE_ROWS);
      TableRow copied = batches.stream().flatMap(c -> c.rows().stream()).findFirst().orElseThrow();
      assertThat(copied.wireFormat(0)).isEqualTo(WireFormat.BINARY);
      assertThat(copied.wireValue(0).remaining()).isEqualTo(8);
      assertThat(copied.isNull(3)).isTrue();
      assertThat(copied.wireFormat(3)).isNull();
      assertThat(copied.getLong(0)).isEqualTo(1L);
      assertThat(copied.get(1)).hasToString("12.50");
      assertThat(copied.getString(2)).isEqualTo("copied é");
      assertThat(copied.get(3)).isNull();

      db.execute(
          "INSERT INTO " + t + " VALUES (2, 3.25, 'streamed', 7)",
          "UPDATE " + t + " SET s = 'updated' WHERE id = 2",
          "DELETE FROM " + t + " WHERE id = 2");
      await().atMost(WAIT).until(() -> changes(dest, t).size() >= 3);
      List<Event> events = changes(dest, t);
      TableRow inserted = ((Event.Insert) events.get(0)).row();
      assertThat(inserted.wireFormat(2)).isEqualTo(streamed);
      if (streamed == WireFormat.TEXT) {
        assertThat(StandardCharsets.UTF_8.decode(inserted.wireValue(2)).toString())
            .isEqualTo("streamed");
      }
      assertThat(inserted.getLong(0)).isEqualTo(2L);
      assertThat(inserted.getInt(3)).isEqualTo(7);
      Event.Update u = (Event.Update) events.get(1);
      TableRow updated = ((UpdatedRow.Full) u.row()).row();
      assertThat(updated.wireFormat(2)).isEqualTo(streamed);
      assertThat(updated.getString(2)).isEqualTo("updated");
      TableRow key = ((OldRow.Key) ((Event.Delete) events.get(2)).oldRow()).row();
      assertThat(key.wireFormat(0)).isEqualTo(streamed);
      assertThat(key.getLong(0)).isEqualTo(2L);
    }
  }
}
