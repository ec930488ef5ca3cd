package org.pgetl.testkit.tck;

import java.io.ByteArrayOutputStream;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import org.jspecify.annotations.Nullable;
import org.pgetl.destination.internal.WireDecoder;
import org.pgetl.destination.internal.WireRows;
import org.pgetl.model.ColumnSchema;
import org.pgetl.model.Event;
import org.pgetl.model.OldRow;
import org.pgetl.model.ReplicatedTableSchema;
import org.pgetl.model.TableRow;
import org.pgetl.model.TableRow.WireFormat;
import org.pgetl.model.UpdatedRow;

/**
 * Gives the kit's rows the form the engine's rows have: the bytes PostgreSQL sends, decoded when
 * read. Copied rows get the binary form (as {@code COPY ... (FORMAT binary)}), the rows of change
 * events the text form (as pgoutput's text mode). The kit's tables use {@code int2}, {@code int4},
 * {@code int8}, {@code bool}, {@code text} and {@code varchar}; a row with a column of another type
 * (or a value that does not match its column) is sent as it is.
 */
final class WireForms {
  private static final int BOOL = 16;
  private static final int INT8 = 20;
  private static final int INT2 = 21;
  private static final int INT4 = 23;
  private static final int TEXT = 25;
  private static final int VARCHAR = 1043;

  private WireForms() {}

  /** The rows of a copy batch in binary form. */
  static List<TableRow> copied(ReplicatedTableSchema table, List<TableRow> rows) {
    int[] oids = oids(table.columns(), null);
    List<TableRow> out = new ArrayList<>(rows.size());
    for (TableRow r : rows) {
      out.add(wire(r, oids, WireFormat.BINARY));
    }
    return out;
  }

  /** The events with their rows in text form. */
  static List<Event> streamed(List<Event> events) {
    List<Event> out = new ArrayList<>(events.size());
    for (Event e : events) {
      out.add(streamed(e));
    }
    return out;
  }

  private static Event streamed(Event e) {
    if (e instanceof Event.Insert i) {
      int[] oids = oids(i.table().columns(), null);
      return new Event.Insert(
          i.startLsn(),
          i.commitLsn(),
          i.txOrdinal(),
          i.table(),
          wire(i.row(), oids, WireFormat.TEXT));
    }
    if (e instanceof Event.Update u) {
      UpdatedRow row = u.row();
      if (row instanceof UpdatedRow.Full f) {
        row = new UpdatedRow.Full(wire(f.row(), oids(u.table().columns(), null), WireFormat.TEXT));
      }
      return new Event.Update(
          u.startLsn(), u.commitLsn(), u.txOrdinal(), u.table(), row, old(u.table(), u.oldRow()));
    }
    if (e instanceof Event.Delete d) {
      OldRow old = old(d.table(), d.oldRow());
      return old == null
          ? e
          : new Event.Delete(d.startLsn(), d.commitLsn(), d.txOrdinal(), d.table(), old);
    }
    return e;
  }

  private static @Nullable OldRow old(ReplicatedTableSchema table, @Nullable OldRow old) {
    if (old instanceof OldRow.Full f) {
      return new OldRow.Full(wire(f.row(), oids(table.columns(), null), WireFormat.TEXT));
    }
    if (old instanceof OldRow.Key k) {
      int[] idx = table.identityColumnIndexes();
      int[] oids = idx.length == k.row().size() ? oids(table.columns(), idx) : new int[0];
      return new OldRow.Key(wire(k.row(), oids, WireFormat.TEXT));
    }
    return old;
  }

  private static int[] oids(List<ColumnSchema> columns, int @Nullable [] only) {
    int n = only == null ? columns.size() : only.length;
    int[] oids = new int[n];
    for (int i = 0; i < n; i++) {
      oids[i] = columns.get(only == null ? i : only[i]).typeOid();
    }
    return oids;
  }

  /** The row over its values' wire bytes, or the row itself when a value cannot be encoded. */
  private static TableRow wire(TableRow row, int[] oids, WireFormat format) {
    if (oids.length != row.size()) {
      return row;
    }
    ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    long[] spans = new long[oids.length];
    for (int i = 0; i < oids.length; i++) {
      Object v = row.get(i);
      if (v == null) {
        spans[i] = WireRows.NULL;
        continue;
      }
      byte[] b = encode(oids[i], v, format);
      if (b == null) {
        return row;
      }
      spans[i] = WireRows.span(bytes.size(), b.length);
      bytes.writeBytes(b);
    }
    return WireRows.row(
        bytes.toByteArray(), spans, new Decoder(oids, format), row.sizeHintBytes() + bytes.size());
  }

  private static byte @Nullable [] encode(int oid, Object v, WireFormat format) {
    boolean text = format == WireFormat.TEXT;
    return switch (oid) {
      case INT8 ->
          v instanceof Long l
              ? (text ? ascii(l.toString()) : ByteBuffer.allocate(8).putLong(l).array())
              : null;
      case INT4 ->
          v instanceof Integer n
              ? (text ? ascii(n.toString()) : ByteBuffer.allocate(4).putInt(n).array())
              : null;
      case INT2 ->
          v instanceof Short s
              ? (text ? ascii(s.toString()) : ByteBuffer.allocate(2).putShort(s).array())
              : null;
      case BOOL ->
          v instanceof Boolean b
              ? (text ? ascii(b ? "t" : "f") : new byte[] {(byte) (b ? 1 : 0)})
              : null;
      // the text and the binary form of text are both its UTF-8 bytes
      case TEXT, VARCHAR -> v instanceof String s ? s.getBytes(StandardCharsets.UTF_8) : null;
      default -> null;
    };
  }

  private static byte[] ascii(String s) {
    return s.getBytes(StandardCharsets.US_ASCII);
  }

  /** Decodes what {@link #encode} wrote. */
  private static final class Decoder implements WireDecoder {
    private final int[] oids;
    private final WireFormat format;

    Decoder(int[] oids, WireFormat format) {
      this.oids = oids;
      this.format = format;
    }

    @Override
    public WireFormat format(int column) {
      return format;
    }

    @Override
    public Object decode(int column, byte[] buf, int off, int len) {
      ByteBuffer b = ByteBuffer.wrap(buf, off, len);
      String s = new String(buf, off, len, StandardCharsets.UTF_8);
      boolean text = format == WireFormat.TEXT;
      return switch (oids[column]) {
        case INT8 -> text ? Long.parseLong(s) : b.getLong();
        case INT4 -> text ? Integer.parseInt(s) : b.getInt();
        case INT2 -> text ? Short.parseShort(s) : b.getShort();
        case BOOL -> text ? s.equals("t") : b.get() != 0;
        default -> s;
      };
    }
  }
}
