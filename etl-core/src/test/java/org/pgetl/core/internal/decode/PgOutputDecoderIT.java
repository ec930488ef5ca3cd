package org.pgetl.core.internal.decode;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assumptions.assumeThat;
import static org.pgetl.core.internal.decode.PgOutputTestStream.seen;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Collectors;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.pgetl.core.internal.decode.PgOutputMessage.Kind;
import org.pgetl.core.internal.decode.PgOutputMessage.OldTupleKind;
import org.pgetl.core.internal.decode.PgOutputMessage.Relation.Column;
import org.pgetl.model.Lsn;
import org.pgetl.testkit.TestDatabase;
import org.pgetl.testkit.WithPostgres;

/**
 * Golden tests against a real server: each test drives PostgreSQL through one kind of message,
 * reads the slot over pgjdbc's replication API and checks the decoded messages field by field
 * against what the server reports (LSNs, oids, typmods, xids).
 */
@Timeout(value = 3, unit = TimeUnit.MINUTES)
@WithPostgres
class PgOutputDecoderIT {
  private static final AtomicInteger COUNTER = new AtomicInteger();
  private static final String RUN = Long.toString(System.currentTimeMillis() % 1_000_000, 36);
  // the walsender streams a transaction once its changes exceed this much memory
  private static final Properties SMALL_WORK_MEM = new Properties();

  static {
    SMALL_WORK_MEM.setProperty("options", "-c logical_decoding_work_mem=64kB");
  }

  private Connection sql;
  private String id;
  private int serverVersion;
  private final List<String> slots = new ArrayList<>();
  private final List<String> cleanup = new ArrayList<>();

  @BeforeAll
  static void server(TestDatabase db) {
    TestServer.use(db);
  }

  @BeforeEach
  void connect() throws SQLException {
    sql = TestServer.connect();
    id = RUN + "_" + COUNTER.incrementAndGet();
    serverVersion = (int) queryLong("SELECT current_setting('server_version_num')::int");
  }

  @AfterEach
  void cleanUp() throws SQLException {
    try {
      if (!sql.getAutoCommit()) {
        sql.rollback();
        sql.setAutoCommit(true);
      }
      for (String slot : slots) {
        // the walsender lets go of the slot shortly after its connection closed
        Awaitility.await()
            .atMost(Duration.ofSeconds(30))
            .until(
                () ->
                    queryLong(
                            "SELECT count(*) FROM pg_replication_slots WHERE slot_name = '"
                                + slot
                                + "' AND active")
                        == 0);
        exec("SELECT pg_drop_replication_slot('" + slot + "')");
      }
      for (String statement : cleanup) {
        exec(statement);
      }
    } finally {
      sql.close();
    }
  }

  // ---- transactions, relations, types

  @Test
  void beginRelationInsertCommitMatchTheServer() throws SQLException {
    String t = table("(id int PRIMARY KEY, name varchar(10), amount numeric(10,2))");
    String pub = publish(t);
    String slot = createSlot(false);
    Lsn before = currentLsn();
    Instant wallBefore = Instant.now();
    long xid = inTransaction("INSERT INTO " + t + " VALUES (1, 'héllo', 12.50)");
    Lsn after = currentLsn();

    List<PgOutputMessage> m = read(slot, pub, 1, StreamingMode.OFF, Map.of(), seen(Kind.COMMIT, 1));

    assertThat(kinds(m)).containsExactly(Kind.BEGIN, Kind.RELATION, Kind.INSERT, Kind.COMMIT);
    var begin = (PgOutputMessage.Begin) m.get(0);
    var rel = (PgOutputMessage.Relation) m.get(1);
    var ins = (PgOutputMessage.Insert) m.get(2);
    var commit = (PgOutputMessage.Commit) m.get(3);

    assertThat(begin.xid()).isEqualTo(xid);
    assertThat(begin.finalLsn()).isEqualTo(commit.commitLsn());
    assertThat(commit.commitLsn()).isGreaterThan(before).isLessThan(commit.endLsn());
    assertThat(commit.endLsn()).isLessThanOrEqualTo(after);
    assertThat(commit.walStart()).isEqualTo(commit.endLsn());
    assertThat(commit.flags()).isZero();
    assertThat(begin.commitTime()).isEqualTo(commit.commitTime());
    assertThat(commit.commitInstant())
        .isBetween(wallBefore.minusSeconds(5), Instant.now().plusSeconds(5));

    assertThat(rel.isStreamed()).isFalse();
    assertThat(rel.relationId()).isEqualTo(relid(t));
    assertThat(rel.namespace()).isEqualTo("public");
    assertThat(rel.name()).isEqualTo(t);
    assertThat(rel.replicaIdentity()).isEqualTo(ReplicaIdentity.DEFAULT);
    assertThat(rel.columns())
        .containsExactly(
            new Column(1, "id", 23, -1),
            new Column(0, "name", 1043, typmod(t, "name")),
            new Column(0, "amount", 1700, typmod(t, "amount")));
    assertThat(typmod(t, "name")).isEqualTo(10 + 4);
    assertThat(typmod(t, "amount")).isEqualTo((10 << 16 | 2) + 4);

    assertThat(ins.relationId()).isEqualTo(rel.relationId());
    assertThat(texts(ins.newTuple())).containsExactly("1", "héllo", "12.50");
    assertThat(kindCodes(ins.newTuple())).isEqualTo("ttt");
  }

