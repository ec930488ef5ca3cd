package org.pgetl.kafka.connect;

import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.math.BigDecimal;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.UUID;
import org.apache.kafka.connect.json.JsonConverter;
import org.jspecify.annotations.Nullable;
import org.pgetl.destination.TableCopyBatchId;
import org.pgetl.destination.TableCopyWrite;
import org.pgetl.model.Lsn;
import org.pgetl.model.PgNumeric;
import org.pgetl.model.ReplicatedTableSchema;
import org.pgetl.model.TableRow;
import org.pgetl.testkit.destination.SchemaBuilder;

/**
 * The CPU one copied row costs the Kafka Connect connector, from a row to the key and value bytes
 * the producer sends, on one thread, for the table shape of {@code ConnectBenchmark} ({@code int8}
 * key, {@code int4}, {@code text}, {@code numeric(12,2)}, {@code timestamptz}, {@code jsonb}); no
 * PostgreSQL, no broker. It sits in the connector's package to reach its package-private mapper.
 *
 * <ul>
 *   <li><b>connect</b> ({@code record.encoding=connect}, the default): the mapper makes Connect
 *       structs on pgetl's thread, and the worker's {@code JsonConverter} serializes the key and
 *       the value (on the task's thread in a worker; here on the same one);
 *   <li><b>structs, encoded</b>: Connect structs serialized by pgetl's {@code JsonRecordEncoder}
 *       (how {@code record.encoding=json} made its records before unchecked structs);
 *   <li><b>serialized</b> ({@code record.encoding=json} or {@code json-schemas}): unchecked structs
 *       serialized by the encoder, what the connector does now.
 * </ul>
 *
 * <p>Each round times every mode over the same prepared batches of 10,000 rows, in an order that
 * rotates from round to round; reported are the medians of the thread's CPU nanoseconds per row.
 *
 * <pre>
 * java -cp etl-benchmarks/target/pgetl-benchmarks.jar \
 *     org.pgetl.kafka.connect.RecordEncodingBenchmark [rows] [rounds] [schemas]
 * </pre>
 */
public final class RecordEncodingBenchmark {
  private static final int BATCH = 10_000;

  private RecordEncodingBenchmark() {}

  /** One way of making a row's bytes. */
  private interface Mode {
    /** Makes the records of a batch and serializes them; the bytes made. */
    long run(ReplicatedTableSchema table, TableCopyWrite.Batch batch);
  }

  /**
   * Runs the harness.
   *
   * @param args rows (default 1,000,000), rounds (default 7), whether records carry their schema
   *     inline ({@code true} or {@code false}, the default)
   */
  public static void main(String[] args) {
    int rows = args.length > 0 ? Integer.parseInt(args[0]) : 1_000_000;
    int rounds = args.length > 1 ? Integer.parseInt(args[1]) : 7;
    boolean schemas = args.length > 2 && Boolean.parseBoolean(args[2]);
    ReplicatedTableSchema table =
        SchemaBuilder.table(16401, "public.bench_copy")
            .key("id", "int8")
            .column("qty", "int4")
            .column("name", "text")
            .column("price", "numeric")
            .column("created", "timestamptz")
            .column("attrs", "jsonb")
            .snapshotLsn(Lsn.parse("0/16B3748"))
            .build();
    List<TableCopyWrite.Batch> batches = batches(rows);
    JsonRecordEncoder encoder = new JsonRecordEncoder(schemas, Map.of());
    JsonConverter keys = converter(schemas, true);
    JsonConverter values = converter(schemas, false);
    RecordMapper structs = new RecordMapper(settings());
    RecordMapper unchecked = new RecordMapper(settings(), encoder);
    Map<String, Mode> modes = new java.util.LinkedHashMap<>();
    modes.put(
        "connect",
        (t, b) -> {
          long[] bytes = {0};
          structs.copyBatch(
              t,
              b,
              (topic, ks, k, vs, v, ts) -> {
                bytes[0] += length(keys.fromConnectData(topic, ks, k));
                bytes[0] += length(values.fromConnectData(topic, vs, v));
              });
          return bytes[0];
        });
    modes.put("structs, encoded", (t, b) -> encoded(structs, encoder, t, b));
    modes.put("serialized", (t, b) -> encoded(unchecked, encoder, t, b));
    System.out.printf(
        Locale.ROOT,
        "%d rows, %d rounds, inline schemas %s; JVM %s, %d CPUs%n",
        rows,
        rounds,
        schemas,
        System.getProperty("java.version"),
        Runtime.getRuntime().availableProcessors());
    ThreadMXBean cpu = ManagementFactory.getThreadMXBean();
    Map<String, List<Double>> perRow = new HashMap<>();
    List<String> names = new ArrayList<>(modes.keySet());
    for (int round = 0; round < rounds; round++) {
      for (int m = 0; m < names.size(); m++) {
        String name = names.get((round + m) % names.size());
        Mode mode = java.util.Objects.requireNonNull(modes.get(name));
        long before = cpu.getCurrentThreadCpuTime();
        long bytes = 0;
        for (TableCopyWrite.Batch b : batches) {
          bytes += mode.run(table, b);
        }
        double ns = (double) (cpu.getCurrentThreadCpuTime() - before) / rows;
        perRow.computeIfAbsent(name, k -> new ArrayList<>()).add(ns);
        System.out.printf(
            Locale.ROOT,
            "round %d %-17s %6.0f ns/row, %5.0f bytes/row%n",
            round,
            name,
            ns,
            (double) bytes / rows);
      }
    }
    double connect = median(perRow.getOrDefault("connect", List.of()));
    System.out.println("medians (CPU per row; the ratio to connect):");
    for (String name : modes.keySet()) {
      double m = median(perRow.getOrDefault(name, List.of()));
      System.out.printf(Locale.ROOT, "  %-17s %6.0f ns/row  %.2f%n", name, m, m / connect);
    }
  }

