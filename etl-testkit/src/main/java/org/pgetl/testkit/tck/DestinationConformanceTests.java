package org.pgetl.testkit.tck;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.pgetl.destination.AsyncResult;
import org.pgetl.destination.Destination;
import org.pgetl.destination.DestinationContext;
import org.pgetl.destination.StreamId;
import org.pgetl.destination.TableCopyBatchId;
import org.pgetl.destination.WriteDurability;
import org.pgetl.model.Event;
import org.pgetl.model.IdentityKind;
import org.pgetl.model.ReplicatedTableSchema;
import org.pgetl.model.TableRow;
import org.pgetl.testkit.destination.InMemoryDestinationContext;
import org.pgetl.testkit.destination.Rows;
import org.pgetl.testkit.destination.SchemaBuilder;
import org.pgetl.testkit.destination.Transactions;

/**
 * The destination conformance kit: extend this JUnit 5 class in your destination's tests to run it
 * through the destination contract, without PostgreSQL and without a pipeline.
 *
 * <pre>{@code
 * class MyDestinationConformanceTest extends DestinationConformanceTests<MyDestination> {
 *   @TempDir Path dir;
 *
 *   protected MyDestination newDestination() { return new MyDestination(dir.resolve("db")); }
 *
 *   protected List<List<Object>> contents(MyDestination d, ReplicatedTableSchema table) {
 *     return d.readAll(table); // the table's rows, values in the schema's column order
 *   }
 *
 *   protected MyDestination restart(MyDestination previous) {
 *     return new MyDestination(dir.resolve("db")); // a new instance over the same storage
 *   }
 * }
 * }</pre>
 *
 * <p>Each test gets a fresh destination from {@link #newDestination()} (give it fresh, empty
 * storage), calls {@code startup}, drives a realistic call sequence the way the engine does, and
 * ends with {@code shutdown}. What it checks, on every call:
 *
 * <ul>
 *   <li>the method returns within {@link #callReturnBound()} and does not throw;
 *   <li>the result is answered within {@link #answerTimeout()}, neither {@code fail} nor {@code
 *       shutdown} (nothing fails and nothing shuts down in these sequences);
 *   <li>the copy {@code Finish} barrier and every {@code REQUIRE_DURABLE} write are answered {@code
 *       durable()};
 *   <li>after a durable answer that covers them, {@link #contents} shows exactly the rows the
 *       source would hold.
 * </ul>
 *
 * <p>The sequences: a copy from one and from several concurrent partitions (ids unique per
 * attempt), the {@code Finish} barrier after every copy attempt (empty tables included), a second
 * copy attempt after {@code dropTableForCopy}, a late batch and a late catch-up write of an
 * abandoned attempt arriving after the next drop, redelivered copy batches, events of two streams
 * at once (one lagging behind the other, as a table catching up does), several writes in flight on
 * one stream, replayed events (also after a restart), inserts, updates (key changes, partial rows
 * with unchanged TOAST columns missing, whole old rows of REPLICA IDENTITY FULL tables), deletes,
 * truncate, added and dropped columns, transaction markers and logical messages, and shutdown.
 *
 * <p>A second answer to a result is ignored by {@code AsyncResult} and cannot be seen from outside;
 * the kit catches its usual effect instead: a destination that answers {@code accepted()} and then
 * {@code durable()} to the same result is left at {@code accepted()}, which fails the {@code
 * Finish} and {@code REQUIRE_DURABLE} checks.
 *
 * <p>Values the kit writes are {@code Long} ({@code int8}), {@code String} ({@code text}) and null;
 * {@link #contents} must return them as such. The tables use oids 16401 to 16403 in schema {@code
 * tck}. Every test has a two-minute timeout.
 *
 * @param <D> the destination type
 */
@Timeout(value = 2, unit = TimeUnit.MINUTES)
public abstract class DestinationConformanceTests<D extends Destination> {

  /** A table with a primary key: id int8, name text, note text. */
  protected static final ReplicatedTableSchema ITEMS =
      SchemaBuilder.table(16401, "tck.items")
          .key("id", "int8")
          .column("name", "text")
          .column("note", "text")
          .build();