  @Test
  void typeMessageNamesAUserTypeBeforeTheRelation() throws SQLException {
    String type = "mood_" + id;
    exec("CREATE TYPE " + type + " AS ENUM ('sad', 'happy')");
    String t = table("(id int PRIMARY KEY, feeling " + type + ")");
    cleanup.add("DROP TYPE IF EXISTS " + type);
    String pub = publish(t);
    String slot = createSlot(false);
    exec("INSERT INTO " + t + " VALUES (1, 'happy')");

    List<PgOutputMessage> m = read(slot, pub, 1, StreamingMode.OFF, Map.of(), seen(Kind.COMMIT, 1));

    assertThat(kinds(m))
        .containsExactly(Kind.BEGIN, Kind.TYPE, Kind.RELATION, Kind.INSERT, Kind.COMMIT);
    var typ = (PgOutputMessage.Type) m.get(1);
    var rel = (PgOutputMessage.Relation) m.get(2);
    int typeOid = (int) queryLong("SELECT '" + type + "'::regtype::oid::bigint");
    assertThat(typ.typeOid()).isEqualTo(typeOid);
    assertThat(typ.namespace()).isEqualTo("public");
    assertThat(typ.name()).isEqualTo(type);
    assertThat(typ.isStreamed()).isFalse();
    assertThat(rel.columns().get(1)).isEqualTo(new Column(0, "feeling", typeOid, -1));
    assertThat(texts(((PgOutputMessage.Insert) m.get(3)).newTuple())).containsExactly("1", "happy");
  }

  // ---- replica identities

  @Test
  void replicaIdentityDefaultSendsTheOldKeyOnlyWhenTheKeyChanges() throws SQLException {
    String t = table("(id int PRIMARY KEY, name text)");
    String pub = publish(t);
    String slot = createSlot(false);
    exec("INSERT INTO " + t + " VALUES (1, 'a')");
    exec("UPDATE " + t + " SET name = 'b' WHERE id = 1");
    exec("UPDATE " + t + " SET id = 2 WHERE id = 1");
    exec("DELETE FROM " + t + " WHERE id = 2");

    List<PgOutputMessage> m = read(slot, pub, 1, StreamingMode.OFF, Map.of(), seen(Kind.COMMIT, 4));

    var rel = only(m, PgOutputMessage.Relation.class);
    assertThat(rel.replicaIdentity()).isEqualTo(ReplicaIdentity.DEFAULT);
    assertThat(rel.columns()).extracting(Column::isKey).containsExactly(true, false);
    List<PgOutputMessage.Update> updates = all(m, PgOutputMessage.Update.class);
    assertThat(updates).hasSize(2);
    assertThat(updates.get(0).oldTupleKind()).isEqualTo(OldTupleKind.NONE);
    assertThat(updates.get(0).oldTuple()).isNull();
    assertThat(texts(updates.get(0).newTuple())).containsExactly("1", "b");
    assertThat(updates.get(1).oldTupleKind()).isEqualTo(OldTupleKind.KEY);
    assertThat(kindCodes(updates.get(1).oldTuple())).isEqualTo("tn");
    assertThat(updates.get(1).oldTuple().text(0)).isEqualTo("1");
    assertThat(texts(updates.get(1).newTuple())).containsExactly("2", "b");
    var delete = only(m, PgOutputMessage.Delete.class);
    assertThat(delete.oldTupleKind()).isEqualTo(OldTupleKind.KEY);
    assertThat(kindCodes(delete.oldTuple())).isEqualTo("tn");
    assertThat(delete.oldTuple().text(0)).isEqualTo("2");
  }

  @Test
  void replicaIdentityFullSendsTheWholeOldRow() throws SQLException {
    String t = table("(id int, name text, score int)");
    exec("ALTER TABLE " + t + " REPLICA IDENTITY FULL");
    String pub = publish(t);
    String slot = createSlot(false);
    exec("INSERT INTO " + t + " VALUES (1, 'a', NULL)");
    exec("UPDATE " + t + " SET score = 5 WHERE id = 1");
    exec("DELETE FROM " + t + " WHERE id = 1");

    List<PgOutputMessage> m = read(slot, pub, 1, StreamingMode.OFF, Map.of(), seen(Kind.COMMIT, 3));

    var rel = only(m, PgOutputMessage.Relation.class);
    assertThat(rel.replicaIdentity()).isEqualTo(ReplicaIdentity.FULL);
    assertThat(rel.columns()).extracting(Column::isKey).containsExactly(true, true, true);
    var update = only(m, PgOutputMessage.Update.class);
    assertThat(update.oldTupleKind()).isEqualTo(OldTupleKind.FULL);
    assertThat(kindCodes(update.oldTuple())).isEqualTo("ttn");
    assertThat(texts(update.oldTuple())).containsExactly("1", "a", null);
    assertThat(texts(update.newTuple())).containsExactly("1", "a", "5");
    var delete = only(m, PgOutputMessage.Delete.class);
    assertThat(delete.oldTupleKind()).isEqualTo(OldTupleKind.FULL);
    assertThat(texts(delete.oldTuple())).containsExactly("1", "a", "5");
  }

