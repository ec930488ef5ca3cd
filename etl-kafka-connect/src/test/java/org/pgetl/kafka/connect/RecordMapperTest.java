package org.pgetl.kafka.connect;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Instant;
import java.util.List;
import java.util.UUID;
import org.apache.kafka.connect.data.Schema;
import org.apache.kafka.connect.data.Struct;
import org.junit.jupiter.api.Test;
import org.pgetl.destination.StreamId;
import org.pgetl.destination.TableCopyBatchId;
import org.pgetl.destination.TableCopyWrite;
import org.pgetl.kafka.connect.RecordMapper.ListSink;
import org.pgetl.model.Event;
import org.pgetl.model.Lsn;
import org.pgetl.model.OldRow;
import org.pgetl.model.ReplicatedTableSchema;
import org.pgetl.model.TableRow;
import org.pgetl.model.UpdatedRow;
import org.pgetl.testkit.destination.SchemaBuilder;

class RecordMapperTest {
  private static final ReplicatedTableSchema ORDERS =
      SchemaBuilder.table(16401, "public.orders")
          .key("id", "int8")
          .column("note", "text")
          .column("doc", "jsonb")
          .snapshotLsn(Lsn.parse("0/16B3748"))
          .build();
  private static final Lsn COMMIT = Lsn.parse("0/2000100");

  private static RecordMapper mapper(boolean tombstones, boolean truncates) {
    return new RecordMapper(
        new RecordMapper.Settings(
            "test",
            "shop",
            "shopdb",
            new TopicNamer(PgetlConnectorConfig.DEFAULT_TOPIC_PATTERN, "shop", "shop", "pub"),
            tombstones,
            truncates,
            ColumnMapping.DecimalMode.PRECISE,
            ColumnMapping.ArrayMode.ARRAY));
  }

  private static List<Event> tx(Event... changes) {
    List<Event> events = new java.util.ArrayList<>();
    events.add(
        new Event.Begin(
            Lsn.parse("0/2000000"), COMMIT, 0, Instant.ofEpochMilli(1_700_000_000_000L), 741));
    events.addAll(List.of(changes));
    events.add(
        new Event.Commit(
            Lsn.parse("0/2000100"),
            COMMIT,
            changes.length + 1,
            Lsn.parse("0/2000130"),
            Instant.ofEpochMilli(1_700_000_000_000L),
            0));
    return events;
  }

  private static Struct value(ListSink.Rec r) {
    return (Struct) r.value();
  }

  @Test
  void anInsertIsACreateEnvelopeKeyedByThePrimaryKey() {
    ListSink sink = new ListSink();
    Event.Insert insert =
        new Event.Insert(
            Lsn.parse("0/2000010"), COMMIT, 1, ORDERS, TableRow.of(7L, "hello", "{\"a\": 1}"));
    mapper(true, false).events(StreamId.APPLY, tx(insert), sink);

    assertThat(sink.records).hasSize(1);
    ListSink.Rec r = sink.records.get(0);
    assertThat(r.topic()).isEqualTo("shop.public.orders");
    assertThat(r.keySchema().name()).isEqualTo("shop.public.orders.Key");
    assertThat(((Struct) r.key()).getInt64("id")).isEqualTo(7L);
    Struct e = value(r);
    assertThat(r.valueSchema().name()).isEqualTo("shop.public.orders.Envelope");
    assertThat(e.getString("op")).isEqualTo("c");
    assertThat(e.getStruct("before")).isNull();
    assertThat(e.getStruct("after").getString("note")).isEqualTo("hello");
    assertThat(e.getStruct("after").getString("doc")).isEqualTo("{\"a\": 1}");
    Struct source = e.getStruct("source");
    assertThat(source.getString("connector")).isEqualTo("pgetl");
    assertThat(source.getString("db")).isEqualTo("shopdb");
    assertThat(source.getString("schema")).isEqualTo("public");
    assertThat(source.getString("table")).isEqualTo("orders");
    assertThat(source.getInt64("txId")).isEqualTo(741L);
    assertThat(source.getInt64("lsn")).isEqualTo(Lsn.parse("0/2000010").value());
    assertThat(source.getInt64("commit_lsn")).isEqualTo(COMMIT.value());
    assertThat(source.getInt64("tx_ordinal")).isEqualTo(1L);
    assertThat(source.getInt64("ts_ms")).isEqualTo(1_700_000_000_000L);
    assertThat(source.getString("snapshot")).isEqualTo("false");
    e.validate();
  }

