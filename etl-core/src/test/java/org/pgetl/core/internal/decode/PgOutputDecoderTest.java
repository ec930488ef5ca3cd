package org.pgetl.core.internal.decode;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.pgetl.core.internal.decode.PgOutputBytes.Col.binary;
import static org.pgetl.core.internal.decode.PgOutputBytes.Col.nul;
import static org.pgetl.core.internal.decode.PgOutputBytes.Col.text;
import static org.pgetl.core.internal.decode.PgOutputBytes.Col.unchanged;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;
import org.pgetl.core.internal.decode.PgOutputBytes.Col;
import org.pgetl.core.internal.decode.PgOutputMessage.OldTupleKind;
import org.pgetl.error.ErrorKind;
import org.pgetl.error.EtlException;
import org.pgetl.model.Lsn;

class PgOutputDecoderTest {
  private static final Lsn WAL = Lsn.parse("0/16B3748");
  // 2024-05-01T12:00:00.123456Z in microseconds since 2000-01-01
  private static final long TIME = PgTime.fromInstant(Instant.parse("2024-05-01T12:00:00.123456Z"));

  private static PgOutputDecoder v(int version, StreamingMode mode) {
    return new PgOutputDecoder(version, mode);
  }

  private static PgOutputMessage decode(PgOutputDecoder d, byte[] message) {
    return d.decode(ByteBuffer.wrap(message), WAL);
  }

  private static PgOutputMessage decode1(byte[] message) {
    return decode(v(1, StreamingMode.OFF), message);
  }

  @Nested
  class Transactions {
    @Test
    void beginCarriesFinalLsnCommitTimeAndUnsignedXid() {
      var m =
          (PgOutputMessage.Begin) decode1(PgOutputBytes.begin(0x1_0000_2000L, TIME, 0xFFFF_FFFE));

      assertThat(m.kind()).isEqualTo(PgOutputMessage.Kind.BEGIN);
      assertThat(m.walStart()).isEqualTo(WAL);
      assertThat(m.finalLsn()).isEqualTo(Lsn.parse("1/2000"));
      assertThat(m.commitTime()).isEqualTo(TIME);
      assertThat(m.commitInstant()).isEqualTo(Instant.parse("2024-05-01T12:00:00.123456Z"));
      assertThat(m.xid()).isEqualTo(4_294_967_294L);
    }

    @Test
    void commitCarriesCommitAndEndLsn() {
      var m = (PgOutputMessage.Commit) decode1(PgOutputBytes.commit(0x2000, 0x2030, TIME));

      assertThat(m.flags()).isZero();
      assertThat(m.commitLsn()).isEqualTo(Lsn.of(0x2000));
      assertThat(m.endLsn()).isEqualTo(Lsn.of(0x2030));
      assertThat(m.commitInstant()).isEqualTo(PgTime.toInstant(TIME));
    }

    @Test
    void originCarriesLsnAndName() {
      var m = (PgOutputMessage.Origin) decode1(PgOutputBytes.origin(0x99, "node_a"));

      assertThat(m.originLsn()).isEqualTo(Lsn.of(0x99));
      assertThat(m.name()).isEqualTo("node_a");
    }
  }

  @Nested
  class Schema {
    @Test
    void relationCarriesColumnsKeyFlagsTypesAndIdentity() {
      var m =
          (PgOutputMessage.Relation)
              decode1(PgOutputBytes.relation(0, 16_384, "public", "orders", 'd'));

      assertThat(m.isStreamed()).isFalse();
      assertThat(m.relationId()).isEqualTo(16_384);
      assertThat(m.namespace()).isEqualTo("public");
      assertThat(m.name()).isEqualTo("orders");
      assertThat(m.replicaIdentity()).isEqualTo(ReplicaIdentity.DEFAULT);
      assertThat(m.columns())
          .containsExactly(
              new PgOutputMessage.Relation.Column(1, "id", 20, -1),
              new PgOutputMessage.Relation.Column(0, "name", 1043, 68));
      assertThat(m.columns().get(0).isKey()).isTrue();
      assertThat(m.columns().get(1).isKey()).isFalse();
    }

    @Test
    void relationReadsEveryReplicaIdentity() {
      for (ReplicaIdentity ri : ReplicaIdentity.values()) {
        var m =
            (PgOutputMessage.Relation) decode1(PgOutputBytes.relation(0, 1, "s", "t", ri.code()));
        assertThat(m.replicaIdentity()).isEqualTo(ri);
      }
    }

    @Test
    void emptyNamespaceMeansPgCatalog() {
      var rel = (PgOutputMessage.Relation) decode1(PgOutputBytes.relation(0, 1, "", "t", 'f'));
      var type = (PgOutputMessage.Type) decode1(PgOutputBytes.type(0, 25, "", "text"));

      assertThat(rel.namespace()).isEqualTo("pg_catalog");
      assertThat(type.namespace()).isEqualTo("pg_catalog");
    }

