package org.pgetl.bench;

import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.BiConsumer;
import java.util.function.LongSupplier;
import java.util.regex.Pattern;
import org.apache.kafka.clients.consumer.CloseOptions;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.Callback;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.connect.runtime.ConnectorConfig;
import org.apache.kafka.connect.util.clusters.EmbeddedConnectCluster;
import org.jspecify.annotations.Nullable;
import org.pgetl.kafka.connect.ConnectHarness;
import org.pgetl.kafka.connect.PgetlConnectorConfig;
import org.pgetl.kafka.connect.PgetlSourceConnector;
import org.pgetl.testkit.EmbeddedPostgres;

/**
 * The Kafka throughput harness (not a test): pgetl's connector, Debezium's PostgreSQL connector
 * (when it is on the class path) and a plain {@code KafkaProducer}, on the same in-JVM broker,
 * Connect worker and embedded PostgreSQL, in one run.
 *
 * <ul>
 *   <li><b>copy</b>: a table of {@code copyRows} rows and 6 columns, copied into its topic; timed
 *       from the connector's creation to the last record read back from the topic;
 *   <li><b>streaming</b>: the connector stopped (Connect's {@code STOPPED} state) after it is
 *       streaming, one transaction of {@code streamRows} inserts, the connector resumed; timed from
 *       the resume to the last record read back;
 *   <li><b>producer</b> (the raw limit): the key and value bytes pgetl's connector wrote in the
 *       round just run, read back and sent again into a fresh topic by a {@code KafkaProducer} with
 *       the settings a Connect worker gives its source tasks' producers ({@code acks=all}, {@code
 *       max.in.flight.requests.per.connection=1}, the worker's {@code producer.*} settings; with
 *       exactly-once, {@code enable.idempotence=true} and a transactional id); timed from the first
 *       send to the last record read back, after one warm-up record sent and read back (so that
 *       neither the producer's nor the reader's discovery of the new topic counts). No conversion,
 *       no PostgreSQL: what Kafka takes at most.
 * </ul>
 *
 * <p>The mode {@code off} runs the worker without exactly-once; {@code on} runs it with {@code
 * exactly.once.source.support=enabled}, pgetl's connector with {@code
 * transaction.boundary=connector}, Debezium's with {@code transaction.boundary=poll}, a
 * transactional producer committing every {@value #PRODUCER_COMMIT_RECORDS} records (pgetl's
 * default {@code poll.max.records}: what one poll hands Connect at most), and {@code
 * read_committed} readers.
 *
 * <p>Both connectors use the worker's JSON converters with schemas and Connect's default producer
 * settings. Run, after {@code mvn -B -q -pl etl-benchmarks -am package -DskipTests}: {@code java
 * -cp etl-benchmarks/target/pgetl-benchmarks.jar org.pgetl.bench.ConnectBenchmark [copyRows
 * streamRows rounds converter mode encoding]}. The encoding {@code serialized} gives pgetl's
 * connector {@code record.encoding} {@code json} or {@code json-schemas} (the converter's bytes,
 * made on its copy and stream threads) with {@code ByteArrayConverter}; Debezium's records still go
 * through the worker's converter. {@code -Dpgetl.bench.connector.KEY=VALUE} adds a setting to
 * pgetl's connector ({@code -Dpgetl.bench.connector.pgoutput.streaming=false}).
 */
public final class ConnectBenchmark {
  static final String DEBEZIUM = "io.debezium.connector.postgresql.PostgresConnector";
  static final int PRODUCER_COMMIT_RECORDS = PgetlConnectorConfig.DEFAULT_POLL_MAX_RECORDS;
  // a connector run that has not delivered every record by then is reported stalled and left out
  private static final Duration RUN_LIMIT = Duration.ofMinutes(3);
  private static final String CONNECTOR_SETTING = "pgetl.bench.connector.";

  // set once by main: exactly-once on, and the worker's producer.* settings
  private static boolean exactlyOnce;
  // pgetl's record.encoding: connect, json or json-schemas
  private static String recordEncoding = "connect";
  private static Map<String, String> producerOverrides = Map.of();

