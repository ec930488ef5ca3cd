package org.pgetl.testing.destination;

import static org.assertj.core.api.Assertions.assertThat;

import java.math.BigDecimal;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.pgetl.destination.AsyncResult;
import org.pgetl.destination.AsyncResult.Outcome;
import org.pgetl.destination.Destination;
import org.pgetl.destination.DestinationContext;
import org.pgetl.destination.DestinationTableMetadataStore;
import org.pgetl.destination.DestinationTableMetadataStore.TableMetadata;
import org.pgetl.destination.StreamId;
import org.pgetl.destination.TableCopyBatchId;
import org.pgetl.destination.TableCopyWrite;
import org.pgetl.destination.WriteDurability;
import org.pgetl.model.ColumnSchema;
import org.pgetl.model.Event;
import org.pgetl.model.IdentityKind;
import org.pgetl.model.Lsn;
import org.pgetl.model.OldRow;
import org.pgetl.model.PgArray;
import org.pgetl.model.PgNumeric;
import org.pgetl.model.ReplicatedTableSchema;
import org.pgetl.model.TableId;
import org.pgetl.model.TableName;
import org.pgetl.model.TableRow;
import org.pgetl.model.TableSchema;
import org.pgetl.model.UpdatedRow;

/**
 * A realistic call sequence for a destination, as the engine makes it: several tables copied by
 * several threads with a Finish barrier each, then two event streams (the apply stream and a
 * catch-up stream) with inserts, full and partial updates, key and full-row deletes, a truncate, a
 * schema change (a column added, one dropped, one renamed), user messages and a key change; then a
 * restart that redelivers an overlapping part of it. A {@link ReferenceTables} receives every
 * change exactly once, to compare the destination with.
 */
public final class Scenario {
  public static final Duration ANSWER_WAIT = Duration.ofSeconds(30);
  public static final int NUMERIC_10_2 = (10 << 16 | 2) + 4;

  // --- schemas

  public static ColumnSchema col(String name, int oid, String type, int attnum, int pk) {
    return new ColumnSchema(name, oid, -1, type, attnum, pk, pk == 0, null);
  }

  public static ColumnSchema col(String name, int oid, int typmod, String type, int attnum) {
    return new ColumnSchema(name, oid, typmod, type, attnum, 0, true, null);
  }

  public static ReplicatedTableSchema keyed(
      long oid, String schema, String name, ColumnSchema... cols) {
    return keyedAt(Lsn.ZERO, oid, schema, name, cols);
  }

  /** A table's schema as it stands from {@code snapshot} on (after an ALTER TABLE). */
  public static ReplicatedTableSchema keyedAt(
      Lsn snapshot, long oid, String schema, String name, ColumnSchema... cols) {
    return ReplicatedTableSchema.allColumns(
        new TableSchema(new TableId(oid), new TableName(schema, name), List.of(cols), snapshot));
  }

  public static ReplicatedTableSchema identityFull(
      long oid, String schema, String name, ColumnSchema... cols) {
    boolean[] mask = new boolean[cols.length];
    Arrays.fill(mask, true);
    TableSchema ts =
        new TableSchema(new TableId(oid), new TableName(schema, name), List.of(cols), Lsn.ZERO);
    return ReplicatedTableSchema.of(ts, mask, IdentityKind.FULL, new int[0]);
  }

  public static final ReplicatedTableSchema ORDERS =
      keyed(
          16401,
          "public",
          "orders",
          col("id", 23, "integer", 1, 1),
          col("customer", 25, "text", 2, 0),
          col("amount", 1700, NUMERIC_10_2, "numeric(10,2)", 3),
          col("note", 25, "text", 4, 0),
          col("qty", 20, "bigint", 5, 0));

  /** orders after ALTER TABLE: note dropped, customer renamed, status added. */
  public static final ReplicatedTableSchema ORDERS_V2 =
      keyedAt(
          Lsn.of(0x3000),
          16401,
          "public",
          "orders",
          col("id", 23, "integer", 1, 1),
          col("customer_name", 25, "text", 2, 0),
          col("amount", 1700, NUMERIC_10_2, "numeric(10,2)", 3),
          col("qty", 20, "bigint", 5, 0),
          col("status", 25, "text", 6, 0));

  public static final ReplicatedTableSchema EVENTS_LOG =
      identityFull(
          16402,
          "public",
          "events_log",
          col("kind", 25, "text", 1, 0),
          col("payload", 25, "text", 2, 0),
          col("score", 701, "double precision", 3, 0));

