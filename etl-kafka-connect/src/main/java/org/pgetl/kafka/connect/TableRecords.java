package org.pgetl.kafka.connect;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.apache.kafka.connect.data.Field;
import org.apache.kafka.connect.data.Schema;
import org.apache.kafka.connect.data.SchemaBuilder;
import org.apache.kafka.connect.data.Struct;
import org.jspecify.annotations.Nullable;
import org.pgetl.model.ColumnSchema;
import org.pgetl.model.IdentityKind;
import org.pgetl.model.OldRow;
import org.pgetl.model.ReplicatedTableSchema;
import org.pgetl.model.TableRow;
import org.pgetl.model.UpdatedRow;

/**
 * The Connect schemas of one version of a table's replicated schema: the key (its replica-identity
 * columns), the row ({@code Value}) and the change envelope, and how to fill them from rows.
 *
 * <p>A new {@link ReplicatedTableSchema} (a column added, dropped, retyped) gets a new instance,
 * and so new value schemas; an unchanged one reuses the cached instance.
 *
 * <p>Optionality: key fields are required (a replica identity's columns are NOT NULL); a row field
 * is required only for a NOT NULL identity column. Every other row field is optional even when its
 * column is NOT NULL, because a delete's {@code before} under the default replica identity holds
 * only the key, and an update's {@code after} leaves out the TOASTed values PostgreSQL did not send
 * (their names are listed in the envelope's {@code unchanged_toast}).
 */
final class TableRecords {
  static final String SOURCE_SCHEMA_NAME = "org.pgetl.kafka.connect.Source";

  /**
   * The {@code source} block of every envelope: the fields of Debezium's PostgreSQL {@code Source}
   * (3.x), in its order and with its types, then pgetl's {@code commit_lsn} and {@code tx_ordinal}.
   */
  static final Schema SOURCE_SCHEMA =
      SchemaBuilder.struct()
          .name(SOURCE_SCHEMA_NAME)
          .version(1)
          .field("version", Schema.STRING_SCHEMA)
          .field("connector", Schema.STRING_SCHEMA)
          .field("name", Schema.STRING_SCHEMA)
          .field("ts_ms", Schema.INT64_SCHEMA)
          .field(
              "snapshot",
              SchemaBuilder.string()
                  .optional()
                  .name("io.debezium.data.Enum")
                  .version(1)
                  .parameter(
                      "allowed",
                      "true,first,first_in_data_collection,last_in_data_collection,last,false,"
                          + "incremental")
                  .defaultValue("false")
                  .build())
          .field("db", Schema.STRING_SCHEMA)
          .field("sequence", Schema.OPTIONAL_STRING_SCHEMA)
          .field("ts_us", Schema.OPTIONAL_INT64_SCHEMA)
          .field("ts_ns", Schema.OPTIONAL_INT64_SCHEMA)
          .field("schema", Schema.STRING_SCHEMA)
          .field("table", Schema.STRING_SCHEMA)
          .field("txId", Schema.OPTIONAL_INT64_SCHEMA)
          .field("lsn", Schema.OPTIONAL_INT64_SCHEMA)
          .field("xmin", Schema.OPTIONAL_INT64_SCHEMA)
          .field("origin", Schema.OPTIONAL_STRING_SCHEMA)
          .field("origin_lsn", Schema.OPTIONAL_INT64_SCHEMA)
          .field("commit_lsn", Schema.OPTIONAL_INT64_SCHEMA)
          .field("tx_ordinal", Schema.OPTIONAL_INT64_SCHEMA)
          .build();

  /** Debezium's {@code transaction} block ({@code event.block}, version 1). */
  static final Schema TRANSACTION_SCHEMA =
      SchemaBuilder.struct()
          .optional()
          .name("event.block")
          .version(1)
          .field("id", Schema.STRING_SCHEMA)
          .field("total_order", Schema.INT64_SCHEMA)
          .field("data_collection_order", Schema.INT64_SCHEMA)
          .build();

  /** The version of Debezium's envelope schema (2 since Debezium 2.x). */
  static final int ENVELOPE_VERSION = 2;

  static final Schema UNCHANGED_TOAST_SCHEMA =
      SchemaBuilder.array(Schema.STRING_SCHEMA).optional().build();

  final ReplicatedTableSchema table;
  final String topic;
  final @Nullable Schema keySchema;
  final Schema valueSchema;
  final Schema envelopeSchema;
  private final ColumnMapping[] mappings;
  private final Field[] valueFields;
  private final int[] keyIndexes;
  private final Field[] keyFields;
  private final Field before;
  private final Field after;
  private final Field source;
  private final Field op;
  private final Field tsMs;
  private final Field tsUs;
  private final Field tsNs;
  private final Field transaction;
  private final Field unchangedToast;
  private final @Nullable String placeholder;
  // records serialized on the pipeline's threads: UncheckedStruct instead of Struct
  private final boolean unchecked;