    @Test
    void relationWithUnsignedOidAndNoColumns() {
      byte[] bytes =
          PgOutputBytes.message('R').i32(0x8000_0001).str("s").str("t").u8('n').i16(0).build();

      var m = (PgOutputMessage.Relation) decode1(bytes);

      assertThat(m.relationId()).isEqualTo(0x8000_0001L);
      assertThat(m.columns()).isEmpty();
    }

    @Test
    void typeCarriesOidAndQualifiedName() {
      var m = (PgOutputMessage.Type) decode1(PgOutputBytes.type(0, 16_400, "public", "mood"));

      assertThat(m.typeOid()).isEqualTo(16_400);
      assertThat(m.namespace()).isEqualTo("public");
      assertThat(m.name()).isEqualTo("mood");
    }

    @Test
    void namesAreUtf8() {
      var m =
          (PgOutputMessage.Relation) decode1(PgOutputBytes.relation(0, 1, "sché", "tâble", 'd'));

      assertThat(m.namespace()).isEqualTo("sché");
      assertThat(m.name()).isEqualTo("tâble");
    }
  }

  @Nested
  class Changes {
    @Test
    void insertTupleHasEveryKindAndPointsIntoTheMessageArray() {
      byte[] bytes =
          PgOutputBytes.insert(
              0, 16_384, text("42"), nul(), unchanged(), binary(0, 0, 0, 7), text(""));

      var m = (PgOutputMessage.Insert) decode1(bytes);
      TupleData t = m.newTuple();

      assertThat(m.relationId()).isEqualTo(16_384);
      assertThat(t.columnCount()).isEqualTo(5);
      assertThat(t.buffer()).isSameAs(bytes);
      assertThat(t.kind(0)).isEqualTo(TupleData.Kind.TEXT);
      assertThat(t.text(0)).isEqualTo("42");
      assertThat(new String(t.buffer(), t.offset(0), t.length(0), StandardCharsets.UTF_8))
          .isEqualTo("42");
      assertThat(t.kind(1)).isEqualTo(TupleData.Kind.NULL);
      assertThat(t.isNull(1)).isTrue();
      assertThat(t.offset(1)).isEqualTo(-1);
      assertThat(t.length(1)).isEqualTo(-1);
      assertThat(t.value(1)).isNull();
      assertThat(t.kind(2)).isEqualTo(TupleData.Kind.UNCHANGED_TOAST);
      assertThat(t.isUnchangedToast(2)).isTrue();
      assertThat(t.hasValue(2)).isFalse();
      assertThat(t.kind(3)).isEqualTo(TupleData.Kind.BINARY);
      assertThat(t.value(3).toByteArray()).containsExactly(0, 0, 0, 7);
      assertThat(t.kind(4)).isEqualTo(TupleData.Kind.TEXT);
      assertThat(t.hasValue(4)).isTrue();
      assertThat(t.length(4)).isZero();
      assertThat(t.toString()).isEqualTo("TupleData[tnubt]");
    }

    @Test
    void updateWithoutOldTuple() {
      var m =
          (PgOutputMessage.Update) decode1(PgOutputBytes.update(0, 7, (char) 0, null, text("a")));

      assertThat(m.oldTupleKind()).isEqualTo(OldTupleKind.NONE);
      assertThat(m.oldTuple()).isNull();
      assertThat(m.newTuple().text(0)).isEqualTo("a");
    }

    @Test
    void updateWithOldKeyTuple() {
      var m =
          (PgOutputMessage.Update)
              decode1(
                  PgOutputBytes.update(
                      0, 7, 'K', new Col[] {text("1"), nul()}, text("2"), text("x")));

      assertThat(m.oldTupleKind()).isEqualTo(OldTupleKind.KEY);
      assertThat(m.oldTuple().text(0)).isEqualTo("1");
      assertThat(m.oldTuple().isNull(1)).isTrue();
      assertThat(m.newTuple().text(0)).isEqualTo("2");
    }

    @Test
    void updateWithFullOldTupleAndUnchangedToast() {
      var m =
          (PgOutputMessage.Update)
              decode1(
                  PgOutputBytes.update(
                      0, 7, 'O', new Col[] {text("1"), text("big")}, text("1"), unchanged()));

      assertThat(m.oldTupleKind()).isEqualTo(OldTupleKind.FULL);
      assertThat(m.oldTuple().text(1)).isEqualTo("big");
      assertThat(m.newTuple().isUnchangedToast(1)).isTrue();
    }

    @Test
    void deleteWithKeyOrFullOldTuple() {
      var key = (PgOutputMessage.Delete) decode1(PgOutputBytes.delete(0, 7, 'K', text("1"), nul()));
      var full =
          (PgOutputMessage.Delete) decode1(PgOutputBytes.delete(0, 7, 'O', text("1"), text("x")));

      assertThat(key.oldTupleKind()).isEqualTo(OldTupleKind.KEY);
      assertThat(key.oldTuple().text(0)).isEqualTo("1");
      assertThat(full.oldTupleKind()).isEqualTo(OldTupleKind.FULL);
      assertThat(full.oldTuple().text(1)).isEqualTo("x");
    }