  @Test
  void aPartialUpdateListsItsUnchangedToastColumnsAndLeavesThemNull() {
    ListSink sink = new ListSink();
    UpdatedRow partial = new UpdatedRow.Partial(3, TableRow.of(7L, "new note"), new int[] {2});
    Event.Update update =
        new Event.Update(Lsn.parse("0/2000010"), COMMIT, 1, ORDERS, partial, null);
    mapper(true, false).events(StreamId.APPLY, tx(update), sink);

    Struct e = value(sink.records.get(0));
    assertThat(e.getString("op")).isEqualTo("u");
    assertThat(e.getStruct("after").getString("note")).isEqualTo("new note");
    assertThat(e.getStruct("after").getString("doc")).isNull();
    assertThat(e.getArray("unchanged_toast")).containsExactly("doc");
    assertThat(e.getStruct("before")).isNull();
  }

  @Test
  void aDeleteCarriesTheKeyImageAndIsFollowedByATombstone() {
    ListSink sink = new ListSink();
    Event.Delete delete =
        new Event.Delete(
            Lsn.parse("0/2000010"), COMMIT, 1, ORDERS, new OldRow.Key(TableRow.of(7L)));
    mapper(true, false).events(StreamId.APPLY, tx(delete), sink);

    assertThat(sink.records).hasSize(2);
    Struct e = value(sink.records.get(0));
    assertThat(e.getString("op")).isEqualTo("d");
    assertThat(e.getStruct("before").getInt64("id")).isEqualTo(7L);
    assertThat(e.getStruct("before").getString("note")).isNull();
    assertThat(e.getStruct("after")).isNull();
    ListSink.Rec tombstone = sink.records.get(1);
    assertThat(((Struct) tombstone.key()).getInt64("id")).isEqualTo(7L);
    assertThat(tombstone.value()).isNull();
    assertThat(tombstone.valueSchema()).isNull();

    ListSink without = new ListSink();
    mapper(false, false).events(StreamId.APPLY, tx(delete), without);
    assertThat(without.records).hasSize(1);
  }

  @Test
  void anUpdateThatChangesTheKeyDeletesTheOldKeyAndCreatesTheNewOne() {
    ListSink sink = new ListSink();
    Event.Update update =
        new Event.Update(
            Lsn.parse("0/2000010"),
            COMMIT,
            1,
            ORDERS,
            new UpdatedRow.Full(TableRow.of(8L, "n", null)),
            new OldRow.Key(TableRow.of(7L)));
    mapper(true, false).events(StreamId.APPLY, tx(update), sink);

    assertThat(sink.records)
        .extracting(r -> r.value() == null ? "tombstone" : value(r).getString("op"))
        .containsExactly("d", "tombstone", "c");
    assertThat(((Struct) sink.records.get(0).key()).getInt64("id")).isEqualTo(7L);
    assertThat(((Struct) sink.records.get(2).key()).getInt64("id")).isEqualTo(8L);
  }

  @Test
  void copiedRowsAreReadEnvelopesAtTheSnapshotLsn() {
    ListSink sink = new ListSink();
    UUID attempt = UUID.randomUUID();
    mapper(true, false)
        .copyBatch(
            ORDERS,
            new TableCopyWrite.Batch(
                new TableCopyBatchId(attempt, 0),
                List.of(TableRow.of(1L, "a", null), TableRow.of(2L, null, null))),
            sink);

    assertThat(sink.records).hasSize(2);
    Struct e = value(sink.records.get(1));
    assertThat(e.getString("op")).isEqualTo("r");
    assertThat(e.getStruct("after").getInt64("id")).isEqualTo(2L);
    assertThat(e.getStruct("source").getString("snapshot")).isEqualTo("true");
    assertThat(e.getStruct("source").getInt64("lsn")).isEqualTo(Lsn.parse("0/16B3748").value());
    assertThat(e.getStruct("source").getInt64("txId")).isNull();
  }