  private ConnectBenchmark() {}

  /**
   * Runs the harness.
   *
   * @param args the copied rows (default 200000), the streamed rows (default 100000), the rounds
   *     (default 3; the order of the two connectors alternates from round to round) and the
   *     converter settings (default {@code json}; see {@link #workerSettings}), the exactly-once
   *     mode ({@code off}, the default, or {@code on}) and pgetl's record encoding ({@code
   *     connect}, the default, or {@code serialized})
   * @throws Exception on failure
   */
  public static void main(String[] args) throws Exception {
    int copyRows = args.length > 0 ? Integer.parseInt(args[0]) : 200_000;
    int streamRows = args.length > 1 ? Integer.parseInt(args[1]) : 100_000;
    int rounds = args.length > 2 ? Integer.parseInt(args[2]) : 3;
    String converter = args.length > 3 ? args[3] : "json";
    String mode = args.length > 4 ? args[4] : "off";
    if (!mode.equals("off") && !mode.equals("on")) {
      throw new IllegalArgumentException("mode must be off or on: " + mode);
    }
    exactlyOnce = mode.equals("on");
    String encoding = args.length > 5 ? args[5] : "connect";
    if (!encoding.equals("connect") && !encoding.equals("serialized")) {
      throw new IllegalArgumentException("encoding must be connect or serialized: " + encoding);
    }
    // serialized: pgetl's records leave its copy and stream threads as the converter's bytes
    recordEncoding =
        encoding.equals("connect")
            ? "connect"
            : converter.equals("json-noschema") ? "json" : "json-schemas";
    Map<String, String> worker = workerSettings(converter);
    Map<String, String> overrides = new HashMap<>();
    worker.forEach(
        (k, v) -> {
          if (k.startsWith("producer.")) {
            overrides.put(k.substring("producer.".length()), v);
          }
        });
    producerOverrides = overrides;
    if (exactlyOnce) {
      worker.put("exactly.once.source.support", "enabled");
    }
    boolean debezium = onClassPath(DEBEZIUM);
    try (EmbeddedPostgres pg =
        EmbeddedPostgres.builder().setting("wal_sender_timeout", "60s").start()) {
      pg.createDatabase("bench");
      exec(
          pg,
          "CREATE TABLE bench_copy (id int8 PRIMARY KEY, qty int4, name text,"
              + " price numeric(12,2), created timestamptz, attrs jsonb)",
          "INSERT INTO bench_copy SELECT g, g % 500, 'customer ' || g || ' of the benchmark',"
              + " g * 1.25, '2024-01-01'::timestamptz + g * interval '1 second',"
              + " jsonb_build_object('tier', 'gold', 'score', g % 97)"
              + " FROM generate_series(1, "
              + copyRows
              + ") g",
          "VACUUM ANALYZE bench_copy",
          "CREATE TABLE bench_stream (id int8 PRIMARY KEY, qty int4, name text,"
              + " price numeric(12,2), created timestamptz, attrs jsonb)",
          "CREATE PUBLICATION pub_copy FOR TABLE bench_copy",
          "CREATE PUBLICATION pub_stream FOR TABLE bench_stream");
      EmbeddedConnectCluster cluster = ConnectHarness.start("pgetl-bench", 1, worker);
      System.out.printf(
          Locale.ROOT,
          "converter %s, exactly-once %s, pgetl's record.encoding %s, worker settings %s, max heap"
              + " %d MiB, %d cores%n",
          converter,
          mode,
          recordEncoding,
          worker,
          Runtime.getRuntime().maxMemory() >> 20,
          Runtime.getRuntime().availableProcessors());
      try {
        List<Double> pgetlCopy = new ArrayList<>();
        List<Double> dbzCopy = new ArrayList<>();
        List<Double> pgetlStream = new ArrayList<>();
        List<Double> dbzStream = new ArrayList<>();
        List<Double> rawCopy = new ArrayList<>();
        List<Double> rawStream = new ArrayList<>();
        for (int r = 0; r < rounds; r++) {
          // the order alternates: the first connector of a round also warms the JVM and the broker
          boolean pgetlFirst = r % 2 == 0;
          for (int turn = 0; turn < 2; turn++) {
            if (pgetlFirst == (turn == 0)) {
              pgetlCopy.add(
                  copy(
                      cluster,
                      pg,
                      "pgetl-copy-" + r,
                      pgetl(pg, "bcopy" + r, "pub_copy", "all"),
                      copyRows));
              rawCopy.add(
                  produce(cluster, "raw-copy-" + r, "bcopy" + r + ".public.bench_copy", copyRows));
            } else if (debezium) {
              dbzCopy.add(
                  copy(
                      cluster,
                      pg,
                      "dbz-copy-" + r,
                      debezium(pg, "dbz_copy" + r, "pub_copy", "initial"),
                      copyRows));
            }
          }
          for (int turn = 0; turn < 2; turn++) {
            if (pgetlFirst == (turn == 0)) {
              pgetlStream.add(
                  streaming(
                      cluster,
                      pg,
                      "pgetl-stream-" + r,
                      pgetl(pg, "bstream" + r, "pub_stream", "none"),
                      streamRows));
              rawStream.add(
                  produce(
                      cluster,
                      "raw-stream-" + r,
                      "bstream" + r + ".public.bench_stream",
                      streamRows));
            } else if (debezium) {
              dbzStream.add(
                  streaming(
                      cluster,
                      pg,
                      "dbz-stream-" + r,
                      debezium(pg, "dbz_stream" + r, "pub_stream", "no_data"),
                      streamRows));
            }
          }
        }
        System.out.println();
        System.out.printf(Locale.ROOT, "%d rounds, medians:%n", rounds);
        report(
            "copy (" + copyRows + " rows, 6 columns)",
            median(pgetlCopy),
            median(dbzCopy),
            median(rawCopy));
        report(
            "streaming (" + streamRows + "-row tx)",
            median(pgetlStream),
            median(dbzStream),
            median(rawStream));
        if (!debezium) {
          System.out.println(
              "Debezium's connector is not on the class path: pgetl against the producer alone");
        }
      } finally {
        cluster.stop();
      }
    }
  }

