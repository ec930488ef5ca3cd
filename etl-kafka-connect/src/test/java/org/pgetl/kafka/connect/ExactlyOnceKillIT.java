package org.pgetl.kafka.connect;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.regex.Pattern;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.connect.data.Struct;
import org.apache.kafka.connect.json.JsonConverter;
import org.apache.kafka.connect.util.clusters.EmbeddedKafkaCluster;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.pgetl.model.EventSequenceKey;
import org.pgetl.model.Lsn;
import org.pgetl.testkit.TestDatabase;
import org.pgetl.testkit.WithPostgres;

/**
 * A Connect worker in a child JVM killed with SIGKILL, once while it copies a table and once while
 * it streams many small transactions, then replaced by a new worker; a consumer then reads the
 * topics. With exactly-once ({@code exactly.once.source.support=enabled}, {@code
 * transaction.boundary=connector}) a {@code read_committed} consumer sees every row exactly once;
 * without it, no row is missing and the duplicates stay within the bound {@code
 * docs/kafka-connect.md} states: the rows of the interrupted copy, and the stream's records Kafka
 * took after Connect's last offset commit. That commit is read back from the workers' offsets topic
 * once the worker is dead, and the bound counts the records whose position ({@code
 * source.commit_lsn}, {@code source.tx_ordinal}) lies beyond it.
 */
@WithPostgres
@Timeout(240)
class ExactlyOnceKillIT {
  private static final int COPY_ROWS = 30_000;
  private static final int STREAM_ROWS = 6_000;

  private static EmbeddedKafkaCluster kafka;

  @BeforeAll
  static void startBroker() {
    kafka = new EmbeddedKafkaCluster(1, ConnectHarness.oneBroker());
    kafka.start();
  }

  @AfterAll
  static void stopBroker() {
    if (kafka != null) {
      kafka.stop();
    }
  }

  @Test
  void withExactlyOnceAReadCommittedConsumerSeesEveryRowOnceAfterTwoKills(TestDatabase db)
      throws Exception {
    Counts counts = killTwice(db, true);
    assertThat(counts.copy.missing).isZero();
    assertThat(counts.copy.duplicates).isZero();
    assertThat(counts.stream.missing).isZero();
    assertThat(counts.stream.duplicates).isZero();
  }

  @Test
  void withoutExactlyOnceNothingIsMissingAndDuplicatesStayWithinTheBound(TestDatabase db)
      throws Exception {
    Counts counts = killTwice(db, false);
    assertThat(counts.copy.missing).isZero();
    assertThat(counts.stream.missing).isZero();
    // the interrupted copy starts over: at most its table's rows again
    assertThat(counts.copy.duplicates).isLessThanOrEqualTo(COPY_ROWS);
    // the stream resumes from Connect's committed offset: at most what Kafka took after it
    assertThat(counts.stream.duplicates).isLessThanOrEqualTo(counts.streamBound);
  }

