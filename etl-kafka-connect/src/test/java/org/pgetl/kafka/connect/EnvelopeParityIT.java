package org.pgetl.kafka.connect;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.debezium.transforms.ExtractNewRecordState;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.connect.data.Field;
import org.apache.kafka.connect.data.Schema;
import org.apache.kafka.connect.data.SchemaAndValue;
import org.apache.kafka.connect.data.Struct;
import org.apache.kafka.connect.json.JsonConverter;
import org.apache.kafka.connect.runtime.ConnectorConfig;
import org.apache.kafka.connect.sink.SinkConnector;
import org.apache.kafka.connect.sink.SinkRecord;
import org.apache.kafka.connect.util.clusters.EmbeddedConnectCluster;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.pgetl.testkit.TestDatabase;
import org.pgetl.testkit.WithPostgres;

/**
 * pgetl's records against Debezium's, read by Debezium's own consumer: Debezium's PostgreSQL
 * connector and pgetl's run on one Connect worker over the same publication, and {@code
 * ExtractNewRecordState} gives the same per-key sequence of rows for both topics after a copy,
 * inserts, updates (unchanged TOAST values among them), deletes and primary-key changes. Two
 * plain-JDBC sinks on the same worker apply each topic's unwrapped records to a table, and both
 * tables end equal to the source.
 */
@WithPostgres
@Timeout(180)
class EnvelopeParityIT {
  private static final String PLACEHOLDER = "__debezium_unavailable_value";
  private static final String DEBEZIUM = "io.debezium.connector.postgresql.PostgresConnector";
  private static EmbeddedConnectCluster cluster;

  @BeforeAll
  static void startCluster() {
    cluster = ConnectHarness.start("pgetl-parity", 1);
  }

  @AfterAll
  static void stopCluster() {
    if (cluster != null) {
      cluster.stop();
    }
  }

  private static final String COLUMNS =
      "(id bigint PRIMARY KEY, name text NOT NULL, amount numeric(12,2), body text)";

  @Test
  void extractNewRecordStateGivesTheSameRowsForPgetlsAndDebeziumsRecords(TestDatabase db) {
    db.execute(
        "CREATE TABLE parity " + COLUMNS,
        "ALTER TABLE parity ALTER COLUMN body SET STORAGE EXTERNAL",
        "INSERT INTO parity SELECT g, 'item ' || g, g * 1.25,"
            + " CASE WHEN g % 10 = 0 THEN repeat(md5(g::text), 100) ELSE 'short ' || g END"
            + " FROM generate_series(1, 300) g",
        "CREATE PUBLICATION parity_pub FOR TABLE parity",
        "CREATE TABLE mirror_pgetl " + COLUMNS,
        "CREATE TABLE mirror_debezium " + COLUMNS);
    Map<String, String> pgetl = ConnectHarness.connector(db, "parity", "parity_pub", "pg");
    pgetl.put(PgetlConnectorConfig.UNAVAILABLE_VALUE_PLACEHOLDER, PLACEHOLDER);
    pgetl.put(PgetlConnectorConfig.PROVIDE_TRANSACTION_METADATA, "true");
    try {
      cluster.configureConnector("pgetl", pgetl);
      cluster.configureConnector("debezium", debezium(db));
      cluster.configureConnector("sink-pgetl", sink(db, "pg.public.parity", "mirror_pgetl"));
      cluster.configureConnector("sink-debezium", sink(db, "dbz.public.parity", "mirror_debezium"));
      List<List<String>> copied = rows(db, "parity");
      awaitMirrors(db, copied);

      db.execute(
          "INSERT INTO parity SELECT g, 'new ' || g, g * 0.5,"
              + " repeat(md5(g::text), 80) FROM generate_series(301, 340) g",
          // name-only updates of rows whose body is out of line: PostgreSQL leaves the body out
          "UPDATE parity SET name = name || ' v2' WHERE id % 20 = 0",
          "UPDATE parity SET amount = amount + 1, body = 'rewritten ' || id"
              + " WHERE id BETWEEN 100 AND 120",
          "DELETE FROM parity WHERE id % 37 = 0",
          // key changes of rows whose values are all in line
          "UPDATE parity SET id = id + 100000 WHERE id BETWEEN 201 AND 205",
          "BEGIN; UPDATE parity SET name = 'twice' WHERE id = 1;"
              + " UPDATE parity SET name = 'thrice' WHERE id = 1; COMMIT");
      awaitMirrors(db, rows(db, "parity"));

      Map<String, List<Map<String, Object>>> fromPgetl = unwrapped("pg.public.parity");
      Map<String, List<Map<String, Object>>> fromDebezium = unwrapped("dbz.public.parity");
      assertThat(fromPgetl).hasSize(345).isEqualTo(fromDebezium);
      // the source blocks and transaction blocks of the changes of row 1 (a transaction of two
      // updates) hold the same values; the copied rows are marked as Debezium marks them
      List<Struct> ours = envelopes("pg.public.parity", "{id=1}");
      List<Struct> theirs = envelopes("dbz.public.parity", "{id=1}");
      assertThat(ours).hasSize(3).hasSameSizeAs(theirs);
      for (int i = 1; i < 3; i++) {
        assertThat(ours.get(i).getStruct("transaction"))
            .isEqualTo(theirs.get(i).getStruct("transaction"));
        for (String f : List.of("ts_ms", "ts_us", "ts_ns", "snapshot", "sequence", "txId", "lsn")) {
          assertThat(ours.get(i).getStruct("source").get(f))
              .as(f)
              .isEqualTo(theirs.get(i).getStruct("source").get(f));
        }
      }
      assertThat(markers("pg.public.parity")).containsExactly("first_in_data_collection");
      assertThat(markers("dbz.public.parity")).containsExactly("first_in_data_collection", "last");
      // the unchanged bodies reached both as Debezium's placeholder
      assertThat(fromPgetl.get("{id=20}"))
          .anySatisfy(row -> assertThat(row).containsEntry("body", PLACEHOLDER));
    } finally {
      for (String c : List.of("sink-pgetl", "sink-debezium", "pgetl", "debezium")) {
        cluster.deleteConnector(c);
      }
      await()
          .atMost(ConnectHarness.WAIT)
          .ignoreExceptions()
          .until(
              () -> {
                db.execute("SELECT pg_drop_replication_slot('dbz_parity')");
                return true;
              });
    }
  }

