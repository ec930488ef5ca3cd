package org.pgetl.engine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.pgetl.engine.PipelineHarness.WAIT;
import static org.pgetl.engine.PipelineHarness.awaitAllReady;
import static org.pgetl.engine.PipelineHarness.config;
import static org.pgetl.engine.PipelineHarness.name;
import static org.pgetl.engine.PipelineHarness.oid;
import static org.pgetl.engine.PipelineHarness.sourceRows;
import static org.pgetl.engine.PipelineHarness.start;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.pgetl.Pipeline;
import org.pgetl.model.ColumnSchema;
import org.pgetl.model.Event;
import org.pgetl.model.IdentityKind;
import org.pgetl.model.OldRow;
import org.pgetl.model.ReplicatedTableSchema;
import org.pgetl.store.PipelineStore;
import org.pgetl.testkit.TestDatabase;
import org.pgetl.testkit.WithPostgres;
import org.pgetl.testkit.destination.DestinationCall;
import org.pgetl.testkit.destination.DestinationOperation;
import org.pgetl.testkit.destination.FaultyDestination;
import org.pgetl.testkit.destination.HoldHandle;
import org.pgetl.testkit.destination.RecordingDestination;

/**
 * The engine's integration tests of table shapes and schema changes: identities, tables without
 * columns, and the columns' identity (attnum) across renames, type changes, drops and restarts.
 * Written once, run against every store ({@code MemoryStoreSchemaIT}, {@code
 * PostgresStoreSchemaIT}), since restarts read the stored schema versions.
 */
@WithPostgres
@Timeout(value = 4, unit = TimeUnit.MINUTES)
public abstract class SchemaSuite {

  /**
   * Returns a fresh store for a pipeline.
   *
   * @param db the source database
   * @param pipelineId the pipeline id
   * @return the store
   */
  protected abstract PipelineStore newStore(TestDatabase db, String pipelineId);

  /**
   * Returns the store a restarted process would use: the same instance for a memory store, a new
   * instance over the same database for a persistent one.
   *
   * @param old the store of the previous run
   * @param db the source database
   * @return the store for the next run
   */
  protected PipelineStore reopen(PipelineStore old, TestDatabase db) {
    return old;
  }

  // ---- identities

  @Test
  void aPrimaryKeyWithIncludeColumnsIdentifiesRowsByItsKeyColumnsOnly(TestDatabase db) {
    db.execute(
        "CREATE TABLE tab_include (a int, b text, CONSTRAINT covering PRIMARY KEY (a) INCLUDE (b))",
        "INSERT INTO tab_include VALUES (1, 'one'), (2, 'two'), (3, 'three')",
        "CREATE PUBLICATION pub_include FOR TABLE tab_include");
    PipelineStore store = newStore(db, "include");
    RecordingDestination dest = RecordingDestination.create();
    try (Pipeline p = start(config(db, "include", "pub_include").build(), store, dest)) {
      awaitAllReady(store, 1);
      assertThat(dest.schema(name("tab_include")).orElseThrow().identityColumnIndexes())
          .containsExactly(0);
      db.execute(
          "UPDATE tab_include SET a = 10, b = 'ten' WHERE a = 1",
          "DELETE FROM tab_include WHERE a = 2",
          "UPDATE tab_include SET b = 'drei' WHERE a = 3");
      dest.awaitRowsEqual(name("tab_include"), sourceRows(db, "tab_include"), WAIT);
      List<Event> events = dest.events(name("tab_include"));
      Event.Update moved = (Event.Update) firstOf(events, Event.Kind.UPDATE);
      assertThat(moved.table().identity()).isEqualTo(IdentityKind.PRIMARY_KEY);
      assertThat(moved.table().identityColumnIndexes()).containsExactly(0);
      assertThat(moved.oldRow()).isInstanceOf(OldRow.Key.class);
      assertThat(moved.oldRow().row().values()).containsExactly(1);
      Event.Delete deleted = (Event.Delete) firstOf(events, Event.Kind.DELETE);
      assertThat(deleted.oldRow().row().values()).containsExactly(2);
      assertThat(dest.violations()).isEmpty();
      assertThat(dest.anomalies()).isEmpty();
    }
  }

