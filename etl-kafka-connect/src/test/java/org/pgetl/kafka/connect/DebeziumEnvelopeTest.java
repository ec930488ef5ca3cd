package org.pgetl.kafka.connect;

import static org.assertj.core.api.Assertions.assertThat;

import io.debezium.config.Configuration;
import io.debezium.connector.SnapshotRecord;
import io.debezium.connector.postgresql.PostgresConnectorConfig;
import io.debezium.connector.postgresql.PostgresSourceInfoStructMaker;
import io.debezium.data.Envelope;
import io.debezium.pipeline.txmetadata.DefaultTransactionStructMaker;
import io.debezium.transforms.ExtractNewRecordState;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.UUID;
import org.apache.kafka.connect.data.Field;
import org.apache.kafka.connect.data.Schema;
import org.apache.kafka.connect.data.Struct;
import org.apache.kafka.connect.source.SourceRecord;
import org.junit.jupiter.api.Test;
import org.pgetl.destination.StreamId;
import org.pgetl.destination.TableCopyBatchId;
import org.pgetl.destination.TableCopyWrite;
import org.pgetl.kafka.connect.RecordMapper.ListSink;
import org.pgetl.model.Event;
import org.pgetl.model.Lsn;
import org.pgetl.model.ReplicatedTableSchema;
import org.pgetl.model.TableRow;
import org.pgetl.model.UpdatedRow;
import org.pgetl.testkit.destination.SchemaBuilder;

/**
 * pgetl's envelope against Debezium's own classes (debezium-connector-postgres 3.6): the source
 * block holds every field of Debezium's PostgreSQL {@code Source} with its schema and in its order,
 * the envelope has Debezium's name, version and fields, and Debezium's {@code
 * ExtractNewRecordState} reads pgetl's records.
 */
class DebeziumEnvelopeTest {
  private static final ReplicatedTableSchema ORDERS =
      SchemaBuilder.table(16401, "public.orders")
          .key("id", "int8")
          .column("note", "text")
          .column("doc", "jsonb")
          .build();
  private static final ReplicatedTableSchema LINES =
      SchemaBuilder.table(16402, "public.lines").key("id", "int8").build();
  private static final Lsn COMMIT = Lsn.parse("0/2000100");
  private static final Instant COMMIT_TIME = Instant.parse("2026-01-02T03:04:05.123456Z");

  private static RecordMapper mapper(
      boolean transactions, String placeholder, RecordMapper.CopyPositions positions) {
    return new RecordMapper(
        new RecordMapper.Settings(
            "test",
            "shop",
            "shopdb",
            new TopicNamer(PgetlConnectorConfig.DEFAULT_TOPIC_PATTERN, "shop", "shop", "pub"),
            true,
            false,
            ColumnMapping.DecimalMode.PRECISE,
            ColumnMapping.ArrayMode.ARRAY,
            transactions,
            placeholder,
            positions));
  }

  private static Schema debeziumSource() {
    PostgresSourceInfoStructMaker maker = new PostgresSourceInfoStructMaker();
    maker.init(
        "postgresql",
        "3.6.1.Final",
        new PostgresConnectorConfig(
            Configuration.create()
                .with("topic.prefix", "shop")
                .with("database.hostname", "localhost")
                .with("database.dbname", "shopdb")
                .build()));
    return maker.schema();
  }

  @Test
  void theSourceBlockHoldsEveryFieldOfDebeziumsPostgresSourceInItsOrder() {
    Schema theirs = debeziumSource();
    Schema ours = TableRecords.SOURCE_SCHEMA;
    List<Field> prefix = ours.fields().subList(0, theirs.fields().size());
    for (int i = 0; i < theirs.fields().size(); i++) {
      Field t = theirs.fields().get(i);
      Field o = prefix.get(i);
      assertThat(o.name()).isEqualTo(t.name());
      assertThat(o.schema()).as(t.name()).isEqualTo(t.schema());
    }
    assertThat(ours.fields().subList(theirs.fields().size(), ours.fields().size()))
        .extracting(Field::name)
        .containsExactly("commit_lsn", "tx_ordinal");
    assertThat(ours.version()).isEqualTo(theirs.version());
    // Debezium's snapshot enum: every value pgetl writes is one of them
    List<String> allowed =
        Arrays.asList(theirs.field("snapshot").schema().parameters().get("allowed").split(","));
    for (SnapshotRecord r : SnapshotRecord.values()) {
      assertThat(allowed).contains(r.name().toLowerCase(Locale.ROOT));
    }
    assertThat(allowed)
        .contains(
            RecordMapper.SNAPSHOT_FIRST_IN_TABLE,
            RecordMapper.SNAPSHOT_TRUE,
            RecordMapper.SNAPSHOT_FALSE);
  }

