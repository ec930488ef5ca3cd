package org.pgetl.kafka.connect;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.core.io.SerializedString;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.math.BigDecimal;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.Collection;
import java.util.HashMap;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.kafka.connect.data.ConnectSchema;
import org.apache.kafka.connect.data.Date;
import org.apache.kafka.connect.data.Decimal;
import org.apache.kafka.connect.data.Field;
import org.apache.kafka.connect.data.Schema;
import org.apache.kafka.connect.data.Struct;
import org.apache.kafka.connect.data.Time;
import org.apache.kafka.connect.data.Timestamp;
import org.apache.kafka.connect.errors.DataException;
import org.apache.kafka.connect.json.DecimalFormat;
import org.apache.kafka.connect.json.JsonConverter;
import org.apache.kafka.connect.json.JsonConverterConfig;
import org.apache.kafka.connect.json.JsonSerializer;
import org.apache.kafka.connect.storage.ConverterConfig;
import org.apache.kafka.connect.storage.ConverterType;
import org.jspecify.annotations.Nullable;

/**
 * Serializes a record's key and value to the bytes Connect's {@code JsonConverter} writes for them,
 * on the thread that makes the record (a copy thread or a stream), so that the worker's task
 * thread, which runs the converter once per record, only hands bytes to the producer ({@code
 * record.encoding}: {@code json} or {@code json-schemas}, with {@code ByteArrayConverter} as the
 * connector's converters).
 *
 * <p>The payload is written straight to a Jackson generator, value by value, following {@code
 * JsonConverter}'s rules for each schema type (its logical types, {@code decimal.format}, {@code
 * replace.null.with.default}); the converter builds a tree of JSON nodes first and serializes that
 * with the same generator calls, so the bytes are the same without the tree. {@code
 * JsonRecordEncoderTest} compares both, byte for byte, for every record kind and schema type. With
 * schemas, the envelope {@code {"schema":...,"payload":...}} is joined from the schema's bytes,
 * serialized once per schema instance by a {@code JsonConverter}, and the payload's; that is
 * exactly what the converter's one tree serializes to. Field names are encoded once per schema, and
 * a struct instance written again (the copied rows of a batch share one {@code source} block) is
 * written from the JSON kept the second time it came; a struct must not change once encoded.
 *
 * <p>Thread-safe: a generator per call from a shared {@code JsonFactory}; the schema bytes are in a
 * concurrent map.
 */
final class JsonRecordEncoder {
  /** How the connector's records reach Kafka ({@code record.encoding}). */
  enum Encoding {
    /** Connect structs; the worker's converters serialize them (the default). */
    CONNECT,
    /** The JSON of {@code JsonConverter} with {@code schemas.enable=false}, as bytes. */
    JSON,
    /** The JSON of {@code JsonConverter} with {@code schemas.enable=true}, as bytes. */
    JSON_SCHEMAS;

    static Encoding parse(String value) {
      return valueOf(value.trim().toUpperCase(Locale.ROOT).replace('-', '_'));
    }
  }

  /** The converter a connector with prebuilt records must be given, for keys and values. */
  static final String BYTE_ARRAY_CONVERTER =
      "org.apache.kafka.connect.converters.ByteArrayConverter";

  private static final byte[] SCHEMA_START = "{\"schema\":".getBytes(StandardCharsets.UTF_8);
  private static final byte[] PAYLOAD_START = ",\"payload\":".getBytes(StandardCharsets.UTF_8);
  private static final byte[] NULL = "null".getBytes(StandardCharsets.UTF_8);

  /** Past this many distinct schema instances, the cache starts over (schema changes). */
  private static final int SCHEMA_CACHE_LIMIT = 4096;