  @Test
  void replicaIdentityUsingIndexKeysOnTheIndexColumns() throws SQLException {
    String t = table("(id int PRIMARY KEY, code text NOT NULL, name text)");
    exec("CREATE UNIQUE INDEX " + t + "_code ON " + t + " (code)");
    exec("ALTER TABLE " + t + " REPLICA IDENTITY USING INDEX " + t + "_code");
    String pub = publish(t);
    String slot = createSlot(false);
    exec("INSERT INTO " + t + " VALUES (1, 'c1', 'a')");
    exec("UPDATE " + t + " SET code = 'c2' WHERE id = 1");
    exec("DELETE FROM " + t + " WHERE id = 1");

    List<PgOutputMessage> m = read(slot, pub, 1, StreamingMode.OFF, Map.of(), seen(Kind.COMMIT, 3));

    var rel = only(m, PgOutputMessage.Relation.class);
    assertThat(rel.replicaIdentity()).isEqualTo(ReplicaIdentity.INDEX);
    assertThat(rel.columns()).extracting(Column::isKey).containsExactly(false, true, false);
    var update = only(m, PgOutputMessage.Update.class);
    assertThat(update.oldTupleKind()).isEqualTo(OldTupleKind.KEY);
    assertThat(texts(update.oldTuple())).containsExactly(null, "c1", null);
    assertThat(texts(update.newTuple())).containsExactly("1", "c2", "a");
    var delete = only(m, PgOutputMessage.Delete.class);
    assertThat(delete.oldTupleKind()).isEqualTo(OldTupleKind.KEY);
    assertThat(texts(delete.oldTuple())).containsExactly(null, "c2", null);
  }

  @Test
  void replicaIdentityNothingRefusesUpdateAndDelete() throws SQLException {
    String t = table("(id int PRIMARY KEY, name text)");
    exec("ALTER TABLE " + t + " REPLICA IDENTITY NOTHING");
    String pub = publish(t);
    String slot = createSlot(false);
    exec("INSERT INTO " + t + " VALUES (1, 'a')");

    assertThatThrownBy(() -> exec("UPDATE " + t + " SET name = 'b' WHERE id = 1"))
        .isInstanceOfSatisfying(
            SQLException.class, e -> assertThat(e.getSQLState()).isEqualTo("55000"))
        .hasMessageContaining("does not have a replica identity");
    assertThatThrownBy(() -> exec("DELETE FROM " + t + " WHERE id = 1"))
        .isInstanceOfSatisfying(
            SQLException.class, e -> assertThat(e.getSQLState()).isEqualTo("55000"))
        .hasMessageContaining("does not have a replica identity");
    exec("INSERT INTO " + t + " VALUES (2, 'b')");

    List<PgOutputMessage> m = read(slot, pub, 1, StreamingMode.OFF, Map.of(), seen(Kind.COMMIT, 2));

    assertThat(kinds(m))
        .containsExactly(
            Kind.BEGIN,
            Kind.RELATION,
            Kind.INSERT,
            Kind.COMMIT,
            Kind.BEGIN,
            Kind.INSERT,
            Kind.COMMIT);
    var rel = only(m, PgOutputMessage.Relation.class);
    assertThat(rel.replicaIdentity()).isEqualTo(ReplicaIdentity.NOTHING);
    assertThat(rel.columns()).extracting(Column::isKey).containsExactly(false, false);
  }

  @Test
  void updateLeavingAToastedColumnUnchangedSendsU() throws SQLException {
    String t = table("(id int PRIMARY KEY, big text, n int)");
    // no compression: a 10 kB value is stored out of line
    exec("ALTER TABLE " + t + " ALTER COLUMN big SET STORAGE EXTERNAL");
    String pub = publish(t);
    String slot = createSlot(false);
    exec("INSERT INTO " + t + " VALUES (1, repeat('x', 10000), 1)");
    exec("UPDATE " + t + " SET n = 2 WHERE id = 1");

    List<PgOutputMessage> m = read(slot, pub, 1, StreamingMode.OFF, Map.of(), seen(Kind.COMMIT, 2));

    var insert = only(m, PgOutputMessage.Insert.class);
    assertThat(insert.newTuple().length(1)).isEqualTo(10_000);
    var update = only(m, PgOutputMessage.Update.class);
    assertThat(update.oldTupleKind()).isEqualTo(OldTupleKind.NONE);
    assertThat(kindCodes(update.newTuple())).isEqualTo("tut");
    assertThat(update.newTuple().isUnchangedToast(1)).isTrue();
    assertThat(texts(update.newTuple())).containsExactly("1", null, "2");
  }