    @Test
    void truncateOptionsAndRelationIds() {
      var both = (PgOutputMessage.Truncate) decode1(PgOutputBytes.truncate(0, 3, 10, 0xFFFF_FFF0));
      var none = (PgOutputMessage.Truncate) decode1(PgOutputBytes.truncate(0, 0, 10));
      var cascade = (PgOutputMessage.Truncate) decode1(PgOutputBytes.truncate(0, 1, 10));
      var restart = (PgOutputMessage.Truncate) decode1(PgOutputBytes.truncate(0, 2, 10));

      assertThat(both.relationIds()).containsExactly(10L, 0xFFFF_FFF0L);
      assertThat(both.cascade()).isTrue();
      assertThat(both.restartIdentity()).isTrue();
      assertThat(none.cascade()).isFalse();
      assertThat(none.restartIdentity()).isFalse();
      assertThat(cascade.cascade()).isTrue();
      assertThat(cascade.restartIdentity()).isFalse();
      assertThat(restart.cascade()).isFalse();
      assertThat(restart.restartIdentity()).isTrue();
      assertThat(restart.options()).isEqualTo(PgOutputMessage.Truncate.RESTART_IDENTITY);
    }

    @Test
    void logicalMessagesTransactionalOrNot() {
      byte[] content = {1, 2, 0, 3};
      var tx =
          (PgOutputMessage.LogicalMessage)
              decode1(PgOutputBytes.logicalMessage(0, true, 0x500, "app", content));
      var nontx =
          (PgOutputMessage.LogicalMessage)
              decode1(PgOutputBytes.logicalMessage(0, false, 0x600, "", new byte[0]));

      assertThat(tx.transactional()).isTrue();
      assertThat(tx.messageLsn()).isEqualTo(Lsn.of(0x500));
      assertThat(tx.prefix()).isEqualTo("app");
      assertThat(tx.content()).isEqualTo(ByteSlice.copyOf(content));
      assertThat(tx.content().toByteArray()).containsExactly(content);
      assertThat(tx.content().toString()).isEqualTo("ByteSlice[length=4]");
      assertThat(nontx.transactional()).isFalse();
      assertThat(nontx.prefix()).isEmpty();
      assertThat(nontx.content().length()).isZero();
    }

    @Test
    void tuplesCompareByContent() {
      var a = (PgOutputMessage.Insert) decode1(PgOutputBytes.insert(0, 1, text("x"), nul()));
      var b = (PgOutputMessage.Insert) decode1(PgOutputBytes.insert(0, 1, text("x"), nul()));
      var c = (PgOutputMessage.Insert) decode1(PgOutputBytes.insert(0, 1, text("y"), nul()));

      assertThat(a).isEqualTo(b).hasSameHashCodeAs(b).isNotEqualTo(c);
    }
  }

  @Nested
  class Input {
    @Test
    void respectsArrayOffsetPositionAndLimit() {
      byte[] message = PgOutputBytes.insert(0, 5, text("hello"));
      byte[] frame = new byte[25 + message.length + 7];
      Arrays.fill(frame, (byte) 'Z');
      System.arraycopy(message, 0, frame, 25, message.length);
      // like pgjdbc: a slice after the XLogData header, then a position past a prefix
      ByteBuffer sliced = ByteBuffer.wrap(frame, 20, frame.length - 20).slice();
      sliced.position(5).limit(5 + message.length);

      var m = (PgOutputMessage.Insert) v(1, StreamingMode.OFF).decode(sliced, WAL);

      assertThat(m.newTuple().text(0)).isEqualTo("hello");
      assertThat(m.newTuple().buffer()).isSameAs(frame);
      assertThat(sliced.position()).isEqualTo(5);
    }

    @Test
    void directBufferIsCopiedThenDecoded() {
      byte[] message = PgOutputBytes.insert(0, 5, text("hi"));
      ByteBuffer direct = ByteBuffer.allocateDirect(message.length);
      direct.put(message).flip();

      var m = (PgOutputMessage.Insert) v(1, StreamingMode.OFF).decode(direct, WAL);

      assertThat(m.newTuple().text(0)).isEqualTo("hi");
      assertThat(direct.position()).isZero();
    }

    @Test
    void readOnlyBufferIsDecoded() {
      byte[] message = PgOutputBytes.begin(1, 2, 3);

      var m = v(1, StreamingMode.OFF).decode(ByteBuffer.wrap(message).asReadOnlyBuffer(), WAL);

      assertThat(m).isEqualTo(new PgOutputMessage.Begin(WAL, Lsn.of(1), 2, 3));
    }
  }