  TableRecords(
      ReplicatedTableSchema table,
      String topic,
      ColumnMapping.DecimalMode decimals,
      ColumnMapping.ArrayMode arrays,
      @Nullable String placeholder) {
    this(table, topic, decimals, arrays, placeholder, false);
  }

  /**
   * Creates the schemas of a table version.
   *
   * @param unchecked whether its records are serialized by {@link JsonRecordEncoder} (their structs
   *     are {@link UncheckedStruct}s) rather than handed to Connect ({@link Struct}s)
   */
  TableRecords(
      ReplicatedTableSchema table,
      String topic,
      ColumnMapping.DecimalMode decimals,
      ColumnMapping.ArrayMode arrays,
      @Nullable String placeholder,
      boolean unchecked) {
    this.unchecked = unchecked;
    this.table = table;
    this.placeholder = placeholder;
    this.topic = topic;
    List<ColumnSchema> columns = table.columns();
    this.keyIndexes = keyIndexes(table);
    boolean[] isKey = new boolean[columns.size()];
    for (int k : keyIndexes) {
      isKey[k] = true;
    }
    String tableText = table.name().toString();
    this.mappings = new ColumnMapping[columns.size()];
    SchemaBuilder value = SchemaBuilder.struct().name(TopicNamer.schemaName(topic, "Value"));
    value.optional();
    for (int i = 0; i < columns.size(); i++) {
      ColumnSchema c = columns.get(i);
      boolean optional = !(isKey[i] && !c.nullable());
      mappings[i] = ColumnMapping.of(tableText, c, optional, decimals, arrays);
      value.field(c.name(), mappings[i].schema());
    }
    this.valueSchema = value.build();
    this.valueFields = valueSchema.fields().toArray(new Field[0]);
    if (keyIndexes.length == 0) {
      this.keySchema = null;
      this.keyFields = new Field[0];
    } else {
      SchemaBuilder key = SchemaBuilder.struct().name(TopicNamer.schemaName(topic, "Key"));
      for (int k : keyIndexes) {
        ColumnSchema c = columns.get(k);
        key.field(c.name(), ColumnMapping.of(tableText, c, false, decimals, arrays).schema());
      }
      this.keySchema = key.build();
      this.keyFields = keySchema.fields().toArray(new Field[0]);
    }
    this.envelopeSchema =
        SchemaBuilder.struct()
            .name(TopicNamer.schemaName(topic, "Envelope"))
            .version(ENVELOPE_VERSION)
            .field("before", valueSchema)
            .field("after", valueSchema)
            .field("source", SOURCE_SCHEMA)
            .field("transaction", TRANSACTION_SCHEMA)
            .field("op", Schema.STRING_SCHEMA)
            .field("ts_ms", Schema.OPTIONAL_INT64_SCHEMA)
            .field("ts_us", Schema.OPTIONAL_INT64_SCHEMA)
            .field("ts_ns", Schema.OPTIONAL_INT64_SCHEMA)
            .field("unchanged_toast", UNCHANGED_TOAST_SCHEMA)
            .build();
    this.before = envelopeSchema.field("before");
    this.after = envelopeSchema.field("after");
    this.source = envelopeSchema.field("source");
    this.op = envelopeSchema.field("op");
    this.tsMs = envelopeSchema.field("ts_ms");
    this.tsUs = envelopeSchema.field("ts_us");
    this.tsNs = envelopeSchema.field("ts_ns");
    this.transaction = envelopeSchema.field("transaction");
    this.unchangedToast = envelopeSchema.field("unchanged_toast");
  }

  /**
   * The key columns: the replica identity's (primary key or unique index); under {@code FULL} or
   * {@code NOTHING} the primary key's, if the table has one; none otherwise (null keys).
   */
  static int[] keyIndexes(ReplicatedTableSchema table) {
    if (table.identity() == IdentityKind.PRIMARY_KEY || table.identity() == IdentityKind.INDEX) {
      return table.identityColumnIndexes();
    }
    List<ColumnSchema> cols = table.columns();
    List<Integer> pk = new ArrayList<>();
    for (int i = 0; i < cols.size(); i++) {
      if (cols.get(i).isPrimaryKey()) {
        pk.add(i);
      }
    }
    pk.sort((a, b) -> cols.get(a).primaryKeyOrdinal() - cols.get(b).primaryKeyOrdinal());
    return pk.stream().mapToInt(Integer::intValue).toArray();
  }

  boolean hasKey() {
    return keySchema != null;
  }

  /** The key of a full row (copied, inserted, or the new row of an update). */
  @Nullable Object keyOfRow(java.util.function.IntFunction<@Nullable Object> value) {
    if (keySchema == null) {
      return null;
    }
    Object key = UncheckedStruct.of(keySchema, unchecked);
    for (int k = 0; k < keyIndexes.length; k++) {
      UncheckedStruct.put(
          key, keyFields[k], mappings[keyIndexes[k]].convert(value.apply(keyIndexes[k])));
    }
    return key;
  }