  public static final ReplicatedTableSchema ITEMS =
      keyed(
          16403,
          "sales",
          "items",
          col("sku", 25, "text", 1, 1),
          col("qty", 20, "bigint", 2, 0),
          col("tags", 1009, "text[]", 3, 0),
          col("active", 16, "boolean", 4, 0));

  public static final ReplicatedTableSchema AUDIT =
      keyed(16404, "public", "audit", col("id", 20, "bigint", 1, 1), col("msg", 25, "text", 2, 0));

  // --- copy data

  public static TableRow order(int id) {
    return TableRow.of(id, "customer " + id, num(id + ".50"), "note " + id, (long) id * 10);
  }

  public static TableRow logRow(int i) {
    // rows 0 and 1 are identical: a full-row delete must remove only one of them
    int k = i <= 1 ? 0 : i;
    return TableRow.of("kind" + (k % 3), "payload " + k, k * 0.5);
  }

  public static TableRow item(int i) {
    return TableRow.of("sku-" + i, (long) i, PgArray.ofList(25, List.of("t" + i, "x")), i % 2 == 0);
  }

  public static TableRow audit(int i, String attempt) {
    return TableRow.of((long) i, attempt + " " + i);
  }

  public static PgNumeric num(String s) {
    return PgNumeric.of(new BigDecimal(s));
  }

  public static List<TableRow> rows(int from, int to, java.util.function.IntFunction<TableRow> f) {
    List<TableRow> rows = new ArrayList<>();
    for (int i = from; i < to; i++) {
      rows.add(f.apply(i));
    }
    return rows;
  }

  /** One table's copy: batches with ids of one attempt, assigned to partitions. */
  public record Copy(ReplicatedTableSchema table, UUID attempt, List<List<TableRow>> batches) {
    public TableCopyWrite.Batch batch(int seq) {
      return new TableCopyWrite.Batch(new TableCopyBatchId(attempt, seq), batches.get(seq));
    }
  }

  public static Copy copyOf(ReplicatedTableSchema table, List<TableRow> rows, int batchSize) {
    List<List<TableRow>> batches = new ArrayList<>();
    for (int i = 0; i < rows.size(); i += batchSize) {
      batches.add(rows.subList(i, Math.min(rows.size(), i + batchSize)));
    }
    return new Copy(table, UUID.randomUUID(), batches);
  }

  // --- events

  /** Builds the events of one transaction with consecutive ordinals and start LSNs. */
  public static final class Tx {
    private final Lsn commit;
    private final List<Event> events = new ArrayList<>();
    private long ordinal;
    private final Instant time = Instant.parse("2024-05-01T10:00:00Z");

    public Tx(long commitLsn, long xid) {
      this.commit = Lsn.of(commitLsn);
      events.add(new Event.Begin(start(), commit, ordinal++, time, xid));
    }

    private Lsn start() {
      return Lsn.of(commit.value() - 0x100 + events.size() * 8L);
    }

    public Tx relation(ReplicatedTableSchema t) {
      events.add(new Event.Relation(start(), commit, ordinal++, t));
      return this;
    }

    public Tx insert(ReplicatedTableSchema t, TableRow row) {
      events.add(new Event.Insert(start(), commit, ordinal++, t, row));
      return this;
    }

    public Tx update(ReplicatedTableSchema t, UpdatedRow row, OldRow old) {
      events.add(new Event.Update(start(), commit, ordinal++, t, row, old));
      return this;
    }

    public Tx delete(ReplicatedTableSchema t, OldRow old) {
      events.add(new Event.Delete(start(), commit, ordinal++, t, old));
      return this;
    }

    public Tx truncate(ReplicatedTableSchema... tables) {
      events.add(new Event.Truncate(start(), commit, ordinal++, List.of(tables), 0));
      return this;
    }

    public Tx message(String prefix, String content) {
      events.add(
          new Event.Message(
              start(), commit, ordinal++, true, prefix, content.getBytes(StandardCharsets.UTF_8)));
      return this;
    }

    public List<Event> end() {
      events.add(
          new Event.Commit(start(), commit, ordinal++, Lsn.of(commit.value() + 0x30), time, 0));
      return events;
    }
  }

  public static UpdatedRow.Full full(Object... values) {
    return new UpdatedRow.Full(TableRow.of(values));
  }

  public static UpdatedRow.Partial partial(int columns, int[] missing, Object... present) {
    return new UpdatedRow.Partial(columns, TableRow.of(present), missing);
  }