  @Test
  void withExactlyOnceAChunkedCopyKilledMidwayResumesAtItsCommittedChunksAndSendsEachRowOnce(
      TestDatabase db) throws Exception {
    String mode = "chunked";
    String big = mode + "_big";
    createCopiedTable(db, big);
    db.execute("CREATE PUBLICATION " + mode + "_pub FOR TABLE " + big);
    long chunkBytes = 65_536;
    long chunks = db.queryLong("SELECT pg_table_size('" + big + "')") / chunkBytes;
    // the rows of one chunk read per copy connection (4), twice over for uneven chunks
    long oneCommit = 4 * 2 * COPY_ROWS / Math.max(1, chunks);
    Map<String, String> worker = new HashMap<>();
    worker.put("exactly.once.source.support", "enabled");
    // a transaction holds a few chunks: the next worker waits at most this for the killed one's
    worker.put("producer.transaction.timeout.ms", "10000");
    Map<String, String> connector = connector(db, mode, true);
    // about 40 chunks of the 2 MiB table
    connector.put(PgetlConnectorConfig.COPY_CHUNKED_MIN_BYTES, "0");
    connector.put(PgetlConnectorConfig.COPY_CHUNK_BYTES, Long.toString(chunkBytes));
    String bigTopic = mode + ".public." + big;
    Path logs = Files.createDirectories(Path.of("target", "kill-it"));
    String group = "kill-" + mode;
    List<ConnectWorkerProcess> workers = new ArrayList<>();
    // no stream topic: the copy's records are only counted
    String noStream = mode + ".none";
    try (Reader all = new Reader(kafka, mode, noStream, "read_uncommitted");
        Reader committed = new Reader(kafka, mode, noStream, "read_committed")) {
      ConnectWorkerProcess first = startWorker(group, worker, logs.resolve(mode + "-1.log"));
      workers.add(first);
      first.putConnector(mode, connector);
      // the kill comes once half the chunks were committed, before the copy's end
      await()
          .atMost(ConnectHarness.WAIT)
          .until(() -> committed.poll().records(bigTopic) >= COPY_ROWS / 2);
      first.kill();
      long committedAtKill = committed.poll().records(bigTopic);
      assertThat(committedAtKill).isLessThan(COPY_ROWS);
      await().atMost(ConnectHarness.WAIT).until(() -> all.poll().atEnd());
      long sentByFirst = all.records(bigTopic);
      System.out.printf(
          "%s: worker killed during the chunked copy with %d of %d rows committed, %d sent%n",
          mode, committedAtKill, COPY_ROWS, sentByFirst);

      workers.add(startWorker(group, worker, logs.resolve(mode + "-2.log")));
      await().atMost(ConnectHarness.WAIT).until(() -> committed.poll().keys(bigTopic) == COPY_ROWS);
      await().atMost(ConnectHarness.WAIT).until(() -> committed.poll().atEnd());
      TopicCounts counts = committed.counts(bigTopic, COPY_ROWS);
      await().atMost(ConnectHarness.WAIT).until(() -> all.poll().atEnd());
      long sentBySecond = all.records(bigTopic) - sentByFirst;
      System.out.printf(
          "%s: copy %s (%d chunks, bound on duplicates %d); the second worker sent %d rows%n",
          mode, counts, chunks, oneCommit, sentBySecond);
      assertThat(counts.missing).isZero();
      // a kill between a commit and the store's record of its chunks sends those chunks again:
      // the reads of one commit at most, one per copy connection (docs/kafka-connect.md)
      assertThat(counts.duplicates).isLessThanOrEqualTo(oneCommit);
      // the committed chunks were kept: the second worker sent only the rest
      assertThat(sentBySecond).isLessThanOrEqualTo(COPY_ROWS - committedAtKill + counts.duplicates);
    } finally {
      for (ConnectWorkerProcess w : workers) {
        w.close();
      }
    }
  }

  /** What a consumer read of one table's topic. */
  record TopicCounts(long records, long keys, long missing, long duplicates) {}

  record Counts(TopicCounts copy, TopicCounts stream, long streamBound) {}

  private static Counts killTwice(TestDatabase db, boolean exactlyOnce) throws Exception {
    String mode = exactlyOnce ? "eos" : "alo";
    String big = mode + "_big";
    String events = mode + "_events";
    createCopiedTable(db, big);
    db.execute(
        "CREATE TABLE " + events + " (id bigint PRIMARY KEY, payload text NOT NULL)",
        "CREATE PUBLICATION " + mode + "_pub FOR TABLE " + big + ", " + events);
    Map<String, String> worker = new HashMap<>();
    worker.put("exactly.once.source.support", exactlyOnce ? "enabled" : "disabled");
    // the next worker reads the offsets topic read_committed: it waits until the broker aborts the
    // killed task's open transaction, after this timeout (60 s by default); the copy's transaction
    // (30,000 rows, about 13 s here) must fit in it
    worker.put("producer.transaction.timeout.ms", "30000");
    Map<String, String> connector = connector(db, mode, exactlyOnce);
    String bigTopic = mode + ".public." + big;
    String eventsTopic = mode + ".public." + events;
    Path logs = Files.createDirectories(Path.of("target", "kill-it"));
    String group = "kill-" + mode;

    AtomicBoolean writing = new AtomicBoolean(true);
    CompletableFuture<Void> writer = null;
    List<ConnectWorkerProcess> workers = new ArrayList<>();
    try (Reader all = new Reader(kafka, mode, eventsTopic, "read_uncommitted")) {
      ConnectWorkerProcess first = startWorker(group, worker, logs.resolve(mode + "-1.log"));
      workers.add(first);
      first.putConnector(mode, connector);

      // kill 1: mid-copy (records of the copy reached Kafka, not all of them)
      await()
          .atMost(ConnectHarness.WAIT)
          .until(() -> all.poll().records(bigTopic) >= COPY_ROWS / 6);
      assertThat(all.records(bigTopic)).isLessThan(COPY_ROWS);
      first.kill();
      System.out.printf(
          "%s: worker killed during the copy with %d of %d rows in the topic%n",
          mode, all.records(bigTopic), COPY_ROWS);

      workers.add(startWorker(group, worker, logs.resolve(mode + "-2.log")));
      try (Reader committed = new Reader(kafka, mode, eventsTopic, "read_committed")) {
        await()
            .atMost(ConnectHarness.WAIT)
            .until(() -> committed.poll().keys(bigTopic) == COPY_ROWS);
      }

      // kill 2: while one small transaction follows another
      writer =
          CompletableFuture.runAsync(
              () -> {
                try (Connection c = db.connect();
                    PreparedStatement insert =
                        c.prepareStatement(
                            "INSERT INTO "
                                + events
                                + " SELECT g, 'streamed ' || g"
                                + " FROM generate_series(?::bigint, ?::bigint) g")) {
                  for (long id = 1; id <= STREAM_ROWS && writing.get(); id += 3) {
                    insert.setLong(1, id);
                    insert.setLong(2, Math.min(id + 2, STREAM_ROWS));
                    insert.executeUpdate();
                  }
                } catch (SQLException e) {
                  throw new IllegalStateException(e);
                }
              });
      await()
          .atMost(ConnectHarness.WAIT)
          .until(() -> all.poll().records(eventsTopic) >= STREAM_ROWS / 6);
      long atKill = all.records(eventsTopic);
      // the pipeline streams: part of the rows are in the topic
      assertThat(atKill).isLessThan(STREAM_ROWS);
      workers.get(1).kill();
      // everything the dead worker sent, against the last offset Connect committed for it
      await().atMost(ConnectHarness.WAIT).until(() -> all.poll().atEnd());
      EventSequenceKey committedOffset = lastApplyOffset(group + "-offsets", mode);
      long bound = all.recordsAfter(eventsTopic, committedOffset);
      System.out.printf(
          "%s: worker killed while streaming with %d of %d rows in the topic; Connect's last"
              + " offset commit %s, %d records after it%n",
          mode, atKill, STREAM_ROWS, committedOffset, bound);

      workers.add(startWorker(group, worker, logs.resolve(mode + "-3.log")));
      writer.get();
      try (Reader committed = new Reader(kafka, mode, eventsTopic, "read_committed")) {
        await()
            .atMost(ConnectHarness.WAIT)
            .until(() -> committed.poll().keys(eventsTopic) == STREAM_ROWS);
        // up to the end of what Kafka holds now
        await().atMost(ConnectHarness.WAIT).until(() -> committed.poll().atEnd());
        Counts counts =
            new Counts(
                committed.counts(bigTopic, COPY_ROWS),
                committed.counts(eventsTopic, STREAM_ROWS),
                bound);
        System.out.printf(
            "%s: copy %s, stream %s (duplicates allowed without exactly-once: %d)%n",
            mode, counts.copy, counts.stream, bound);
        return counts;
      }
    } finally {
      writing.set(false);
      if (writer != null) {
        writer.exceptionally(e -> null).join();
      }
      for (ConnectWorkerProcess w : workers) {
        w.close();
      }
    }
  }

