package org.pgetl.kafka.connect;

import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.kafka.connect.data.Schema;
import org.apache.kafka.connect.json.JsonConverter;
import org.apache.kafka.connect.json.JsonConverterConfig;
import org.apache.kafka.connect.json.JsonSerializer;
import org.jspecify.annotations.Nullable;

/**
 * Serializes a record's key and value to the bytes Connect's {@code JsonConverter} writes for them,
 * on the thread that makes the record (a copy thread or a stream), so that the worker's task
 * thread, which runs the converter once per record, only hands bytes to the producer ({@code
 * record.encoding}: {@code json} or {@code json-schemas}, with {@code ByteArrayConverter} as the
 * connector's converters).
 *
 * <p>The values are converted by a {@code JsonConverter} itself, so the bytes are the converter's
 * by construction. With schemas, the envelope {@code {"schema":...,"payload":...}} is joined from
 * the schema's bytes, serialized once per schema instance, and the payload's; that is exactly what
 * the converter's one tree serializes to, and saves serializing the same schema again for every
 * record, which is most of the converter's work on a table's envelope.
 *
 * <p>Thread-safe: the converter's payload conversion is stateless and its serializer is a Jackson
 * {@code ObjectMapper}; the schema bytes are in a concurrent map.
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
  private final JsonConverter payloads;
  private final JsonConverter schemaConverter;
  private final JsonSerializer serializer = new JsonSerializer();
  private final Map<SchemaRef, byte[]> schemaBytes = new ConcurrentHashMap<>();

  /**
   * Creates an encoder.
   *
   * @param schemas whether the bytes carry the schema inline ({@code schemas.enable})
   * @param converterSettings further {@code JsonConverter} settings ({@code decimal.format}, {@code
   *     replace.null.with.default}); {@code schemas.enable} is set from {@code schemas}
   */
  JsonRecordEncoder(boolean schemas, Map<String, ?> converterSettings) {
    this.schemas = schemas;
    this.payloads = converter(converterSettings, false);
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
    byte[] payload = payloads.fromConnectData(topic, schema, value);
    if (!schemas) {
      return payload;
    }
    byte[] head = schema == null ? NULL : schemaBytes(topic, schema);
    byte[] out =
        new byte[SCHEMA_START.length + head.length + PAYLOAD_START.length + payload.length + 1];
    int at = 0;
    System.arraycopy(SCHEMA_START, 0, out, at, SCHEMA_START.length);
    at += SCHEMA_START.length;
    System.arraycopy(head, 0, out, at, head.length);
    at += head.length;
    System.arraycopy(PAYLOAD_START, 0, out, at, PAYLOAD_START.length);
    at += PAYLOAD_START.length;
    System.arraycopy(payload, 0, out, at, payload.length);
    at += payload.length;
    out[at] = '}';
    return out;
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