  // ---- truncate

  @Test
  void truncateCarriesOptionsAndEveryTable() throws SQLException {
    String parent = table("(id serial PRIMARY KEY)");
    String child = table("(id serial PRIMARY KEY, parent_id int REFERENCES " + parent + ")");
    String pub = publish(parent, child);
    String slot = createSlot(false);
    exec("INSERT INTO " + parent + " VALUES (DEFAULT)");
    exec("INSERT INTO " + child + " (parent_id) SELECT id FROM " + parent);
    exec("TRUNCATE " + parent + " CASCADE");
    exec("TRUNCATE " + parent + ", " + child + " RESTART IDENTITY");
    exec("TRUNCATE " + parent + ", " + child + " RESTART IDENTITY CASCADE");
    exec("TRUNCATE " + child);

    List<PgOutputMessage> m = read(slot, pub, 1, StreamingMode.OFF, Map.of(), seen(Kind.COMMIT, 6));

    List<PgOutputMessage.Truncate> truncates = all(m, PgOutputMessage.Truncate.class);
    long p = relid(parent);
    long c = relid(child);
    assertThat(truncates).hasSize(4);
    assertThat(truncates.get(0).relationIds()).containsExactlyInAnyOrder(p, c);
    assertThat(truncates.get(0).cascade()).isTrue();
    assertThat(truncates.get(0).restartIdentity()).isFalse();
    assertThat(truncates.get(1).relationIds()).containsExactlyInAnyOrder(p, c);
    assertThat(truncates.get(1).cascade()).isFalse();
    assertThat(truncates.get(1).restartIdentity()).isTrue();
    assertThat(truncates.get(2).options())
        .isEqualTo(PgOutputMessage.Truncate.CASCADE | PgOutputMessage.Truncate.RESTART_IDENTITY);
    assertThat(truncates.get(3).relationIds()).containsExactly(c);
    assertThat(truncates.get(3).options()).isZero();
  }

  // ---- logical messages and origins

  @Test
  void logicalMessagesTransactionalAndNot() throws SQLException {
    String t = table("(id int PRIMARY KEY)");
    String pub = publish(t);
    String slot = createSlot(false);
    Lsn before = currentLsn();
    inTransaction(
        "INSERT INTO " + t + " VALUES (1)",
        "SELECT pg_logical_emit_message(true, 'pgetl.tx', 'in a transaction')");
    exec("SELECT pg_logical_emit_message(false, 'pgetl.now', '\\x00ff01'::bytea)");
    Lsn after = currentLsn();

    List<PgOutputMessage> m =
        read(slot, pub, 1, StreamingMode.OFF, Map.of("messages", "true"), seen(Kind.MESSAGE, 2));

    // the transaction committed before the non-transactional message was written
    assertThat(kinds(m))
        .containsExactly(
            Kind.BEGIN, Kind.RELATION, Kind.INSERT, Kind.MESSAGE, Kind.COMMIT, Kind.MESSAGE);
    List<PgOutputMessage.LogicalMessage> messages = all(m, PgOutputMessage.LogicalMessage.class);
    var tx = messages.get(0);
    var nontx = messages.get(1);
    assertThat(tx.transactional()).isTrue();
    assertThat(tx.prefix()).isEqualTo("pgetl.tx");
    assertThat(tx.content().toUtf8String()).isEqualTo("in a transaction");
    assertThat(tx.isStreamed()).isFalse();
    assertThat(nontx.transactional()).isFalse();
    assertThat(nontx.prefix()).isEqualTo("pgetl.now");
    assertThat(nontx.content().toByteArray()).containsExactly(0x00, 0xFF, 0x01);
    assertThat(tx.messageLsn()).isBetween(before, after).isLessThan(nontx.messageLsn());
    assertThat(nontx.messageLsn()).isBetween(before, after);
  }