  /** A table without key, REPLICA IDENTITY FULL: a int8, b text. */
  protected static final ReplicatedTableSchema LOG =
      SchemaBuilder.table(16402, "tck.log")
          .column("a", "int8")
          .column("b", "text")
          .identity(IdentityKind.FULL)
          .build();

  /** A second table with a primary key: id int8, v text. */
  /** A table without a replica identity (no primary key): rows have no key at all. */
  protected static final ReplicatedTableSchema KEYLESS =
      SchemaBuilder.table(16404, "tck.keyless")
          .column("a", "int8")
          .column("b", "text")
          .identity(IdentityKind.NOTHING)
          .build();

  /** A table without columns ({@code CREATE TABLE t ()}): only the number of its rows counts. */
  protected static final ReplicatedTableSchema NO_COLUMNS =
      SchemaBuilder.table(16405, "tck.no_columns").identity(IdentityKind.NOTHING).build();

  protected static final ReplicatedTableSchema OTHER =
      SchemaBuilder.table(16403, "tck.other").key("id", "int8").column("v", "text").build();

  private D destination;
  private DestinationContext context;
  private Driver driver;

  /** Creates the kit; JUnit instantiates the subclass once per test. */
  protected DestinationConformanceTests() {}

  /**
   * Creates the destination under test, over fresh, empty storage. Called once per test.
   *
   * @return a new destination; the kit calls {@code startup} on it
   */
  protected abstract D newDestination();

  /**
   * Reads back the rows a destination holds for a table, in any order; each row lists the values of
   * {@code table}'s columns in their order (Long, String or null).
   *
   * @param destination the destination (the latest instance, after a restart)
   * @param table the table, with its latest schema
   * @return the rows; empty when the table holds none or does not exist
   */
  protected abstract List<List<@Nullable Object>> contents(
      D destination, ReplicatedTableSchema table);

  /**
   * Creates a new instance over the same storage as a destination that was shut down, as a process
   * restart would. The default returns {@code previous} itself (started again), which still checks
   * that replays do not duplicate rows, but not that the data survives a restart.
   *
   * @param previous the destination, already shut down
   * @return the destination to continue with; the kit calls {@code startup} on it
   */
  protected D restart(D previous) {
    return previous;
  }

  /**
   * Creates the context given to {@code startup} (the same one after a restart).
   *
   * @return the context; by default an {@link InMemoryDestinationContext}
   */
  protected DestinationContext newContext() {
    return new InMemoryDestinationContext("tck");
  }

  /**
   * Returns how long the kit waits for the answer to a call.
   *
   * @return the timeout; default 10 seconds
   */
  protected Duration answerTimeout() {
    return Duration.ofSeconds(10);
  }

  /**
   * Returns how long a write method may take to return. Generous on purpose: it catches a
   * destination that does its work synchronously on a slow path, not a slow machine.
   *
   * @return the bound; default 2 seconds
   */
  protected Duration callReturnBound() {
    return Duration.ofSeconds(2);
  }

  /**
   * Returns the destination under test (the latest instance after a restart).
   *
   * @return the destination
   */
  protected final D destination() {
    return destination;
  }

  /** Creates the destination and the context, and starts the destination. */
  @BeforeEach
  protected final void startDestination() {
    context = newContext();
    destination = newDestination();
    assertNotNull(destination, "newDestination() returned null");
    driver = new Driver(destination, answerTimeout(), callReturnBound());
    driver.startup(context);
  }

  /** Shuts the destination down unless the test did. */
  @AfterEach
  protected final void stopDestination() {
    if (driver != null && !driver.isShutdown()) {
      driver.shutdown();
    }
  }

  // ---------------------------------------------------------------- copy

  /** One partition copies a table in three batches; the table then holds every row. */
  @Test
  public void copyWritesEveryRowOfATable() {
    List<TableRow> rows = items(1, 30);
    copy(ITEMS, List.of(rows.subList(0, 10), rows.subList(10, 20), rows.subList(20, 30)));

    assertContents(ITEMS, rows, "after a copy of 3 batches");
  }

