package org.pgetl.core.internal.codec;

import java.sql.Connection;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import org.postgresql.PGConnection;
import org.postgresql.copy.CopyOut;

/** Reads query results through COPY TO STDOUT and the codecs' row parsers. */
final class CopyReaders {
  private CopyReaders() {}

  /**
   * Runs {@code COPY (select) TO STDOUT} in text or binary format and parses every row.
   *
   * @param columns the selected column expressions (a binary COPY casts to text the ones whose
   *     codec has no binary decoding)
   * @param from the rest of the query after the select list ({@code FROM t ORDER BY id})
   */
  static List<Object[]> read(
      Connection c, List<ValueCodec> codecs, List<String> columns, String from, boolean binary)
      throws SQLException {
    List<String> select = new ArrayList<>();
    for (int i = 0; i < columns.size(); i++) {
      boolean cast = binary && CopyBinaryParser.needsTextCast(codecs.get(i));
      select.add(cast ? columns.get(i) + "::text" : columns.get(i));
    }
    String sql =
        "COPY (SELECT "
            + String.join(", ", select)
            + " "
            + from
            + ") TO STDOUT"
            + (binary ? " (FORMAT binary)" : "");
    CopyRowParser parser = CopyRowParser.create(binary, codecs);
    CopyOut out = c.unwrap(PGConnection.class).getCopyAPI().copyOut(sql);
    List<Object[]> rows = new ArrayList<>();
    try {
      byte[] message;
      while ((message = out.readFromCopy()) != null) {
        Object[] row = parser.parseRow(message, 0, message.length);
        if (row != null) {
          rows.add(row);
        }
      }
      parser.finish();
    } finally {
      if (out.isActive()) {
        // a COPY left open holds the connection: every later statement would wait forever
        out.cancelCopy();
      }
    }
    return rows;
  }
}
