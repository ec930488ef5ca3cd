package org.pgetl.kafka.connect;

import java.math.BigDecimal;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.TreeMap;
import java.util.regex.Pattern;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.connect.data.SchemaAndValue;
import org.apache.kafka.connect.data.Struct;
import org.apache.kafka.connect.json.JsonConverter;
import org.apache.kafka.connect.runtime.ConnectorConfig;
import org.apache.kafka.connect.runtime.WorkerConfig;
import org.apache.kafka.connect.runtime.distributed.DistributedConfig;
import org.apache.kafka.connect.util.clusters.EmbeddedConnectCluster;
import org.pgetl.testkit.TestDatabase;

/**
 * An in-JVM Kafka broker (KRaft) and Connect cluster for the connector's ITs, Kafka's own {@code
 * EmbeddedConnectCluster}, plus a reader that turns the topics back into table contents.
 */
public final class ConnectHarness {
  static final Duration WAIT = Duration.ofSeconds(120);

  private ConnectHarness() {}

  /** Starts a broker and {@code workers} distributed workers with JSON converters. */
  static EmbeddedConnectCluster start(String name, int workers) {
    return start(name, workers, Map.of());
  }

  /**
   * Starts a broker and {@code workers} distributed workers with JSON converters, plus {@code
   * extra} worker properties.
   */
  public static EmbeddedConnectCluster start(String name, int workers, Map<String, String> extra) {
    Map<String, String> props = new HashMap<>();
    // the connector is on the class path with a service manifest: no reflective scan
    props.put(WorkerConfig.PLUGIN_DISCOVERY_CONFIG, "service_load");
    props.put(WorkerConfig.KEY_CONVERTER_CLASS_CONFIG, JsonConverter.class.getName());
    props.put(WorkerConfig.VALUE_CONVERTER_CLASS_CONFIG, JsonConverter.class.getName());
    props.put(WorkerConfig.OFFSET_COMMIT_INTERVAL_MS_CONFIG, "1000");
    // a stopped worker's tasks move at once (a lost one's after a second)
    props.put(DistributedConfig.SCHEDULED_REBALANCE_MAX_DELAY_MS_CONFIG, "1000");
    props.putAll(extra);
    EmbeddedConnectCluster cluster =
        new EmbeddedConnectCluster.Builder()
            .name(name)
            .numWorkers(workers)
            .workerProps(props)
            .brokerProps(oneBroker())
            .build();
    cluster.start();
    return cluster;
  }

  /**
   * The settings one broker needs for transactions and consumer groups: the internal topics'
   * replication defaults to 3, and without these a transactional producer (exactly-once source
   * tasks, the worker's own) never finishes {@code initTransactions} on a one-broker cluster.
   */
  public static Properties oneBroker() {
    Properties broker = new Properties();
    broker.put("transaction.state.log.replication.factor", "1");
    broker.put("transaction.state.log.min.isr", "1");
    broker.put("offsets.topic.replication.factor", "1");
    broker.put("group.initial.rebalance.delay.ms", "0");
    // a killed producer's open transaction is aborted within a second of its timeout (default 10 s)
    broker.put("transaction.abort.timed.out.transaction.cleanup.interval.ms", "1000");
    return broker;
  }

  /** The properties of a connector on a test database, with short intervals for tests. */
  static Map<String, String> connector(
      TestDatabase db, String pipelineId, String publication, String topicPrefix) {
    Map<String, String> p = new HashMap<>();
    p.put(ConnectorConfig.CONNECTOR_CLASS_CONFIG, PgetlSourceConnector.class.getName());
    p.put(ConnectorConfig.TASKS_MAX_CONFIG, "1");
    p.put(
        PgetlConnectorConfig.CONNECTION_URL,
        "jdbc:postgresql://" + db.host() + ":" + db.port() + "/" + db.name());
    p.put(PgetlConnectorConfig.CONNECTION_USER, db.user());
    if (db.password() != null) {
      p.put(PgetlConnectorConfig.CONNECTION_PASSWORD, db.password());
    }
    p.put(PgetlConnectorConfig.PUBLICATIONS, publication);
    p.put(PgetlConnectorConfig.PIPELINE_ID, pipelineId);
    p.put(PgetlConnectorConfig.TOPIC_PREFIX, topicPrefix);
    // Connect creates each table's topic on its first record
    p.put("topic.creation.default.replication.factor", "1");
    p.put("topic.creation.default.partitions", "1");
    p.put(PgetlConnectorConfig.BATCH_MAX_FILL_MS, "200");
    p.put(PgetlConnectorConfig.STATUS_INTERVAL_MS, "1000");
    p.put(PgetlConnectorConfig.RETRY_DELAY_MS, "300");
    p.put(PgetlConnectorConfig.RETRY_MAX_DELAY_MS, "2000");
    p.put(PgetlConnectorConfig.LIFECYCLE_POLL_INTERVAL_MS, "200");
    return p;
  }