  /**
   * Four partitions send batches at the same time, each waiting for its answer before the next
   * batch, as the engine's copy threads do; ids are unique in the attempt.
   */
  @Test
  public void copyBatchesFromSeveralPartitionsConcurrently() throws Exception {
    int partitions = 4;
    int batchesPerPartition = 5;
    int rowsPerBatch = 20;
    UUID attempt = driver.drop(ITEMS);
    AtomicLong sequence = new AtomicLong();
    List<TableRow> all = items(1, partitions * batchesPerPartition * rowsPerBatch);
    ExecutorService pool = threads("pgetl-tck-copy", partitions);
    try {
      List<Future<?>> done = new ArrayList<>();
      for (int p = 0; p < partitions; p++) {
        int partition = p;
        done.add(
            pool.submit(
                () -> {
                  for (int b = 0; b < batchesPerPartition; b++) {
                    int from = (partition * batchesPerPartition + b) * rowsPerBatch;
                    TableCopyBatchId id = new TableCopyBatchId(attempt, sequence.getAndIncrement());
                    driver.batch(ITEMS, id, all.subList(from, from + rowsPerBatch));
                  }
                }));
      }
      joinAll(done);
    } finally {
      stop(pool);
    }
    driver.finish(ITEMS, attempt, sequence.get(), all.size());

    assertContents(ITEMS, all, "after a copy from " + partitions + " concurrent partitions");
  }

  /** An empty table gets dropTableForCopy and the Finish barrier only, answered durable. */
  @Test
  public void emptyTableGetsOnlyTheFinishBarrier() {
    UUID attempt = driver.drop(ITEMS);
    driver.finish(ITEMS, attempt, 0, 0);

    assertContents(ITEMS, List.of(), "after the copy of an empty table");
  }

  /** A second copy attempt starts with dropTableForCopy, which removes the first attempt's rows. */
  @Test
  public void dropTableForCopyRemovesAnEarlierAttempt() {
    UUID first = driver.drop(ITEMS);
    driver.batch(ITEMS, new TableCopyBatchId(first, 0), items(1, 10));

    List<TableRow> second = items(5, 12);
    copy(ITEMS, List.of(second));

    assertContents(ITEMS, second, "after a second copy attempt");
  }

  /**
   * A batch of an abandoned attempt that arrives after the next attempt's {@code dropTableForCopy}
   * (it was still in flight when the engine gave up waiting for it) is not applied: its attempt id
   * is not the one the last drop named.
   */
  @Test
  public void aLateBatchOfAnAbandonedAttemptIsNotApplied() {
    UUID abandoned = driver.drop(ITEMS);
    driver.batch(ITEMS, new TableCopyBatchId(abandoned, 0), items(1, 10));
    UUID current = driver.drop(ITEMS);
    List<TableRow> rows = items(20, 25);
    driver.batch(ITEMS, new TableCopyBatchId(current, 0), rows);
    driver.batch(ITEMS, new TableCopyBatchId(abandoned, 1), items(11, 19));
    driver.finish(ITEMS, current, 1, rows.size());

    assertContents(ITEMS, rows, "after a late batch of the abandoned attempt");
  }

  /**
   * A write of the catch-up stream of an abandoned copy attempt that arrives after the next
   * attempt's {@code dropTableForCopy} is not applied: its stream names the old attempt.
   */
  @Test
  void aLateWriteOfAnAbandonedCatchUpStreamIsNotApplied() {
    UUID abandoned = emptyCopy(ITEMS);
    List<TableRow> rows = items(1, 5);
    copy(ITEMS, List.of(rows));
    Transactions log = new Transactions();
    driver.events(
        StreamId.tableSync(ITEMS.id(), abandoned),
        log.begin().relation(ITEMS).insert(ITEMS, 99L, "late", null).commit(),
        WriteDurability.REQUIRE_DURABLE);

    assertContents(ITEMS, rows, "after a late write of the abandoned attempt's catch-up stream");
  }

  /** A batch delivered again with the same id does not add its rows twice (table without key). */
  @Test
  public void redeliveredCopyBatchesDoNotDuplicateRows() {
    UUID attempt = driver.drop(LOG);
    List<TableRow> first = List.of(TableRow.of(1L, "a"), TableRow.of(2L, "b"));
    List<TableRow> second = List.of(TableRow.of(3L, "c"));
    driver.batch(LOG, new TableCopyBatchId(attempt, 0), first);
    driver.batch(LOG, new TableCopyBatchId(attempt, 1), second);
    driver.batch(LOG, new TableCopyBatchId(attempt, 0), first);
    driver.batch(LOG, new TableCopyBatchId(attempt, 1), second);
    driver.finish(LOG, attempt, 2, 3);

    assertContents(LOG, concat(first, second), "after batches 0 and 1 were delivered twice");
  }