  /** A table of {@code COPY_ROWS} rows of about 40 bytes to copy. */
  private static void createCopiedTable(TestDatabase db, String table) {
    db.execute(
        "CREATE TABLE " + table + " (id bigint PRIMARY KEY, filler text NOT NULL)",
        "INSERT INTO "
            + table
            + " SELECT g, md5(g::text) FROM generate_series(1, "
            + COPY_ROWS
            + ") g");
  }

  /**
   * The connector of pipeline {@code mode} on publication {@code <mode>_pub}, quick to take over.
   */
  private static Map<String, String> connector(TestDatabase db, String mode, boolean exactlyOnce) {
    Map<String, String> connector = ConnectHarness.connector(db, mode, mode + "_pub", mode);
    connector.put(PgetlConnectorConfig.LEASE_CHECK_INTERVAL_MS, "500");
    connector.put(PgetlConnectorConfig.TAKEOVER_DELAY_MS, "1500");
    if (exactlyOnce) {
      connector.put("exactly.once.support", "required");
      connector.put("transaction.boundary", "connector");
    }
    return connector;
  }

  private static ConnectWorkerProcess startWorker(String group, Map<String, String> props, Path log)
      throws IOException {
    ConnectWorkerProcess w =
        ConnectWorkerProcess.start(kafka.bootstrapServers(), group, props, log);
    await()
        .atMost(ConnectHarness.WAIT)
        .pollInterval(Duration.ofMillis(250))
        .until(
            () -> {
              assertThat(w.alive()).as("worker process alive (see %s)", log).isTrue();
              return w.ready();
            });
    return w;
  }

