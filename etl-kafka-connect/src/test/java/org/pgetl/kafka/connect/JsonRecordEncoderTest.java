package org.pgetl.kafka.connect;

import static org.assertj.core.api.Assertions.assertThat;

import java.math.BigDecimal;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.time.LocalTime;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.apache.kafka.connect.data.Date;
import org.apache.kafka.connect.data.Decimal;
import org.apache.kafka.connect.data.Field;
import org.apache.kafka.connect.data.Schema;
import org.apache.kafka.connect.data.Struct;
import org.apache.kafka.connect.data.Time;
import org.apache.kafka.connect.data.Timestamp;
import org.apache.kafka.connect.json.JsonConverter;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.Test;
import org.pgetl.destination.StreamId;
import org.pgetl.destination.TableCopyBatchId;
import org.pgetl.destination.TableCopyWrite;
import org.pgetl.kafka.connect.RecordMapper.ListSink;
import org.pgetl.model.Event;
import org.pgetl.model.Lsn;
import org.pgetl.model.OldRow;
import org.pgetl.model.PgNumeric;
import org.pgetl.model.ReplicatedTableSchema;
import org.pgetl.model.TableRow;
import org.pgetl.model.UpdatedRow;
import org.pgetl.testkit.destination.SchemaBuilder;

/**
 * The bytes of {@code record.encoding} {@code json} and {@code json-schemas} are, byte for byte,
 * what Connect's {@code JsonConverter} writes for the same records.
 */
class JsonRecordEncoderTest {
  private static final ReplicatedTableSchema ITEMS =
      SchemaBuilder.table(16500, "public.items")
          .key("id", "int8")
          .column("small", "int2")
          .column("qty", "int4")
          .column("ratio", "float4")
          .column("score", "float8")
          .column("ok", "bool")
          .column("raw", "bytea")
          .column("price", "numeric")
          .column("day", "date")
          .column("at", "time")
          .column("local", "timestamp")
          .column("zoned", "timestamptz")
          .column("ref", "uuid")
          .column("doc", "jsonb")
          .column("note", "text")
          .snapshotLsn(Lsn.parse("0/16B3748"))
          .build();
  private static final Lsn COMMIT = Lsn.parse("0/2000100");

  private static TableRow row(long id, String note) {
    return TableRow.of(
        id,
        (short) -3,
        42,
        1.5f,
        -2.0e-7,
        true,
        new byte[] {0, 1, (byte) 0xff, 'a'},
        PgNumeric.of(new BigDecimal("-12345678901234567890.0042")),
        LocalDate.of(1999, 12, 31),
        LocalTime.of(23, 59, 59, 999_999_000),
        LocalDateTime.of(2024, 2, 29, 12, 0, 1, 500_000),
        Instant.parse("2024-01-01T00:00:00.000001Z"),
        UUID.fromString("123e4567-e89b-12d3-a456-426614174000"),
        "{\"a\": [1, 2.50, null], \"b\": \"\\u00e9\"}",
        note);
  }

  /**
   * Every record the mapper makes for a copy and a transaction of every kind of change: as Connect
   * structs, or as the unchecked structs of records serialized on the pipeline's threads.
   */
  private static List<ListSink.Rec> records(boolean unchecked) {
    RecordMapper mapper =
        new RecordMapper(
            new RecordMapper.Settings(
                "test",
                "shop",
                "shopdb",
                new TopicNamer(PgetlConnectorConfig.DEFAULT_TOPIC_PATTERN, "shop", "shop", "pub"),
                true,
                true,
                ColumnMapping.DecimalMode.PRECISE,
                ColumnMapping.ArrayMode.ARRAY,
                true,
                null,
                RecordMapper.CopyPositions.NONE),
            unchecked ? new JsonRecordEncoder(false, Map.of()) : null);
    ListSink sink = new ListSink();
    List<TableRow> copied = new ArrayList<>();
    copied.add(row(1, "plain"));
    copied.add(row(2, "quote \" backslash \\ slash / tab \t newline \n bell \u0007 nul \u0000"));
    copied.add(row(3, "unicode é 中文 😀 \u2028"));
    Object[] nulls = new Object[ITEMS.columns().size()];
    nulls[0] = 4L;
    copied.add(TableRow.of(nulls));
    mapper.copyBatch(
        ITEMS, new TableCopyWrite.Batch(new TableCopyBatchId(UUID.randomUUID(), 0), copied), sink);
    List<Event> tx = new ArrayList<>();
    tx.add(
        new Event.Begin(
            Lsn.parse("0/2000000"), COMMIT, 0, Instant.ofEpochMilli(1_700_000_000_000L), 741));
    tx.add(new Event.Insert(Lsn.parse("0/2000010"), COMMIT, 1, ITEMS, row(5, "inserted")));
    Object[] present = new Object[ITEMS.columns().size() - 1];
    TableRow five = row(5, "x");
    for (int i = 0; i < present.length; i++) {
      present[i] = five.get(i);
    }
    tx.add(
        new Event.Update(
            Lsn.parse("0/2000020"),
            COMMIT,
            2,
            ITEMS,
            new UpdatedRow.Partial(
                ITEMS.columns().size(), TableRow.of(present), new int[] {present.length}),
            null));
    tx.add(
        new Event.Update(
            Lsn.parse("0/2000030"),
            COMMIT,
            3,
            ITEMS,
            new UpdatedRow.Full(row(6, "moved")),
            new OldRow.Key(TableRow.of(5L))));
    tx.add(
        new Event.Delete(
            Lsn.parse("0/2000040"), COMMIT, 4, ITEMS, new OldRow.Key(TableRow.of(6L))));
    tx.add(new Event.Truncate(Lsn.parse("0/2000050"), COMMIT, 5, List.of(ITEMS), 0));
    tx.add(
        new Event.Commit(
            Lsn.parse("0/2000100"),
            COMMIT,
            6,
            Lsn.parse("0/2000130"),
            Instant.ofEpochMilli(1_700_000_000_000L),
            0));
    mapper.events(StreamId.APPLY, tx, sink);
    return sink.records;
  }