  /** After a restart the engine copies again from scratch: only the new attempt's rows remain. */
  @Test
  public void copyAfterRestartStartsAgainFromScratch() {
    UUID attempt = driver.drop(LOG);
    driver.batch(
        LOG,
        new TableCopyBatchId(attempt, 0),
        List.of(TableRow.of(1L, "old"), TableRow.of(2L, "old")));
    restartDestination();

    List<TableRow> rows = List.of(TableRow.of(1L, "new"), TableRow.of(3L, "new"));
    copy(LOG, List.of(rows));

    assertContents(LOG, rows, "after a restart and a new copy attempt");
  }

  // ---------------------------------------------------------------- streaming

  /**
   * Two streams write at the same time, as the apply stream and a table catching up do: they
   * deliver the same transactions, each for its own table, and the second lags behind the first. A
   * destination that deduplicates on one greatest sequence key for all tables loses the lagging
   * stream's events.
   */
  @Test
  public void eventsOfTwoStreamsConcurrently() throws Exception {
    emptyCopy(ITEMS);
    UUID otherAttempt = emptyCopy(OTHER);
    Transactions log = new Transactions();
    List<Transactions.Tx> txs = new ArrayList<>();
    List<TableRow> expectedItems = new ArrayList<>();
    List<TableRow> expectedOther = new ArrayList<>();
    for (int i = 1; i <= 40; i++) {
      Transactions.Tx tx = log.begin();
      if (i == 1) {
        tx.relation(ITEMS);
      }
      tx.insert(ITEMS, (long) i, "item " + i, null);
      if (i == 1) {
        tx.relation(OTHER);
      }
      tx.insert(OTHER, (long) i, "other " + i);
      if (i % 4 == 0) {
        tx.update(OTHER, (long) i, "changed " + i);
      }
      tx.commit();
      txs.add(tx);
      expectedItems.add(TableRow.of((long) i, "item " + i, null));
      expectedOther.add(TableRow.of((long) i, (i % 4 == 0 ? "changed " : "other ") + i));
    }
    CountDownLatch firstHalfDelivered = new CountDownLatch(1);
    ExecutorService pool = threads("pgetl-tck-stream", 2);
    try {
      Future<?> apply =
          pool.submit(
              () -> {
                List<Event> stream = new ArrayList<>();
                for (Transactions.Tx tx : txs) {
                  stream.addAll(tx.commitFor(ITEMS.name()));
                }
                try {
                  deliver(
                      StreamId.APPLY, stream, 7, firstHalfDelivered::countDown, stream.size() / 2);
                } finally {
                  firstHalfDelivered.countDown();
                }
              });
      Future<?> catchUp =
          pool.submit(
              () -> {
                await(firstHalfDelivered);
                List<Event> stream = new ArrayList<>();
                for (Transactions.Tx tx : txs) {
                  stream.addAll(tx.commitFor(OTHER.name()));
                }
                deliver(StreamId.tableSync(OTHER.id(), otherAttempt), stream, 5, () -> {}, 0);
              });
      joinAll(List.of(apply, catchUp));
    } finally {
      stop(pool);
    }

    assertContents(ITEMS, expectedItems, "after the first stream");
    assertContents(OTHER, expectedOther, "after the second, lagging stream");
  }

  /** Several writes in flight on one stream, then a durability barrier that covers them all. */
  @Test
  public void severalWritesInFlightOnOneStream() {
    emptyCopy(ITEMS);
    Transactions log = new Transactions();
    List<AsyncResult> results = new ArrayList<>();
    List<Integer> sizes = new ArrayList<>();
    List<TableRow> expected = new ArrayList<>();
    for (int i = 1; i <= 4; i++) {
      Transactions.Tx tx = log.begin();
      if (i == 1) {
        tx.relation(ITEMS);
      }
      List<Event> events =
          tx.insert(ITEMS, (long) i, "n" + i, "x")
              .insert(ITEMS, (long) i + 100, "m", null)
              .commit();
      results.add(driver.eventsAsync(events, WriteDurability.MAY_DEFER));
      sizes.add(events.size());
      expected.add(TableRow.of((long) i, "n" + i, "x"));
      expected.add(TableRow.of((long) i + 100, "m", null));
    }
    AsyncResult barrier = driver.eventsAsync(List.of(), WriteDurability.REQUIRE_DURABLE);
    for (int i = 0; i < results.size(); i++) {
      driver.awaitEvents(results.get(i), sizes.get(i), WriteDurability.MAY_DEFER);
    }
    driver.awaitEvents(barrier, 0, WriteDurability.REQUIRE_DURABLE);

    assertContents(ITEMS, expected, "after 4 writes in flight and a durability barrier");
  }