  @Test
  void truncatesAreSkippedUnlessIncluded() {
    Event.Truncate truncate =
        new Event.Truncate(Lsn.parse("0/2000010"), COMMIT, 1, List.of(ORDERS), 0);
    ListSink skipped = new ListSink();
    mapper(true, false).events(StreamId.APPLY, tx(truncate), skipped);
    assertThat(skipped.records).isEmpty();

    ListSink included = new ListSink();
    mapper(true, true).events(StreamId.APPLY, tx(truncate), included);
    assertThat(included.records).hasSize(1);
    assertThat(included.records.get(0).key()).isNull();
    assertThat(value(included.records.get(0)).getString("op")).isEqualTo("t");
  }

  @Test
  void aSchemaChangeGivesNewValueSchemasAndTheSameOneIsReused() {
    RecordMapper mapper = mapper(true, false);
    TableRecords before = mapper.table(ORDERS);
    assertThat(mapper.table(SchemaBuilder.from(ORDERS).build())).isSameAs(before);
    ReplicatedTableSchema widened = SchemaBuilder.from(ORDERS).column("price", "numeric").build();
    TableRecords after = mapper.table(widened);
    assertThat(after.valueSchema).isNotEqualTo(before.valueSchema);
    assertThat(after.valueSchema.field("price").schema().name())
        .isEqualTo("io.debezium.data.VariableScaleDecimal");
    assertThat(mapper.cachedTables()).isEqualTo(2);
  }

  @Test
  void nonKeyFieldsAreOptionalAndKeyFieldsRequired() {
    TableRecords t = mapper(true, false).table(ORDERS);
    assertThat(t.keySchema.field("id").schema().isOptional()).isFalse();
    assertThat(t.valueSchema.field("id").schema().isOptional()).isFalse();
    assertThat(t.valueSchema.field("note").schema().isOptional()).isTrue();
    assertThat(t.envelopeSchema.field("source").schema()).isEqualTo(TableRecords.SOURCE_SCHEMA);
    assertThat(t.envelopeSchema.field("op").schema()).isEqualTo(Schema.STRING_SCHEMA);
  }

  @Test
  void tablesWithoutAKeyGetNullKeys() {
    ReplicatedTableSchema log =
        SchemaBuilder.table(16500, "public.log").column("line", "text").build();
    ListSink sink = new ListSink();
    mapper(true, false)
        .events(
            StreamId.APPLY,
            tx(new Event.Insert(Lsn.parse("0/2000010"), COMMIT, 1, log, TableRow.of("x"))),
            sink);
    assertThat(sink.records.get(0).key()).isNull();
    assertThat(sink.records.get(0).keySchema()).isNull();
  }

  @Test
  void aTableWithoutColumnsGetsNullKeysAndAnEmptyAfter() {
    ReplicatedTableSchema empty = SchemaBuilder.table(16501, "public.no_col").build();
    ListSink sink = new ListSink();
    mapper(true, false)
        .events(
            StreamId.APPLY,
            tx(new Event.Insert(Lsn.parse("0/2000010"), COMMIT, 1, empty, TableRow.of())),
            sink);
    assertThat(sink.records).hasSize(1);
    assertThat(sink.records.get(0).key()).isNull();
    Struct value = (Struct) sink.records.get(0).value();
    assertThat(value.getString("op")).isEqualTo("c");
    assertThat(value.getStruct("after").schema().fields()).isEmpty();
  }

  @Test
  void topicsAreSanitizedAndSchemaNamesAreAvroNames() {
    TopicNamer namer = new TopicNamer("${prefix}.${schema}.${table}", "p", "p", "pub");
    assertThat(namer.topic(new org.pgetl.model.TableName("public", "Order Lines")))
        .isEqualTo("p.public.Order_Lines");
    assertThat(TopicNamer.schemaName("p-1.public.2024", "Value"))
        .isEqualTo("p_1.public._2024.Value");
  }
}