  @Test
  void originFollowsBeginWhenTheWriterSetAReplicationOrigin() throws SQLException {
    String t = table("(id int PRIMARY KEY)");
    String pub = publish(t);
    String slot = createSlot(false);
    String origin = "pgetl_origin_" + id;
    exec("SELECT pg_replication_origin_create('" + origin + "')");
    cleanup.add("SELECT pg_replication_origin_drop('" + origin + "')");
    exec("SELECT pg_replication_origin_session_setup('" + origin + "')");
    try {
      inTransaction(
          "SELECT pg_replication_origin_xact_setup('0/ABCDEF', now())",
          "INSERT INTO " + t + " VALUES (1)");
    } finally {
      exec("SELECT pg_replication_origin_session_reset()");
    }

    List<PgOutputMessage> m = read(slot, pub, 1, StreamingMode.OFF, Map.of(), seen(Kind.COMMIT, 1));

    assertThat(kinds(m))
        .containsExactly(Kind.BEGIN, Kind.ORIGIN, Kind.RELATION, Kind.INSERT, Kind.COMMIT);
    var o = (PgOutputMessage.Origin) m.get(1);
    assertThat(o.name()).isEqualTo(origin);
    assertThat(o.originLsn()).isEqualTo(Lsn.parse("0/ABCDEF"));
  }

  // ---- streaming

  @Test
  void streamedTransactionArrivesInBlocksThenCommits() throws SQLException {
    String t = table("(id int PRIMARY KEY, pad text)");
    String pub = publish(t);
    String slot = createSlot(false);
    Lsn before = currentLsn();
    long xid =
        inTransaction(
            "INSERT INTO " + t + " SELECT g, repeat('p', 100) FROM generate_series(1, 3000) g");
    Lsn after = currentLsn();

    List<PgOutputMessage> m =
        read(slot, pub, 2, StreamingMode.ON, Map.of(), seen(Kind.STREAM_COMMIT, 1), SMALL_WORK_MEM);

    List<PgOutputMessage.StreamStart> starts = all(m, PgOutputMessage.StreamStart.class);
    assertThat(starts).hasSizeGreaterThan(1);
    assertThat(starts).extracting(PgOutputMessage.StreamStart::xid).containsOnly(xid);
    assertThat(starts.get(0).firstSegment()).isTrue();
    assertThat(starts.subList(1, starts.size()))
        .extracting(PgOutputMessage.StreamStart::firstSegment)
        .containsOnly(false);
    assertThat(all(m, PgOutputMessage.StreamStop.class)).hasSameSizeAs(starts);
    assertBlocksAreWellFormed(m);
    List<PgOutputMessage.Insert> inserts = all(m, PgOutputMessage.Insert.class);
    assertThat(inserts).hasSize(3000);
    assertThat(inserts).extracting(PgOutputMessage.Insert::streamXid).containsOnly(xid);
    assertThat(inserts.get(2999).newTuple().text(0)).isEqualTo("3000");
    assertThat(only(m, PgOutputMessage.Relation.class).streamXid()).isEqualTo(xid);
    var commit = (PgOutputMessage.StreamCommit) m.get(m.size() - 1);
    assertThat(commit.xid()).isEqualTo(xid);
    assertThat(commit.flags()).isZero();
    assertThat(commit.commitLsn()).isGreaterThan(before).isLessThan(commit.endLsn());
    assertThat(commit.endLsn()).isLessThanOrEqualTo(after);
    assertThat(kinds(m)).doesNotContain(Kind.BEGIN, Kind.COMMIT);
  }

  @Test
  void streamedTransactionAbortsASubtransactionThenEverything() throws SQLException {
    List<PgOutputMessage> m = abortedStreamedTransaction(2, StreamingMode.ON);

    List<PgOutputMessage.StreamAbort> aborts = all(m, PgOutputMessage.StreamAbort.class);
    assertThat(aborts).hasSize(2);
    var sub = aborts.get(0);
    var top = aborts.get(1);
    assertThat(sub.isTopLevel()).isFalse();
    assertThat(sub.subXid()).isNotEqualTo(sub.xid());
    assertThat(top.isTopLevel()).isTrue();
    assertThat(top.xid()).isEqualTo(sub.xid());
    assertThat(aborts).extracting(PgOutputMessage.StreamAbort::hasAbortInfo).containsOnly(false);
    assertThat(aborts).extracting(PgOutputMessage.StreamAbort::abortLsn).containsOnly(Lsn.ZERO);
    // changes of the subtransaction carry its own xid
    assertThat(all(m, PgOutputMessage.Insert.class))
        .extracting(PgOutputMessage.Insert::streamXid)
        .contains(sub.xid(), sub.subXid());
  }

  @Test
  void parallelStreamingAbortCarriesAbortLsnAndTime() throws SQLException {
    assumeThat(serverVersion)
        .as("streaming = parallel needs PostgreSQL 16")
        .isGreaterThanOrEqualTo(160000);
    Instant wallBefore = Instant.now();
    Lsn before = currentLsn();

    List<PgOutputMessage> m = abortedStreamedTransaction(4, StreamingMode.PARALLEL);

    Lsn after = currentLsn();
    List<PgOutputMessage.StreamAbort> aborts = all(m, PgOutputMessage.StreamAbort.class);
    assertThat(aborts).hasSize(2);
    for (PgOutputMessage.StreamAbort a : aborts) {
      assertThat(a.hasAbortInfo()).isTrue();
      assertThat(a.abortLsn()).isBetween(before, after);
      assertThat(a.abortInstant())
          .isBetween(wallBefore.minusSeconds(5), Instant.now().plusSeconds(5));
    }
    assertThat(aborts.get(0).abortLsn()).isLessThan(aborts.get(1).abortLsn());
    assertThat(aborts.get(1).isTopLevel()).isTrue();
  }

