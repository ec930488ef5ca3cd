package org.pgetl.core.internal.pg;

import static org.assertj.core.api.Assertions.assertThat;

import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.nio.ByteBuffer;
import java.sql.Connection;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.SynchronousQueue;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.pgetl.PgConnectionConfig;
import org.pgetl.core.internal.decode.StreamingMode;

/** The stream against a real walsender: options, pacing, idle cost and delivery latency. */
@Timeout(value = 180, unit = TimeUnit.SECONDS)
class StreamIT {
  private static PgConnectionConfig config;
  private static PgConnector connector;
  private static Connection admin;
  private static ServerVersion version;

  @BeforeAll
  static void setUp() throws Exception {
    config = TestSource.freshDatabase("pgetl_stream_it");
    connector = new PgConnector(config);
    admin = TestSource.open(config);
    TestSource.exec(
        admin,
        "CREATE TABLE items (id int PRIMARY KEY, v text)",
        "CREATE PUBLICATION pub_items FOR TABLE items",
        "CREATE PUBLICATION \"My \"\"Pub\"\", it's\" FOR TABLE items");
    version = PgCatalog.serverVersion(admin);
  }

  @AfterAll
  static void tearDown() throws Exception {
    if (admin != null) {
      admin.close();
    }
  }

  private static ByteBuffer next(ReplicationStream s, char type) {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
    while (System.nanoTime() < deadline) {
      ByteBuffer msg = s.readNext(TimeUnit.MILLISECONDS.toNanos(50));
      if (msg != null && PgoutputProbe.type(msg) == type) {
        return msg;
      }
    }
    throw new AssertionError("no '" + type + "' message within 30 s");
  }

  @Test
  void publicationNameWithQuotesCommaAndCaseIsStreamed() throws Exception {
    try (ReplicationConnection repl = connector.openReplication("pgetl:apply:quoted")) {
      CreatedSlot slot = repl.createSlot("pgetl_apply_quoted", SnapshotMode.NOEXPORT_SNAPSHOT);
      ReplicationStream s =
          repl.startStreaming(
              StreamOptions.of(slot.slotName(), slot.consistentPoint(), List.of("My \"Pub\", it's"))
                  .withProtoVersion(1));
      TestSource.exec(admin, "INSERT INTO items VALUES (100, 'quoted')");
      assertThat(PgoutputProbe.insertFirstColumn(next(s, 'I'))).isEqualTo("100");
    }
  }

  @Test
  void serverMaxProtocolWithMessagesBinaryAndStreaming() throws Exception {
    if (!version.atLeast(14)) {
      return; // binary, messages and streaming need PostgreSQL 14
    }
    try (ReplicationConnection repl = connector.openReplication("pgetl:apply:options")) {
      CreatedSlot slot = repl.createSlot("pgetl_apply_options", SnapshotMode.NOEXPORT_SNAPSHOT);
      StreamingMode streaming = version.atLeast(16) ? StreamingMode.PARALLEL : StreamingMode.ON;
      ReplicationStream s =
          repl.startStreaming(
              StreamOptions.of(slot.slotName(), slot.consistentPoint(), List.of("pub_items"))
                  .withMessages(true)
                  .withBinary(true)
                  .withStreaming(streaming));
      TestSource.exec(
          admin,
          "BEGIN",
          "SELECT pg_logical_emit_message(true, 'pgetl', 'hello')",
          "INSERT INTO items VALUES (200, 'binary')",
          "COMMIT");
      assertThat(PgoutputProbe.messageContent(next(s, 'M'))).isEqualTo("hello");
      assertThat(PgoutputProbe.insertFirstColumn(next(s, 'I'))).isEqualTo("<binary>");
    }
  }

  @Test
  void statusIntervalIsClampedToAThirdOfWalSenderTimeoutAndKeepsTheConnection() throws Exception {
    try (ReplicationConnection repl = connector.openReplication("pgetl:apply:pacing")) {
      TestSource.exec(repl.jdbc(), "SET wal_sender_timeout = '1500ms'");
      assertThat(repl.walSenderTimeout()).isEqualTo(Duration.ofMillis(1500));
      CreatedSlot slot = repl.createSlot("pgetl_apply_pacing", SnapshotMode.NOEXPORT_SNAPSHOT);
      ReplicationStream s =
          repl.startStreaming(
              StreamOptions.of(slot.slotName(), slot.consistentPoint(), List.of("pub_items")));
      assertThat(s.statusIntervalNanos()).isEqualTo(TimeUnit.MILLISECONDS.toNanos(500));
      // Four timeouts long: the walsender would drop a silent client after 1.5 s.
      long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(6);
      while (System.nanoTime() < end) {
        assertThat(s.readNext(TimeUnit.MILLISECONDS.toNanos(100))).isNull();
      }
      assertThat(s.statusUpdatesSent()).isGreaterThanOrEqualTo(8);
      assertThat(s.isClosed()).isFalse();
      TestSource.exec(admin, "INSERT INTO items VALUES (300, 'still here')");
      assertThat(PgoutputProbe.insertFirstColumn(next(s, 'I'))).isEqualTo("300");
    }
  }