  @Test
  void aCopyAfterARestartDropsTheTableWithTheIdentityAndColumnsTheDestinationWasTold(
      TestDatabase db) {
    boolean columnLists = db.serverVersionNum() >= 150000;
    db.execute(
        "CREATE TABLE ri_full (id int, v text)",
        "ALTER TABLE ri_full REPLICA IDENTITY FULL",
        "INSERT INTO ri_full SELECT g, 'v' || g FROM generate_series(1, 5000) g",
        "CREATE TABLE ri_index (id int NOT NULL, secret text, code text NOT NULL, v text)",
        "CREATE UNIQUE INDEX ri_index_code_id ON ri_index (code, id)",
        "ALTER TABLE ri_index REPLICA IDENTITY USING INDEX ri_index_code_id",
        "INSERT INTO ri_index SELECT g, 's', 'c' || g, 'v' FROM generate_series(1, 5000) g",
        columnLists
            ? "CREATE PUBLICATION pub_ri FOR TABLE ri_full, ri_index (id, code, v)"
            : "CREATE PUBLICATION pub_ri FOR TABLE ri_full, ri_index");
    PipelineStore store = newStore(db, "ri");
    FaultyDestination faulty = FaultyDestination.wrap(RecordingDestination.create());
    HoldHandle heldFull =
        faulty.holdNext(DestinationOperation.WRITE_TABLE_ROWS, c -> c.touches(name("ri_full")));
    HoldHandle heldIndex =
        faulty.holdNext(DestinationOperation.WRITE_TABLE_ROWS, c -> c.touches(name("ri_index")));
    Pipeline p = start(config(db, "ri", "pub_ri").batchMaxBytes(16 * 1024).build(), store, faulty);
    assertThat(heldFull.awaitReached(WAIT)).isTrue();
    assertThat(heldIndex.awaitReached(WAIT)).isTrue();
    p.close();
    heldFull.releaseDurable();
    heldIndex.releaseDurable();

    PipelineStore reopened = reopen(store, db);
    RecordingDestination second = RecordingDestination.create();
    try (Pipeline p2 = start(config(db, "ri", "pub_ri").build(), reopened, second)) {
      awaitAllReady(reopened, 2);
      ReplicatedTableSchema full = droppedSchema(second, "ri_full");
      assertThat(full.identity()).isEqualTo(IdentityKind.FULL);
      assertThat(full.identityColumnIndexes()).isEmpty();
      assertThat(columnNames(full)).containsExactly("id", "v");
      ReplicatedTableSchema index = droppedSchema(second, "ri_index");
      assertThat(index.identity()).isEqualTo(IdentityKind.INDEX);
      assertThat(identityNames(index)).containsExactly("code", "id");
      if (columnLists) {
        assertThat(columnNames(index)).containsExactly("id", "code", "v");
        assertThat(index.replicationMask()).containsExactly(true, false, true, true);
      } else {
        assertThat(columnNames(index)).containsExactly("id", "secret", "code", "v");
      }
      assertThat(second.rows(name("ri_index"))).hasSize(5000);
      assertThat(second.violations()).isEmpty();
    }
  }

  // ---- tables without columns

  @Test
  void aTableWithoutColumnsIsCopiedAndStreamedAsRowsWithoutValues(TestDatabase db) {
    db.execute(
        "CREATE TABLE no_columns ()",
        "ALTER TABLE no_columns REPLICA IDENTITY FULL",
        "INSERT INTO no_columns DEFAULT VALUES",
        "INSERT INTO no_columns DEFAULT VALUES",
        "INSERT INTO no_columns DEFAULT VALUES",
        "CREATE PUBLICATION pub_no_columns FOR TABLE no_columns");
    PipelineStore store = newStore(db, "nocolumns");
    RecordingDestination dest = RecordingDestination.create();
    try (Pipeline p = start(config(db, "nocolumns", "pub_no_columns").build(), store, dest)) {
      awaitAllReady(store, 1);
      assertThat(dest.rows(name("no_columns"))).hasSize(3).allMatch(List::isEmpty);
      db.execute(
          "INSERT INTO no_columns DEFAULT VALUES",
          "INSERT INTO no_columns DEFAULT VALUES",
          "DELETE FROM no_columns WHERE ctid = (SELECT min(ctid) FROM no_columns)");
      // rows without values all look alike: four of them are also what the destination holds
      // after the first of the two inserts, so wait for the delete before comparing
      org.awaitility.Awaitility.await()
          .atMost(WAIT)
          .until(
              () ->
                  dest.events(name("no_columns")).stream()
                      .anyMatch(e -> e.kind() == Event.Kind.DELETE));
      dest.awaitRowsEqual(name("no_columns"), sourceRows(db, "no_columns"), WAIT);
      assertThat(dest.rows(name("no_columns"))).hasSize(4);
      assertThat(dest.events(name("no_columns")))
          .extracting(Event::kind)
          .contains(Event.Kind.INSERT, Event.Kind.DELETE);
      assertThat(dest.violations()).isEmpty();
      assertThat(dest.anomalies()).isEmpty();
    }
  }

  // ---- column identity across schema changes