  /** REQUIRE_DURABLE writes, with events and empty, are answered durable. */
  @Test
  public void requireDurableWritesAreAnsweredDurable() {
    emptyCopy(ITEMS);
    Transactions log = new Transactions();
    driver.events(
        log.begin().relation(ITEMS).insert(ITEMS, 1L, "a", null).commit(),
        WriteDurability.REQUIRE_DURABLE);
    assertContents(
        ITEMS, List.of(TableRow.of(1L, "a", null)), "after a REQUIRE_DURABLE write was durable");

    driver.events(log.begin().insert(ITEMS, 2L, "b", null).commit(), WriteDurability.MAY_DEFER);
    driver.events(log.begin().insert(ITEMS, 3L, "c", null).commit(), WriteDurability.MAY_DEFER);
    driver.events(List.of(), WriteDurability.REQUIRE_DURABLE);

    assertContents(
        ITEMS,
        List.of(TableRow.of(1L, "a", null), TableRow.of(2L, "b", null), TableRow.of(3L, "c", null)),
        "after an empty REQUIRE_DURABLE barrier");
  }

  /** Events delivered again (at-least-once) do not add rows twice to a table without key. */
  @Test
  public void replayedEventsDoNotDuplicateRows() {
    emptyCopy(LOG);
    Transactions log = new Transactions();
    List<Event> tx1 = log.begin().relation(LOG).insert(LOG, 1L, "a").commit();
    List<Event> tx2 = log.begin().insert(LOG, 2L, "b").insert(LOG, 2L, "b").commit();
    List<Event> tx3 = log.begin().insert(LOG, 3L, "c").commit();
    barrier(concat(tx1, tx2));

    barrier(concat(tx1, concat(tx2, tx3)));

    assertContents(
        LOG,
        List.of(
            TableRow.of(1L, "a"), TableRow.of(2L, "b"), TableRow.of(2L, "b"), TableRow.of(3L, "c")),
        "after transactions 1 and 2 were delivered again before transaction 3");
  }

  /**
   * After a restart, the engine delivers again everything after the durable point; events the
   * destination already stored must not add rows twice.
   */
  @Test
  public void replayedEventsAfterRestartDoNotDuplicateRows() {
    emptyCopy(LOG);
    emptyCopy(ITEMS);
    Transactions log = new Transactions();
    List<Event> tx1 =
        log.begin()
            .relation(LOG)
            .insert(LOG, 1L, "a")
            .relation(ITEMS)
            .insert(ITEMS, 1L, "x", null)
            .commit();
    List<Event> tx2 = log.begin().insert(LOG, 2L, "b").update(ITEMS, 1L, "y", "note").commit();
    List<Event> tx3 = log.begin().insert(LOG, 3L, "c").delete(ITEMS, 1L).commit();
    barrier(concat(tx1, concat(tx2, tx3)));
    restartDestination();

    // the stream starts again from transaction 2, with the relations a new stream sends first
    List<Event> replay = new ArrayList<>();
    Event.Begin begin2 = (Event.Begin) tx2.get(0);
    replay.add(begin2);
    replay.add(new Event.Relation(tx2.get(1).startLsn(), tx2.get(1).commitLsn(), 1, LOG));
    replay.addAll(tx2.subList(1, 2));
    replay.add(new Event.Relation(tx2.get(2).startLsn(), tx2.get(2).commitLsn(), 2, ITEMS));
    replay.addAll(tx2.subList(2, tx2.size()));
    replay.addAll(tx3);
    replay.addAll(log.begin().insert(LOG, 4L, "d").insert(ITEMS, 2L, "z", null).commit());
    barrier(replay);

    assertContents(
        LOG,
        List.of(
            TableRow.of(1L, "a"), TableRow.of(2L, "b"), TableRow.of(3L, "c"), TableRow.of(4L, "d")),
        "after a restart and a replay of transactions 2 and 3");
    assertContents(
        ITEMS, List.of(TableRow.of(2L, "z", null)), "after a restart and a replay (keyed table)");
  }