  @Test
  void theEnvelopeHasDebeziumsNameVersionAndFields() {
    TableRecords t = mapper(false, "", RecordMapper.CopyPositions.NONE).table(ORDERS);
    Schema transaction =
        new DefaultTransactionStructMaker(Configuration.empty()).getTransactionBlockSchema();
    Envelope theirs =
        Envelope.defineSchema()
            .withName("shop.public.orders.Envelope")
            .withRecord(t.valueSchema)
            .withSource(TableRecords.SOURCE_SCHEMA)
            .withTransaction(transaction)
            .build();
    Schema ours = t.envelopeSchema;
    assertThat(ours.name()).isEqualTo(theirs.schema().name());
    assertThat(ours.version()).isEqualTo(theirs.schema().version());
    List<Field> prefix = ours.fields().subList(0, theirs.schema().fields().size());
    assertThat(prefix).isEqualTo(theirs.schema().fields());
    assertThat(ours.field("unchanged_toast").index()).isEqualTo(prefix.size());
    assertThat(TableRecords.TRANSACTION_SCHEMA).isEqualTo(transaction);
  }

  @Test
  void copiedRowsCarryTheSlotsPositionAndDebeziumsFirstInDataCollectionMarker() {
    Lsn slotLsn = Lsn.parse("0/3000028");
    RecordMapper mapper = mapper(false, "", table -> new RecordMapper.CopyPosition(slotLsn, 755L));
    ListSink sink = new ListSink();
    UUID orders = UUID.randomUUID();
    mapper.copyBatch(ORDERS, batch(ORDERS, orders, 0, 1, 2), sink);
    mapper.copyBatch(ORDERS, batch(ORDERS, orders, 1, 3), sink);
    mapper.copyBatch(LINES, batch(LINES, UUID.randomUUID(), 0, 10, 11), sink);
    // a new attempt of a table (a re-copy) starts it again
    mapper.copyBatch(ORDERS, batch(ORDERS, UUID.randomUUID(), 0, 1), sink);

    assertThat(sink.records)
        .extracting(r -> source(r).getString("snapshot"))
        .containsExactly(
            "first_in_data_collection",
            "true",
            "true",
            "first_in_data_collection",
            "true",
            "first_in_data_collection");
    Struct first = source(sink.records.get(0));
    assertThat(first.getInt64("lsn")).isEqualTo(slotLsn.value());
    assertThat(first.getInt64("xmin")).isEqualTo(755L);
    assertThat(first.getInt64("txId")).isNull();
    assertThat(first.getString("sequence")).isEqualTo("[null,\"" + slotLsn.value() + "\"]");
    assertThat(first.getInt64("ts_us") / 1000).isEqualTo(first.getInt64("ts_ms"));
    Struct envelope = (Struct) sink.records.get(0).value();
    assertThat(envelope.getInt64("ts_ns") / 1000).isEqualTo(envelope.getInt64("ts_us"));
    assertThat(envelope.getStruct("transaction")).isNull();
    envelope.validate();
  }