  @Test
  void protocolFourWithStreamingOnSendsNoAbortInfo() throws SQLException {
    assumeThat(serverVersion)
        .as("protocol version 4 needs PostgreSQL 16")
        .isGreaterThanOrEqualTo(160000);

    List<PgOutputMessage> m = abortedStreamedTransaction(4, StreamingMode.ON);

    List<PgOutputMessage.StreamAbort> aborts = all(m, PgOutputMessage.StreamAbort.class);
    assertThat(aborts).hasSize(2);
    assertThat(aborts).extracting(PgOutputMessage.StreamAbort::hasAbortInfo).containsOnly(false);
    assertThat(aborts.get(1).isTopLevel()).isTrue();
  }

  /**
   * Streams a transaction that rolls back a subtransaction and then itself. The stream reads while
   * the transaction runs: PostgreSQL 17 no longer streams the changes of a transaction it already
   * knows to be aborted, so each part must be streamed before its rollback.
   */
  private List<PgOutputMessage> abortedStreamedTransaction(int version, StreamingMode mode)
      throws SQLException {
    String t = table("(id int PRIMARY KEY, pad text)");
    String pub = publish(t);
    String slot = createSlot(false);
    String insert = "INSERT INTO " + t + " SELECT g, repeat('p', 100) FROM generate_series";
    List<PgOutputMessage> m = new ArrayList<>();
    try (PgOutputTestStream s =
        PgOutputTestStream.open(slot, pub, version, mode, Map.of(), SMALL_WORK_MEM)) {
      sql.setAutoCommit(false);
      exec(insert + "(1, 2000) g");
      long xid = queryLong("SELECT txid_current() % 4294967296");
      s.readUntil(m, list -> streamedInsertsOf(list, x -> x == xid) > 0);
      exec("SAVEPOINT s1");
      exec(insert + "(2001, 4000) g");
      s.readUntil(m, list -> streamedInsertsOf(list, x -> x != xid) > 0);
      exec("ROLLBACK TO SAVEPOINT s1");
      exec(insert + "(4001, 4010) g");
      sql.rollback();
      sql.setAutoCommit(true);
      return s.readUntil(m, seen(Kind.STREAM_ABORT, 2));
    }
  }

  /** Counts inserts of matching xids that a Stream Stop has closed. */
  private static long streamedInsertsOf(
      List<PgOutputMessage> m, java.util.function.LongPredicate xid) {
    int lastStop = -1;
    for (int i = 0; i < m.size(); i++) {
      if (m.get(i) instanceof PgOutputMessage.StreamStop) {
        lastStop = i;
      }
    }
    return m.subList(0, lastStop + 1).stream()
        .filter(x -> x instanceof PgOutputMessage.Insert i && xid.test(i.streamXid()))
        .count();
  }

  // ---- two-phase commit