  /**
   * The key of an old row: the identity values of a key image, or the key columns of a full one.
   */
  @Nullable Object keyOfOld(OldRow old) {
    if (keySchema == null) {
      return null;
    }
    TableRow values = old.row();
    if (old instanceof OldRow.Full) {
      return keyOfRow(values::get);
    }
    int[] identity = table.identityColumnIndexes();
    if (!Arrays.equals(identity, keyIndexes) || values.size() != keyIndexes.length) {
      return null;
    }
    Object key = UncheckedStruct.of(keySchema, unchecked);
    for (int k = 0; k < keyIndexes.length; k++) {
      UncheckedStruct.put(key, keyFields[k], mappings[keyIndexes[k]].convert(values.get(k)));
    }
    return key;
  }

  /** The row struct of a full row. */
  Object row(java.util.function.IntFunction<Object> value) {
    Object s = UncheckedStruct.of(valueSchema, unchecked);
    for (int i = 0; i < valueFields.length; i++) {
      UncheckedStruct.put(s, valueFields[i], mappings[i].convert(value.apply(i)));
    }
    return s;
  }

  /**
   * The row struct of an update's new row; unchanged TOAST values stay null, or hold the {@code
   * unavailable.value.placeholder} where the field can (text, bytes, text arrays).
   */
  Object row(UpdatedRow row) {
    Object s = UncheckedStruct.of(valueSchema, unchecked);
    for (int i = 0; i < valueFields.length; i++) {
      if (row.isPresent(i)) {
        UncheckedStruct.put(s, valueFields[i], mappings[i].convert(row.get(i)));
      } else if (placeholder != null) {
        UncheckedStruct.put(s, valueFields[i], placeholder(valueFields[i].schema(), placeholder));
      }
    }
    return s;
  }

  /** Debezium's stand-in for an unchanged TOAST value of a field of this schema, or null. */
  static @Nullable Object placeholder(Schema schema, String placeholder) {
    return switch (schema.type()) {
      case STRING -> placeholder;
      case BYTES -> placeholder.getBytes(java.nio.charset.StandardCharsets.UTF_8);
      case ARRAY -> schema.valueSchema().type() == Schema.Type.STRING ? List.of(placeholder) : null;
      default -> null;
    };
  }

  /** The names of the columns an update did not carry, or null when it carried every one. */
  @Nullable List<String> missing(UpdatedRow row) {
    if (!(row instanceof UpdatedRow.Partial p)) {
      return null;
    }
    List<String> names = new ArrayList<>();
    for (int i : p.missingColumnIndexes()) {
      names.add(valueFields[i].name());
    }
    return names;
  }

  /** The row struct of an old row: every column of a full image, the key columns of a key one. */
  @Nullable Object before(@Nullable OldRow old) {
    if (old == null) {
      return null;
    }
    TableRow values = old.row();
    if (old instanceof OldRow.Full) {
      return row(values::get);
    }
    Object s = UncheckedStruct.of(valueSchema, unchecked);
    int[] identity = table.identityColumnIndexes();
    for (int k = 0; k < identity.length && k < values.size(); k++) {
      UncheckedStruct.put(
          s, valueFields[identity[k]], mappings[identity[k]].convert(values.get(k)));
    }
    return s;
  }

  /** An envelope, made now. */
  Object envelope(
      String operation,
      @Nullable Object beforeRow,
      @Nullable Object afterRow,
      Object sourceBlock,
      @Nullable List<String> toast,
      @Nullable Object transactionBlock) {
    java.time.Instant now = java.time.Instant.now();
    Object e = UncheckedStruct.of(envelopeSchema, unchecked);
    UncheckedStruct.put(e, before, beforeRow);
    UncheckedStruct.put(e, after, afterRow);
    UncheckedStruct.put(e, source, sourceBlock);
    UncheckedStruct.put(e, transaction, transactionBlock);
    UncheckedStruct.put(e, op, operation);
    UncheckedStruct.put(e, tsMs, now.toEpochMilli());
    UncheckedStruct.put(e, tsUs, micros(now));
    UncheckedStruct.put(e, tsNs, nanos(now));
    UncheckedStruct.put(e, unchangedToast, toast);
    return e;
  }

  /** Microseconds since the epoch. */
  static long micros(java.time.Instant t) {
    return Math.addExact(Math.multiplyExact(t.getEpochSecond(), 1_000_000L), t.getNano() / 1_000);
  }

  /** Nanoseconds since the epoch (overflows in 2262, as Debezium's). */
  static long nanos(java.time.Instant t) {
    return Math.addExact(Math.multiplyExact(t.getEpochSecond(), 1_000_000_000L), t.getNano());
  }
}
