package org.pgetl.destination.postgres;

import static org.assertj.core.api.Assertions.assertThat;
import static org.pgetl.testing.destination.Scenario.await;
import static org.pgetl.testing.destination.Scenario.col;
import static org.pgetl.testing.destination.Scenario.keyed;

import java.sql.Connection;
import java.sql.Statement;
import java.time.Duration;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.pgetl.destination.AsyncResult;
import org.pgetl.destination.AsyncResult.Outcome;
import org.pgetl.destination.StreamId;
import org.pgetl.destination.TableCopyWrite;
import org.pgetl.destination.WriteDurability;
import org.pgetl.model.Event;
import org.pgetl.model.ReplicatedTableSchema;
import org.pgetl.model.TableRow;
import org.pgetl.testing.destination.Scenario;
import org.pgetl.testkit.TestDatabase;
import org.pgetl.testkit.WithPostgres;
import org.pgetl.testkit.destination.InMemoryDestinationContext;

/**
 * Issue #11 item 1: two instances of one pipeline write to the same mirror, with the lease epochs
 * of an instance that lost its lease (1) and of the one that took over (2).
 */
@WithPostgres
@Timeout(value = 3, unit = TimeUnit.MINUTES)
class PostgresMirrorFencingIT {
  private static final ReplicatedTableSchema T =
      keyed(19100, "fence", "t", col("id", 23, "integer", 1, 1), col("v", 25, "text", 2, 0));
  private static final ReplicatedTableSchema U =
      keyed(19101, "fence", "u", col("id", 23, "integer", 1, 1));

  private static PostgresMirrorDestination started(TestDatabase db, String pipeline, long epoch) {
    InMemoryDestinationContext ctx = new InMemoryDestinationContext(pipeline);
    ctx.setEpoch(epoch);
    PostgresMirrorDestination d = new PostgresMirrorDestination(Jdbc.config(db), 2);
    d.startup(ctx);
    return d;
  }

  /**
   * Regression: the mirror applied every write of an instance that had lost its lease, after the
   * instance that took over had written, so the two interleaved in the mirror. Each write of the
   * old epoch must now be answered {@code shutdown()} and change nothing, whatever its kind.
   */
  @Test
  void aStaleInstanceWritingAfterATakeoverIsRefusedAndChangesNothing(TestDatabase db) {
    PostgresMirrorDestination stale = started(db, "fenced", 1);
    PostgresMirrorDestination current = started(db, "fenced", 2);
    try {
      Scenario.copyAll(
          stale, Scenario.copyOf(T, List.of(TableRow.of(1, "a"), TableRow.of(2, "b")), 10));
      Scenario.sendEvents(stale, new Scenario.Tx(0x1000, 1).insert(T, TableRow.of(3, "c")).end());

      Scenario.sendEvents(current, new Scenario.Tx(0x2000, 2).insert(T, TableRow.of(4, "d")).end());

      assertThat(events(stale, new Scenario.Tx(0x3000, 3).insert(T, TableRow.of(5, "e")).end()))
          .isEqualTo(Outcome.SHUTDOWN);
      assertThat(events(stale, List.of())).as("a barrier").isEqualTo(Outcome.SHUTDOWN);
      AsyncResult drop = AsyncResult.create();
      stale.dropTableForCopy(T, UUID.randomUUID(), drop);
      assertThat(await(drop)).as("a drop").isEqualTo(Outcome.SHUTDOWN);
      Scenario.Copy copyOfU = Scenario.copyOf(U, List.of(TableRow.of(1)), 10);
      AsyncResult dropU = AsyncResult.create();
      stale.dropTableForCopy(U, copyOfU.attempt(), dropU);
      assertThat(await(dropU)).as("a drop of a new table").isEqualTo(Outcome.SHUTDOWN);
      AsyncResult batch = AsyncResult.create();
      stale.writeTableRows(U, copyOfU.batch(0), batch);
      assertThat(await(batch)).as("a copy batch").isEqualTo(Outcome.SHUTDOWN);
      AsyncResult finish = AsyncResult.create();
      stale.writeTableRows(U, new TableCopyWrite.Finish(copyOfU.attempt(), 1, 1), finish);
      assertThat(await(finish)).as("a Finish").isEqualTo(Outcome.SHUTDOWN);
    } finally {
      stale.shutdown();
      current.shutdown();
    }
    assertThat(db.queryRows("SELECT id, v FROM fence.t ORDER BY id"))
        .containsExactly(
            List.of("1", "a"), List.of("2", "b"), List.of("3", "c"), List.of("4", "d"));
    assertThat(db.queryString("SELECT to_regclass('fence.u') IS NULL"))
        .as("fence.u was never created")
        .isEqualTo("t");
    assertThat(db.queryLong("SELECT epoch FROM _pgetl.mirror_epochs WHERE pipeline_id = 'fenced'"))
        .isEqualTo(2);

    PostgresMirrorDestination restarted = started(db, "fenced", 2);
    try {
      Scenario.sendEvents(
          restarted, new Scenario.Tx(0x4000, 4).insert(T, TableRow.of(6, "f")).end());
      Scenario.copyAll(restarted, Scenario.copyOf(U, List.of(TableRow.of(1)), 10));
    } finally {
      restarted.shutdown();
    }
    assertThat(db.queryRows("SELECT id FROM fence.t WHERE id > 4")).containsExactly(List.of("6"));
    assertThat(db.queryLong("SELECT count(*) FROM fence.u")).isEqualTo(1);
  }