  @Nested
  class Streaming {
    @Test
    void dataMessagesInsideAStreamBlockCarryTheXid() {
      PgOutputDecoder d = v(2, StreamingMode.ON);

      var start = (PgOutputMessage.StreamStart) decode(d, PgOutputBytes.streamStart(900, true));
      assertThat(start.xid()).isEqualTo(900);
      assertThat(start.firstSegment()).isTrue();
      assertThat(d.inStreamBlock()).isTrue();
      assertThat(d.streamBlockXid()).isEqualTo(900);

      var origin = (PgOutputMessage.Origin) decode(d, PgOutputBytes.origin(0, "o"));
      var type = (PgOutputMessage.Type) decode(d, PgOutputBytes.type(901, 77, "public", "mood"));
      var rel =
          (PgOutputMessage.Relation) decode(d, PgOutputBytes.relation(901, 5, "public", "t", 'd'));
      var ins = (PgOutputMessage.Insert) decode(d, PgOutputBytes.insert(901, 5, text("1")));
      var upd =
          (PgOutputMessage.Update)
              decode(d, PgOutputBytes.update(900, 5, 'K', new Col[] {text("1")}, text("2")));
      var del = (PgOutputMessage.Delete) decode(d, PgOutputBytes.delete(900, 5, 'K', text("2")));
      var tr = (PgOutputMessage.Truncate) decode(d, PgOutputBytes.truncate(900, 1, 5));
      var msg =
          (PgOutputMessage.LogicalMessage)
              decode(d, PgOutputBytes.logicalMessage(900, true, 9, "p", new byte[] {1}));
      var stop = decode(d, PgOutputBytes.streamStop());

      assertThat(origin.name()).isEqualTo("o");
      assertThat(type.streamXid()).isEqualTo(901);
      assertThat(type.typeOid()).isEqualTo(77);
      assertThat(rel.streamXid()).isEqualTo(901);
      assertThat(rel.isStreamed()).isTrue();
      assertThat(rel.relationId()).isEqualTo(5);
      assertThat(ins.streamXid()).isEqualTo(901);
      assertThat(ins.newTuple().text(0)).isEqualTo("1");
      assertThat(upd.streamXid()).isEqualTo(900);
      assertThat(upd.oldTuple().text(0)).isEqualTo("1");
      assertThat(del.streamXid()).isEqualTo(900);
      assertThat(tr.streamXid()).isEqualTo(900);
      assertThat(tr.relationIds()).containsExactly(5L);
      assertThat(msg.streamXid()).isEqualTo(900);
      assertThat(msg.content().toByteArray()).containsExactly(1);
      assertThat(stop).isEqualTo(new PgOutputMessage.StreamStop(WAL));
      assertThat(d.inStreamBlock()).isFalse();
      assertThat(d.streamBlockXid()).isZero();

      // after the block, data messages have no xid again
      var after = (PgOutputMessage.Insert) decode(d, PgOutputBytes.insert(0, 5, text("3")));
      assertThat(after.isStreamed()).isFalse();
    }

    @Test
    void spooledChangesDecodeWithTheirXidOutsideTheBlockAndLeaveTheBlockStateAlone() {
      PgOutputDecoder d = v(2, StreamingMode.ON);
      byte[] ins = PgOutputBytes.insert(901, 5, text("1"));
      byte[] padded = new byte[ins.length + 3];
      System.arraycopy(ins, 0, padded, 2, ins.length);

      var m = (PgOutputMessage.Insert) d.decodeSpooled(padded, 2, ins.length, WAL);
      assertThat(m.streamXid()).isEqualTo(901);
      assertThat(m.newTuple().text(0)).isEqualTo("1");
      assertThat(d.inStreamBlock()).isFalse();
      byte[] relation = PgOutputBytes.relation(900, 5, "public", "t", 'd');
      decode(d, PgOutputBytes.streamStart(902, true));
      var rel = (PgOutputMessage.Relation) d.decodeSpooled(relation, 0, relation.length, WAL);
      assertThat(rel.streamXid()).isEqualTo(900);
      assertThat(d.streamBlockXid()).isEqualTo(902);
      byte[] stop = PgOutputBytes.streamStop();
      assertThatThrownBy(() -> d.decodeSpooled(stop, 0, stop.length, WAL))
          .isInstanceOfSatisfying(
              EtlException.class,
              e -> assertThat(e.kind()).isEqualTo(ErrorKind.REPLICATION_PROTOCOL_ERROR))
          .hasMessageContaining("spooled");
      assertThat(d.inStreamBlock()).isTrue();
    }