  /** Rows written before a shutdown are still there after a restart. */
  @Test
  public void durableDataSurvivesARestart() {
    List<TableRow> rows = items(1, 5);
    copy(ITEMS, List.of(rows));
    Transactions log = new Transactions();
    barrier(log.begin().relation(ITEMS).insert(ITEMS, 9L, "nine", null).commit());
    restartDestination();

    assertContents(ITEMS, concat(rows, List.of(TableRow.of(9L, "nine", null))), "after a restart");
  }

  // ---------------------------------------------------------------- changes

  /** Inserts add rows, updates replace them by key, deletes remove them by key. */
  @Test
  public void insertUpdateDeleteByKey() {
    copy(ITEMS, List.of(items(1, 3)));
    Transactions log = new Transactions();
    barrier(
        log.begin()
            .relation(ITEMS)
            .insert(ITEMS, 4L, "four", null)
            .update(ITEMS, 2L, "two", "changed")
            .delete(ITEMS, 3L)
            .commit());

    assertContents(
        ITEMS,
        List.of(
            TableRow.of(1L, "name 1", "note 1"),
            TableRow.of(2L, "two", "changed"),
            TableRow.of(4L, "four", null)),
        "after an insert, an update and a delete");
  }

  /** An update whose old row carries another key moves the row to its new key. */
  @Test
  public void updateThatChangesTheKeyMovesTheRow() {
    copy(ITEMS, List.of(items(1, 2)));
    Transactions log = new Transactions();
    barrier(log.begin().relation(ITEMS).updateKey(ITEMS, List.of(1L), 10L, "moved", "n").commit());

    assertContents(
        ITEMS,
        List.of(TableRow.of(2L, "name 2", "note 2"), TableRow.of(10L, "moved", "n")),
        "after an update of the key from 1 to 10");
  }

  /** An update with unchanged TOAST columns missing keeps the stored values of those columns. */
  @Test
  public void partialUpdateKeepsMissingColumns() {
    copy(ITEMS, List.of(List.of(TableRow.of(1L, "small", "a large toasted value"))));
    Transactions log = new Transactions();
    barrier(
        log.begin().relation(ITEMS).updatePartial(ITEMS, new int[] {2}, 1L, "renamed").commit());

    assertContents(
        ITEMS,
        List.of(TableRow.of(1L, "renamed", "a large toasted value")),
        "after an update whose note column was an unchanged TOAST value");
  }

  /** A REPLICA IDENTITY FULL table: updates and deletes find the row by its whole old value. */
  @Test
  public void fullIdentityTableUpdatesAndDeletesByWholeRow() {
    copy(LOG, List.of(List.of(TableRow.of(1L, "a"), TableRow.of(2L, "b"), TableRow.of(3L, "c"))));
    Transactions log = new Transactions();
    barrier(
        log.begin()
            .relation(LOG)
            .updateFull(LOG, List.of(1L, "a"), 1L, "z")
            .deleteFull(LOG, 2L, "b")
            .commit());

    assertContents(
        LOG,
        List.of(TableRow.of(1L, "z"), TableRow.of(3L, "c")),
        "after an update and a delete by whole old row");
  }

  /**
   * A table without a replica identity receives its copy, inserts and truncates (the source refuses
   * its updates and deletes): equal rows are kept as many times as they were written.
   */
  @Test
  public void tableWithoutReplicaIdentityAppendsEqualRowsAndTruncates() {
    copy(KEYLESS, List.of(List.of(TableRow.of(1L, "a"), TableRow.of(1L, "a"))));
    Transactions log = new Transactions();
    barrier(
        log.begin()
            .relation(KEYLESS)
            .insert(KEYLESS, 2L, "b")
            .insert(KEYLESS, 2L, "b")
            .insert(KEYLESS, null, null)
            .commit());
    assertContents(
        KEYLESS,
        List.of(
            TableRow.of(1L, "a"),
            TableRow.of(1L, "a"),
            TableRow.of(2L, "b"),
            TableRow.of(2L, "b"),
            TableRow.of(null, null)),
        "after a copy and inserts of equal rows into a table without a replica identity");
    barrier(log.begin().truncate(KEYLESS).insert(KEYLESS, 3L, "c").commit());
    assertContents(
        KEYLESS, List.of(TableRow.of(3L, "c")), "after a TRUNCATE of a table without identity");
  }