  /**
   * The worker settings of a converter choice: {@code json} (schemas in every record, Connect's
   * default producer), {@code json-noschema} (the same JSON without the inline schema), or {@code
   * json-tuned} (schemas, and a producer that batches: 512 KiB batches, 5 ms linger, lz4).
   */
  private static Map<String, String> workerSettings(String converter) {
    Map<String, String> w = new HashMap<>();
    switch (converter) {
      case "json" -> {}
      case "json-noschema" -> {
        w.put("key.converter.schemas.enable", "false");
        w.put("value.converter.schemas.enable", "false");
      }
      case "json-tuned" -> {
        w.put("producer.batch.size", Integer.toString(512 * 1024));
        w.put("producer.linger.ms", "5");
        w.put("producer.compression.type", "lz4");
      }
      default ->
          throw new IllegalArgumentException(
              "converter must be json, json-noschema or json-tuned: " + converter);
    }
    return w;
  }

  /** A run whose records did not all arrive within {@link #RUN_LIMIT}: left out of the medians. */
  private static double stalled(
      EmbeddedConnectCluster cluster, String name, Counter counter, long expected) {
    System.out.printf(
        Locale.ROOT,
        "%s: STALLED, %d of %d records after %d s; left out of the medians%n",
        name,
        counter.rowCount,
        expected,
        RUN_LIMIT.toSeconds());
    cluster.deleteConnector(name);
    return Double.NaN;
  }

  private static double median(List<Double> rates) {
    List<Double> sorted = new ArrayList<>();
    for (double r : rates) {
      if (!Double.isNaN(r)) {
        sorted.add(r);
      }
    }
    if (sorted.isEmpty()) {
      return Double.NaN;
    }
    Collections.sort(sorted);
    int n = sorted.size();
    return n % 2 == 1 ? sorted.get(n / 2) : (sorted.get(n / 2 - 1) + sorted.get(n / 2)) / 2;
  }