    @Test
    void theXidOfAStreamedChangeIsReadWithoutDecodingIt() {
      PgOutputDecoder d = v(2, StreamingMode.ON);
      ByteBuffer ins = ByteBuffer.wrap(PgOutputBytes.insert(0xFFFFFFF0L, 5, text("1")));
      assertThat(d.streamedChangeXid(ins)).as("outside a block").isZero();
      decode(d, PgOutputBytes.streamStart(900, true));
      assertThat(d.streamedChangeXid(ins)).isEqualTo(0xFFFFFFF0L);
      assertThat(ins.position()).isZero();
      assertThat(d.streamedChangeXid(ByteBuffer.wrap(PgOutputBytes.truncate(901, 0, 5))))
          .isEqualTo(901);
      assertThat(d.streamedChangeXid(ByteBuffer.wrap(PgOutputBytes.type(901, 77, "public", "m"))))
          .as("a Type message")
          .isZero();
      assertThat(d.streamedChangeXid(ByteBuffer.wrap(PgOutputBytes.streamStop()))).isZero();
    }

    @Test
    void streamCommit() {
      PgOutputDecoder d = v(2, StreamingMode.ON);

      var m =
          (PgOutputMessage.StreamCommit)
              decode(d, PgOutputBytes.streamCommit(900, 0x7000, 0x7040, TIME));

      assertThat(m.xid()).isEqualTo(900);
      assertThat(m.flags()).isZero();
      assertThat(m.commitLsn()).isEqualTo(Lsn.of(0x7000));
      assertThat(m.endLsn()).isEqualTo(Lsn.of(0x7040));
      assertThat(m.commitInstant()).isEqualTo(PgTime.toInstant(TIME));
    }

    @Test
    void streamAbortWithoutAbortInfoBeforeParallelStreaming() {
      for (PgOutputDecoder d :
          List.of(v(2, StreamingMode.ON), v(3, StreamingMode.ON), v(4, StreamingMode.ON))) {
        var m = (PgOutputMessage.StreamAbort) decode(d, PgOutputBytes.streamAbort(900, 901));

        assertThat(m.xid()).isEqualTo(900);
        assertThat(m.subXid()).isEqualTo(901);
        assertThat(m.isTopLevel()).isFalse();
        assertThat(m.hasAbortInfo()).isFalse();
        assertThat(m.abortLsn()).isEqualTo(Lsn.ZERO);
        assertThat(m.abortInstant()).isNull();
      }
    }

    @Test
    void streamAbortWithAbortInfoUnderParallelStreaming() {
      PgOutputDecoder d = v(4, StreamingMode.PARALLEL);

      var m =
          (PgOutputMessage.StreamAbort)
              decode(d, PgOutputBytes.streamAbortWithInfo(900, 900, 0x8000, TIME));

      assertThat(m.isTopLevel()).isTrue();
      assertThat(m.hasAbortInfo()).isTrue();
      assertThat(m.abortLsn()).isEqualTo(Lsn.of(0x8000));
      assertThat(m.abortTime()).isEqualTo(TIME);
      assertThat(m.abortInstant()).isEqualTo(PgTime.toInstant(TIME));
    }

    @Test
    void abortInfoIsTrailingGarbageWithoutParallelStreaming() {
      PgOutputDecoder d = v(4, StreamingMode.ON);

      assertInvalid(
          d, PgOutputBytes.streamAbortWithInfo(900, 900, 1, 2), "Stream Abort", "at byte 9 of 25");
    }

    @Test
    void abortInfoMissingUnderParallelStreamingIsTruncation() {
      PgOutputDecoder d = v(4, StreamingMode.PARALLEL);

      assertInvalid(d, PgOutputBytes.streamAbort(900, 900), "Stream Abort", "abort LSN");
    }

    @Test
    void laterSegmentIsNotFirst() {
      var m =
          (PgOutputMessage.StreamStart)
              decode(v(2, StreamingMode.ON), PgOutputBytes.streamStart(900, false));

      assertThat(m.firstSegment()).isFalse();
    }

    @Test
    void blockOrderIsEnforced() {
      PgOutputDecoder d = v(2, StreamingMode.ON);

      assertProtocolError(d, PgOutputBytes.streamStop(), "Stream Stop message without");
      decode(d, PgOutputBytes.streamStart(900, true));
      assertProtocolError(d, PgOutputBytes.streamStart(901, true), "Stream Start message inside");
      assertProtocolError(d, PgOutputBytes.begin(1, 2, 3), "Begin message inside");
      assertProtocolError(d, PgOutputBytes.commit(1, 2, 3), "Commit message inside");
      assertProtocolError(d, PgOutputBytes.streamCommit(900, 1, 2, 3), "Stream Commit message");
      assertProtocolError(d, PgOutputBytes.streamAbort(900, 900), "Stream Abort message inside");
      // the failed decodes left the block open
      assertThat(d.inStreamBlock()).isTrue();
      assertThat(d.streamBlockXid()).isEqualTo(900);
    }