  private static JsonConverter converter(boolean schemas, Map<String, String> more, boolean key) {
    Map<String, String> settings = new HashMap<>(more);
    settings.put("schemas.enable", Boolean.toString(schemas));
    JsonConverter c = new JsonConverter();
    c.configure(settings, key);
    return c;
  }

  /**
   * A Connect struct with an unchecked struct's values, nested ones too; made through {@link
   * Struct#put}, so that it also checks every value as Connect would.
   */
  private static @Nullable Object checked(@Nullable Object value) {
    if (!(value instanceof UncheckedStruct u)) {
      return value;
    }
    Struct s = new Struct(u.schema());
    for (Field f : u.schema().fields()) {
      s.put(f, checked(u.get(f)));
    }
    return s;
  }

  private static void assertSameBytes(boolean schemas, Map<String, String> settings) {
    assertSameBytes(schemas, settings, false);
    assertSameBytes(schemas, settings, true);
  }

  private static void assertSameBytes(
      boolean schemas, Map<String, String> settings, boolean unchecked) {
    JsonRecordEncoder encoder = new JsonRecordEncoder(schemas, settings);
    JsonConverter keys = converter(schemas, settings, true);
    JsonConverter values = converter(schemas, settings, false);
    List<ListSink.Rec> records = records(unchecked);
    assertThat(records).hasSizeGreaterThanOrEqualTo(9);
    int tombstones = 0;
    for (ListSink.Rec r : records) {
      if (unchecked && r.value() != null) {
        assertThat(r.value()).isInstanceOf(UncheckedStruct.class);
      }
      byte[] key = encoder.encode(r.topic(), r.keySchema(), r.key());
      byte[] value = encoder.encode(r.topic(), r.valueSchema(), r.value());
      assertThat(key).isEqualTo(keys.fromConnectData(r.topic(), r.keySchema(), checked(r.key())));
      byte[] expected = values.fromConnectData(r.topic(), r.valueSchema(), checked(r.value()));
      assertThat(value)
          .as(() -> expected == null ? "null" : new String(expected, StandardCharsets.UTF_8))
          .isEqualTo(expected);
      // the same schema instance and the same structs again: the cached schema bytes, and the
      // struct JSON kept for a struct written twice (as the copied rows after the first share
      // their source block)
      assertThat(encoder.encode(r.topic(), r.valueSchema(), r.value())).isEqualTo(expected);
      if (r.value() == null) {
        tombstones++;
        assertThat(value).isNull();
      }
    }
    // the key-changing update's delete of the old key, and the delete
    assertThat(tombstones).isEqualTo(2);
  }

  @Test
  void withoutSchemasTheBytesAreJsonConvertersBytes() {
    assertSameBytes(false, Map.of());
  }

  @Test
  void withSchemasTheJoinedEnvelopeIsJsonConvertersBytes() {
    assertSameBytes(true, Map.of());
  }

  @Test
  void furtherConverterSettingsApply() {
    assertSameBytes(
        true, Map.of("decimal.format", "NUMERIC", "replace.null.with.default", "false"));
    assertSameBytes(false, Map.of("decimal.format", "NUMERIC"));
  }

