package org.pgetl.destination.postgres;

import static org.assertj.core.api.Assertions.assertThat;
import static org.pgetl.testing.destination.Scenario.col;
import static org.pgetl.testing.destination.Scenario.full;
import static org.pgetl.testing.destination.Scenario.key;
import static org.pgetl.testing.destination.Scenario.keyed;
import static org.pgetl.testing.destination.Scenario.partial;

import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.condition.EnabledIfSystemProperty;
import org.pgetl.model.Event;
import org.pgetl.model.ReplicatedTableSchema;
import org.pgetl.model.TableRow;
import org.pgetl.testing.destination.Scenario;
import org.pgetl.testkit.TestDatabase;
import org.pgetl.testkit.WithPostgres;

/**
 * A harness, not a test: measures how fast {@link PostgresMirrorDestination} stores copy batches
 * and applies change events, driven the way the engine drives it, into the test server. It runs
 * only when asked for, and prints its rates instead of asserting on them:
 *
 * <pre>
 * mvn -B -q -pl etl-examples -am verify -Dtest=NONE -Dsurefire.failIfNoSpecifiedTests=false \
 *     -Dit.test=MirrorRatesIT -Dpgetl.harness=true
 * </pre>
 *
 * <p>Copy: {@value #COPY_ROWS} rows of six columns (bigint key, int, text, numeric, timestamptz,
 * jsonb) in batches of {@value #COPY_BATCH} rows, from one partition with one copy connection and
 * from four partitions with four. Apply: {@value #CHANGES} row changes in writes of {@value
 * #EVENTS_PER_WRITE} events (inserts, full and partial updates, deletes of random keys). Each
 * measurement runs {@value #ROUNDS} times: the spread shows how loaded the machine was.
 */
@WithPostgres
@Timeout(value = 20, unit = TimeUnit.MINUTES)
@EnabledIfSystemProperty(named = "pgetl.harness", matches = "true")
class MirrorRatesIT {
  private static final int COPY_ROWS = 400_000;
  private static final int COPY_BATCH = 10_000;
  private static final int CHANGES = 60_000;
  private static final int EVENTS_PER_WRITE = 500;
  private static final int ROUNDS = 3;

  @Test
  void copyAndApplyRates(TestDatabase db) throws Exception {
    List<String> report = new ArrayList<>();
    for (int round = 1; round <= ROUNDS; round++) {
      report.add(
          String.format("round %d: copy 1 thread  %,9.0f rows/s", round, copy(db, 1, round)));
      report.add(
          String.format("round %d: copy 4 threads %,9.0f rows/s", round, copy(db, 4, round)));
      report.add(
          String.format("round %d: apply          %,9.0f changes/s", round, apply(db, round)));
    }
    System.out.println("PostgresMirrorDestination rates\n  " + String.join("\n  ", report));
  }

  private static ReplicatedTableSchema table(long oid, String name) {
    return keyed(
        oid,
        "rates",
        name,
        col("id", 20, "bigint", 1, 1),
        col("n", 23, "integer", 2, 0),
        col("label", 25, "text", 3, 0),
        col("amount", 1700, Scenario.NUMERIC_10_2, "numeric(10,2)", 4),
        col("at", 1184, -1, "timestamp with time zone", 5),
        col("doc", 3802, -1, "jsonb", 6));
  }

  private static TableRow row(long id, int n) {
    return TableRow.of(
        id,
        n,
        "label " + id,
        Scenario.num((id % 100_000) + "." + (n % 100)),
        Instant.ofEpochSecond(1_700_000_000L + id),
        "{\"n\": " + n + ", \"tag\": \"t" + (id % 7) + "\"}");
  }

  /** Copies one table from {@code partitions} threads; returns rows per second. */
  private static double copy(TestDatabase db, int partitions, int round) throws Exception {
    ReplicatedTableSchema t = table(50_000 + round * 10L + partitions, "copy" + partitions);
    Scenario.Copy copy =
        Scenario.copyOf(t, Scenario.rows(0, COPY_ROWS, i -> row(i, i)), COPY_BATCH);
    PostgresMirrorDestination d = new PostgresMirrorDestination(Jdbc.config(db), partitions);
    d.startup(new Scenario.Context());
    try {
      Scenario.drop(d, copy);
      long start = System.nanoTime();
      Scenario.copyConcurrently(
          d, partitions, List.of(copy), new int[][] {Scenario.range(0, copy.batches().size())});
      Scenario.finish(d, copy, copy.batches().size());
      double seconds = (System.nanoTime() - start) / 1e9;
      assertThat(db.queryLong("SELECT count(*) FROM rates." + t.name().name()))
          .isEqualTo(COPY_ROWS);
      return COPY_ROWS / seconds;
    } finally {
      d.shutdown();
    }
  }

  /** Applies a mix of changes to a table that holds 20,000 rows; returns changes per second. */
  private static double apply(TestDatabase db, int round) throws Exception {
    ReplicatedTableSchema t = table(60_000 + round, "apply" + round);
    int initial = 20_000;
    Scenario.Copy copy = Scenario.copyOf(t, Scenario.rows(0, initial, i -> row(i, i)), COPY_BATCH);
    Random random = new Random(round);
    List<List<Event>> writes = new ArrayList<>();
    List<Long> live = new ArrayList<>(); // keys present, so that no change misses its row
    for (long id = 0; id < initial; id++) {
      live.add(id);
    }
    long next = initial;
    long lsn = 0x1_0000_0000L * round;
    for (int w = 0; w < CHANGES / EVENTS_PER_WRITE; w++) {
      lsn += 0x10_000;
      Scenario.Tx tx = new Scenario.Tx(lsn, w + 1);
      for (int i = 0; i < EVENTS_PER_WRITE; i++) {
        int dice = random.nextInt(100);
        int at = random.nextInt(live.size());
        long id = live.get(at);
        if (dice < 40) {
          live.add(next);
          tx.insert(t, row(next++, i));
        } else if (dice < 70) {
          tx.update(t, full(row(id, i + 1).values().toArray()), null);
        } else if (dice < 85) {
          tx.update(t, partial(6, new int[] {5}, id, i + 2, "changed " + id, null, null), null);
        } else {
          live.set(at, live.get(live.size() - 1));
          live.remove(live.size() - 1);
          tx.delete(t, key(id));
        }
      }
      writes.add(tx.end());
    }
    PostgresMirrorDestination d = new PostgresMirrorDestination(Jdbc.config(db), 1);
    d.startup(new Scenario.Context());
    try {
      Scenario.copyAll(d, copy);
      long start = System.nanoTime();
      for (List<Event> write : writes) {
        Scenario.sendEvents(d, write);
      }
      double seconds = (System.nanoTime() - start) / 1e9;
      assertThat(db.queryLong("SELECT count(*) FROM rates." + t.name().name()))
          .isEqualTo(live.size());
      return CHANGES / seconds;
    } finally {
      d.shutdown();
    }
  }
}