    @Test
    void xidZeroInsideABlockIsInvalid() {
      PgOutputDecoder d = v(2, StreamingMode.ON);
      decode(d, PgOutputBytes.streamStart(900, true));

      byte[] xidZero = PgOutputBytes.message('I').i32(0).i32(5).u8('N').tuple(text("1")).build();

      assertInvalid(d, xidZero, "Insert message at byte 1", "invalid transaction id 0");
    }

    @Test
    void failedStreamStartLeavesNoBlockOpen() {
      PgOutputDecoder d = v(2, StreamingMode.ON);
      byte[] bad = PgOutputBytes.message('S').i32(900).u8(1).u8(0).build();

      assertInvalid(d, bad, "Stream Start", "unexpected bytes");
      assertThat(d.inStreamBlock()).isFalse();
    }
  }

  @Nested
  class TwoPhase {
    @Test
    void beginPrepare() {
      var m =
          (PgOutputMessage.BeginPrepare)
              decode(
                  v(3, StreamingMode.OFF),
                  PgOutputBytes.beginPrepare(0x100, 0x140, TIME, 77, "gid-1"));

      assertThat(m.prepareLsn()).isEqualTo(Lsn.of(0x100));
      assertThat(m.endLsn()).isEqualTo(Lsn.of(0x140));
      assertThat(m.prepareTime()).isEqualTo(TIME);
      assertThat(m.prepareInstant()).isEqualTo(PgTime.toInstant(TIME));
      assertThat(m.xid()).isEqualTo(77);
      assertThat(m.gid()).isEqualTo("gid-1");
    }

    @Test
    void prepare() {
      var m =
          (PgOutputMessage.Prepare)
              decode(
                  v(3, StreamingMode.OFF),
                  PgOutputBytes.prepare('P', 0x100, 0x140, TIME, 77, "gid-1"));

      assertThat(m)
          .isEqualTo(
              new PgOutputMessage.Prepare(WAL, 0, Lsn.of(0x100), Lsn.of(0x140), TIME, 77, "gid-1"));
    }

    @Test
    void commitPrepared() {
      var m =
          (PgOutputMessage.CommitPrepared)
              decode(
                  v(3, StreamingMode.OFF),
                  PgOutputBytes.prepare('K', 0x200, 0x240, TIME, 77, "gid-1"));

      assertThat(m)
          .isEqualTo(
              new PgOutputMessage.CommitPrepared(
                  WAL, 0, Lsn.of(0x200), Lsn.of(0x240), TIME, 77, "gid-1"));
      assertThat(m.commitInstant()).isEqualTo(PgTime.toInstant(TIME));
    }

    @Test
    void rollbackPrepared() {
      var m =
          (PgOutputMessage.RollbackPrepared)
              decode(
                  v(3, StreamingMode.OFF),
                  PgOutputBytes.rollbackPrepared(0x140, 0x300, TIME, TIME + 5, 77, "gid-1"));

      assertThat(m.prepareEndLsn()).isEqualTo(Lsn.of(0x140));
      assertThat(m.rollbackEndLsn()).isEqualTo(Lsn.of(0x300));
      assertThat(m.prepareTime()).isEqualTo(TIME);
      assertThat(m.rollbackTime()).isEqualTo(TIME + 5);
      assertThat(m.rollbackInstant()).isEqualTo(PgTime.toInstant(TIME + 5));
      assertThat(m.xid()).isEqualTo(77);
      assertThat(m.gid()).isEqualTo("gid-1");
    }

    @Test
    void streamPrepare() {
      var m =
          (PgOutputMessage.StreamPrepare)
              decode(
                  v(3, StreamingMode.ON),
                  PgOutputBytes.prepare('p', 0x100, 0x140, TIME, 77, "gid-2"));

      assertThat(m)
          .isEqualTo(
              new PgOutputMessage.StreamPrepare(
                  WAL, 0, Lsn.of(0x100), Lsn.of(0x140), TIME, 77, "gid-2"));
    }
  }

  @Nested
  class Versions {
    @Test
    void streamMessagesNeedVersionTwo() {
      assertProtocolError(
          v(1, StreamingMode.OFF), PgOutputBytes.streamStart(1, true), "need protocol version 2");
      assertProtocolError(
          v(1, StreamingMode.OFF), PgOutputBytes.streamAbort(1, 1), "need protocol version 2");
    }

    @Test
    void twoPhaseMessagesNeedVersionThree() {
      PgOutputDecoder d = v(2, StreamingMode.ON);

      assertProtocolError(
          d, PgOutputBytes.beginPrepare(1, 2, 3, 4, "g"), "Begin Prepare messages need");
      assertProtocolError(
          d, PgOutputBytes.prepare('P', 1, 2, 3, 4, "g"), "need protocol version 3");
      assertProtocolError(
          d, PgOutputBytes.prepare('K', 1, 2, 3, 4, "g"), "need protocol version 3");
      assertProtocolError(
          d, PgOutputBytes.rollbackPrepared(1, 2, 3, 4, 5, "g"), "need protocol version 3");
      assertProtocolError(
          d, PgOutputBytes.prepare('p', 1, 2, 3, 4, "g"), "need protocol version 3");
    }

