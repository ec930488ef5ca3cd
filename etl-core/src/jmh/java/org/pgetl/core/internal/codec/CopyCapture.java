package org.pgetl.core.internal.codec;

import java.io.DataOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.Properties;
import org.postgresql.PGConnection;
import org.postgresql.copy.CopyOut;

/**
 * Captures the COPY output that {@link CopyParserBenchmark} parses: 1024 rows of a representative
 * six-column table (int8, int4, text, numeric, timestamptz, jsonb), in text and in binary format,
 * each CopyData message stored as an int32 length and its bytes.
 *
 * <p>Run: {@code java -cp etl-core/target/etl-core-benchmarks.jar
 * org.pgetl.core.internal.codec.CopyCapture <jdbc-url> <output-folder>}.
 */
public final class CopyCapture {
  /** The benchmark table and its rows. */
  static final String TABLE =
      """
      CREATE TEMP TABLE bench (id int8, qty int4, name text, price numeric(12,2),
                               created timestamptz, attrs jsonb);
      INSERT INTO bench
      SELECT 1000000000 + g, (g * 7919) % 100000, 'customer ' || md5(g::text),
             round((g * 31.17)::numeric % 100000, 2),
             timestamptz '2024-01-01 00:00:00+00' + g * interval '37.123457 seconds',
             jsonb_build_object('id', g, 'tags', jsonb_build_array('a', 'b'), 'active', g % 2 = 0)
        FROM generate_series(1, 1024) g;
      """;

  private CopyCapture() {}

  /**
   * Writes {@code copy-text.bin} and {@code copy-binary.bin} into a folder.
   *
   * @param args the JDBC URL of a PostgreSQL server and the output folder
   * @throws SQLException when the server fails
   * @throws IOException when the files cannot be written
   */
  public static void main(String[] args) throws SQLException, IOException {
    Properties props = CodecSession.applyTo(new Properties());
    try (Connection c = DriverManager.getConnection(args[0], props);
        Statement st = c.createStatement()) {
      st.execute(TABLE);
      capture(c, "COPY bench TO STDOUT", Path.of(args[1], "copy-text.bin"));
      capture(c, "COPY bench TO STDOUT (FORMAT binary)", Path.of(args[1], "copy-binary.bin"));
    }
  }

  private static void capture(Connection c, String sql, Path file)
      throws SQLException, IOException {
    CopyOut out = c.unwrap(PGConnection.class).getCopyAPI().copyOut(sql);
    try (OutputStream os = Files.newOutputStream(file);
        DataOutputStream data = new DataOutputStream(os)) {
      byte[] m;
      while ((m = out.readFromCopy()) != null) {
        data.writeInt(m.length);
        data.write(m);
      }
    }
  }
}
