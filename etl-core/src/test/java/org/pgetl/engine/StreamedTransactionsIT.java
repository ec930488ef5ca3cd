package org.pgetl.engine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;
import static org.pgetl.engine.PipelineHarness.WAIT;
import static org.pgetl.engine.PipelineHarness.awaitAllReady;
import static org.pgetl.engine.PipelineHarness.name;
import static org.pgetl.engine.PipelineHarness.sourceRows;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.pgetl.PgConnectionConfig;
import org.pgetl.Pipeline;
import org.pgetl.PipelineConfig;
import org.pgetl.core.internal.apply.EventSizes;
import org.pgetl.destination.StreamId;
import org.pgetl.error.ErrorKind;
import org.pgetl.error.EtlException;
import org.pgetl.model.Event;
import org.pgetl.model.Lsn;
import org.pgetl.model.TableId;
import org.pgetl.store.MemoryStore;
import org.pgetl.store.TableState;
import org.pgetl.testkit.TestDatabase;
import org.pgetl.testkit.WithPostgres;
import org.pgetl.testkit.destination.DestinationCall;
import org.pgetl.testkit.destination.DestinationOperation;
import org.pgetl.testkit.destination.FaultyDestination;
import org.pgetl.testkit.destination.HoldHandle;
import org.pgetl.testkit.destination.RecordingDestination;

/**
 * Large transactions streamed by the server while in progress ({@code pgoutputStreaming}): a
 * committed one arrives whole, in order, after its commit, in batches of {@code batchMaxBytes}; an
 * aborted one and a rolled-back subtransaction never arrive; their spool files go with their
 * transactions. The pipeline connects as a role whose {@code logical_decoding_work_mem} is tiny, so
 * that moderate transactions stream.
 */
@WithPostgres
@Timeout(value = 4, unit = TimeUnit.MINUTES)
class StreamedTransactionsIT {
  @TempDir Path spoolDir;

  /** A role that streams every transaction above 64 kB, and the pipeline's source as that role. */
  private static PgConnectionConfig streamingRole(TestDatabase db, String role) {
    db.execute(
        "CREATE ROLE " + role + " LOGIN SUPERUSER REPLICATION PASSWORD '" + role + "'",
        "ALTER ROLE " + role + " SET logical_decoding_work_mem = '64kB'");
    return PipelineHarness.source(db).toBuilder().user(role).password(role).build();
  }

  /** The spool files of a pipeline now. */
  private List<String> spoolFiles(String pipelineId) throws IOException {
    Path dir = spoolDir.resolve(pipelineId);
    if (!Files.isDirectory(dir)) {
      return List.of();
    }
    try (Stream<Path> s = Files.list(dir)) {
      return s.map(p -> p.getFileName().toString()).sorted().toList();
    }
  }

  private static long streamedTransactions(TestDatabase db, String slot) {
    return db.queryLong(
        "SELECT coalesce(sum(stream_txns), 0) FROM pg_stat_replication_slots WHERE slot_name = ?",
        slot);
  }

  /**
   * Fails unless every {@code writeEvents} call holds at most {@code batchMaxBytes} (as the engine
   * counts them) plus its last event, and returns the largest call's event count.
   */
  private static int assertBatchesWithin(RecordingDestination dest, long batchMaxBytes) {
    int largest = 0;
    for (DestinationCall call : dest.calls(DestinationOperation.WRITE_EVENTS)) {
      List<Event> events = call.events();
      long bytes = 0;
      for (int i = 0; i < events.size() - 1; i++) {
        bytes += EventSizes.estimate(events.get(i));
      }
      assertThat(bytes)
          .as(
              "bytes of writeEvents call %d (%d events) before its last event",
              call.sequence(), events.size())
          .isLessThan(batchMaxBytes);
      largest = Math.max(largest, events.size());
    }
    return largest;
  }