  private final boolean schemas;
  private final boolean decimalsAsNumbers;
  private final boolean replaceNullWithDefault;
  private final JsonFactory factory = new ObjectMapper().getFactory();
  private final JsonConverter schemaConverter;
  private final JsonSerializer serializer = new JsonSerializer();
  private final Map<SchemaRef, byte[]> schemaBytes = new ConcurrentHashMap<>();
  private final Map<SchemaRef, SerializedString[]> fieldNames = new ConcurrentHashMap<>();
  // per thread and struct schema: the struct value of the schema written last and, once it came
  // twice, its JSON
  private final ThreadLocal<IdentityHashMap<Schema, Repeated>> repeated =
      ThreadLocal.withInitial(IdentityHashMap::new);

  /**
   * Creates an encoder.
   *
   * @param schemas whether the bytes carry the schema inline ({@code schemas.enable})
   * @param converterSettings further {@code JsonConverter} settings ({@code decimal.format}, {@code
   *     replace.null.with.default}); {@code schemas.enable} is set from {@code schemas}
   */
  JsonRecordEncoder(boolean schemas, Map<String, ?> converterSettings) {
    this.schemas = schemas;
    Map<String, Object> s = new HashMap<>(converterSettings);
    s.put(ConverterConfig.TYPE_CONFIG, ConverterType.VALUE.getName());
    JsonConverterConfig config = new JsonConverterConfig(s);
    this.decimalsAsNumbers = config.decimalFormat() == DecimalFormat.NUMERIC;
    this.replaceNullWithDefault = config.replaceNullWithDefault();
    this.schemaConverter = converter(converterSettings, true);
  }

  private static JsonConverter converter(Map<String, ?> settings, boolean schemas) {
    Map<String, Object> s = new HashMap<>(settings);
    s.put(JsonConverterConfig.SCHEMAS_ENABLE_CONFIG, Boolean.toString(schemas));
    JsonConverter c = new JsonConverter();
    c.configure(s, false);
    return c;
  }