  @Test
  void twoPhaseTransactionsArePreparedThenCommittedOrRolledBack() throws SQLException {
    assumeThat(serverVersion)
        .as("two_phase in pgoutput needs PostgreSQL 15")
        .isGreaterThanOrEqualTo(150000);
    String t = table("(id int PRIMARY KEY)");
    String pub = publish(t);
    String slot = createSlot(true);
    String gid1 = "pgetl_gid1_" + id;
    String gid2 = "pgetl_gid2_" + id;
    exec("BEGIN");
    exec("INSERT INTO " + t + " VALUES (1)");
    long xid1 = queryLong("SELECT txid_current() % 4294967296");
    exec("PREPARE TRANSACTION '" + gid1 + "'");
    exec("COMMIT PREPARED '" + gid1 + "'");
    exec("BEGIN");
    exec("INSERT INTO " + t + " VALUES (2)");
    long xid2 = queryLong("SELECT txid_current() % 4294967296");
    exec("PREPARE TRANSACTION '" + gid2 + "'");
    exec("ROLLBACK PREPARED '" + gid2 + "'");

    List<PgOutputMessage> m =
        read(
            slot,
            pub,
            3,
            StreamingMode.OFF,
            Map.of("two_phase", "on"),
            seen(Kind.ROLLBACK_PREPARED, 1));

    assertThat(kinds(m))
        .containsExactly(
            Kind.BEGIN_PREPARE,
            Kind.RELATION,
            Kind.INSERT,
            Kind.PREPARE,
            Kind.COMMIT_PREPARED,
            Kind.BEGIN_PREPARE,
            Kind.INSERT,
            Kind.PREPARE,
            Kind.ROLLBACK_PREPARED);
    var bp1 = (PgOutputMessage.BeginPrepare) m.get(0);
    var p1 = (PgOutputMessage.Prepare) m.get(3);
    var cp1 = (PgOutputMessage.CommitPrepared) m.get(4);
    var p2 = (PgOutputMessage.Prepare) m.get(7);
    var rp2 = (PgOutputMessage.RollbackPrepared) m.get(8);
    assertThat(bp1.gid()).isEqualTo(gid1);
    assertThat(bp1.xid()).isEqualTo(xid1);
    assertThat(p1.gid()).isEqualTo(gid1);
    assertThat(p1.xid()).isEqualTo(xid1);
    assertThat(p1.prepareLsn()).isEqualTo(bp1.prepareLsn()).isLessThan(p1.endLsn());
    assertThat(p1.endLsn()).isEqualTo(bp1.endLsn());
    assertThat(p1.prepareTime()).isEqualTo(bp1.prepareTime());
    assertThat(cp1.gid()).isEqualTo(gid1);
    assertThat(cp1.xid()).isEqualTo(xid1);
    assertThat(cp1.commitLsn()).isGreaterThanOrEqualTo(p1.endLsn()).isLessThan(cp1.endLsn());
    assertThat(cp1.commitTime()).isGreaterThanOrEqualTo(p1.prepareTime());
    assertThat(p2.gid()).isEqualTo(gid2);
    assertThat(rp2.gid()).isEqualTo(gid2);
    assertThat(rp2.xid()).isEqualTo(xid2);
    assertThat(rp2.prepareEndLsn()).isEqualTo(p2.endLsn());
    assertThat(rp2.rollbackEndLsn()).isGreaterThan(rp2.prepareEndLsn());
    assertThat(rp2.prepareTime()).isEqualTo(p2.prepareTime());
    assertThat(rp2.rollbackTime()).isGreaterThanOrEqualTo(rp2.prepareTime());
  }

  @Test
  void streamedTwoPhaseTransactionEndsInStreamPrepare() throws SQLException {
    assumeThat(serverVersion)
        .as("two_phase in pgoutput needs PostgreSQL 15")
        .isGreaterThanOrEqualTo(150000);
    String t = table("(id int PRIMARY KEY, pad text)");
    String pub = publish(t);
    String slot = createSlot(true);
    String gid = "pgetl_gid3_" + id;
    exec("BEGIN");
    exec("INSERT INTO " + t + " SELECT g, repeat('p', 100) FROM generate_series(1, 2000) g");
    long xid = queryLong("SELECT txid_current() % 4294967296");
    exec("PREPARE TRANSACTION '" + gid + "'");
    exec("COMMIT PREPARED '" + gid + "'");

    List<PgOutputMessage> m =
        read(
            slot,
            pub,
            3,
            StreamingMode.ON,
            Map.of("two_phase", "on"),
            seen(Kind.COMMIT_PREPARED, 1),
            SMALL_WORK_MEM);

    assertBlocksAreWellFormed(m);
    assertThat(all(m, PgOutputMessage.Insert.class)).hasSize(2000);
    var sp = only(m, PgOutputMessage.StreamPrepare.class);
    var cp = only(m, PgOutputMessage.CommitPrepared.class);
    assertThat(sp.xid()).isEqualTo(xid);
    assertThat(sp.gid()).isEqualTo(gid);
    assertThat(sp.flags()).isZero();
    assertThat(sp.prepareLsn()).isLessThan(sp.endLsn());
    assertThat(cp.xid()).isEqualTo(xid);
    assertThat(cp.gid()).isEqualTo(gid);
    assertThat(cp.commitLsn()).isGreaterThanOrEqualTo(sp.endLsn());
    assertThat(kinds(m).subList(m.size() - 2, m.size()))
        .containsExactly(Kind.STREAM_PREPARE, Kind.COMMIT_PREPARED);
  }

  // ---- binary tuple data

  @Test
  void binaryModeSendsBinaryTupleData() throws SQLException {
    String t = table("(id int PRIMARY KEY, big bigint, name text, ok boolean, nothing text)");
    String pub = publish(t);
    String slot = createSlot(false);
    exec("INSERT INTO " + t + " VALUES (258, -2, 'ab', true, NULL)");

    List<PgOutputMessage> m =
        read(slot, pub, 1, StreamingMode.OFF, Map.of("binary", "true"), seen(Kind.COMMIT, 1));

    TupleData row = only(m, PgOutputMessage.Insert.class).newTuple();
    assertThat(kindCodes(row)).isEqualTo("bbbbn");
    assertThat(row.value(0).toByteArray()).containsExactly(0, 0, 1, 2);
    assertThat(ByteBuffer.wrap(row.buffer(), row.offset(1), row.length(1)).getLong())
        .isEqualTo(-2L);
    assertThat(row.value(2).toByteArray()).isEqualTo("ab".getBytes(StandardCharsets.UTF_8));
    assertThat(row.value(3).toByteArray()).containsExactly(1);
  }