  private static void awaitMirrors(TestDatabase db, List<List<String>> expected) {
    await()
        .atMost(ConnectHarness.WAIT)
        .pollInterval(Duration.ofMillis(500))
        .untilAsserted(
            () -> {
              assertThat(rows(db, "mirror_pgetl")).isEqualTo(expected);
              assertThat(rows(db, "mirror_debezium")).isEqualTo(expected);
            });
  }

  private static List<List<String>> rows(TestDatabase db, String table) {
    return db.queryRows(
        "SELECT id::text, name, amount::text, md5(body) FROM " + table + " ORDER BY id");
  }

  private static Map<String, String> debezium(TestDatabase db) {
    Map<String, String> p = new HashMap<>();
    p.put(ConnectorConfig.CONNECTOR_CLASS_CONFIG, DEBEZIUM);
    p.put(ConnectorConfig.TASKS_MAX_CONFIG, "1");
    p.put("database.hostname", db.host());
    p.put("database.port", Integer.toString(db.port()));
    p.put("database.dbname", db.name());
    p.put("database.user", db.user());
    if (db.password() != null) {
      p.put("database.password", db.password());
    }
    p.put("plugin.name", "pgoutput");
    p.put("publication.name", "parity_pub");
    p.put("publication.autocreate.mode", "disabled");
    p.put("slot.name", "dbz_parity");
    p.put("snapshot.mode", "initial");
    p.put("topic.prefix", "dbz");
    p.put("status.update.interval.ms", "1000");
    p.put("provide.transaction.metadata", "true");
    p.put("topic.creation.default.replication.factor", "1");
    p.put("topic.creation.default.partitions", "1");
    return p;
  }

  private static Map<String, String> sink(TestDatabase db, String topic, String table) {
    Map<String, String> p = new HashMap<>();
    p.put(ConnectorConfig.CONNECTOR_CLASS_CONFIG, JdbcApplySinkConnector.class.getName());
    p.put(ConnectorConfig.TASKS_MAX_CONFIG, "1");
    p.put(SinkConnector.TOPICS_CONFIG, topic);
    p.put("transforms", "unwrap");
    p.put("transforms.unwrap.type", ExtractNewRecordState.class.getName());
    p.put(JdbcApplySinkConnector.URL, db.jdbcUrl());
    p.put(JdbcApplySinkConnector.USER, db.user());
    if (db.password() != null) {
      p.put(JdbcApplySinkConnector.PASSWORD, db.password());
    }
    p.put(JdbcApplySinkConnector.TABLE, table);
    p.put(JdbcApplySinkConnector.KEY, "id");
    p.put(JdbcApplySinkConnector.PLACEHOLDER, PLACEHOLDER);
    return p;
  }