  private static long encoded(
      RecordMapper mapper,
      JsonRecordEncoder encoder,
      ReplicatedTableSchema table,
      TableCopyWrite.Batch batch) {
    long[] bytes = {0};
    mapper.copyBatch(
        table,
        batch,
        (topic, ks, k, vs, v, ts) -> {
          bytes[0] += length(encoder.encode(topic, ks, k));
          bytes[0] += length(encoder.encode(topic, vs, v));
        });
    return bytes[0];
  }

  private static int length(byte @Nullable [] b) {
    return b == null ? 0 : b.length;
  }

  private static List<TableCopyWrite.Batch> batches(int rows) {
    UUID attempt = UUID.randomUUID();
    List<TableCopyWrite.Batch> batches = new ArrayList<>();
    for (int i = 0; i < rows; i += BATCH) {
      List<TableRow> batch = new ArrayList<>(BATCH);
      for (long g = i + 1L; g <= Math.min(rows, i + BATCH); g++) {
        batch.add(
            TableRow.of(
                g,
                (int) (g % 500),
                "customer " + g + " of the benchmark",
                PgNumeric.of(BigDecimal.valueOf(g * 125, 2)),
                Instant.parse("2024-01-01T00:00:00Z").plusSeconds(g),
                "{\"tier\": \"gold\", \"score\": " + (g % 97) + "}"));
      }
      batches.add(new TableCopyWrite.Batch(new TableCopyBatchId(attempt, batches.size()), batch));
    }
    return batches;
  }

  private static RecordMapper.Settings settings() {
    return new RecordMapper.Settings(
        "bench",
        "bench",
        "bench",
        new TopicNamer(PgetlConnectorConfig.DEFAULT_TOPIC_PATTERN, "bench", "bench", "pub"),
        true,
        false,
        ColumnMapping.DecimalMode.PRECISE,
        ColumnMapping.ArrayMode.ARRAY);
  }

  private static JsonConverter converter(boolean schemas, boolean key) {
    Map<String, String> s = new HashMap<>();
    s.put("schemas.enable", Boolean.toString(schemas));
    JsonConverter c = new JsonConverter();
    c.configure(s, key);
    return c;
  }

  private static double median(List<Double> values) {
    List<Double> sorted = new ArrayList<>(values);
    Collections.sort(sorted);
    int n = sorted.size();
    return n % 2 == 1 ? sorted.get(n / 2) : (sorted.get(n / 2 - 1) + sorted.get(n / 2)) / 2;
  }
}