  @Test
  void streamedTransactionsArriveWholeAfterTheirCommitAndAbortedOnesNever(TestDatabase db)
      throws Exception {
    PgConnectionConfig asStreamer = streamingRole(db, "streamer");
    db.execute(
        "CREATE TABLE big_tx (id int PRIMARY KEY, v text)",
        "INSERT INTO big_tx VALUES (0, 'seed')",
        "CREATE PUBLICATION pub_big_tx FOR TABLE big_tx");
    PipelineConfig config =
        PipelineHarness.config(db, "streamed", "pub_big_tx")
            .source(asStreamer)
            .spoolDirectory(spoolDir)
            .build();
    assertThat(config.pgoutputStreaming()).as("streaming is the default").isTrue();
    MemoryStore store = new MemoryStore("streamed");
    RecordingDestination dest = RecordingDestination.create();
    try (Pipeline p = Pipeline.create(config, store, dest)) {
      p.start();
      awaitAllReady(store, 1);
      try (Connection c = db.connect();
          Statement st = c.createStatement()) {
        c.setAutoCommit(false);
        // aborted: streamed partly, then thrown away
        st.execute("INSERT INTO big_tx SELECT g, repeat('a', 100) FROM generate_series(1, 5000) g");
        await().atMost(WAIT).until(() -> spoolFiles("streamed").size() == 1);
        c.rollback();
        // the abort reaches the stream: the transaction's spool file goes
        await().atMost(WAIT).until(() -> spoolFiles("streamed").isEmpty());
        // committed, with a rolled-back subtransaction in the middle
        st.execute("INSERT INTO big_tx SELECT g, repeat('b', 100) FROM generate_series(1, 3000) g");
        st.execute("SAVEPOINT s1");
        st.execute(
            "INSERT INTO big_tx SELECT g, repeat('c', 100) FROM generate_series(3001, 6000) g");
        st.execute("ROLLBACK TO SAVEPOINT s1");
        st.execute("UPDATE big_tx SET v = 'updated' WHERE id BETWEEN 1 AND 1000");
        st.execute(
            "INSERT INTO big_tx SELECT g, repeat('d', 100) FROM generate_series(6001, 8000) g");
        c.commit();
      }
      db.execute("INSERT INTO big_tx VALUES (-1, 'marker')");
      dest.awaitRowsEqual(name("big_tx"), sourceRows(db, "big_tx"), WAIT);
      assertThat(dest.rowCount(name("big_tx"))).isEqualTo(1 + 3000 + 2000 + 1);
      // the server really streamed the transaction in progress, with the default settings
      assertThat(
              db.queryLong(
                  "SELECT coalesce(sum(stream_txns), 0) FROM pg_stat_replication_slots"
                      + " WHERE slot_name = 'pgetl_apply_streamed'"))
          .isPositive();
      // no row of the aborted transaction or subtransaction was ever delivered
      assertThat(dest.events(name("big_tx")))
          .filteredOn(e -> e instanceof Event.Insert)
          .noneMatch(
              e -> {
                Object v = ((Event.Insert) e).row().get(1);
                return v instanceof String s && (s.startsWith("aaa") || s.startsWith("ccc"));
              });
      assertThat(dest.violations()).isEmpty();
      assertThat(spoolFiles("streamed")).as("spool files after the last commit").isEmpty();
    }
  }