  /**
   * Reads a topic to its end and unwraps every record with {@code ExtractNewRecordState} (its
   * defaults, plus the {@code __op} field): per key, the rows it yields in order, an empty map for
   * a tombstone. Each row holds its field values with the field's type and semantic name, so that
   * schemas are compared too (but not optionality, see docs/kafka-connect.md).
   */
  private static Map<String, List<Map<String, Object>>> unwrapped(String topic) {
    Map<String, Object> props = new HashMap<>();
    props.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, cluster.kafka().bootstrapServers());
    props.put(ConsumerConfig.GROUP_ID_CONFIG, "parity-" + topic + "-" + System.nanoTime());
    props.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
    props.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
    JsonConverter keys = new JsonConverter();
    keys.configure(Map.of("schemas.enable", "true"), true);
    JsonConverter values = new JsonConverter();
    values.configure(Map.of("schemas.enable", "true"), false);
    Map<String, List<Map<String, Object>>> out = new TreeMap<>();
    try (KafkaConsumer<byte[], byte[]> consumer =
            new KafkaConsumer<>(props, new ByteArrayDeserializer(), new ByteArrayDeserializer());
        ExtractNewRecordState<SinkRecord> unwrap = new ExtractNewRecordState<>()) {
      // the operation too: r, c, u as Debezium's
      unwrap.configure(Map.of("add.fields", "op"));
      TopicPartition partition = new TopicPartition(topic, 0);
      consumer.assign(List.of(partition));
      consumer.seekToBeginning(List.of(partition));
      long end = consumer.endOffsets(List.of(partition)).get(partition);
      while (consumer.position(partition) < end) {
        for (ConsumerRecord<byte[], byte[]> r : consumer.poll(Duration.ofMillis(200))) {
          SchemaAndValue key = keys.toConnectData(topic, r.key());
          SchemaAndValue value = values.toConnectData(topic, r.value());
          SinkRecord unwrappedRecord =
              unwrap.apply(
                  new SinkRecord(
                      topic,
                      0,
                      key.schema(),
                      key.value(),
                      value.schema(),
                      value.value(),
                      r.offset()));
          if (unwrappedRecord == null) {
            continue;
          }
          out.computeIfAbsent(String.valueOf(fields((Struct) key.value())), k -> new ArrayList<>())
              .add(
                  unwrappedRecord.value() == null
                      ? Map.of()
                      : typedFields((Struct) unwrappedRecord.value()));
        }
      }
    }
    return out;
  }

  /** The {@code source.snapshot} values other than true and false in a topic, in order. */
  private static List<String> markers(String topic) {
    List<String> out = new ArrayList<>();
    for (Struct e : envelopes(topic, null)) {
      String m = e.getStruct("source").getString("snapshot");
      if (!m.equals("true") && !m.equals("false")) {
        out.add(m);
      }
    }
    return out;
  }

  /** The envelopes of one key (all keys when null) in a topic, in order (no tombstones). */
  private static List<Struct> envelopes(String topic, String key) {
    Map<String, Object> props = new HashMap<>();
    props.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, cluster.kafka().bootstrapServers());
    props.put(ConsumerConfig.GROUP_ID_CONFIG, "raw-" + topic + "-" + System.nanoTime());
    props.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
    JsonConverter keys = new JsonConverter();
    keys.configure(Map.of("schemas.enable", "true"), true);
    JsonConverter values = new JsonConverter();
    values.configure(Map.of("schemas.enable", "true"), false);
    List<Struct> out = new ArrayList<>();
    try (KafkaConsumer<byte[], byte[]> consumer =
        new KafkaConsumer<>(props, new ByteArrayDeserializer(), new ByteArrayDeserializer())) {
      TopicPartition partition = new TopicPartition(topic, 0);
      consumer.assign(List.of(partition));
      consumer.seekToBeginning(List.of(partition));
      long end = consumer.endOffsets(List.of(partition)).get(partition);
      while (consumer.position(partition) < end) {
        for (ConsumerRecord<byte[], byte[]> r : consumer.poll(Duration.ofMillis(200))) {
          Object k = keys.toConnectData(topic, r.key()).value();
          Object v = values.toConnectData(topic, r.value()).value();
          if (v != null && (key == null || key.equals(String.valueOf(fields((Struct) k))))) {
            out.add((Struct) v);
          }
        }
      }
    }
    return out;
  }

  private static Map<String, Object> fields(Struct s) {
    Map<String, Object> m = new LinkedHashMap<>();
    for (Field f : s.schema().fields()) {
      m.put(f.name(), s.get(f));
    }
    return m;
  }

  private static Map<String, Object> typedFields(Struct s) {
    Map<String, Object> m = new LinkedHashMap<>();
    for (Field f : s.schema().fields()) {
      Schema fs = f.schema();
      m.put(f.name(), s.get(f));
      m.put(f.name() + ":type", fs.type() + (fs.name() == null ? "" : " " + fs.name()));
    }
    return m;
  }
}
