package org.pgetl.engine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.pgetl.engine.PipelineHarness.WAIT;
import static org.pgetl.engine.PipelineHarness.awaitAllReady;
import static org.pgetl.engine.PipelineHarness.name;
import static org.pgetl.engine.PipelineHarness.sourceRows;

import java.sql.Connection;
import java.sql.Statement;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.pgetl.PgConnectionConfig;
import org.pgetl.Pipeline;
import org.pgetl.PipelineConfig;
import org.pgetl.model.Event;
import org.pgetl.store.MemoryStore;
import org.pgetl.testkit.TestDatabase;
import org.pgetl.testkit.WithPostgres;
import org.pgetl.testkit.destination.RecordingDestination;

/**
 * Large transactions streamed by the server while in progress ({@code pgoutputStreaming}): a
 * committed one arrives whole, in order, after its commit; an aborted one and a rolled-back
 * subtransaction never arrive. The pipeline connects as a role whose {@code
 * logical_decoding_work_mem} is tiny, so that moderate transactions stream.
 */
@WithPostgres
@Timeout(value = 4, unit = TimeUnit.MINUTES)
class StreamedTransactionsIT {

  @Test
  void streamedTransactionsArriveWholeAfterTheirCommitAndAbortedOnesNever(TestDatabase db)
      throws Exception {
    db.execute(
        "CREATE ROLE streamer LOGIN SUPERUSER REPLICATION PASSWORD 'streamer'",
        "ALTER ROLE streamer SET logical_decoding_work_mem = '64kB'",
        "CREATE TABLE big_tx (id int PRIMARY KEY, v text)",
        "INSERT INTO big_tx VALUES (0, 'seed')",
        "CREATE PUBLICATION pub_big_tx FOR TABLE big_tx");
    PgConnectionConfig asStreamer =
        PipelineHarness.source(db).toBuilder().user("streamer").password("streamer").build();
    PipelineConfig config =
        PipelineHarness.config(db, "streamed", "pub_big_tx")
            .source(asStreamer)
            .pgoutputStreaming(true)
            .build();
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
        c.rollback();
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
      // the server really streamed the transaction in progress
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
    }
  }

  /**
   * Regression: pgoutput sends TYPE messages for user types (enums, domains, composites) inside the
   * stream blocks of an in-progress transaction; the replay at STREAM COMMIT rejected them
   * ("unexpected Type message in a transaction", MANUAL), and since the server streams the same
   * transaction again after every restart, the pipeline could never pass it.
   */
  @Test
  void aStreamedTransactionOnTablesWithUserTypesArrives(TestDatabase db) throws Exception {
    db.execute(
        "CREATE ROLE typer LOGIN SUPERUSER REPLICATION PASSWORD 'typer'",
        "ALTER ROLE typer SET logical_decoding_work_mem = '64kB'",
        "CREATE TYPE mood AS ENUM ('sad', 'ok', 'happy')",
        "CREATE DOMAIN positive AS int CHECK (VALUE > 0)",
        "CREATE TYPE point2 AS (x int, y int)",
        "CREATE TABLE typed (id int PRIMARY KEY, m mood, p positive, pt point2, v text)",
        "INSERT INTO typed VALUES (0, 'ok', 1, ROW(0, 0), 'seed')",
        "CREATE PUBLICATION pub_typed FOR TABLE typed");
    PgConnectionConfig asTyper =
        PipelineHarness.source(db).toBuilder().user("typer").password("typer").build();
    PipelineConfig config =
        PipelineHarness.config(db, "typed", "pub_typed")
            .source(asTyper)
            .pgoutputStreaming(true)
            .build();
    MemoryStore store = new MemoryStore("typed");
    RecordingDestination dest = RecordingDestination.create();
    try (Pipeline p = Pipeline.create(config, store, dest)) {
      p.start();
      awaitAllReady(store, 1);
      db.execute(
          "INSERT INTO typed SELECT g, (ARRAY['sad','ok','happy'])[1 + g % 3]::mood, g,"
              + " ROW(g, -g)::point2, repeat('t', 100) FROM generate_series(1, 4000) g");
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
    }
  }
}
