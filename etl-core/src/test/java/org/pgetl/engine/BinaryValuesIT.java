package org.pgetl.engine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;
import static org.pgetl.engine.PipelineHarness.WAIT;
import static org.pgetl.engine.PipelineHarness.awaitAllReady;
import static org.pgetl.engine.PipelineHarness.awaitState;
import static org.pgetl.engine.PipelineHarness.config;
import static org.pgetl.engine.PipelineHarness.name;
import static org.pgetl.engine.PipelineHarness.oid;
import static org.pgetl.engine.PipelineHarness.sourceRows;

import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.pgetl.Pipeline;
import org.pgetl.PipelineConfig;
import org.pgetl.PipelineStatus;
import org.pgetl.store.MemoryStore;
import org.pgetl.store.TableState;
import org.pgetl.testkit.TestDatabase;
import org.pgetl.testkit.WithPostgres;
import org.pgetl.testkit.destination.RecordingDestination;

/**
 * With {@code pgoutputBinary} on, a table that joins the publication while the pipeline runs and
 * has a column of a type pgetl cannot decode from binary (here a base type of the source's own)
 * switches the streams to text values, rather than erroring the table when pgoutput starts sending
 * the type's binary form (as it does once the type gains a send function).
 */
@WithPostgres
@Timeout(value = 3, unit = TimeUnit.MINUTES)
class BinaryValuesIT {

  @Test
  void aJoiningTableWithATypeWithoutBinaryDecoderTurnsTheStreamsToText(TestDatabase db) {
    db.execute(
        "DROP PUBLICATION IF EXISTS binary_pub",
        "DROP TABLE IF EXISTS bin_keyed, bin_later",
        "DROP TYPE IF EXISTS bintext CASCADE",
        "CREATE TABLE bin_keyed (id int PRIMARY KEY, v numeric)",
        "INSERT INTO bin_keyed SELECT g, g * 1.5 FROM generate_series(1, 20) g",
        "CREATE PUBLICATION binary_pub FOR TABLE bin_keyed",
        // a base type of this database, without send and receive functions for now
        "CREATE TYPE bintext",
        "CREATE FUNCTION bintextin(cstring) RETURNS bintext LANGUAGE internal IMMUTABLE STRICT"
            + " AS 'textin'",
        "CREATE FUNCTION bintextout(bintext) RETURNS cstring LANGUAGE internal IMMUTABLE STRICT"
            + " AS 'textout'",
        "CREATE TYPE bintext (input = bintextin, output = bintextout, like = text)");
    PipelineConfig cfg =
        config(db, "binary", "binary_pub")
            .pgoutputBinary(true)
            .publicationRefreshInterval(Duration.ofMillis(500))
            .build();
    MemoryStore store = new MemoryStore("binary");
    RecordingDestination dest = RecordingDestination.create();
    try (Pipeline p = PipelineHarness.start(cfg, store, dest)) {
      awaitAllReady(store, 1);
      db.execute(
          "CREATE TABLE bin_later (id int PRIMARY KEY, t bintext)",
          "INSERT INTO bin_later VALUES (1, 'before')",
          "ALTER PUBLICATION binary_pub ADD TABLE bin_later");
      awaitAllReady(store, 2);
      // from now on pgoutput sends bintext in binary form when asked for binary values
      db.execute(
          "CREATE FUNCTION bintextsend(bintext) RETURNS bytea LANGUAGE internal STABLE STRICT"
              + " AS 'textsend'",
          "CREATE FUNCTION bintextrecv(internal) RETURNS bintext LANGUAGE internal STABLE STRICT"
              + " AS 'textrecv'",
          "ALTER TYPE bintext SET (send = bintextsend, receive = bintextrecv)",
          "INSERT INTO bin_later VALUES (2, 'after')",
          "UPDATE bin_keyed SET v = v + 1 WHERE id <= 5");
      await().atMost(WAIT).until(() -> dest.rowCount(name("bin_later")) == 2);
      dest.awaitRowsEqual(name("bin_keyed"), sourceRows(db, "bin_keyed"), WAIT);
      awaitState(store, oid(db, "bin_later"), TableState.Type.READY);
      assertThat(p.status().phase()).isEqualTo(PipelineStatus.Phase.RUNNING);
      assertThat(dest.violations()).isEmpty();
    }
  }
}