  /**
   * Regression: pgoutput sends TYPE messages for user types (enums, domains, composites) inside the
   * stream blocks of an in-progress transaction; the replay at STREAM COMMIT rejected them
   * ("unexpected Type message in a transaction", MANUAL), and since the server streams the same
   * transaction again after every restart, the pipeline could never pass it. The first transaction
   * is written with a replication origin, so that its stream blocks carry ORIGIN messages as well.
   */
  @Test
  void aStreamedTransactionOnTablesWithUserTypesArrives(TestDatabase db) throws Exception {
    PgConnectionConfig asTyper = streamingRole(db, "typer");
    db.execute(
        "CREATE TYPE mood AS ENUM ('sad', 'ok', 'happy')",
        "CREATE DOMAIN positive AS int CHECK (VALUE > 0)",
        "CREATE TYPE point2 AS (x int, y int)",
        "CREATE TABLE typed (id int PRIMARY KEY, m mood, p positive, pt point2, v text)",
        "INSERT INTO typed VALUES (0, 'ok', 1, ROW(0, 0), 'seed')",
        "CREATE PUBLICATION pub_typed FOR TABLE typed");
    PipelineConfig config =
        PipelineHarness.config(db, "typed", "pub_typed")
            .source(asTyper)
            .pgoutputStreaming(true)
            .spoolDirectory(spoolDir)
            .build();
    MemoryStore store = new MemoryStore("typed");
    RecordingDestination dest = RecordingDestination.create();
    try (Pipeline p = Pipeline.create(config, store, dest)) {
      p.start();
      awaitAllReady(store, 1);
      // written with a replication origin: each stream block carries an ORIGIN message too
      try (Connection c = db.connect();
          Statement st = c.createStatement()) {
        st.execute("SELECT pg_replication_origin_create('typed_origin')");
        st.execute("SELECT pg_replication_origin_session_setup('typed_origin')");
        st.execute(
            "INSERT INTO typed SELECT g, (ARRAY['sad','ok','happy'])[1 + g % 3]::mood, g,"
                + " ROW(g, -g)::point2, repeat('t', 100) FROM generate_series(1, 4000) g");
        st.execute("SELECT pg_replication_origin_session_reset()");
      }
      db.execute(
          "UPDATE typed SET m = 'happy', p = p + 1, pt = ROW((pt).y, (pt).x), v = 'u' || v"
              + " WHERE id % 2 = 0");
      db.execute("INSERT INTO typed VALUES (-1, 'happy', 7, ROW(1, 2), 'marker')");
      dest.awaitRowsEqual(name("typed"), sourceRows(db, "typed"), WAIT);
      assertThat(
              db.queryLong(
                  "SELECT coalesce(sum(stream_txns), 0) FROM pg_stat_replication_slots"
                      + " WHERE slot_name = 'pgetl_apply_typed'"))
          .isPositive();
      assertThat(p.failure()).isEmpty();
      assertThat(store.tableStates().values())
          .allMatch(s -> s.type() == org.pgetl.store.TableState.Type.READY);
      assertThat(spoolFiles("typed")).isEmpty();
    }
  }

  /** The reproduction of issue 13: a streamed transaction reached the destination in one call. */
  @Test
  void aStreamedTransactionReachesTheDestinationInBatchesOfBatchMaxBytes(TestDatabase db)
      throws Exception {
    largeTransactionInBatches(db, "batched_stream", true);
  }

  @Test
  void aLargeTransactionWithoutStreamingReachesTheDestinationInBatchesOfBatchMaxBytes(
      TestDatabase db) throws Exception {
    largeTransactionInBatches(db, "batched_plain", false);
  }

  private void largeTransactionInBatches(TestDatabase db, String id, boolean streaming)
      throws Exception {
    long batchMaxBytes = 64 * 1024;
    PgConnectionConfig source = streamingRole(db, "role_" + id);
    db.execute(
        "CREATE TABLE " + id + " (id int PRIMARY KEY, v text)",
        "CREATE PUBLICATION pub_" + id + " FOR TABLE " + id);
    PipelineConfig config =
        PipelineHarness.config(db, id, "pub_" + id)
            .source(source)
            .pgoutputStreaming(streaming)
            .spoolDirectory(spoolDir)
            .batchMaxBytes(batchMaxBytes)
            .build();
    MemoryStore store = new MemoryStore(id);
    RecordingDestination dest = RecordingDestination.create();
    try (Pipeline p = Pipeline.create(config, store, dest)) {
      p.start();
      awaitAllReady(store, 1);
      db.execute("INSERT INTO " + id + " SELECT g, 'value ' || g FROM generate_series(1, 20000) g");
      dest.awaitRowsEqual(name(id), sourceRows(db, id), WAIT);
      assertThat(streamedTransactions(db, "pgetl_apply_" + id) > 0)
          .as("the server streamed the transaction")
          .isEqualTo(streaming);
      int largest = assertBatchesWithin(dest, batchMaxBytes);
      List<Event> inserts =
          dest.events(name(id)).stream().filter(e -> e instanceof Event.Insert).toList();
      assertThat(inserts).hasSize(20000);
      assertThat(largest).isLessThan(5000);
      // in order, one transaction
      for (int i = 0; i < inserts.size(); i++) {
        assertThat(inserts.get(i).txOrdinal()).isEqualTo(i + 1);
      }
      assertThat(dest.violations()).isEmpty();
      assertThat(spoolFiles(id)).isEmpty();
    }
  }