  /** A table without columns keeps the number of its rows, through copy, inserts and truncate. */
  @Test
  public void tableWithoutColumnsKeepsItsRowCount() {
    copy(NO_COLUMNS, List.of(List.of(TableRow.of(), TableRow.of())));
    Transactions log = new Transactions();
    barrier(log.begin().relation(NO_COLUMNS).insert(NO_COLUMNS).commit());
    assertContents(
        NO_COLUMNS,
        List.of(TableRow.of(), TableRow.of(), TableRow.of()),
        "after a copy of two empty rows and an insert of one");
    barrier(log.begin().truncate(NO_COLUMNS).commit());
    assertContents(NO_COLUMNS, List.of(), "after a TRUNCATE of a table without columns");
  }

  /** A truncate clears the tables it names, and only those. */
  @Test
  public void truncateClearsTheNamedTables() {
    copy(ITEMS, List.of(items(1, 3)));
    copy(OTHER, List.of(List.of(TableRow.of(1L, "kept"))));
    copy(LOG, List.of(List.of(TableRow.of(1L, "a"))));
    Transactions log = new Transactions();
    barrier(
        log.begin()
            .relation(ITEMS)
            .relation(LOG)
            .truncate(ITEMS, LOG)
            .insert(ITEMS, 7L, "after truncate", null)
            .commit());

    assertContents(ITEMS, List.of(TableRow.of(7L, "after truncate", null)), "after TRUNCATE");
    assertContents(LOG, List.of(), "after TRUNCATE");
    assertContents(OTHER, List.of(TableRow.of(1L, "kept")), "after a TRUNCATE of other tables");
  }

  /** A column added to the source reads null in the rows stored before. */
  @Test
  public void addedColumnIsNullInExistingRows() {
    copy(ITEMS, List.of(items(1, 2)));
    ReplicatedTableSchema wider = SchemaBuilder.from(ITEMS).column("extra", "int8").build();
    Transactions log = new Transactions();
    barrier(log.begin().relation(wider).insert(wider, 3L, "three", null, 33L).commit());

    assertContents(
        wider,
        List.of(
            TableRow.of(1L, "name 1", "note 1", null),
            TableRow.of(2L, "name 2", "note 2", null),
            TableRow.of(3L, "three", null, 33L)),
        "after ADD COLUMN extra");
  }

  /** A column dropped from the source disappears from the rows. */
  @Test
  public void droppedColumnDisappears() {
    copy(ITEMS, List.of(items(1, 2)));
    ReplicatedTableSchema narrower = SchemaBuilder.from(ITEMS).dropColumn("note").build();
    Transactions log = new Transactions();
    barrier(
        log.begin()
            .relation(narrower)
            .insert(narrower, 3L, "three")
            .update(narrower, 1L, "one")
            .commit());

    assertContents(
        narrower,
        List.of(TableRow.of(1L, "one"), TableRow.of(2L, "name 2"), TableRow.of(3L, "three")),
        "after DROP COLUMN note");
  }

  /** Writes of transaction markers and logical messages only are answered and change no row. */
  @Test
  public void transactionMarkersAndMessagesAreAnswered() {
    copy(ITEMS, List.of(items(1, 1)));
    Transactions log = new Transactions();
    driver.events(log.begin().commit(), WriteDurability.MAY_DEFER);
    driver.events(
        log.begin().message("tck", new byte[] {1, 2, 3}).commit(), WriteDurability.MAY_DEFER);
    driver.events(List.of(), WriteDurability.REQUIRE_DURABLE);

    assertContents(ITEMS, items(1, 1), "after empty transactions and a logical message");
  }