  // ---- helpers

  private void assertBlocksAreWellFormed(List<PgOutputMessage> m) {
    boolean inBlock = false;
    for (PgOutputMessage x : m) {
      if (x instanceof PgOutputMessage.StreamStart) {
        assertThat(inBlock).as("nested Stream Start").isFalse();
        inBlock = true;
      } else if (x instanceof PgOutputMessage.StreamStop) {
        assertThat(inBlock).as("Stream Stop outside a block").isTrue();
        inBlock = false;
      } else if (x instanceof PgOutputMessage.StreamableMessage s) {
        assertThat(s.isStreamed()).as("%s inside a block", x.kind()).isEqualTo(inBlock);
      }
    }
  }

  private List<PgOutputMessage> read(
      String slot,
      String pub,
      int version,
      StreamingMode mode,
      Map<String, String> options,
      java.util.function.Predicate<List<PgOutputMessage>> done)
      throws SQLException {
    return read(slot, pub, version, mode, options, done, new Properties());
  }

  private List<PgOutputMessage> read(
      String slot,
      String pub,
      int version,
      StreamingMode mode,
      Map<String, String> options,
      java.util.function.Predicate<List<PgOutputMessage>> done,
      Properties connectionProperties)
      throws SQLException {
    try (PgOutputTestStream s =
        PgOutputTestStream.open(slot, pub, version, mode, options, connectionProperties)) {
      return s.readUntil(done);
    }
  }

  private String table(String columns) throws SQLException {
    String name = "dec_t" + cleanup.size() + "_" + id;
    exec("CREATE TABLE " + name + " " + columns);
    cleanup.add("DROP TABLE IF EXISTS " + name + " CASCADE");
    return name;
  }

  private String publish(String... tables) throws SQLException {
    String name = "dec_pub_" + id;
    exec("CREATE PUBLICATION " + name + " FOR TABLE " + String.join(", ", tables));
    cleanup.add(0, "DROP PUBLICATION IF EXISTS " + name);
    return name;
  }

  private String createSlot(boolean twoPhase) throws SQLException {
    String name = "dec_slot_" + id;
    try (PreparedStatement ps =
        sql.prepareStatement(
            "SELECT pg_create_logical_replication_slot(?, 'pgoutput', false, ?)")) {
      ps.setString(1, name);
      ps.setBoolean(2, twoPhase);
      ps.execute();
    }
    slots.add(name);
    return name;
  }

  /** Runs statements in one transaction and returns its xid. */
  private long inTransaction(String... statements) throws SQLException {
    sql.setAutoCommit(false);
    try {
      for (String s : statements) {
        exec(s);
      }
      long xid = queryLong("SELECT txid_current() % 4294967296");
      sql.commit();
      return xid;
    } finally {
      sql.setAutoCommit(true);
    }
  }

  private void exec(String statement) throws SQLException {
    try (Statement st = sql.createStatement()) {
      st.execute(statement);
    }
  }

  private long queryLong(String query) throws SQLException {
    try (Statement st = sql.createStatement();
        ResultSet rs = st.executeQuery(query)) {
      rs.next();
      return rs.getLong(1);
    }
  }

  private Lsn currentLsn() throws SQLException {
    try (Statement st = sql.createStatement();
        ResultSet rs = st.executeQuery("SELECT pg_current_wal_insert_lsn()::text")) {
      rs.next();
      return Lsn.parse(rs.getString(1));
    }
  }

  private long relid(String table) throws SQLException {
    return queryLong("SELECT '" + table + "'::regclass::oid::bigint");
  }

  private int typmod(String table, String column) throws SQLException {
    return (int)
        queryLong(
            "SELECT atttypmod FROM pg_attribute WHERE attrelid = '"
                + table
                + "'::regclass AND attname = '"
                + column
                + "'");
  }

  private static List<Kind> kinds(List<PgOutputMessage> m) {
    return m.stream().map(PgOutputMessage::kind).collect(Collectors.toList());
  }

  private static <T extends PgOutputMessage> List<T> all(List<PgOutputMessage> m, Class<T> type) {
    return m.stream().filter(type::isInstance).map(type::cast).collect(Collectors.toList());
  }

  private static <T extends PgOutputMessage> T only(List<PgOutputMessage> m, Class<T> type) {
    List<T> found = all(m, type);
    assertThat(found).as("messages of type %s", type.getSimpleName()).hasSize(1);
    return found.get(0);
  }

  private static List<String> texts(TupleData t) {
    List<String> out = new ArrayList<>();
    for (int i = 0; i < t.columnCount(); i++) {
      out.add(t.text(i));
    }
    return out;
  }

  private static String kindCodes(TupleData t) {
    StringBuilder sb = new StringBuilder();
    for (int i = 0; i < t.columnCount(); i++) {
      sb.append(t.kind(i).code());
    }
    return sb.toString();
  }
}