  public static OldRow.Key key(Object... values) {
    return new OldRow.Key(TableRow.of(values));
  }

  public static OldRow.Full oldFull(TableRow row) {
    return new OldRow.Full(row);
  }

  /** The apply stream: orders and events_log. Transactions 1 to 6. */
  public static List<List<Event>> applyStream() {
    List<List<Event>> txs = new ArrayList<>();
    txs.add(
        new Tx(0x1000, 701)
            .relation(ORDERS)
            .insert(ORDERS, TableRow.of(1001, "new \"one\"", num("7.25"), "n", 3L))
            .update(ORDERS, full(5, "renamed 5", num("5.50"), "note 5", 50L), null)
            .update(ORDERS, partial(5, new int[] {3}, 6, "partial 6", num("66.00"), 61L), null)
            .delete(ORDERS, key(7))
            .end());
    txs.add(
        new Tx(0x2000, 702)
            .relation(EVENTS_LOG)
            .update(EVENTS_LOG, full("kind2", "changed 5", 99.5), oldFull(logRow(5)))
            .delete(EVENTS_LOG, oldFull(logRow(0)))
            .insert(EVENTS_LOG, TableRow.of("kind9", "late", 1.25))
            .end());
    txs.add(
        new Tx(0x3000, 703)
            .relation(ORDERS_V2)
            .insert(ORDERS_V2, TableRow.of(1002, "after ddl", num("1.00"), 1L, "open"))
            .update(ORDERS_V2, partial(5, new int[] {1}, 9, num("9.99"), 90L, "paid"), null)
            .end());
    txs.add(new Tx(0x5000, 705).message("audit", "hello ✓").end());
    txs.add(
        new Tx(0x6000, 706)
            .update(ORDERS_V2, full(2008, "moved", num("8.50"), 80L, "moved"), key(8))
            .delete(EVENTS_LOG, oldFull(logRow(3)))
            .end());
    return txs;
  }

  /** The catch-up stream of items: a truncate, then new rows and an update. */
  public static List<List<Event>> itemsStream() {
    List<List<Event>> txs = new ArrayList<>();
    txs.add(
        new Tx(0x4000, 704)
            .relation(ITEMS)
            .truncate(ITEMS)
            .insert(ITEMS, TableRow.of("sku-a", 1L, PgArray.ofList(25, List.of("a")), true))
            .insert(ITEMS, TableRow.of("sku-b", 2L, PgArray.ofList(25, List.of()), false))
            .end());
    txs.add(
        new Tx(0x4800, 708)
            .update(ITEMS, partial(4, new int[] {2}, "sku-a", 10L, false), null)
            .insert(ITEMS, TableRow.of("sku-c", 3L, null, null))
            .end());
    return txs;
  }

  public static final ReplicatedTableSchema SHARED_V1 =
      keyed(16405, "public", "shared", col("id", 23, "integer", 1, 1), col("v", 25, "text", 2, 0));

  /** shared after ALTER TABLE ... ADD COLUMN added bigint. */
  public static final ReplicatedTableSchema SHARED_V2 =
      keyedAt(
          Lsn.of(0x2000),
          16405,
          "public",
          "shared",
          col("id", 23, "integer", 1, 1),
          col("v", 25, "text", 2, 0),
          col("added", 20, "bigint", 3, 0));

  /**
   * Two transactions of {@link #SHARED_V1} as the engine sends them: each Relation carries the
   * ordinal, and so the sequence key, of the change after it. Applied once: rows {@code (1, "one",
   * NULL)} and {@code (2, "two", 22)}.
   */
  public static List<Event> relationsSharingKeys() {
    Lsn c1 = Lsn.of(0x1000);
    Lsn c2 = Lsn.of(0x2000);
    Instant now = Instant.parse("2024-05-01T10:00:00Z");
    return List.of(
        new Event.Begin(c1, c1, 0, now, 1),
        new Event.Relation(c1, c1, 1, SHARED_V1),
        new Event.Insert(c1, c1, 1, SHARED_V1, TableRow.of(1, "one")),
        new Event.Commit(c1, c1, 2, c1, now, 0),
        new Event.Begin(c2, c2, 0, now, 2),
        new Event.Relation(c2, c2, 1, SHARED_V2),
        new Event.Insert(c2, c2, 1, SHARED_V2, TableRow.of(2, "two", 22L)),
        new Event.Commit(c2, c2, 2, c2, now, 0));
  }

