package org.pgetl.kafka.connect;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.lang.management.ManagementFactory;
import java.net.URI;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicBoolean;
import javax.management.MBeanServer;
import javax.management.ObjectName;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.common.quota.ClientQuotaAlteration;
import org.apache.kafka.common.quota.ClientQuotaEntity;
import org.apache.kafka.connect.data.Struct;
import org.apache.kafka.connect.runtime.rest.entities.ConnectorStateInfo;
import org.apache.kafka.connect.util.clusters.EmbeddedConnectCluster;
import org.apache.kafka.connect.util.clusters.WorkerHandle;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.Timeout;
import org.pgetl.kafka.connect.ConnectHarness.TopicTable;
import org.pgetl.testkit.TestDatabase;
import org.pgetl.testkit.WithPostgres;

/**
 * The connector in a real Connect cluster (Kafka's in-JVM broker and two workers) against a real
 * PostgreSQL: what lands in the topics, read back, equals the source; a throttled broker bounds
 * what the task holds; a stopped worker's pipeline moves to the other worker and loses nothing. One
 * cluster for all three (starting one is most of the time): the failover test runs last.
 */
@WithPostgres
@Timeout(300)
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class PgetlConnectorIT {
  private static EmbeddedConnectCluster cluster;

  @BeforeAll
  static void startCluster() {
    cluster = ConnectHarness.start("pgetl-it", 2);
  }

  @AfterAll
  static void stopCluster() {
    if (cluster != null) {
      cluster.stop();
    }
  }

  private static final List<String> ITEM_COLUMNS =
      List.of("id", "name", "amount", "at", "day", "doc", "tags", "body", "extra");

  /** The source rendered as {@link ConnectHarness#render} renders the records' values. */
  private static List<List<String>> sourceItems(TestDatabase db, String extra) {
    return sorted(
        db.queryRows(
            "SELECT id::text, name, amount::text,"
                + " to_char(at AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS\"Z\"'),"
                + " (day - date '1970-01-01')::text, doc::text, array_to_string(tags, '|'),"
                + " md5(body), "
                + extra
                + " FROM items"));
  }

  private static List<List<String>> sorted(List<List<String>> rows) {
    List<List<String>> out = new ArrayList<>(rows);
    out.sort(Comparator.comparing(r -> Long.parseLong(r.get(0))));
    return out;
  }

  @Test
  @Order(1)
  void copyThenStreamingLandInTheTopicsEqualToTheSource(TestDatabase db) {
    copyThenStream(db, "items", "it", Map.of());
  }

  /**
   * The same with the records serialized on pgetl's threads ({@code record.encoding=json-schemas})
   * and passed through by {@code ByteArrayConverter}: the topic reads the same with Connect's
   * {@code JsonConverter}.
   */
  @Test
  @Order(2)
  void serializedRecordsReadTheSameWithJsonConverter(TestDatabase db) {
    copyThenStream(
        db,
        "items_json",
        "itj",
        Map.of(
            PgetlConnectorConfig.RECORD_ENCODING,
            "json-schemas",
            "key.converter",
            JsonRecordEncoder.BYTE_ARRAY_CONVERTER,
            "value.converter",
            JsonRecordEncoder.BYTE_ARRAY_CONVERTER));
  }

  private static void copyThenStream(
      TestDatabase db, String name, String prefix, Map<String, String> settings) {
    db.execute(
        "DROP PUBLICATION IF EXISTS items_pub",
        "DROP TABLE IF EXISTS items",
        "CREATE TABLE items (id bigint PRIMARY KEY, name text NOT NULL, amount numeric(12,2),"
            + " at timestamptz, day date, doc jsonb, tags text[], body text)",
        "ALTER TABLE items ALTER COLUMN body SET STORAGE EXTERNAL",
        "INSERT INTO items SELECT g, 'item ' || g, g * 1.25,"
            + " timestamptz '2024-01-01 00:00:00+00' + g * interval '1 second',"
            + " date '2024-01-01' + (g % 400), jsonb_build_object('g', g), ARRAY['a' || g, 'b'],"
            + " CASE WHEN g % 100 = 0 THEN repeat(md5(g::text), 100) END"
            + " FROM generate_series(1, 10000) g",
        "CREATE PUBLICATION items_pub FOR TABLE items");
    Map<String, String> props =
        new java.util.HashMap<>(ConnectHarness.connector(db, name, "items_pub", prefix));
    props.putAll(settings);
    cluster.configureConnector(name, props);
    try {
      streamsIntoTopic(db, name, prefix);
    } finally {
      cluster.deleteConnector(name);
    }
  }

  private static void streamsIntoTopic(TestDatabase db, String name, String prefix) {
    try (TopicTable topic = new TopicTable(cluster, prefix + ".public.items")) {
      await().atMost(ConnectHarness.WAIT).until(() -> topic.poll().rows.size() == 10_000);
      assertThat(topic.ops).containsEntry("r", 10_000);
      assertThat(sorted(topic.contents(ITEM_COLUMNS))).isEqualTo(sourceItems(db, "NULL::text"));
      Struct copied = topic.envelopes.get(0);
      // the table's first copied row (of four ranges copied in parallel) is marked, as Debezium's
      assertThat(copied.getStruct("source").getString("snapshot"))
          .isEqualTo("first_in_data_collection");
      assertThat(topic.envelopes.get(1).getStruct("source").getString("snapshot"))
          .isEqualTo("true");
      // the copy slot's consistent point
      assertThat(copied.getStruct("source").getInt64("lsn")).isPositive();
      assertThat(copied.schema().name()).isEqualTo(prefix + ".public.items.Envelope");

      db.execute(
          "INSERT INTO items SELECT g, 'item ' || g, g * 0.5, date_trunc('second', now()), current_date,"
              + " '{\"new\": true}', ARRAY['n'], repeat(md5(g::text), 80)"
              + " FROM generate_series(10001, 11000) g",
          "UPDATE items SET name = name || ' v2' WHERE id % 50 = 0",
          "UPDATE items SET amount = amount + 1 WHERE id BETWEEN 100 AND 300",
          "DELETE FROM items WHERE id % 97 = 0",
          "UPDATE items SET id = id + 100000 WHERE id BETWEEN 500 AND 510",
          "ALTER TABLE items ADD COLUMN extra int",
          "UPDATE items SET extra = 7 WHERE id <= 10");
      List<List<String>> expected = sourceItems(db, "extra::text");
      await()
          .atMost(ConnectHarness.WAIT)
          .pollInterval(Duration.ofMillis(500))
          .untilAsserted(
              () -> assertThat(sorted(topic.poll().contents(ITEM_COLUMNS))).isEqualTo(expected));

      assertThat(topic.ops).containsKeys("c", "u", "d");
      assertThat(topic.tombstones).isEqualTo(topic.ops.get("d"));
      // a name-only update of a row with an out-of-line body did not carry the body: marked
      assertThat(topic.envelopes)
          .anySatisfy(
              e -> assertThat(e.<String>getArray("unchanged_toast")).containsExactly("body"));
      // the added column appears in the newer value schema
      assertThat(
              topic
                  .envelopes
                  .get(topic.envelopes.size() - 1)
                  .getStruct("after")
                  .schema()
                  .field("extra"))
          .isNotNull();
    }
    ConnectorStateInfo status = cluster.connectorStatus(name);
    assertThat(status.tasks())
        .singleElement()
        .satisfies(t -> assertThat(t.state()).isEqualTo("RUNNING"));
  }

  @Test
  @Order(3)
  void aSlowKafkaHoldsNoMoreThanThePipelinesInFlightWindow(TestDatabase db) throws Exception {
    db.execute(
        "CREATE TABLE bulk (id bigint PRIMARY KEY, filler text NOT NULL)",
        "INSERT INTO bulk SELECT g, repeat(md5(g::text), 4) FROM generate_series(1, 20000) g",
        "CREATE PUBLICATION bulk_pub FOR TABLE bulk");
    long batchBytes = 64 * 1024;
    Map<String, String> props = ConnectHarness.connector(db, "slow", "bulk_pub", "slow");
    props.put(PgetlConnectorConfig.BATCH_MAX_BYTES, Long.toString(batchBytes));
    props.put(PgetlConnectorConfig.MAX_IN_FLIGHT_WRITES, "2");
    props.put(PgetlConnectorConfig.MAX_TABLE_SYNC_WORKERS, "1");
    props.put(PgetlConnectorConfig.COPY_CONNECTIONS_PER_TABLE, "2");
    // one batch per copy partition, two writes per stream (apply and the table's catch-up), each
    // at most a batch plus the row that crossed the limit
    long window = (2 + 2 * 2) * (batchBytes + 1024);

    ClientQuotaEntity producer =
        new ClientQuotaEntity(Map.of(ClientQuotaEntity.CLIENT_ID, "connector-producer-slow-0"));
    try (Admin admin = cluster.kafka().createAdminClient()) {
      quota(admin, producer, 200_000.0);
      cluster.configureConnector("slow", props);
      try (TopicTable topic = new TopicTable(cluster, "slow.public.bulk")) {
        // throttled to 200 kB/s: records trickle, the copy waits for Kafka, memory stays flat
        await()
            .atMost(ConnectHarness.WAIT)
            .until(() -> taskMetric("slow", "AcknowledgedRecords") > 0);
        long deadline = System.nanoTime() + Duration.ofSeconds(6).toNanos();
        await()
            .atMost(Duration.ofSeconds(30))
            .pollInterval(Duration.ofMillis(100))
            .until(
                () -> {
                  assertThat(taskMetric("slow", "HeldBytes")).isLessThanOrEqualTo(window);
                  topic.poll();
                  return System.nanoTime() > deadline;
                });
        assertThat(topic.poll().rows.size()).isLessThan(20_000);
        assertThat(taskMetric("slow", "MaxHeldBytes")).isPositive().isLessThanOrEqualTo(window);

        quota(admin, producer, null);
        await().atMost(ConnectHarness.WAIT).until(() -> topic.poll().rows.size() == 20_000);
        assertThat(topic.contents(List.of("id", "filler")))
            .containsExactlyInAnyOrderElementsOf(
                db.queryRows("SELECT id::text, md5(filler) FROM bulk"));
        assertThat(taskMetric("slow", "MaxHeldBytes")).isLessThanOrEqualTo(window);
      }
    } finally {
      cluster.deleteConnector("slow");
    }
  }

  private static void quota(Admin admin, ClientQuotaEntity entity, Double bytesPerSecond)
      throws Exception {
    admin
        .alterClientQuotas(
            List.of(
                new ClientQuotaAlteration(
                    entity,
                    List.of(new ClientQuotaAlteration.Op("producer_byte_rate", bytesPerSecond)))))
        .all()
        .get();
  }

  /** An attribute of the running task's JMX bean (0 while the task has none). */
  static long taskMetric(String pipelineId, String attribute) throws Exception {
    MBeanServer server = ManagementFactory.getPlatformMBeanServer();
    Set<ObjectName> names =
        server.queryNames(
            new ObjectName(
                "org.pgetl.kafka.connect:type=task,pipeline="
                    + ObjectName.quote(pipelineId)
                    + ",*"),
            null);
    long value = 0;
    for (ObjectName n : names) {
      value = Math.max(value, ((Number) server.getAttribute(n, attribute)).longValue());
    }
    return value;
  }

  private static final int FAILOVER_ROWS = 3_000;

  /**
   * A worker stopped while the pipeline streams: Connect restarts the task on the other worker, the
   * pipeline resumes from its durable point, and every committed row reaches the topic (duplicates
   * allowed, after the durable point only). Last: it leaves one worker.
   */
  @Test
  @Order(4)
  void aStoppedWorkersPipelineMovesToAnotherWorkerAndLosesNothing(TestDatabase db)
      throws Exception {
    db.execute(
        "CREATE TABLE events (id bigint PRIMARY KEY, payload text NOT NULL)",
        "INSERT INTO events SELECT g, 'copied ' || g FROM generate_series(1, 500) g",
        "CREATE PUBLICATION events_pub FOR TABLE events");
    AtomicBoolean writing = new AtomicBoolean(true);
    CompletableFuture<Void> writer = null;
    try (TopicTable topic = new TopicTable(cluster, "fo.public.events")) {
      cluster.configureConnector("fo", ConnectHarness.connector(db, "fo", "events_pub", "fo"));
      await().atMost(ConnectHarness.WAIT).until(() -> topic.poll().rows.size() == 500);

      // one small transaction after another, while the worker goes away
      writer =
          CompletableFuture.runAsync(
              () -> {
                try (Connection c = db.connect();
                    PreparedStatement insert =
                        c.prepareStatement(
                            "INSERT INTO events SELECT g, 'streamed ' || g"
                                + " FROM generate_series(?::bigint, ?::bigint) g")) {
                  for (long id = 501; id <= FAILOVER_ROWS && writing.get(); id += 10) {
                    insert.setLong(1, id);
                    insert.setLong(2, id + 9);
                    insert.executeUpdate();
                  }
                } catch (SQLException e) {
                  throw new IllegalStateException(e);
                }
              });
      await().atMost(ConnectHarness.WAIT).until(() -> topic.poll().rows.size() > 1_000);

      WorkerHandle first = workerOf(cluster, "fo");
      cluster.removeWorker(first);
      await()
          .atMost(ConnectHarness.WAIT)
          .until(
              () -> {
                WorkerHandle now = workerOf(cluster, "fo");
                return now != null && !now.equals(first);
              });
      writer.get();
      await().atMost(ConnectHarness.WAIT).until(() -> topic.poll().rows.size() == FAILOVER_ROWS);

      Set<Long> ids = new HashSet<>();
      for (Struct e : topic.envelopes) {
        ids.add(e.getStruct("after").getInt64("id"));
      }
      assertThat(ids).hasSize(FAILOVER_ROWS);
      assertThat(topic.contents(List.of("id", "payload")))
          .containsExactlyInAnyOrderElementsOf(
              db.queryRows("SELECT id::text, payload FROM events"));
      ConnectorStateInfo status = cluster.connectorStatus("fo");
      assertThat(status.tasks())
          .singleElement()
          .satisfies(t -> assertThat(t.state()).isEqualTo("RUNNING"));
      // duplicates only after the durable point: the copy was durable before the stop
      assertThat(topic.ops.get("r")).isEqualTo(500);
    } finally {
      writing.set(false);
      if (writer != null) {
        writer.join();
      }
      cluster.deleteConnector("fo");
    }
  }

  /** The worker running the connector's task, or null while none runs it. */
  private static WorkerHandle workerOf(EmbeddedConnectCluster cluster, String connector) {
    ConnectorStateInfo status;
    try {
      status = cluster.connectorStatus(connector);
    } catch (RuntimeException e) {
      return null;
    }
    if (status.tasks().isEmpty() || !"RUNNING".equals(status.tasks().get(0).state())) {
      return null;
    }
    String workerId = status.tasks().get(0).workerId();
    for (WorkerHandle w : cluster.workers()) {
      URI url = w.url();
      if (workerId.endsWith(":" + url.getPort())) {
        return w;
      }
    }
    return null;
  }
}
