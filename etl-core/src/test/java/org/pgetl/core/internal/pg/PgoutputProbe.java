package org.pgetl.core.internal.pg;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;

/** Reads the few pgoutput fields these tests check (the real decoder lives elsewhere). */
final class PgoutputProbe {
  private PgoutputProbe() {}

  /** Returns the message type: 'B', 'C', 'I', 'R', 'M', ... */
  static char type(ByteBuffer b) {
    return (char) b.get(b.position());
  }

  /** Returns the text of the first column of an INSERT message ('I') of a text-mode stream. */
  static String insertFirstColumn(ByteBuffer msg) {
    ByteBuffer b = msg.duplicate();
    b.get(); // 'I'
    b.getInt(); // relation oid
    b.get(); // 'N'
    b.getShort(); // column count
    byte kind = b.get();
    if (kind != 't' && kind != 'b') {
      return null;
    }
    byte[] bytes = new byte[b.getInt()];
    b.get(bytes);
    return kind == 't' ? new String(bytes, StandardCharsets.UTF_8) : "<binary>";
  }

  /** Returns the end LSN of a COMMIT message ('C'). */
  static long commitEndLsn(ByteBuffer msg) {
    ByteBuffer b = msg.duplicate();
    b.get(); // 'C'
    b.get(); // flags
    b.getLong(); // commit LSN
    return b.getLong();
  }

  /** Returns the content of a transactional logical message ('M') as text. */
  static String messageContent(ByteBuffer msg) {
    ByteBuffer b = msg.duplicate();
    b.get(); // 'M'
    b.get(); // flags
    b.getLong(); // LSN
    while (b.get() != 0) {
      // prefix
    }
    byte[] bytes = new byte[b.getInt()];
    b.get(bytes);
    return new String(bytes, StandardCharsets.UTF_8);
  }
}