  @Test
  void changesCarryTheSequenceTimesAndTheTransactionBlockWhenAsked() {
    RecordMapper mapper = mapper(true, "", RecordMapper.CopyPositions.NONE);
    ListSink sink = new ListSink();
    Lsn first = Lsn.parse("0/2000000");
    mapper.events(
        StreamId.APPLY,
        List.of(
            new Event.Begin(first, first, 0, COMMIT_TIME, 740),
            new Event.Commit(first, first, 1, Lsn.parse("0/2000004"), COMMIT_TIME, 0)),
        sink);
    mapper.events(
        StreamId.APPLY,
        List.of(
            new Event.Begin(Lsn.parse("0/2000008"), COMMIT, 0, COMMIT_TIME, 741),
            new Event.Insert(Lsn.parse("0/2000010"), COMMIT, 1, ORDERS, TableRow.of(1L, "a", null)),
            new Event.Insert(Lsn.parse("0/2000020"), COMMIT, 2, LINES, TableRow.of(5L)),
            new Event.Insert(
                Lsn.parse("0/2000030"), COMMIT, 3, ORDERS, TableRow.of(2L, "b", null))),
        sink);

    List<Struct> envelopes = new ArrayList<>();
    sink.records.forEach(r -> envelopes.add((Struct) r.value()));
    assertThat(envelopes)
        .extracting(e -> e.getStruct("transaction").getInt64("total_order"))
        .containsExactly(1L, 2L, 3L);
    assertThat(envelopes)
        .extracting(e -> e.getStruct("transaction").getInt64("data_collection_order"))
        .containsExactly(1L, 1L, 2L);
    // Debezium's PostgreSQL id: the xid and the change's own LSN
    assertThat(envelopes.get(0).getStruct("transaction").getString("id"))
        .isEqualTo("741:" + Lsn.parse("0/2000010").value());
    Struct source = envelopes.get(2).getStruct("source");
    assertThat(source.getString("sequence"))
        .isEqualTo(
            "[\""
                + Lsn.parse("0/2000004").value()
                + "\",\""
                + Lsn.parse("0/2000030").value()
                + "\"]");
    assertThat(source.getInt64("ts_ms")).isEqualTo(COMMIT_TIME.toEpochMilli());
    assertThat(source.getInt64("ts_us")).isEqualTo(1_767_323_045_123_456L);
    assertThat(source.getInt64("ts_ns")).isEqualTo(1_767_323_045_123_456_000L);
    envelopes.forEach(Struct::validate);
  }

  @Test
  void extractNewRecordStateUnwrapsPgetlsRecordsAsDebeziums() {
    RecordMapper mapper =
        mapper(false, "__debezium_unavailable_value", RecordMapper.CopyPositions.NONE);
    ListSink sink = new ListSink();
    mapper.events(
        StreamId.APPLY,
        List.of(
            new Event.Begin(Lsn.parse("0/2000008"), COMMIT, 0, COMMIT_TIME, 741),
            new Event.Update(
                Lsn.parse("0/2000010"),
                COMMIT,
                1,
                ORDERS,
                new UpdatedRow.Partial(3, TableRow.of(7L, "new"), new int[] {2}),
                null),
            new Event.Delete(
                Lsn.parse("0/2000020"),
                COMMIT,
                2,
                ORDERS,
                new org.pgetl.model.OldRow.Key(TableRow.of(7L)))),
        sink);
    try (ExtractNewRecordState<SourceRecord> unwrap = new ExtractNewRecordState<>()) {
      unwrap.configure(Map.of("add.fields", "op,lsn,snapshot"));
      List<SourceRecord> out = new ArrayList<>();
      for (ListSink.Rec r : sink.records) {
        out.add(
            unwrap.apply(
                new SourceRecord(
                    Map.of(),
                    Map.of(),
                    r.topic(),
                    null,
                    r.keySchema(),
                    r.key(),
                    r.valueSchema(),
                    r.value())));
      }
      Struct updated = (Struct) out.get(0).value();
      assertThat(updated.getInt64("id")).isEqualTo(7L);
      assertThat(updated.getString("note")).isEqualTo("new");
      // Debezium's placeholder, where Debezium's connector writes it
      assertThat(updated.getString("doc")).isEqualTo("__debezium_unavailable_value");
      assertThat(updated.getString("__op")).isEqualTo("u");
      assertThat(updated.getInt64("__lsn")).isEqualTo(Lsn.parse("0/2000010").value());
      assertThat(updated.getString("__snapshot")).isEqualTo("false");
      // Debezium's default delete.tombstone.handling.mode=tombstone: the delete becomes a
      // tombstone, and the tombstone that follows it (pgetl's, as Debezium's) is dropped
      assertThat(out.get(1).value()).isNull();
      assertThat(((Struct) out.get(1).key()).getInt64("id")).isEqualTo(7L);
      assertThat(out.get(2)).isNull();
    }
  }

  private static TableCopyWrite.Batch batch(
      ReplicatedTableSchema table, UUID attempt, long sequence, long... ids) {
    List<TableRow> rows = new ArrayList<>();
    for (long id : ids) {
      rows.add(table == LINES ? TableRow.of(id) : TableRow.of(id, "x", null));
    }
    return new TableCopyWrite.Batch(new TableCopyBatchId(attempt, sequence), rows);
  }

  private static Struct source(ListSink.Rec r) {
    return ((Struct) r.value()).getStruct("source");
  }
}
