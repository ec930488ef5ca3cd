package org.pgetl.kafka.connect;

import java.util.Arrays;
import java.util.List;
import org.apache.kafka.connect.data.Field;
import org.apache.kafka.connect.data.Schema;
import org.apache.kafka.connect.data.Struct;
import org.apache.kafka.connect.errors.DataException;
import org.jspecify.annotations.Nullable;

/**
 * The values of a struct schema without the checks {@link Struct} makes on every {@code put}, for
 * records that {@link JsonRecordEncoder} serializes on the thread that makes them ({@code
 * record.encoding}). A {@code Struct} checks each value it is given and, for a nested struct, every
 * field of it again; an envelope so checks its {@code after} row twice and its {@code source} block
 * once per record, although a copy batch's rows share one. The encoder checks as it writes instead:
 * a value of the wrong class, or a null in a required field, fails the record as the converter
 * would.
 *
 * <p>Never handed to Connect: records made of these leave as bytes.
 */
final class UncheckedStruct {
  private final Schema schema;
  private final @Nullable Object[] values;

  UncheckedStruct(Schema schema) {
    if (schema.type() != Schema.Type.STRUCT) {
      throw new DataException("Not a struct schema: " + schema);
    }
    this.schema = schema;
    this.values = new Object[schema.fields().size()];
  }

  Schema schema() {
    return schema;
  }

  /** The value stored for a field, null when none was. */
  @Nullable Object get(Field field) {
    return values[field.index()];
  }

  void put(Field field, @Nullable Object value) {
    values[field.index()] = value;
  }

  void put(String name, @Nullable Object value) {
    Field field = schema.field(name);
    if (field == null) {
      throw new DataException(name + " is not a valid field name");
    }
    values[field.index()] = value;
  }

  /** A new struct: checked for Connect, unchecked for records serialized here. */
  static Object of(Schema schema, boolean unchecked) {
    return unchecked ? new UncheckedStruct(schema) : new Struct(schema);
  }

  /** Sets a field of a {@link Struct} or an {@code UncheckedStruct}. */
  static void put(Object struct, Field field, @Nullable Object value) {
    if (struct instanceof UncheckedStruct u) {
      u.put(field, value);
    } else {
      ((Struct) struct).put(field, value);
    }
  }

  /** Sets a field, by name, of a {@link Struct} or an {@code UncheckedStruct}. */
  static void put(Object struct, String name, @Nullable Object value) {
    if (struct instanceof UncheckedStruct u) {
      u.put(name, value);
    } else {
      ((Struct) struct).put(name, value);
    }
  }

  @Override
  public boolean equals(@Nullable Object o) {
    return o instanceof UncheckedStruct u
        && schema.equals(u.schema)
        && Arrays.deepEquals(values, u.values);
  }

  @Override
  public int hashCode() {
    return Arrays.deepHashCode(values);
  }

  @Override
  public String toString() {
    List<Field> fields = schema.fields();
    StringBuilder b = new StringBuilder("UncheckedStruct{");
    for (int i = 0; i < fields.size(); i++) {
      if (values[i] != null) {
        b.append(b.length() > 16 ? "," : "").append(fields.get(i).name()).append('=');
        b.append(values[i] instanceof byte[] bytes ? Arrays.toString(bytes) : values[i]);
      }
    }
    return b.append('}').toString();
  }
}