  /**
   * Writes {@link #relationsSharingKeys()} as a restart does: the first run stops between the
   * second Relation and its insert; the next runs replay everything.
   */
  public static void writeRelationsSharingKeys(Destination d) {
    List<Event> stream = relationsSharingKeys();
    for (List<Event> batch : List.of(stream.subList(0, 6), stream, stream)) {
      sendEvents(d, batch);
    }
  }

  /** Splits transactions into write batches of a few events, ignoring transaction boundaries. */
  public static List<List<Event>> batches(List<List<Event>> txs, int size) {
    List<Event> all = txs.stream().flatMap(List::stream).toList();
    List<List<Event>> out = new ArrayList<>();
    for (int i = 0; i < all.size(); i += size) {
      out.add(all.subList(i, Math.min(all.size(), i + size)));
    }
    return out;
  }

  // --- driving a destination as the engine does

  /** A metadata store in memory. */
  public static final class Context implements DestinationContext {
    public final Map<TableId, TableMetadata> metadata = new ConcurrentHashMap<>();

    @Override
    public String pipelineId() {
      return "test";
    }

    @Override
    public long epoch() {
      return 1;
    }

    @Override
    public DestinationTableMetadataStore tableMetadata() {
      return new DestinationTableMetadataStore() {
        @Override
        public Optional<TableMetadata> get(TableId table) {
          return Optional.ofNullable(metadata.get(table));
        }

        @Override
        public void put(TableId table, TableMetadata m) {
          metadata.put(table, m);
        }
      };
    }

    @Override
    public void requestShutdown() {}
  }

  public static Outcome await(AsyncResult result) {
    try {
      return result.await(ANSWER_WAIT).orElseThrow(() -> new AssertionError("no answer"));
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new AssertionError(e);
    }
  }

  public static void assertDurable(AsyncResult result) {
    Outcome o = await(result);
    assertThat(o.kind()).as("answer %s", o).isEqualTo(Outcome.Kind.DURABLE);
  }

  /** Starts a copy attempt of a table and returns its id. */
  public static UUID drop(Destination d, ReplicatedTableSchema table) {
    UUID attempt = UUID.randomUUID();
    drop(d, table, attempt);
    return attempt;
  }

  /** Starts the attempt of a copy, whose batches carry its id. */
  public static void drop(Destination d, Copy copy) {
    drop(d, copy.table(), copy.attempt());
  }

  public static void drop(Destination d, ReplicatedTableSchema table, UUID attempt) {
    AsyncResult r = AsyncResult.create();
    d.dropTableForCopy(table, attempt, r);
    assertDurable(r);
  }

  /** A whole copy attempt of an empty table: the drop, then the Finish barrier. */
  public static void emptyCopy(Destination d, ReplicatedTableSchema table) {
    finish(d, table, drop(d, table), 0, 0);
  }

  /** Ends the attempt of a copy whose first {@code batches} batches were sent. */
  public static void finish(Destination d, Copy copy, int batches) {
    long rows = 0;
    for (int seq = 0; seq < batches; seq++) {
      rows += copy.batches().get(seq).size();
    }
    finish(d, copy.table(), copy.attempt(), batches, rows);
  }

  public static void finish(
      Destination d, ReplicatedTableSchema table, UUID attempt, long batches, long rows) {
    AsyncResult r = AsyncResult.create();
    d.writeTableRows(table, new TableCopyWrite.Finish(attempt, batches, rows), r);
    assertDurable(r);
  }

  /** A whole copy attempt: the drop, every batch in order, the Finish barrier. */
  public static void copyAll(Destination d, Copy copy) {
    drop(d, copy);
    for (int seq = 0; seq < copy.batches().size(); seq++) {
      sendBatch(d, copy, seq);
    }
    finish(d, copy, copy.batches().size());
  }

  public static void sendBatch(Destination d, Copy copy, int seq) {
    AsyncResult r = AsyncResult.create();
    d.writeTableRows(copy.table(), copy.batch(seq), r);
    assertDurable(r);
  }

  /** Writes events with {@code MAY_DEFER} and asserts the answer is {@code durable()}. */
  public static void sendEvents(Destination d, List<Event> events) {
    AsyncResult r = AsyncResult.create();
    d.writeEvents(StreamId.APPLY, events, WriteDurability.MAY_DEFER, r);
    assertDurable(r);
  }