  /** Thread CPU of an idle owner reading for three seconds, in percent of one core. */
  private static double idleCpuPercent(ReplicationStream s) {
    ThreadMXBean threads = ManagementFactory.getThreadMXBean();
    long cpu0 = threads.getCurrentThreadCpuTime();
    long t0 = System.nanoTime();
    long longestRead = 0;
    while (System.nanoTime() - t0 < TimeUnit.SECONDS.toNanos(3)) {
      long start = System.nanoTime();
      assertThat(s.readNext(TimeUnit.MILLISECONDS.toNanos(100))).isNull();
      longestRead = Math.max(longestRead, System.nanoTime() - start);
    }
    // Bounded: never the 10 s status interval a blocking read() would wait (generous for load).
    assertThat(Duration.ofNanos(longestRead)).isLessThan(Duration.ofMillis(1000));
    return (threads.getCurrentThreadCpuTime() - cpu0) * 100.0 / (System.nanoTime() - t0);
  }

  @Test
  void idleCostAndSingleRowLatency() throws Exception {
    double noParkCpu;
    try (ReplicationConnection repl = connector.openReplication("pgetl:apply:nopark")) {
      // Reference in the same run: no socket wait and never park, only pgjdbc's own 1 ms poll.
      repl.waitOnSocket(false);
      repl.idleBackoff(
          new IdleBackoff(Integer.MAX_VALUE, Duration.ofNanos(1), Duration.ofNanos(1)));
      CreatedSlot slot = repl.createSlot("pgetl_apply_nopark", SnapshotMode.NOEXPORT_SNAPSHOT);
      noParkCpu =
          idleCpuPercent(
              repl.startStreaming(
                  StreamOptions.of(slot.slotName(), slot.consistentPoint(), List.of("pub_items"))));
    }
    try (ReplicationConnection repl = connector.openReplication("pgetl:apply:latency")) {
      CreatedSlot slot = repl.createSlot("pgetl_apply_latency", SnapshotMode.NOEXPORT_SNAPSHOT);
      ReplicationStream s =
          repl.startStreaming(
              StreamOptions.of(slot.slotName(), slot.consistentPoint(), List.of("pub_items")));
      double idleCpu = idleCpuPercent(s);

      // One insert at a time: the inserter waits until the reader saw the previous row.
      SynchronousQueue<long[]> sent = new SynchronousQueue<>();
      SynchronousQueue<Boolean> seen = new SynchronousQueue<>();
      int rows = 30;
      CompletableFuture<Void> inserter =
          CompletableFuture.runAsync(
              () -> {
                try (Connection c = TestSource.open(config)) {
                  for (int i = 0; i < rows; i++) {
                    long start = System.nanoTime();
                    TestSource.exec(c, "INSERT INTO items VALUES (" + (1000 + i) + ", 'x')");
                    sent.put(new long[] {start, System.nanoTime()});
                    seen.take();
                  }
                } catch (Exception e) {
                  throw new IllegalStateException(e);
                }
              });
      double[] fromStart = new double[rows];
      double[] afterCommit = new double[rows];
      for (int i = 0; i < rows; i++) {
        next(s, 'I');
        long arrived = System.nanoTime();
        long[] times = sent.take();
        fromStart[i] = (arrived - times[0]) / 1e6;
        afterCommit[i] = Math.max(0, arrived - times[1]) / 1e6;
        seen.put(Boolean.TRUE);
      }
      inserter.get(60, TimeUnit.SECONDS);
      Arrays.sort(fromStart);
      Arrays.sort(afterCommit);
      System.out.printf(
          "replication stream idle cost: %.1f%% of one core (polling, never parking: %.1f%%);"
              + " single-row insert, from INSERT sent to arrival: median %.2f ms, p90 %.2f ms;"
              + " arrival after COMMIT returned: median %.2f ms, p90 %.2f ms%n",
          idleCpu,
          noParkCpu,
          fromStart[rows / 2],
          fromStart[rows * 9 / 10],
          afterCommit[rows / 2],
          afterCommit[rows * 9 / 10]);
      // Generous bounds that still catch a busy spin (~100%) or a lost wake-up (tens of ms). The
      // delivery delay excludes the insert's own commit, which a loaded disk can stall.
      assertThat(idleCpu).isLessThan(30.0);
      assertThat(afterCommit[rows / 2]).isLessThan(20.0);
    }
  }
}