  @Test
  void twoInterleavedStreamedTransactionsEachKeepTheirSpoolAndArriveWhole(TestDatabase db)
      throws Exception {
    PgConnectionConfig source = streamingRole(db, "interleaver");
    db.execute(
        "CREATE TABLE woven (id int PRIMARY KEY, tx int, v text)",
        "CREATE PUBLICATION pub_woven FOR TABLE woven");
    PipelineConfig config =
        PipelineHarness.config(db, "woven", "pub_woven")
            .source(source)
            .pgoutputStreaming(true)
            .spoolDirectory(spoolDir)
            .batchMaxBytes(128 * 1024)
            .build();
    MemoryStore store = new MemoryStore("woven");
    RecordingDestination dest = RecordingDestination.create();
    try (Pipeline p = Pipeline.create(config, store, dest);
        Connection c1 = db.connect();
        Connection c2 = db.connect();
        Statement s1 = c1.createStatement();
        Statement s2 = c2.createStatement()) {
      p.start();
      awaitAllReady(store, 1);
      c1.setAutoCommit(false);
      c2.setAutoCommit(false);
      for (int round = 0; round < 4; round++) {
        int base = round * 2000;
        s1.execute(
            "INSERT INTO woven SELECT g, 1, repeat('1', 80) FROM generate_series("
                + (base + 1)
                + ", "
                + (base + 1000)
                + ") g");
        s2.execute(
            "INSERT INTO woven SELECT g, 2, repeat('2', 80) FROM generate_series("
                + (base + 1001)
                + ", "
                + (base + 2000)
                + ") g");
        if (round == 1) {
          s2.execute("SAVEPOINT s");
          s2.execute("UPDATE woven SET v = 'rolled back' WHERE tx = 2");
          s2.execute("ROLLBACK TO SAVEPOINT s");
        }
      }
      // both are in progress, each in its own spool file
      await().atMost(WAIT).until(() -> spoolFiles("woven").size() == 2);
      s2.execute("UPDATE woven SET v = 'two' WHERE tx = 2 AND id % 3 = 0");
      c2.commit();
      s1.execute("DELETE FROM woven WHERE tx = 1 AND id % 5 = 0");
      c1.commit();
      db.execute("INSERT INTO woven VALUES (-1, 0, 'marker')");
      dest.awaitRowsEqual(name("woven"), sourceRows(db, "woven"), WAIT);
      assertThat(streamedTransactions(db, "pgetl_apply_woven")).isGreaterThanOrEqualTo(2);
      // each transaction arrives whole, the one committed first first
      List<Lsn> commits = new ArrayList<>();
      for (Event e : dest.events(name("woven"))) {
        if (e instanceof Event.Insert || e instanceof Event.Update || e instanceof Event.Delete) {
          if (commits.isEmpty() || !commits.get(commits.size() - 1).equals(e.commitLsn())) {
            commits.add(e.commitLsn());
          }
        }
      }
      assertThat(commits).hasSize(3).isSorted();
      assertThat(dest.events(name("woven")))
          .filteredOn(e -> e instanceof Event.Update)
          .noneMatch(e -> "rolled back".equals(((Event.Update) e).row().get(2)));
      assertThat(dest.violations()).isEmpty();
      assertThat(spoolFiles("woven")).isEmpty();
    }
  }