  @Test
  void aRenameWhileThePipelineIsStoppedKeepsEveryValueAndTheColumnsAttnum(TestDatabase db) {
    db.execute(
        "CREATE TABLE renamed_down (id int PRIMARY KEY, v text, note text)",
        "INSERT INTO renamed_down SELECT g, 'v' || g, 'n' || g FROM generate_series(1, 1000) g",
        "CREATE PUBLICATION pub_renamed_down FOR TABLE renamed_down");
    PipelineStore store = newStore(db, "renameddown");
    RecordingDestination dest = RecordingDestination.create();
    try (Pipeline p = start(config(db, "renameddown", "pub_renamed_down").build(), store, dest)) {
      awaitAllReady(store, 1);
      dest.awaitRowsEqual(name("renamed_down"), sourceRows(db, "renamed_down"), WAIT);
    }
    db.execute(
        "UPDATE renamed_down SET note = 'first' WHERE id = 1",
        "ALTER TABLE renamed_down RENAME COLUMN v TO w",
        "UPDATE renamed_down SET note = 'second' WHERE id = 2");
    PipelineStore reopened = reopen(store, db);
    try (Pipeline p =
        start(config(db, "renameddown", "pub_renamed_down").build(), reopened, dest)) {
      dest.awaitRowsEqual(name("renamed_down"), sourceRows(db, "renamed_down"), WAIT);
    }
    List<Event.Relation> relations = relations(dest, "renamed_down");
    assertThat(relations).isNotEmpty();
    assertThat(relations)
        .allSatisfy(r -> assertAttnums(r.table(), "id", 1, "v", 2, "w", 2, "note", 3));
    assertThat(relations)
        .anySatisfy(r -> assertThat(columnNames(r.table())).containsExactly("id", "w", "note"));
    assertThat(reopened.tableSchemas(oid(db, "renamed_down")))
        .allSatisfy(v -> assertAttnums(v, "id", 1, "v", 2, "w", 2, "note", 3));
    assertThat(dest.violations()).isEmpty();
  }

  @Test
  void aRenameWhileStreamingKeepsEveryValueAndTheColumnsAttnum(TestDatabase db) {
    db.execute(
        "CREATE TABLE renamed (id int PRIMARY KEY, v text, note text)",
        "INSERT INTO renamed SELECT g, 'v' || g, 'n' || g FROM generate_series(1, 100) g",
        "CREATE PUBLICATION pub_renamed FOR TABLE renamed");
    PipelineStore store = newStore(db, "renamed");
    RecordingDestination dest = RecordingDestination.create();
    try (Pipeline p = start(config(db, "renamed", "pub_renamed").build(), store, dest)) {
      awaitAllReady(store, 1);
      // one transaction: its changes are decoded after the last rename, so the catalog is
      // already ahead of the first RELATION
      db.execute(
          "BEGIN",
          "ALTER TABLE renamed RENAME COLUMN v TO w",
          "UPDATE renamed SET w = w || '+' WHERE id <= 10",
          "ALTER TABLE renamed RENAME COLUMN w TO x",
          "UPDATE renamed SET x = x || '+' WHERE id <= 5",
          "COMMIT");
      dest.awaitRowsEqual(name("renamed"), sourceRows(db, "renamed"), WAIT);
      List<Event.Relation> relations = relations(dest, "renamed");
      assertThat(relations).extracting(r -> columnNames(r.table()).get(1)).contains("w", "x");
      assertThat(relations)
          .allSatisfy(r -> assertAttnums(r.table(), "id", 1, "v", 2, "w", 2, "x", 2, "note", 3));
      assertThat(dest.violations()).isEmpty();
    }
  }

  @Test
  void aTypeChangeWhileStreamingKeepsEveryValueAndTheColumnsAttnum(TestDatabase db) {
    db.execute(
        "CREATE TABLE retyped (id int PRIMARY KEY, v int, note text)",
        "INSERT INTO retyped SELECT g, g, 'n' || g FROM generate_series(1, 100) g",
        "CREATE PUBLICATION pub_retyped FOR TABLE retyped");
    PipelineStore store = newStore(db, "retyped");
    RecordingDestination dest = RecordingDestination.create();
    try (Pipeline p = start(config(db, "retyped", "pub_retyped").build(), store, dest)) {
      awaitAllReady(store, 1);
      db.execute(
          "BEGIN",
          "ALTER TABLE retyped ALTER COLUMN v TYPE bigint",
          "UPDATE retyped SET v = v + 1000 WHERE id <= 10",
          "ALTER TABLE retyped ALTER COLUMN v TYPE numeric",
          "UPDATE retyped SET v = v + 1000 WHERE id <= 5",
          "COMMIT");
      // rows the source rewrote without a change event keep their old Java type at the
      // destination: compare values by their text form
      List<List<String>> expected = asText(sourceRows(db, "retyped"));
      dest.awaitRows(name("retyped"), rows -> asText(rows).equals(expected), WAIT);
      List<Event.Relation> relations = relations(dest, "retyped");
      assertThat(relations)
          .extracting(r -> r.table().columns().get(1).typeName())
          .contains("bigint");
      assertThat(relations).allSatisfy(r -> assertAttnums(r.table(), "id", 1, "v", 2, "note", 3));
      assertThat(dest.violations()).isEmpty();
    }
  }