  /**
   * A write of the old epoch that is running when the new instance writes first commits before the
   * new instance's write, which waits for it; the old instance's next write is refused.
   */
  @Test
  void aTakeoverWaitsForTheStaleInstancesWriteInFlight(TestDatabase db) throws Exception {
    ReplicatedTableSchema w =
        keyed(19110, "fence", "w", col("id", 23, "integer", 1, 1), col("v", 25, "text", 2, 0));
    PostgresMirrorDestination stale = started(db, "inflight", 1);
    PostgresMirrorDestination current = started(db, "inflight", 2);
    try {
      Scenario.copyAll(stale, Scenario.copyOf(w, List.of(TableRow.of(1, "a")), 10));
      AsyncResult inFlight = AsyncResult.create();
      AsyncResult takeover = AsyncResult.create();
      try (Connection blocker = db.connect();
          Statement s = blocker.createStatement()) {
        blocker.setAutoCommit(false);
        s.execute("LOCK TABLE fence.w IN ACCESS EXCLUSIVE MODE");
        stale.writeEvents(
            StreamId.APPLY,
            new Scenario.Tx(0x1000, 1).insert(w, TableRow.of(2, "old")).end(),
            WriteDurability.MAY_DEFER,
            inFlight);
        // the stale write took the epoch row shared and waits for the table
        awaitWaiting(db, 1);
        current.writeEvents(
            StreamId.APPLY,
            new Scenario.Tx(0x2000, 2).insert(w, TableRow.of(2, "new")).end(),
            WriteDurability.MAY_DEFER,
            takeover);
        awaitWaiting(db, 2);
        assertThat(inFlight.isAnswered()).isFalse();
        assertThat(takeover.isAnswered()).isFalse();
        blocker.commit();
      }
      assertThat(await(inFlight)).isEqualTo(Outcome.DURABLE);
      assertThat(await(takeover)).isEqualTo(Outcome.DURABLE);
      assertThat(events(stale, new Scenario.Tx(0x3000, 3).insert(w, TableRow.of(3, "x")).end()))
          .isEqualTo(Outcome.SHUTDOWN);
    } finally {
      stale.shutdown();
      current.shutdown();
    }
    assertThat(db.queryRows("SELECT id, v FROM fence.w ORDER BY id"))
        .as("the new instance's write came last")
        .containsExactly(List.of("1", "a"), List.of("2", "new"));
  }

  private static Outcome events(PostgresMirrorDestination d, List<Event> events) {
    AsyncResult r = AsyncResult.create();
    WriteDurability durability =
        events.isEmpty() ? WriteDurability.REQUIRE_DURABLE : WriteDurability.MAY_DEFER;
    d.writeEvents(StreamId.APPLY, events, durability, r);
    return await(r);
  }

  /** Waits until {@code n} sessions of the mirror wait for a lock. */
  private static void awaitWaiting(TestDatabase db, int n) {
    org.awaitility.Awaitility.await()
        .atMost(Duration.ofSeconds(30))
        .until(
            () ->
                db.queryLong(
                        "SELECT count(*) FROM pg_stat_activity WHERE application_name ="
                            + " 'pgetl-mirror-inflight' AND wait_event_type = 'Lock'")
                    == n);
  }
}