    @Test
    void streamMessagesNeedStreamingOn() {
      assertProtocolError(
          v(4, StreamingMode.OFF), PgOutputBytes.streamStart(1, true), "streaming off");
      assertProtocolError(
          v(3, StreamingMode.OFF), PgOutputBytes.prepare('p', 1, 2, 3, 4, "g"), "streaming off");
    }

    @Test
    void versionOneDecodesTheVersionOneMessages() {
      PgOutputDecoder d = v(1, StreamingMode.OFF);

      assertThat(decode(d, PgOutputBytes.begin(1, 2, 3)).kind())
          .isEqualTo(PgOutputMessage.Kind.BEGIN);
      assertThat(decode(d, PgOutputBytes.logicalMessage(0, false, 1, "p", new byte[0])).kind())
          .isEqualTo(PgOutputMessage.Kind.MESSAGE);
    }

    @Test
    void constructorRejectsBadOptions() {
      assertThatThrownBy(() -> v(0, StreamingMode.OFF))
          .isInstanceOfSatisfying(
              EtlException.class, e -> assertThat(e.kind()).isEqualTo(ErrorKind.CONFIG_ERROR))
          .hasMessageContaining("between 1 and 4, was 0");
      assertThatThrownBy(() -> v(5, StreamingMode.OFF)).hasMessageContaining("was 5");
      assertThatThrownBy(() -> v(1, StreamingMode.ON))
          .hasMessageContaining("streaming 'on' needs protocol version 2");
      assertThatThrownBy(() -> v(3, StreamingMode.PARALLEL))
          .hasMessageContaining("streaming 'parallel' needs protocol version 4");
      assertThat(v(4, StreamingMode.PARALLEL).protocolVersion()).isEqualTo(4);
      assertThat(v(4, StreamingMode.PARALLEL).streaming()).isEqualTo(StreamingMode.PARALLEL);
    }
  }

  @Nested
  class Malformed {
    @Test
    void emptyMessage() {
      assertInvalid1(new byte[0], "pgoutput message", "the message is empty");
    }

    @Test
    void unknownType() {
      assertInvalid1(new byte[] {'Z', 0}, "pgoutput message at byte 0", "unknown message type 'Z'");
      assertInvalid1(new byte[] {(byte) 0xF1}, "at byte 0 of 1", "unknown message type 0xF1");
    }

    @Test
    void truncatedFixedField() {
      byte[] begin = PgOutputBytes.begin(1, 2, 3);

      assertInvalid1(
          Arrays.copyOf(begin, 12), "Begin message at byte 9 of 12", "commit time needs 8 bytes");
      assertInvalid1(Arrays.copyOf(begin, 1), "Begin message at byte 1 of 1", "final LSN");
    }

    @Test
    void trailingGarbage() {
      byte[] commit = Arrays.copyOf(PgOutputBytes.commit(1, 2, 3), 27);

      assertInvalid1(commit, "Commit message at byte 26 of 27", "1 unexpected bytes follow");
    }

    @Test
    void stringWithoutNul() {
      byte[] origin = PgOutputBytes.origin(1, "abc");

      assertInvalid1(
          Arrays.copyOf(origin, origin.length - 1),
          "Origin message at byte 9",
          "origin name is not terminated by a NUL byte");
    }

    @Test
    void badTupleKind() {
      byte[] bytes = PgOutputBytes.insert(0, 5, text("1"), new Col('x', null));

      assertInvalid1(bytes, "Insert message at byte 14", "new tuple column 1 has unknown kind 'x'");
    }

    @Test
    void negativeValueLength() {
      byte[] bytes = PgOutputBytes.message('I').i32(5).u8('N').i16(1).u8('t').i32(-3).build();

      assertInvalid1(bytes, "Insert message at byte 9", "negative value length -3");
    }

    @Test
    void valueLengthBeyondTheMessage() {
      byte[] bytes = PgOutputBytes.message('I').i32(5).u8('N').i16(1).u8('b').i32(10).u8(1).build();

      assertInvalid1(bytes, "at byte 9", "value length 10 exceeds the 1 remaining bytes");
    }

    @Test
    void columnCountBeyondTheMessage() {
      byte[] bytes = PgOutputBytes.message('I').i32(5).u8('N').i16(65_535).u8('n').build();

      assertInvalid1(bytes, "Insert message at byte 6", "column count 65535 exceeds");
    }

    @Test
    void relationColumnCountBeyondTheMessage() {
      byte[] bytes =
          PgOutputBytes.message('R').i32(1).str("s").str("t").u8('d').i16(3).u8(0).build();

      assertInvalid1(bytes, "Relation message at byte 10", "column count 3 exceeds");
    }