  /**
   * A streamed transaction that commits while a table is still being copied reaches the destination
   * on two streams: the apply stream delivers its changes of the table that is Ready, the table's
   * catch-up stream — whose own slot streams it too, into its own spool — those of the table being
   * synced.
   */
  @Test
  void aStreamedTransactionTouchingATableInCatchUpArrivesThroughItsCatchUpSpool(TestDatabase db)
      throws Exception {
    PgConnectionConfig source = streamingRole(db, "catcher");
    db.execute(
        "CREATE TABLE ready_t (id int PRIMARY KEY, v text)",
        "CREATE TABLE syncing_t (id int PRIMARY KEY, v text)",
        "INSERT INTO syncing_t SELECT g, 'copied' FROM generate_series(1, 100) g",
        "CREATE PUBLICATION pub_catch FOR TABLE ready_t, syncing_t");
    PipelineConfig config =
        PipelineHarness.config(db, "catch", "pub_catch")
            .source(source)
            .pgoutputStreaming(true)
            .spoolDirectory(spoolDir)
            .batchMaxBytes(64 * 1024)
            .build();
    MemoryStore store = new MemoryStore("catch");
    RecordingDestination dest = RecordingDestination.create();
    FaultyDestination faulty = FaultyDestination.wrap(dest);
    HoldHandle finish =
        faulty.holdNext(DestinationOperation.FINISH, call -> call.touches(name("syncing_t")));
    try (LogCapture logs = new LogCapture();
        Pipeline p = Pipeline.create(config, store, faulty)) {
      p.start();
      assertThat(finish.awaitReached(WAIT)).isTrue();
      PipelineHarness.awaitState(store, PipelineHarness.oid(db, "ready_t"), TableState.Type.READY);
      try (Connection c = db.connect();
          Statement st = c.createStatement()) {
        c.setAutoCommit(false);
        st.execute("INSERT INTO ready_t SELECT g, repeat('r', 90) FROM generate_series(1, 4000) g");
        st.execute(
            "INSERT INTO syncing_t SELECT g, repeat('s', 90) FROM generate_series(101, 4100) g");
        st.execute("UPDATE syncing_t SET v = 'changed' WHERE id <= 50");
        c.commit();
      }
      // the apply stream delivered its share while the table was still copying
      dest.awaitRowsEqual(name("ready_t"), sourceRows(db, "ready_t"), WAIT);
      finish.releaseDurable();
      awaitAllReady(store, 2);
      db.execute("INSERT INTO syncing_t VALUES (-1, 'marker')");
      dest.awaitRowsEqual(name("syncing_t"), sourceRows(db, "syncing_t"), WAIT);
      assertThat(
              dest.calls(DestinationOperation.WRITE_EVENTS).stream()
                  .filter(call -> call.stream().kind() == StreamId.Kind.TABLE_SYNC)
                  .filter(call -> call.hasInsertInto(name("syncing_t")))
                  .count())
          .as("catch-up writes carrying the transaction")
          .isGreaterThan(1);
      assertThat(logs.count("table sync of public.syncing_t", "streamed transaction"))
          .as("the catch-up stream delivered a streamed transaction from its spool")
          .isPositive();
      assertBatchesWithin(dest, 64 * 1024);
      assertThat(dest.violations()).isEmpty();
      assertThat(spoolFiles("catch")).isEmpty();
    }
  }