  @Test
  void aSchemalessValueIsWrappedWithANullSchema() {
    JsonRecordEncoder encoder = new JsonRecordEncoder(true, Map.of());
    byte[] b = encoder.encode("t", null, Map.of("a", 1));
    assertThat(b)
        .isEqualTo(converter(true, Map.of(), false).fromConnectData("t", null, Map.of("a", 1)));
    assertThat(encoder.encode("t", Schema.OPTIONAL_STRING_SCHEMA, null))
        .isEqualTo(
            converter(true, Map.of(), false)
                .fromConnectData("t", Schema.OPTIONAL_STRING_SCHEMA, null));
  }

  /** Every schema type and logical type Connect has, beyond what the mapper makes today. */
  @Test
  void everyConnectTypeIsWrittenAsTheConverterWritesIt() {
    Schema inner =
        org.apache.kafka.connect.data.SchemaBuilder.struct()
            .name("inner")
            .field("n", Schema.OPTIONAL_INT32_SCHEMA)
            .optional()
            .build();
    Schema schema =
        org.apache.kafka.connect.data.SchemaBuilder.struct()
            .name("all")
            .field("i8", Schema.INT8_SCHEMA)
            .field("i16", Schema.INT16_SCHEMA)
            .field("f32", Schema.FLOAT32_SCHEMA)
            .field("f64", Schema.FLOAT64_SCHEMA)
            .field("nan", Schema.FLOAT64_SCHEMA)
            .field("inf", Schema.FLOAT32_SCHEMA)
            .field("buf", Schema.BYTES_SCHEMA)
            .field(
                "list",
                org.apache.kafka.connect.data.SchemaBuilder.array(Schema.OPTIONAL_INT32_SCHEMA)
                    .build())
            .field(
                "byName",
                org.apache.kafka.connect.data.SchemaBuilder.map(
                        Schema.STRING_SCHEMA, Schema.OPTIONAL_STRING_SCHEMA)
                    .build())
            .field(
                "byNumber",
                org.apache.kafka.connect.data.SchemaBuilder.map(
                        Schema.INT32_SCHEMA, Schema.STRING_SCHEMA)
                    .build())
            .field("inner", inner)
            .field("noInner", inner)
            .field("dec", Decimal.builder(3).build())
            .field("day", Date.SCHEMA)
            .field("time", Time.SCHEMA)
            .field("ts", Timestamp.SCHEMA)
            .field(
                "withDefault",
                org.apache.kafka.connect.data.SchemaBuilder.string()
                    .optional()
                    .defaultValue("dflt")
                    .build())
            .field(
                "setDefault",
                org.apache.kafka.connect.data.SchemaBuilder.int64()
                    .optional()
                    .defaultValue(7L)
                    .build())
            .build();
    Map<String, String> byName = new LinkedHashMap<>();
    byName.put("a", "x \"q\" é");
    byName.put("b", null);
    Map<Integer, String> byNumber = new LinkedHashMap<>();
    byNumber.put(2, "two");
    byNumber.put(-1, "minus one");
    List<Integer> list = new ArrayList<>();
    list.add(1);
    list.add(null);
    Struct value =
        new Struct(schema)
            .put("i8", (byte) -8)
            .put("i16", (short) 300)
            .put("f32", 0.1f)
            .put("f64", 1.0e-300)
            .put("nan", Double.NaN)
            .put("inf", Float.NEGATIVE_INFINITY)
            .put("buf", ByteBuffer.wrap(new byte[] {1, 2, 3, (byte) 0xfe}))
            .put("list", list)
            .put("byName", byName)
            .put("byNumber", byNumber)
            .put("inner", new Struct(inner).put("n", 5))
            .put("dec", new BigDecimal("-1234.500"))
            .put("day", new java.util.Date(86_400_000L * 19_000))
            .put("time", new java.util.Date(45_296_789L))
            .put("ts", new java.util.Date(1_700_000_000_123L))
            .put("setDefault", 9L);
    for (boolean schemas : new boolean[] {false, true}) {
      for (Map<String, String> settings :
          List.of(
              Map.<String, String>of(),
              Map.of("decimal.format", "NUMERIC", "replace.null.with.default", "false"))) {
        JsonRecordEncoder encoder = new JsonRecordEncoder(schemas, settings);
        byte[] expected = converter(schemas, settings, false).fromConnectData("t", schema, value);
        byte[] actual = encoder.encode("t", schema, value);
        assertThat(actual)
            .as(() -> new String(expected, StandardCharsets.UTF_8))
            .isEqualTo(expected);
      }
    }
  }
}