  /**
   * The last apply-stream offset the workers committed for a pipeline, read from their offsets
   * topic; position zero when none was committed.
   */
  private static EventSequenceKey lastApplyOffset(String offsetsTopic, String pipelineId) {
    Map<String, Object> props = new HashMap<>();
    props.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, kafka.bootstrapServers());
    props.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
    props.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
    EventSequenceKey last = new EventSequenceKey(Lsn.ZERO, 0);
    try (JsonConverter json = new JsonConverter();
        KafkaConsumer<byte[], byte[]> consumer =
            new KafkaConsumer<>(props, new ByteArrayDeserializer(), new ByteArrayDeserializer())) {
      json.configure(Map.of("schemas.enable", "false", "converter.type", "key"));
      List<TopicPartition> partitions =
          consumer.partitionsFor(offsetsTopic).stream()
              .map(p -> new TopicPartition(p.topic(), p.partition()))
              .toList();
      consumer.assign(partitions);
      consumer.seekToBeginning(partitions);
      Map<TopicPartition, Long> ends = consumer.endOffsets(partitions);
      while (partitions.stream().anyMatch(tp -> consumer.position(tp) < ends.get(tp))) {
        for (ConsumerRecord<byte[], byte[]> r : consumer.poll(Duration.ofMillis(200))) {
          // key: [connector, partition]; the apply stream's partition names no table
          if (r.value() == null
              || !(json.toConnectData(offsetsTopic, r.key()).value() instanceof List<?> key)
              || key.size() != 2
              || !(key.get(1) instanceof Map<?, ?> partition)
              || !pipelineId.equals(partition.get("pipeline"))
              || partition.containsKey("table")) {
            continue;
          }
          @SuppressWarnings("unchecked")
          Map<String, Object> offset =
              (Map<String, Object>) json.toConnectData(offsetsTopic, r.value()).value();
          EventSequenceKey position = ConnectDestination.position(offset);
          if (position != null && position.compareTo(last) > 0) {
            last = position;
          }
        }
      }
    }
    return last;
  }

  /**
   * Reads a connector's topics from their start and counts the records per key; the records of the
   * stream's topic are parsed for their positions, the others only counted.
   */
  private static final class Reader implements AutoCloseable {
    private final KafkaConsumer<byte[], byte[]> consumer;
    private final String streamTopic;
    private final Map<String, Map<String, Integer>> perKey = new HashMap<>();
    private final Map<String, List<EventSequenceKey>> positions = new HashMap<>();
    private final JsonConverter json = new JsonConverter();

    Reader(EmbeddedKafkaCluster kafka, String prefix, String streamTopic, String isolation) {
      this.streamTopic = streamTopic;
      Map<String, Object> props = new HashMap<>();
      props.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, kafka.bootstrapServers());
      props.put(ConsumerConfig.GROUP_ID_CONFIG, "reader-" + prefix + "-" + System.nanoTime());
      props.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
      props.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
      props.put(ConsumerConfig.METADATA_MAX_AGE_CONFIG, "500");
      props.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, isolation);
      consumer =
          new KafkaConsumer<>(props, new ByteArrayDeserializer(), new ByteArrayDeserializer());
      consumer.subscribe(Pattern.compile(Pattern.quote(prefix + ".public.") + ".*"));
      json.configure(Map.of("schemas.enable", "true", "converter.type", "value"));
    }

    Reader poll() {
      for (ConsumerRecord<byte[], byte[]> r : consumer.poll(Duration.ofMillis(200))) {
        if (r.value() == null) {
          continue;
        }
        perKey
            .computeIfAbsent(r.topic(), t -> new HashMap<>())
            .merge(new String(r.key(), StandardCharsets.UTF_8), 1, Integer::sum);
        if (!r.topic().equals(streamTopic)) {
          continue;
        }
        Struct source =
            ((Struct) json.toConnectData(r.topic(), r.value()).value()).getStruct("source");
        Long commitLsn = source.getInt64("commit_lsn");
        if (commitLsn != null) {
          positions
              .computeIfAbsent(r.topic(), t -> new ArrayList<>())
              .add(new EventSequenceKey(Lsn.of(commitLsn), source.getInt64("tx_ordinal")));
        }
      }
      return this;
    }

    /** Whether the reader is at the end of every partition it reads (read_committed: the LSO). */
    boolean atEnd() {
      var assigned = consumer.assignment();
      Map<org.apache.kafka.common.TopicPartition, Long> ends = consumer.endOffsets(assigned);
      return !assigned.isEmpty()
          && assigned.stream().allMatch(tp -> consumer.position(tp) >= ends.get(tp));
    }

    long records(String topic) {
      return perKey.getOrDefault(topic, Map.of()).values().stream().mapToLong(i -> i).sum();
    }

    long keys(String topic) {
      return perKey.getOrDefault(topic, Map.of()).size();
    }

    /** The stream records of a topic whose position lies beyond {@code committed}. */
    long recordsAfter(String topic, EventSequenceKey committed) {
      return positions.getOrDefault(topic, List.of()).stream()
          .filter(p -> p.compareTo(committed) > 0)
          .count();
    }

    TopicCounts counts(String topic, int rows) {
      long records = records(topic);
      long keys = keys(topic);
      return new TopicCounts(records, keys, rows - keys, records - keys);
    }

    @Override
    public void close() {
      consumer.close(Duration.ofSeconds(5));
      json.close();
    }
  }
}