  /**
   * A table whose copy ends while a streamed transaction is open, between its stream blocks, is
   * handed off and caught up without waiting for that transaction's commit (PostgreSQL's own apply
   * worker syncs tables between stream blocks too). A restart with the transaction still open
   * streams again from the confirmed position, before the table's sync point: the table skips what
   * its catch-up delivered. The transaction, which commits after the table's sync point, then
   * reaches the table through the apply stream, once.
   */
  @Test
  void aTableCopiedWhileAStreamedTransactionIsOpenIsSyncedBeforeThatTransactionCommits(
      TestDatabase db) throws Exception {
    PgConnectionConfig source = streamingRole(db, "opener");
    db.execute(
        "CREATE TABLE open_ready (id int PRIMARY KEY, v text)",
        "CREATE TABLE open_syncing (id int PRIMARY KEY, v text)",
        "INSERT INTO open_syncing SELECT g, 'copied' FROM generate_series(1, 100) g",
        "CREATE PUBLICATION pub_open FOR TABLE open_ready, open_syncing");
    PipelineConfig config =
        PipelineHarness.config(db, "open", "pub_open")
            .source(source)
            .pgoutputStreaming(true)
            .spoolDirectory(spoolDir)
            .build();
    MemoryStore store = new MemoryStore("open");
    RecordingDestination dest = RecordingDestination.create();
    FaultyDestination faulty = FaultyDestination.wrap(dest);
    HoldHandle finish =
        faulty.holdNext(DestinationOperation.FINISH, call -> call.touches(name("open_syncing")));
    TableId syncing = PipelineHarness.oid(db, "open_syncing");
    try (Connection c = db.connect();
        Statement st = c.createStatement()) {
      try (Pipeline p = Pipeline.create(config, store, faulty)) {
        p.start();
        assertThat(finish.awaitReached(WAIT)).isTrue();
        PipelineHarness.awaitState(
            store, PipelineHarness.oid(db, "open_ready"), TableState.Type.READY);
        c.setAutoCommit(false);
        st.execute(
            "INSERT INTO open_ready SELECT g, repeat('r', 90) FROM generate_series(1, 4000) g");
        st.execute(
            "INSERT INTO open_syncing SELECT g, repeat('s', 90)"
                + " FROM generate_series(101, 4100) g");
        st.execute("UPDATE open_syncing SET v = 'changed' WHERE id <= 50");
        // the apply stream spools the open transaction
        await().atMost(WAIT).until(() -> !spoolFiles("open").isEmpty());
        // committed after the copy's snapshot, while the stream holds the open transaction
        db.execute("UPDATE open_syncing SET v = 'after the copy' WHERE id = 77");
        finish.releaseDurable();
        // before the fix the hand-off waited for a commit or a stream with nothing spooled
        await()
            .atMost(WAIT)
            .until(
                () ->
                    store.tableStates().get(syncing) != null
                        && EnumSet.of(TableState.Type.SYNC_DONE, TableState.Type.READY)
                            .contains(store.tableStates().get(syncing).type()));
        // the copy and the catch-up's update, without the open transaction's changes
        dest.awaitRowsEqual(name("open_syncing"), sourceRows(db, "open_syncing"), WAIT);
      }
      // restarted with the transaction still open
      try (Pipeline p = Pipeline.create(config, store, faulty)) {
        p.start();
        c.commit();
        db.execute("INSERT INTO open_syncing VALUES (-1, 'marker')");
        dest.awaitRowsEqual(name("open_syncing"), sourceRows(db, "open_syncing"), WAIT);
        dest.awaitRowsEqual(name("open_ready"), sourceRows(db, "open_ready"), WAIT);
        awaitAllReady(store, 2);
        assertThat(dest.violations()).isEmpty();
        assertThat(dest.anomalies()).isEmpty();
        await().atMost(WAIT).until(() -> spoolFiles("open").isEmpty());
      }
    }
  }

  @Test
  void theSpoolDiskCapStopsThePipelineWithAnErrorNamingItAndNoTableError(TestDatabase db)
      throws Exception {
    PgConnectionConfig source = streamingRole(db, "capped");
    db.execute(
        "CREATE TABLE capped_t (id int PRIMARY KEY, v text)",
        "CREATE PUBLICATION pub_capped FOR TABLE capped_t");
    PipelineConfig config =
        PipelineHarness.config(db, "capped", "pub_capped")
            .source(source)
            .pgoutputStreaming(true)
            .spoolDirectory(spoolDir)
            .spoolMaxBytes(256 * 1024)
            .build();
    MemoryStore store = new MemoryStore("capped");
    RecordingDestination dest = RecordingDestination.create();
    Pipeline p = Pipeline.create(config, store, dest);
    try {
      p.start();
      awaitAllReady(store, 1);
      db.execute(
          "INSERT INTO capped_t SELECT g, repeat('c', 100) FROM generate_series(1, 20000) g");
      assertThat(p.awaitTermination(WAIT)).as("the pipeline stopped").isTrue();
      EtlException failure = p.failure().orElseThrow();
      assertThat(failure.kind()).isEqualTo(ErrorKind.CONFIG_ERROR);
      assertThat(failure.getMessage())
          .contains("spoolMaxBytes (262144 bytes)", "raise spoolMaxBytes", "pgoutputStreaming");
      assertThat(store.tableStates().values())
          .as("no table error")
          .allMatch(s -> s.type() == TableState.Type.READY);
      assertThat(dest.rowCount(name("capped_t"))).isZero();
      assertThat(spoolFiles("capped")).isEmpty();
    } finally {
      try {
        p.close();
      } catch (EtlException failed) {
        // the failure asserted above
      }
    }
  }
}