  /**
   * The bytes of a key or value; null where {@code JsonConverter} writes none (no schema, null).
   */
  byte @Nullable [] encode(String topic, @Nullable Schema schema, @Nullable Object value) {
    if (schema == null && value == null) {
      return null;
    }
    byte[] head = !schemas ? null : schema == null ? NULL : schemaBytes(topic, schema);
    ByteArrayOutputStream out = new ByteArrayOutputStream(256 + (head == null ? 0 : head.length));
    if (head != null) {
      // the envelope around the payload, as the converter's one tree serializes it
      out.writeBytes(SCHEMA_START);
      out.writeBytes(head);
      out.writeBytes(PAYLOAD_START);
    }
    try (JsonGenerator g = factory.createGenerator(out)) {
      write(g, schema, value);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    if (head != null) {
      out.write('}');
    }
    return out.toByteArray();
  }

  /** One value, as {@code JsonConverter} converts it to a node and Jackson serializes that node. */
  private void write(JsonGenerator g, @Nullable Schema schema, @Nullable Object value)
      throws IOException {
    if (value == null) {
      if (schema == null) {
        g.writeNull();
      } else if (schema.defaultValue() != null && replaceNullWithDefault) {
        write(g, schema, schema.defaultValue());
      } else if (schema.isOptional()) {
        g.writeNull();
      } else {
        throw new DataException(
            "Conversion error: null value for field that is required and has no default value");
      }
      return;
    }
    if (schema != null && schema.name() != null && writeLogical(g, schema, value)) {
      return;
    }
    Schema.Type type = schema == null ? ConnectSchema.schemaType(value.getClass()) : schema.type();
    if (type == null) {
      throw new DataException(
          "Java class " + value.getClass() + " does not have corresponding schema type.");
    }
    try {
      switch (type) {
        case INT8 -> g.writeNumber((int) (Byte) value);
        case INT16 -> g.writeNumber((Short) value);
        case INT32 -> g.writeNumber((Integer) value);
        case INT64 -> g.writeNumber((Long) value);
        case FLOAT32 -> g.writeNumber((Float) value);
        case FLOAT64 -> g.writeNumber((Double) value);
        case BOOLEAN -> g.writeBoolean((Boolean) value);
        case STRING -> g.writeString(((CharSequence) value).toString());
        case BYTES -> {
          if (value instanceof byte[] b) {
            g.writeBinary(b);
          } else if (value instanceof ByteBuffer b) {
            g.writeBinary(backingArray(b));
          } else {
            throw new DataException("Invalid type for bytes type: " + value.getClass());
          }
        }
        case ARRAY -> {
          g.writeStartArray();
          for (Object element : (Collection<?>) value) {
            write(g, schema == null ? null : schema.valueSchema(), element);
          }
          g.writeEndArray();
        }
        case MAP -> writeMap(g, schema, (Map<?, ?>) value);
        case STRUCT -> {
          Schema own = value instanceof UncheckedStruct u ? u.schema() : ((Struct) value).schema();
          if (own != schema && !own.equals(schema)) {
            throw new DataException("Mismatching schema.");
          }
          Repeated r = repeated(own);
          if (r.holds(value)) {
            // the same struct again (a copy batch's rows share their source block): its JSON
            // once, then its bytes; the records' structs never change once made
            if (r.json == null) {
              r.json = new SerializedString(json(own, value));
            }
            g.writeRawValue(r.json);
            return;
          }
          r.struct = value;
          r.json = null;
          writeStruct(g, own, value);
        }
      }
    } catch (ClassCastException e) {
      throw new DataException(
          "Invalid type for "
              + (schema == null ? "unknown schema" : schema.type().toString())
              + ": "
              + value.getClass(),
          e);
    }
  }

  /** A {@link Struct}'s or an {@link UncheckedStruct}'s fields, as the converter writes them. */
  private void writeStruct(JsonGenerator g, Schema schema, Object value) throws IOException {
    List<Field> fields = schema.fields();
    SerializedString[] names = fieldNames(schema, fields);
    g.writeStartObject();
    for (int i = 0; i < names.length; i++) {
      Field field = fields.get(i);
      g.writeFieldName(names[i]);
      // the stored value, not the field's default (the converter's getWithoutDefault)
      Object v;
      if (value instanceof UncheckedStruct u) {
        v = u.get(field);
      } else {
        Struct struct = (Struct) value;
        v =
            field.schema().defaultValue() == null
                ? struct.get(field)
                : struct.getWithoutDefault(field.name());
      }
      write(g, field.schema(), v);
    }
    g.writeEndObject();
  }

  /** A struct's JSON on its own, as {@link #writeStruct} writes it into a record. */
  private String json(Schema schema, Object value) throws IOException {
    ByteArrayOutputStream out = new ByteArrayOutputStream(512);
    try (JsonGenerator g = factory.createGenerator(out)) {
      writeStruct(g, schema, value);
    }
    return out.toString(StandardCharsets.UTF_8);
  }

  /** A schema's field names, encoded once (a record writes every name of every struct). */
  private SerializedString[] fieldNames(Schema schema, List<Field> fields) {
    SchemaRef ref = new SchemaRef(schema);
    SerializedString[] names = fieldNames.get(ref);
    if (names == null) {
      if (fieldNames.size() >= SCHEMA_CACHE_LIMIT) {
        fieldNames.clear();
      }
      names = new SerializedString[fields.size()];
      for (int i = 0; i < names.length; i++) {
        names[i] = new SerializedString(fields.get(i).name());
      }
      fieldNames.put(ref, names);
    }
    return names;
  }

  private Repeated repeated(Schema schema) {
    IdentityHashMap<Schema, Repeated> bySchema = repeated.get();
    Repeated r = bySchema.get(schema);
    if (r == null) {
      if (bySchema.size() >= SCHEMA_CACHE_LIMIT) {
        bySchema.clear();
      }
      r = new Repeated();
      bySchema.put(schema, r);
    }
    return r;
  }

  /**
   * The last struct value of a schema a thread wrote, and its JSON once it was written twice in a
   * row.
   */
  private static final class Repeated {
    @Nullable Object struct;
    @Nullable SerializedString json;

    // the same instance, not an equal struct: only an instance is known not to have changed
    @SuppressWarnings("ReferenceEquality")
    boolean holds(Object s) {
      return struct == s;
    }
  }

  // the converter writes a buffer's whole backing array, whatever its position and offset
  @SuppressWarnings("ByteBufferBackingArray")
  private static byte[] backingArray(ByteBuffer b) {
    return b.array();
  }

  private boolean writeLogical(JsonGenerator g, Schema schema, Object value) throws IOException {
    switch (schema.name()) {
      case Decimal.LOGICAL_NAME -> {
        if (!(value instanceof BigDecimal decimal)) {
          throw new DataException(
              "Invalid type for Decimal, expected BigDecimal but was " + value.getClass());
        }
        if (decimalsAsNumbers) {
          g.writeNumber(decimal);
        } else {
          g.writeBinary(Decimal.fromLogical(schema, decimal));
        }
        return true;
      }
      case Date.LOGICAL_NAME -> {
        g.writeNumber(Date.fromLogical(schema, date("Date", value)));
        return true;
      }
      case Time.LOGICAL_NAME -> {
        g.writeNumber(Time.fromLogical(schema, date("Time", value)));
        return true;
      }
      case Timestamp.LOGICAL_NAME -> {
        g.writeNumber(Timestamp.fromLogical(schema, date("Timestamp", value)));
        return true;
      }
      default -> {
        return false;
      }
    }
  }

  private static java.util.Date date(String logical, Object value) {
    if (value instanceof java.util.Date d) {
      return d;
    }
    throw new DataException(
        "Invalid type for " + logical + ", expected Date but was " + value.getClass());
  }

  private void writeMap(JsonGenerator g, @Nullable Schema schema, Map<?, ?> map)
      throws IOException {
    boolean objectMode;
    if (schema == null) {
      objectMode = map.keySet().stream().allMatch(k -> k instanceof String);
    } else {
      objectMode = schema.keySchema().type() == Schema.Type.STRING;
    }
    Schema keySchema = schema == null ? null : schema.keySchema();
    Schema valueSchema = schema == null ? null : schema.valueSchema();
    if (objectMode) {
      g.writeStartObject();
      for (Map.Entry<?, ?> e : map.entrySet()) {
        // the converter names the field by the key node's text: the string, or "null"
        g.writeFieldName(e.getKey() == null ? "null" : e.getKey().toString());
        write(g, valueSchema, e.getValue());
      }
      g.writeEndObject();
    } else {
      g.writeStartArray();
      for (Map.Entry<?, ?> e : map.entrySet()) {
        g.writeStartArray();
        write(g, keySchema, e.getKey());
        write(g, valueSchema, e.getValue());
        g.writeEndArray();
      }
      g.writeEndArray();
    }
  }

  private byte[] schemaBytes(String topic, Schema schema) {
    SchemaRef ref = new SchemaRef(schema);
    byte[] b = schemaBytes.get(ref);
    if (b == null) {
      if (schemaBytes.size() >= SCHEMA_CACHE_LIMIT) {
        schemaBytes.clear();
      }
      b = serializer.serialize(topic, schemaConverter.asJsonSchema(schema));
      schemaBytes.put(ref, b);
    }
    return b;
  }

  /**
   * A schema compared by identity: the records of one table version share their schema instances,
   * and a schema's own {@code hashCode} walks all its fields.
   */
  private static final class SchemaRef {
    private final Schema schema;

    SchemaRef(Schema schema) {
      this.schema = schema;
    }

    @Override
    public boolean equals(@Nullable Object o) {
      return o instanceof SchemaRef r && r.schema == schema;
    }

    @Override
    public int hashCode() {
      return System.identityHashCode(schema);
    }
  }
}