  private static void report(String what, double pgetl, double debezium, double producer) {
    System.out.printf(
        Locale.ROOT,
        "%-32s pgetl %,.0f rows/s, Debezium %,.0f rows/s, producer %,.0f rows/s;"
            + " pgetl/Debezium %.2f, pgetl/producer %.2f%n",
        what,
        pgetl,
        debezium,
        producer,
        pgetl / debezium,
        pgetl / producer);
  }

  /**
   * Reads the last {@code rows} records of {@code source} (pgetl's records of the round) and sends
   * their bytes again into a fresh topic with a source task's producer settings: rows per second
   * from the first send to the last record read back.
   */
  // a send's failure is kept by its callback and thrown after the flush
  @SuppressWarnings("FutureReturnValueIgnored")
  private static double produce(
      EmbeddedConnectCluster cluster, String name, String source, int rows) {
    List<byte[][]> records = readBack(cluster, source, rows);
    String topic = name;
    cluster.kafka().createTopic(topic, 1);
    Map<String, Object> props = new HashMap<>();
    props.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, cluster.kafka().bootstrapServers());
    // what Worker.baseProducerConfigs gives a source task's producer (Kafka 4.x)
    props.put(ProducerConfig.ACKS_CONFIG, "all");
    props.put(ProducerConfig.MAX_IN_FLIGHT_REQUESTS_PER_CONNECTION, "1");
    props.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, "false");
    props.put(ProducerConfig.MAX_BLOCK_MS_CONFIG, Long.toString(Long.MAX_VALUE));
    props.put(ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG, Integer.toString(Integer.MAX_VALUE));
    props.putAll(producerOverrides);
    if (exactlyOnce) {
      // what Worker.exactlyOnceSourceTaskProducerConfigs adds
      props.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, "true");
      props.put(ProducerConfig.TRANSACTIONAL_ID_CONFIG, name + "-" + System.nanoTime());
    }
    try (Counter counter = new Counter(cluster, topic);
        KafkaProducer<byte[], byte[]> producer =
            new KafkaProducer<>(props, new ByteArraySerializer(), new ByteArraySerializer())) {
      if (exactlyOnce) {
        producer.initTransactions();
      }
      // one record sent and read back before the clock starts: the producer and the reader know
      // the new topic's leader, the reader joined its group; the limit is the producer's alone
      byte[][] warmUp = records.get(0);
      if (exactlyOnce) {
        producer.beginTransaction();
      }
      AtomicReference<@Nullable Exception> failure = new AtomicReference<>();
      Callback keepFailure =
          (metadata, e) -> {
            if (e != null) {
              failure.compareAndSet(null, e);
            }
          };
      producer.send(new ProducerRecord<>(topic, warmUp[0], warmUp[1]), keepFailure);
      if (exactlyOnce) {
        producer.commitTransaction();
      }
      counter.awaitAtLeast(1);
      counter.firstAt = 0;
      long start = System.nanoTime();
      int inTransaction = 0;
      for (byte[][] r : records) {
        if (exactlyOnce && inTransaction == 0) {
          producer.beginTransaction();
        }
        producer.send(new ProducerRecord<>(topic, r[0], r[1]), keepFailure);
        if (exactlyOnce && ++inTransaction == PRODUCER_COMMIT_RECORDS) {
          producer.commitTransaction();
          inTransaction = 0;
        }
      }
      if (exactlyOnce && inTransaction > 0) {
        producer.commitTransaction();
      }
      producer.flush();
      long sent = System.nanoTime();
      Exception failed = failure.get();
      if (failed != null) {
        throw new IllegalStateException(name + ": a send failed", failed);
      }
      counter.awaitAtLeast(rows + 1L);
      System.out.printf(Locale.ROOT, "%s: sent in %.2f s%n", name, (sent - start) / 1e9);
      long end = System.nanoTime();
      double rate = rows * 1e9 / (end - start);
      print(name, rate, start, counter.firstAt, end, rows);
      return rate;
    }
  }

  /** The key and value bytes of the last {@code rows} non-tombstone records of a topic. */
  private static List<byte[][]> readBack(EmbeddedConnectCluster cluster, String topic, int rows) {
    ArrayDeque<byte[][]> last = new ArrayDeque<>();
    try (Counter reader = new Counter(cluster, topic)) {
      reader.sink =
          (k, v) -> {
            last.addLast(new byte[][] {k, v});
            if (last.size() > rows) {
              last.pollFirst();
            }
          };
      reader.awaitAtLeast(rows);
      // the topic's end: nothing more is written to it now
      reader.poll(Duration.ofSeconds(1));
    }
    return new ArrayList<>(last);
  }

  /** Creates the connector and reads its topic until every row arrived: rows per second. */
  private static double copy(
      EmbeddedConnectCluster cluster,
      EmbeddedPostgres pg,
      String name,
      Map<String, String> props,
      int rows)
      throws Exception {
    String topic = props.get("topic.prefix") + ".public.bench_copy";
    quiesce(pg);
    try (Counter counter = new Counter(cluster, topic)) {
      long start = System.nanoTime();
      cluster.configureConnector(name, props);
      if (!counter.await(() -> counter.count, rows, RUN_LIMIT)) {
        return stalled(cluster, name, counter, rows);
      }
      long end = System.nanoTime();
      double rate = rows * 1e9 / (end - start);
      print(name, rate, start, counter.firstAt, end, rows);
      cluster.deleteConnector(name);
      return rate;
    }
  }

  /**
   * Starts the connector until it streams, stops it, writes one transaction, resumes it and reads
   * the topic until every row arrived: rows per second from the resume.
   */
  private static double streaming(
      EmbeddedConnectCluster cluster,
      EmbeddedPostgres pg,
      String name,
      Map<String, String> props,
      int rows)
      throws Exception {
    String topic = props.get("topic.prefix") + ".public.bench_stream";
    quiesce(pg);
    try (Counter counter = new Counter(cluster, topic)) {
      exec(pg, "TRUNCATE bench_stream");
      cluster.configureConnector(name, props);
      // streaming once a marker row written now reaches the topic
      long marker = -1;
      long deadline = System.nanoTime() + Duration.ofMinutes(2).toNanos();
      while (counter.count == 0) {
        exec(pg, "INSERT INTO bench_stream (id) VALUES (" + marker-- + ")");
        counter.poll(Duration.ofSeconds(1));
        if (System.nanoTime() > deadline) {
          throw new IllegalStateException(name + " did not start streaming");
        }
      }
      cluster.stopConnector(name);
      waitTasks(cluster, name, "STOPPED");
      exec(
          pg,
          "INSERT INTO bench_stream SELECT g, g % 500, 'customer ' || g || ' of the benchmark',"
              + " g * 1.25, '2024-01-01'::timestamptz + g * interval '1 second',"
              + " jsonb_build_object('tier', 'gold', 'score', g % 97)"
              + " FROM generate_series(1, "
              + rows
              + ") g");
      // drain the markers that arrived late, then time the transaction until each of its rows
      // arrived: the markers (negative keys) are not counted, since one written before the slot
      // existed never arrives, and the STOPPED state is the connector's, so its task may still
      // send the transaction's first records before it ends
      counter.poll(Duration.ofSeconds(2));
      counter.firstAt = 0;
      long start = System.nanoTime();
      cluster.resumeConnector(name);
      if (!counter.await(() -> counter.rowCount, rows, RUN_LIMIT)) {
        return stalled(cluster, name, counter, rows);
      }
      long end = System.nanoTime();
      double rate = rows * 1e9 / (end - start);
      print(name, rate, start, counter.firstAt, end, rows);
      cluster.deleteConnector(name);
      return rate;
    }
  }

  /**
   * Prints a run: the rate a user sees (from the action), the time to the first record and the rate
   * from the first record to the last, which leaves Connect's task start-up out.
   */
  private static void print(String name, double rate, long start, long first, long end, int rows) {
    System.out.printf(
        Locale.ROOT,
        "%s: %,.0f rows/s (first record after %.2f s, then %,.0f rows/s)%n",
        name,
        rate,
        (first - start) / 1e9,
        rows * 1e9 / Math.max(1, end - first));
  }

  private static void waitTasks(EmbeddedConnectCluster cluster, String name, String state)
      throws InterruptedException {
    long deadline = System.nanoTime() + Duration.ofMinutes(1).toNanos();
    while (!state.equals(cluster.connectorStatus(name).connector().state())) {
      if (System.nanoTime() > deadline) {
        throw new IllegalStateException(name + " did not reach " + state);
      }
      Thread.sleep(100);
    }
  }

  private static Map<String, String> pgetl(
      EmbeddedPostgres pg, String id, String publication, String copyMode) {
    Map<String, String> p = new HashMap<>();
    if (exactlyOnce) {
      p.put("exactly.once.support", "required");
      p.put("transaction.boundary", "connector");
    }
    p.put(ConnectorConfig.CONNECTOR_CLASS_CONFIG, PgetlSourceConnector.class.getName());
    p.put(ConnectorConfig.TASKS_MAX_CONFIG, "1");
    p.put(PgetlConnectorConfig.CONNECTION_URL, pg.jdbcUrl("bench"));
    p.put(PgetlConnectorConfig.CONNECTION_USER, pg.superuser());
    p.put(PgetlConnectorConfig.CONNECTION_PASSWORD, pg.password());
    p.put(PgetlConnectorConfig.PUBLICATIONS, publication);
    p.put(PgetlConnectorConfig.PIPELINE_ID, id);
    p.put(PgetlConnectorConfig.TOPIC_PREFIX, id);
    p.put(PgetlConnectorConfig.COPY_MODE, copyMode);
    if (!recordEncoding.equals("connect")) {
      p.put(PgetlConnectorConfig.RECORD_ENCODING, recordEncoding);
      p.put("key.converter", "org.apache.kafka.connect.converters.ByteArrayConverter");
      p.put("value.converter", "org.apache.kafka.connect.converters.ByteArrayConverter");
    }
    // further connector settings for pgetl's connector: -Dpgetl.bench.connector.KEY=VALUE
    System.getProperties()
        .stringPropertyNames()
        .forEach(
            k -> {
              if (k.startsWith(CONNECTOR_SETTING)) {
                p.put(k.substring(CONNECTOR_SETTING.length()), System.getProperty(k));
              }
            });
    topicCreation(p);
    return p;
  }

  private static Map<String, String> debezium(
      EmbeddedPostgres pg, String id, String publication, String snapshotMode) {
    Map<String, String> p = new HashMap<>();
    p.put(ConnectorConfig.CONNECTOR_CLASS_CONFIG, DEBEZIUM);
    if (exactlyOnce) {
      p.put("exactly.once.support", "required");
      p.put("transaction.boundary", "poll");
    }
    p.put(ConnectorConfig.TASKS_MAX_CONFIG, "1");
    p.put("database.hostname", pg.host());
    p.put("database.port", Integer.toString(pg.port()));
    p.put("database.dbname", "bench");
    p.put("database.user", pg.superuser());
    p.put("database.password", pg.password());
    p.put("plugin.name", "pgoutput");
    p.put("publication.name", publication);
    p.put("publication.autocreate.mode", "disabled");
    p.put("slot.name", id);
    p.put("snapshot.mode", snapshotMode);
    p.put("topic.prefix", id);
    topicCreation(p);
    return p;
  }

  private static void topicCreation(Map<String, String> p) {
    p.put("topic.creation.default.replication.factor", "1");
    p.put("topic.creation.default.partitions", "1");
  }

  private static boolean onClassPath(String className) {
    try {
      Class.forName(className, false, ConnectBenchmark.class.getClassLoader());
      return true;
    } catch (ClassNotFoundException e) {
      return false;
    }
  }

  /**
   * Waits, at most 30 s, until no other session of the server holds a transaction or a snapshot:
   * the previous connector, deleted a moment ago, may still be ending its snapshot's transaction,
   * and creating the next connector's slot would wait for it (seconds counted against the next).
   */
  private static void quiesce(EmbeddedPostgres pg) throws SQLException, InterruptedException {
    long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
    try (Connection c = pg.connect("bench");
        Statement s = c.createStatement()) {
      while (System.nanoTime() < deadline) {
        try (java.sql.ResultSet r =
            s.executeQuery(
                "SELECT count(*) FROM pg_stat_activity WHERE pid <> pg_backend_pid()"
                    + " AND (backend_xid IS NOT NULL OR backend_xmin IS NOT NULL)")) {
          r.next();
          if (r.getLong(1) == 0) {
            return;
          }
        }
        Thread.sleep(20);
      }
    }
    System.out.println("another session still holds a snapshot after 30 s; going on");
  }

  private static void exec(EmbeddedPostgres pg, String... sql) throws SQLException {
    try (Connection c = pg.connect("bench");
        Statement s = c.createStatement()) {
      for (String q : sql) {
        s.execute(q);
      }
    }
  }

  /**
   * Counts the non-tombstone records of a topic, from its start ({@code read_committed} with
   * exactly-once).
   */
  private static final class Counter implements AutoCloseable {
    private final KafkaConsumer<byte[], byte[]> consumer;
    long count;
    // the records whose key is not a marker's (a negative id)
    long rowCount;
    long firstAt;
    @Nullable BiConsumer<byte[], byte[]> sink;

    Counter(EmbeddedConnectCluster cluster, String topic) {
      Map<String, Object> props = new HashMap<>();
      props.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, cluster.kafka().bootstrapServers());
      props.put(ConsumerConfig.GROUP_ID_CONFIG, "bench-" + topic + "-" + System.nanoTime());
      props.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
      props.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
      props.put(ConsumerConfig.METADATA_MAX_AGE_CONFIG, "200");
      props.put(ConsumerConfig.MAX_POLL_RECORDS_CONFIG, "10000");
      props.put(
          ConsumerConfig.ISOLATION_LEVEL_CONFIG,
          exactlyOnce ? "read_committed" : "read_uncommitted");
      consumer =
          new KafkaConsumer<>(props, new ByteArrayDeserializer(), new ByteArrayDeserializer());
      consumer.subscribe(Pattern.compile(Pattern.quote(topic)));
    }

    void poll(Duration timeout) {
      for (ConsumerRecord<byte[], byte[]> r : consumer.poll(timeout)) {
        if (r.value() != null) {
          count++;
          if (r.key() == null
              || !new String(r.key(), StandardCharsets.UTF_8).contains("\"id\":-")) {
            rowCount++;
          }
          if (sink != null) {
            sink.accept(r.key(), r.value());
          }
          if (firstAt == 0) {
            firstAt = System.nanoTime();
          }
        }
      }
    }

    void awaitAtLeast(long n) {
      if (!await(() -> count, n, Duration.ofMinutes(20))) {
        throw new IllegalStateException("only " + count + " of " + n + " records arrived");
      }
    }

    /**
     * Polls until {@code counter} (this reader's {@code count} or {@code rowCount}) reaches {@code
     * n}; whether it did within {@code limit}.
     */
    boolean await(LongSupplier counter, long n, Duration limit) {
      long deadline = System.nanoTime() + limit.toNanos();
      while (counter.getAsLong() < n) {
        poll(Duration.ofMillis(100));
        if (System.nanoTime() > deadline) {
          return false;
        }
      }
      return true;
    }

    @Override
    public void close() {
      consumer.close(CloseOptions.timeout(Duration.ofSeconds(5)));
    }
  }
}