    @Test
    void unknownReplicaIdentity() {
      byte[] bytes = PgOutputBytes.relation(0, 1, "s", "t", 'q');

      assertInvalid1(bytes, "Relation message at byte 9", "unknown replica identity 'q'");
    }

    @Test
    void truncateCounts() {
      byte[] negative = PgOutputBytes.message('T').i32(-1).u8(0).build();
      byte[] tooMany = PgOutputBytes.message('T').i32(1_000_000_000).u8(0).i32(1).build();

      assertInvalid1(negative, "Truncate message at byte 1", "negative relation count -1");
      assertInvalid1(tooMany, "Truncate message at byte 1", "relation count 1000000000 exceeds");
    }

    @Test
    void messageContentLength() {
      byte[] negative = PgOutputBytes.message('M').u8(1).i64(1).str("p").i32(-1).build();
      byte[] tooLong = PgOutputBytes.message('M').u8(1).i64(1).str("p").i32(5).u8(1).build();

      assertInvalid1(negative, "Message message at byte 12", "negative content length -1");
      assertInvalid1(tooLong, "at byte 12", "content length 5 exceeds the 1 remaining bytes");
    }

    @Test
    void badTupleTags() {
      byte[] insert = PgOutputBytes.message('I').i32(5).u8('K').i16(0).build();
      byte[] update = PgOutputBytes.message('U').i32(5).u8('X').i16(0).build();
      byte[] updateNoNew = PgOutputBytes.message('U').i32(5).u8('K').i16(0).u8('O').i16(0).build();
      byte[] delete = PgOutputBytes.message('D').i32(5).u8('N').i16(0).build();

      assertInvalid1(insert, "Insert message at byte 5", "expected new tuple tag 'N', found 'K'");
      assertInvalid1(update, "Update message at byte 5", "expected tuple tag 'K', 'O' or 'N'");
      assertInvalid1(updateNoNew, "Update message at byte 8", "expected new tuple tag 'N'");
      assertInvalid1(delete, "Delete message at byte 5", "expected tuple tag 'K' or 'O'");
    }

    @Test
    void errorDetailNamesTheLsnAndRelation() {
      byte[] bytes = PgOutputBytes.insert(0, 16_384, new Col('?', null));

      assertThatThrownBy(() -> decode1(bytes))
          .isInstanceOfSatisfying(
              EtlException.class,
              e -> {
                assertThat(e.kind()).isEqualTo(ErrorKind.INVALID_DATA);
                assertThat(e.detail())
                    .contains("WAL start 0/16B3748")
                    .contains("relation oid 16384")
                    .contains("protocol version 1");
              });
    }

    @Test
    void everyTruncationOfEveryMessageIsInvalidData() {
      for (Samples.Sample s : Samples.all()) {
        for (int len = 0; len < s.bytes().length; len++) {
          byte[] cut = Arrays.copyOf(s.bytes(), len);
          PgOutputDecoder d = s.decoder();
          assertThatThrownBy(() -> d.decode(cut, 0, cut.length, WAL))
              .as("%s cut to %d bytes", s.name(), len)
              .isInstanceOfSatisfying(
                  EtlException.class, e -> assertThat(e.kind()).isEqualTo(ErrorKind.INVALID_DATA));
        }
      }
    }
  }

  @Test
  void pgTimeConvertsBothWays() {
    assertThat(PgTime.toInstant(0)).isEqualTo(Instant.parse("2000-01-01T00:00:00Z"));
    assertThat(PgTime.toInstant(-1)).isEqualTo(Instant.parse("1999-12-31T23:59:59.999999Z"));
    assertThat(PgTime.fromInstant(Instant.parse("2000-01-01T00:00:01.5Z"))).isEqualTo(1_500_000);
    assertThat(PgTime.toInstant(Long.MAX_VALUE)).isAfter(Instant.parse("9999-12-31T00:00:00Z"));
    assertThat(PgTime.toInstant(Long.MIN_VALUE)).isBefore(Instant.parse("-9999-01-01T00:00:00Z"));
  }

  private static void assertInvalid1(byte[] bytes, String... fragments) {
    assertInvalid(v(1, StreamingMode.OFF), bytes, fragments);
  }

  private static void assertInvalid(PgOutputDecoder d, byte[] bytes, String... fragments) {
    assertThatThrownBy(() -> decode(d, bytes))
        .isInstanceOfSatisfying(
            EtlException.class,
            e -> {
              assertThat(e.kind()).isEqualTo(ErrorKind.INVALID_DATA);
              assertThat(e.getMessage()).contains(fragments);
            });
  }

  private static void assertProtocolError(PgOutputDecoder d, byte[] bytes, String fragment) {
    assertThatThrownBy(() -> decode(d, bytes))
        .isInstanceOfSatisfying(
            EtlException.class,
            e -> {
              assertThat(e.kind()).isEqualTo(ErrorKind.REPLICATION_PROTOCOL_ERROR);
              assertThat(e.getMessage()).contains(fragment);
            });
  }
}