  /** shutdown() after the last answered write returns without error. */
  @Test
  public void shutdownAfterTheLastWrite() {
    copy(ITEMS, List.of(items(1, 3)));
    barrier(new Transactions().begin().relation(ITEMS).delete(ITEMS, 1L).commit());

    driver.shutdown();
  }

  // ---------------------------------------------------------------- helpers

  /** Shuts the destination down, gets the instance over the same storage and starts it. */
  private void restartDestination() {
    driver.shutdown();
    destination = restart(destination);
    assertNotNull(destination, "restart() returned null");
    driver = new Driver(destination, answerTimeout(), callReturnBound());
    driver.startup(context);
  }

  /** A whole copy attempt: drop, the batches, then Finish, as the engine sends them. */
  private UUID copy(ReplicatedTableSchema table, List<List<TableRow>> batches) {
    UUID attempt = driver.drop(table);
    long seq = 0;
    long rows = 0;
    for (List<TableRow> batch : batches) {
      driver.batch(table, new TableCopyBatchId(attempt, seq++), batch);
      rows += batch.size();
    }
    driver.finish(table, attempt, seq, rows);
    return attempt;
  }

  private UUID emptyCopy(ReplicatedTableSchema table) {
    return copy(table, List.of());
  }

  /** Writes events MAY_DEFER, then an empty REQUIRE_DURABLE barrier. */
  private void barrier(List<Event> events) {
    driver.events(events, WriteDurability.MAY_DEFER);
    driver.events(List.of(), WriteDurability.REQUIRE_DURABLE);
  }

  /**
   * Delivers a stream in writes of {@code perWrite} events (not at transaction boundaries), one
   * write in flight, then a durability barrier; runs {@code midway} once {@code midwayAt} events
   * were answered.
   */
  private void deliver(
      StreamId id, List<Event> stream, int perWrite, Runnable midway, int midwayAt) {
    boolean ranMidway = false;
    for (int i = 0; i < stream.size(); i += perWrite) {
      driver.events(
          id, stream.subList(i, Math.min(stream.size(), i + perWrite)), WriteDurability.MAY_DEFER);
      if (!ranMidway && i + perWrite >= midwayAt) {
        midway.run();
        ranMidway = true;
      }
    }
    driver.events(id, List.of(), WriteDurability.REQUIRE_DURABLE);
    if (!ranMidway) {
      midway.run();
    }
  }

  private void assertContents(ReplicatedTableSchema table, List<TableRow> expected, String when) {
    List<List<@Nullable Object>> want = new ArrayList<>();
    for (TableRow r : expected) {
      want.add(Rows.of(r));
    }
    List<List<@Nullable Object>> actual = contents(destination, table);
    assertNotNull(actual, "contents(" + table.name() + ") returned null");
    assertEquals(
        Rows.sorted(want),
        Rows.sorted(actual),
        "rows of " + table.name() + " " + when + " (sorted; expected vs. contents())");
  }

  private static List<TableRow> items(int from, int to) {
    List<TableRow> rows = new ArrayList<>();
    for (long i = from; i <= to; i++) {
      rows.add(TableRow.of(i, "name " + i, "note " + i));
    }
    return rows;
  }

  private static <T> List<T> concat(List<? extends T> a, List<? extends T> b) {
    List<T> out = new ArrayList<>(a);
    out.addAll(b);
    return out;
  }

  private static ExecutorService threads(String prefix, int n) {
    AtomicInteger count = new AtomicInteger();
    return Executors.newFixedThreadPool(
        n,
        r -> {
          Thread t = new Thread(r, prefix + "-" + count.incrementAndGet());
          t.setDaemon(true);
          return t;
        });
  }

  private static void joinAll(List<Future<?>> futures) throws Exception {
    for (Future<?> f : futures) {
      try {
        f.get();
      } catch (ExecutionException e) {
        Throwable cause = e.getCause();
        if (cause instanceof Error err) {
          throw err;
        }
        if (cause instanceof Exception ex) {
          throw ex;
        }
        throw e;
      }
    }
  }

  private static void stop(ExecutorService pool) {
    pool.shutdownNow();
  }

  private static void await(CountDownLatch latch) {
    try {
      if (!latch.await(1, TimeUnit.MINUTES)) {
        throw new AssertionError("the first stream did not get half-way within a minute");
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new AssertionError("interrupted", e);
    }
  }
}