  @Test
  void aColumnDroppedAndAddedUnderTheSameNameGetsANewAttnumAlsoOnReplay(TestDatabase db) {
    db.execute(
        "CREATE TABLE readded (id int PRIMARY KEY, v int)",
        "INSERT INTO readded SELECT g, g FROM generate_series(1, 100) g",
        "CREATE PUBLICATION pub_readded FOR TABLE readded");
    PipelineStore store = newStore(db, "readded");
    RecordingDestination recording = RecordingDestination.create();
    FaultyDestination faulty = FaultyDestination.wrap(recording);
    Pipeline p =
        start(config(db, "readded", "pub_readded").maxInFlightWrites(1).build(), store, faulty);
    awaitAllReady(store, 1);
    HoldHandle held =
        faulty.holdNext(DestinationOperation.WRITE_EVENTS, c -> c.hasInsertInto(name("readded")));
    db.execute(
        "ALTER TABLE readded DROP COLUMN v",
        "ALTER TABLE readded ADD COLUMN v int",
        "INSERT INTO readded VALUES (1001, 7)");
    assertThat(held.awaitReached(WAIT)).isTrue();
    // the catalog moves on before the write is abandoned: the next start decodes the same
    // RELATION again while the column has another name
    db.execute("ALTER TABLE readded RENAME COLUMN v TO w");
    held.releaseShutdown();
    awaitTermination(p);
    assertThat(relations(recording, "readded"))
        .isNotEmpty()
        .allSatisfy(r -> assertAttnums(r.table(), "id", 1, "v", 3));

    PipelineStore reopened = reopen(store, db);
    try (Pipeline p2 = start(config(db, "readded", "pub_readded").build(), reopened, recording)) {
      db.execute("UPDATE readded SET w = 8 WHERE id = 1001");
      recording.awaitRowsEqual(name("readded"), sourceRows(db, "readded"), WAIT);
      List<Event.Relation> relations = relations(recording, "readded");
      assertThat(relations).hasSizeGreaterThanOrEqualTo(3);
      assertThat(relations).allSatisfy(r -> assertAttnums(r.table(), "id", 1, "v", 3, "w", 3));
      assertThat(recording.violations()).isEmpty();
    }
  }

  // ---- helpers

  private static List<Event.Relation> relations(RecordingDestination dest, String table) {
    List<Event.Relation> out = new ArrayList<>();
    for (Event e : dest.events(name(table))) {
      if (e instanceof Event.Relation r) {
        out.add(r);
      }
    }
    return out;
  }

  /** Asserts that every column has an attnum, and that the named ones have the given one. */
  private static void assertAttnums(ReplicatedTableSchema schema, Object... nameThenAttnum) {
    Map<String, Integer> expected = new HashMap<>();
    for (int i = 0; i < nameThenAttnum.length; i += 2) {
      expected.put((String) nameThenAttnum[i], (Integer) nameThenAttnum[i + 1]);
    }
    for (ColumnSchema c : schema.columns()) {
      assertThat(c.ordinalPosition()).as("attnum of %s in %s", c.name(), schema).isPositive();
      if (expected.containsKey(c.name())) {
        assertThat(c.ordinalPosition())
            .as("attnum of %s in %s", c.name(), schema)
            .isEqualTo(expected.get(c.name()));
      }
    }
  }

  private static List<List<String>> asText(List<List<Object>> rows) {
    List<List<String>> out = new ArrayList<>();
    for (List<Object> row : rows) {
      out.add(row.stream().map(String::valueOf).toList());
    }
    return out;
  }

  private static void awaitTermination(Pipeline p) {
    try {
      assertThat(p.awaitTermination(WAIT)).isTrue();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new AssertionError(e);
    }
  }

  private static ReplicatedTableSchema droppedSchema(RecordingDestination dest, String table) {
    List<DestinationCall> drops =
        dest.calls(DestinationOperation.DROP_TABLE_FOR_COPY).stream()
            .filter(c -> c.touches(name(table)))
            .toList();
    assertThat(drops).hasSize(1);
    return drops.get(0).table();
  }

  static List<String> columnNames(ReplicatedTableSchema schema) {
    return schema.columns().stream().map(ColumnSchema::name).toList();
  }

  static List<String> identityNames(ReplicatedTableSchema schema) {
    List<String> out = new ArrayList<>();
    for (int i : schema.identityColumnIndexes()) {
      out.add(schema.columns().get(i).name());
    }
    return out;
  }

  static Event firstOf(List<Event> events, Event.Kind kind) {
    return events.stream().filter(e -> e.kind() == kind).findFirst().orElseThrow();
  }
}