  /**
   * Reads a table's topic from its start and keeps the table as the records describe it: {@code r},
   * {@code c} and {@code u} put the row (an update's unchanged TOAST columns keep their values),
   * {@code d} removes it, tombstones are counted.
   */
  static final class TopicTable implements AutoCloseable {
    private final KafkaConsumer<byte[], byte[]> consumer;
    private final JsonConverter keys = new JsonConverter();
    private final JsonConverter values = new JsonConverter();
    final Map<String, Map<String, Object>> rows = new TreeMap<>();
    final Map<String, Integer> ops = new TreeMap<>();
    private final Map<String, Map<String, Object>> removed = new HashMap<>();
    final List<Struct> envelopes = new ArrayList<>();
    int records;
    int tombstones;

    TopicTable(EmbeddedConnectCluster cluster, String topic) {
      Map<String, Object> props = new HashMap<>();
      props.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, cluster.kafka().bootstrapServers());
      props.put(ConsumerConfig.GROUP_ID_CONFIG, "reader-" + topic + "-" + System.nanoTime());
      props.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
      props.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
      props.put(ConsumerConfig.METADATA_MAX_AGE_CONFIG, "500");
      consumer =
          new KafkaConsumer<>(props, new ByteArrayDeserializer(), new ByteArrayDeserializer());
      consumer.subscribe(Pattern.compile(Pattern.quote(topic)));
      keys.configure(Map.of("schemas.enable", "true"), true);
      values.configure(Map.of("schemas.enable", "true"), false);
    }

    /** Reads what arrived since the last call. */
    TopicTable poll() {
      for (ConsumerRecord<byte[], byte[]> r : consumer.poll(Duration.ofMillis(200))) {
        records++;
        SchemaAndValue key = keys.toConnectData(r.topic(), r.key());
        SchemaAndValue value = values.toConnectData(r.topic(), r.value());
        String k = String.valueOf(key.value() instanceof Struct s ? fields(s) : key.value());
        if (value.value() == null) {
          tombstones++;
          continue;
        }
        Struct e = (Struct) value.value();
        envelopes.add(e);
        String op = e.getString("op");
        ops.merge(op, 1, Integer::sum);
        switch (op) {
          case "r", "c", "u" -> {
            Map<String, Object> row = fields(e.getStruct("after"));
            List<String> unchanged = e.getArray("unchanged_toast");
            if (unchanged != null) {
              // a create with unchanged columns follows the delete of the old key (same LSN)
              Map<String, Object> previous =
                  op.equals("c")
                      ? removed.getOrDefault(lsn(e), Map.of())
                      : rows.getOrDefault(k, Map.of());
              for (String column : unchanged) {
                row.put(column, previous.get(column));
              }
            }
            rows.put(k, row);
          }
          case "d" -> {
            Map<String, Object> gone = rows.remove(k);
            if (gone != null) {
              removed.put(lsn(e), gone);
            }
          }
          default -> {}
        }
      }
      return this;
    }

    /** The rows in key order, each column rendered as {@link #render} does. */
    List<List<String>> contents(List<String> columns) {
      List<List<String>> out = new ArrayList<>();
      for (Map<String, Object> row : rows.values()) {
        List<String> line = new ArrayList<>();
        for (String c : columns) {
          line.add(render(row.get(c)));
        }
        out.add(line);
      }
      return out;
    }

    @Override
    public void close() {
      consumer.close(Duration.ofSeconds(5));
    }

    private static String lsn(Struct envelope) {
      return String.valueOf(envelope.getStruct("source").get("lsn"));
    }

    private static Map<String, Object> fields(Struct s) {
      Map<String, Object> m = new HashMap<>();
      s.schema().fields().forEach(f -> m.put(f.name(), s.get(f)));
      return m;
    }
  }

  /**
   * Renders a Connect value as the test queries render the source: decimals in plain form, lists
   * joined with {@code |}, long strings (over 100 characters) as their MD5.
   */
  static String render(Object v) {
    if (v == null) {
      return null;
    }
    if (v instanceof BigDecimal d) {
      return d.toPlainString();
    }
    if (v instanceof List<?> l) {
      StringBuilder sb = new StringBuilder();
      for (Object o : l) {
        sb.append(sb.length() == 0 ? "" : "|").append(render(o));
      }
      return sb.toString();
    }
    if (v instanceof String s && s.length() > 100) {
      return md5(s);
    }
    return v.toString();
  }

  static String md5(String s) {
    try {
      return HexFormat.of()
          .formatHex(MessageDigest.getInstance("MD5").digest(s.getBytes(StandardCharsets.UTF_8)));
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException(e);
    }
  }
}