  /**
   * Copies batches of several tables from {@code partitions} threads: each thread owns some batch
   * numbers and waits for each answer before it sends its next batch.
   */
  public static void copyConcurrently(
      Destination d, int partitions, List<Copy> copies, int[][] seqs) throws Exception {
    ExecutorService pool = Executors.newFixedThreadPool(partitions);
    try {
      List<Future<?>> done = new ArrayList<>();
      for (int p = 0; p < partitions; p++) {
        int part = p;
        done.add(
            pool.submit(
                () -> {
                  for (int c = 0; c < copies.size(); c++) {
                    for (int seq : seqs[c]) {
                      if (seq % partitions == part) {
                        sendBatch(d, copies.get(c), seq);
                      }
                    }
                  }
                }));
      }
      for (Future<?> f : done) {
        f.get();
      }
    } finally {
      pool.shutdownNow();
    }
  }

  public static int[] range(int from, int to) {
    return java.util.stream.IntStream.range(from, to).toArray();
  }

  /** Sends each stream's batches from its own thread, waiting for each answer. */
  @SafeVarargs
  public static void streamConcurrently(Destination d, List<List<Event>>... streams)
      throws Exception {
    ExecutorService pool = Executors.newFixedThreadPool(streams.length);
    try {
      List<Future<?>> done = new ArrayList<>();
      for (List<List<Event>> stream : streams) {
        done.add(
            pool.submit(
                () -> {
                  for (List<Event> batch : stream) {
                    sendEvents(d, batch);
                  }
                  AsyncResult barrier = AsyncResult.create();
                  d.writeEvents(
                      StreamId.APPLY, List.of(), WriteDurability.REQUIRE_DURABLE, barrier);
                  assertDurable(barrier);
                }));
      }
      for (Future<?> f : done) {
        f.get();
      }
    } finally {
      pool.shutdownNow();
    }
  }

  // --- the whole story

  public final Copy orders = copyOf(ORDERS, rows(1, 121, Scenario::order), 20);
  public final Copy log = copyOf(EVENTS_LOG, rows(0, 12, Scenario::logRow), 5);
  public final Copy items = copyOf(ITEMS, rows(0, 30, Scenario::item), 6);
  public final Copy auditFirst = copyOf(AUDIT, rows(0, 8, i -> audit(i, "first")), 4);
  public final Copy auditSecond = copyOf(AUDIT, rows(0, 5, i -> audit(i, "second")), 2);
  public final List<List<Event>> apply = batches(applyStream(), 4);
  public final List<List<Event>> catchUp = batches(itemsStream(), 3);

  /**
   * The first run: copies orders and events_log completely, items and audit partly (the process
   * stops during their copy), then streams the first part of the apply stream.
   */
  public void firstRun(Destination d) throws Exception {
    for (Copy c : List.of(orders, log, items, auditFirst)) {
      drop(d, c);
    }
    copyConcurrently(
        d,
        3,
        List.of(orders, log, items, auditFirst),
        new int[][] {range(0, 6), range(0, 3), range(0, 3), range(0, 1)});
    finish(d, orders, 6);
    finish(d, log, 3);
    streamConcurrently(d, apply.subList(0, 4));
  }

  /**
   * The second run, after a restart: items' copy continues (batch 2 is delivered again: the engine
   * never saw its answer), audit is copied again from scratch with a new attempt, and both streams
   * are replayed from an earlier point than what was durable.
   */
  public void secondRun(Destination d) throws Exception {
    drop(d, auditSecond);
    copyConcurrently(d, 2, List.of(items, auditSecond), new int[][] {range(2, 5), range(0, 3)});
    finish(d, items, 5);
    finish(d, auditSecond, 3);
    streamConcurrently(d, apply.subList(2, apply.size()), catchUp);
    // a second replay of everything, as after yet another restart
    streamConcurrently(d, apply, catchUp);
  }

  /** What the tables hold after both runs. */
  public ReferenceTables expected() {
    ReferenceTables ref = new ReferenceTables();
    for (Copy c : List.of(orders, log, items, auditSecond)) {
      int count = c == items ? 5 : c.batches().size();
      for (int seq = 0; seq < count; seq++) {
        ref.copy(c.table(), c.batches().get(seq));
      }
    }
    applyStream().forEach(tx -> tx.forEach(ref::apply));
    itemsStream().forEach(tx -> tx.forEach(ref::apply));
    return ref;
  }

  /** The messages both runs carry, by prefix and content. */
  public static Map<String, String> expectedMessages() {
    Map<String, String> m = new LinkedHashMap<>();
    m.put("audit", "hello ✓");
    return m;
  }
}
