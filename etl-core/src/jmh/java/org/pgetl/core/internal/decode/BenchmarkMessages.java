package org.pgetl.core.internal.decode;

import java.io.ByteArrayOutputStream;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.List;
import org.pgetl.model.Lsn;

/**
 * The representative pgoutput data messages the benchmarks decode: a 6-column table {@code (id
 * int8, qty int4, name text, price numeric, created timestamptz, attrs jsonb)}, 60% Inserts, 20%
 * Updates without old values, 20% Updates with the old key, in text or binary tuple form, each a
 * slice of a larger array as pgjdbc hands them out.
 */
public final class BenchmarkMessages {
  /** The relation oid of the benchmark table. */
  public static final int RELATION_ID = 16_384;

  private BenchmarkMessages() {}

  /**
   * Builds {@code count} messages of the mix.
   *
   * @param binary whether tuple values are in binary form
   * @param count how many messages
   * @return the messages
   */
  public static ByteBuffer[] mix(boolean binary, int count) {
    ByteBuffer[] messages = new ByteBuffer[count];
    for (int i = 0; i < count; i++) {
      int slot = i % 10;
      byte[] bytes;
      if (slot < 6) {
        bytes = new Writer().u8('I').i32(RELATION_ID).u8('N').row(i, binary).build();
      } else if (slot < 8) {
        bytes = new Writer().u8('U').i32(RELATION_ID).u8('N').row(i, binary).build();
      } else {
        bytes =
            new Writer()
                .u8('U')
                .i32(RELATION_ID)
                .u8('K')
                .key(i, binary)
                .u8('N')
                .row(i + 1, binary)
                .build();
      }
      // like pgjdbc: a slice of the CopyData array behind the 25-byte XLogData header
      byte[] frame = new byte[25 + bytes.length];
      System.arraycopy(bytes, 0, frame, 25, bytes.length);
      messages[i] = ByteBuffer.wrap(frame, 25, bytes.length).slice();
    }
    return messages;
  }

  /**
   * Returns the RELATION message of the benchmark table (key: id).
   *
   * @return the message
   */
  public static PgOutputMessage.Relation relation() {
    return new PgOutputMessage.Relation(
        Lsn.ZERO,
        0,
        RELATION_ID,
        "public",
        "orders",
        ReplicaIdentity.DEFAULT,
        List.of(
            new PgOutputMessage.Relation.Column(1, "id", 20, -1),
            new PgOutputMessage.Relation.Column(0, "qty", 23, -1),
            new PgOutputMessage.Relation.Column(0, "name", 25, -1),
            new PgOutputMessage.Relation.Column(0, "price", 1700, -1),
            new PgOutputMessage.Relation.Column(0, "created", 1184, -1),
            new PgOutputMessage.Relation.Column(0, "attrs", 3802, -1)));
  }

  /** Writes the pieces of a message. */
  private static final class Writer {
    private final ByteArrayOutputStream out = new ByteArrayOutputStream(256);

    Writer u8(int v) {
      out.write(v);
      return this;
    }

    Writer i16(int v) {
      out.write(v >>> 8);
      out.write(v);
      return this;
    }

    Writer i32(int v) {
      for (int s = 24; s >= 0; s -= 8) {
        out.write(v >>> s);
      }
      return this;
    }

    Writer i64(long v) {
      for (int s = 56; s >= 0; s -= 8) {
        out.write((int) (v >>> s));
      }
      return this;
    }

    Writer value(char kind, byte[] b) {
      u8(kind).i32(b.length);
      out.write(b, 0, b.length);
      return this;
    }

    Writer text(String s) {
      return value('t', s.getBytes(StandardCharsets.UTF_8));
    }

    Writer binary(Writer w) {
      return value('b', w.build());
    }

    Writer key(int i, boolean binary) {
      i16(6);
      long id = 1_000_000_000L + i;
      if (binary) {
        binary(new Writer().i64(id));
      } else {
        text(Long.toString(id));
      }
      for (int c = 0; c < 5; c++) {
        u8('n');
      }
      return this;
    }

    Writer row(int i, boolean binary) {
      long id = 1_000_000_000L + i;
      int qty = i % 500;
      String name = "customer " + i + " of the benchmark";
      long micros = 768_000_000_000_000L + i * 1_000_000L; // about 2024-05-01
      String json = "{\"tier\": \"gold\", \"score\": " + (i % 97) + ", \"tags\": [\"a\", \"b\"]}";
      i16(6);
      if (binary) {
        binary(new Writer().i64(id));
        binary(new Writer().i32(qty));
        value('b', name.getBytes(StandardCharsets.UTF_8));
        // numeric 12345.67: ndigits 3, weight 1, sign +, dscale 2, base-10000 digits 1 2345 6700
        binary(new Writer().i16(3).i16(1).i16(0).i16(2).i16(1).i16(2345).i16(6700));
        binary(new Writer().i64(micros));
        Writer jsonb = new Writer().u8(1);
        byte[] j = json.getBytes(StandardCharsets.UTF_8);
        jsonb.out.write(j, 0, j.length);
        binary(jsonb);
      } else {
        text(Long.toString(id));
        text(Integer.toString(qty));
        text(name);
        text("12345.67");
        text("2024-05-01 12:00:" + String.format("%02d", i % 60) + ".123456+00");
        text(json);
      }
      return this;
    }

    byte[] build() {
      return out.toByteArray();
    }
  }
}
