package org.pgetl.core.internal.decode;

import java.nio.ByteBuffer;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.function.Predicate;
import org.pgetl.model.Lsn;
import org.postgresql.PGConnection;
import org.postgresql.replication.PGReplicationStream;
import org.postgresql.replication.fluent.logical.ChainedLogicalStreamBuilder;

/**
 * A pgoutput replication stream for tests: opens the slot over pgjdbc's replication API and decodes
 * every message it reads with a {@link PgOutputDecoder} built for the same options.
 */
final class PgOutputTestStream implements AutoCloseable {
  private final Connection connection;
  private final PGReplicationStream stream;
  private final PgOutputDecoder decoder;

  private PgOutputTestStream(
      Connection connection, PGReplicationStream stream, PgOutputDecoder decoder) {
    this.connection = connection;
    this.stream = stream;
    this.decoder = decoder;
  }

  /**
   * Starts streaming a slot.
   *
   * @param slot the logical slot (pgoutput)
   * @param publication the publication name
   * @param version the proto_version option
   * @param streaming the streaming option
   * @param options further slot options (messages, binary, two_phase, ...)
   * @param connectionProperties further connection properties (for example {@code options})
   */
  static PgOutputTestStream open(
      String slot,
      String publication,
      int version,
      StreamingMode streaming,
      Map<String, String> options,
      Properties connectionProperties)
      throws SQLException {
    Connection c = TestServer.connectReplication(connectionProperties);
    try {
      ChainedLogicalStreamBuilder b =
          c.unwrap(PGConnection.class)
              .getReplicationAPI()
              .replicationStream()
              .logical()
              .withSlotName(slot)
              .withSlotOption("proto_version", Integer.toString(version))
              .withSlotOption("publication_names", publication);
      if (streaming != StreamingMode.OFF) {
        b.withSlotOption("streaming", streaming.optionValue());
      }
      for (Map.Entry<String, String> e : options.entrySet()) {
        b.withSlotOption(e.getKey(), e.getValue());
      }
      PGReplicationStream s = b.start();
      return new PgOutputTestStream(c, s, new PgOutputDecoder(version, streaming));
    } catch (SQLException | RuntimeException e) {
      c.close();
      throw e;
    }
  }

  /** Reads and decodes the next message, waiting for one when none is pending. */
  PgOutputMessage next() throws SQLException {
    ByteBuffer buffer = stream.readPending();
    if (buffer == null) {
      buffer = stream.read(); // blocks until the server sends data
    }
    Lsn walStart = Lsn.of(stream.getLastReceiveLSN().asLong());
    return decoder.decode(buffer, walStart);
  }

  /**
   * Reads messages until {@code done} accepts the list read so far. Transactions with nothing to
   * publish (a Begin directly followed by its Commit, as PostgreSQL 14 sends for any writing
   * transaction) are dropped.
   */
  List<PgOutputMessage> readUntil(Predicate<List<PgOutputMessage>> done) throws SQLException {
    return readUntil(new ArrayList<>(), done);
  }

  /** Like {@link #readUntil(Predicate)}, appending to messages already read. */
  List<PgOutputMessage> readUntil(List<PgOutputMessage> out, Predicate<List<PgOutputMessage>> done)
      throws SQLException {
    while (!done.test(out)) {
      PgOutputMessage m = next();
      if (m instanceof PgOutputMessage.Commit
          && !out.isEmpty()
          && out.get(out.size() - 1) instanceof PgOutputMessage.Begin) {
        out.remove(out.size() - 1);
        continue;
      }
      out.add(m);
    }
    return out;
  }

  /** A stop condition: at least {@code n} messages of a kind were read. */
  static Predicate<List<PgOutputMessage>> seen(PgOutputMessage.Kind kind, int n) {
    return list -> list.stream().filter(m -> m.kind() == kind).count() >= n;
  }

  @Override
  public void close() throws SQLException {
    try {
      stream.close();
    } finally {
      connection.close();
    }
  }
}
