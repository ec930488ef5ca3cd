package org.pgetl.core.internal.decode;

import static org.pgetl.core.internal.decode.PgOutputBytes.Col.binary;
import static org.pgetl.core.internal.decode.PgOutputBytes.Col.nul;
import static org.pgetl.core.internal.decode.PgOutputBytes.Col.text;
import static org.pgetl.core.internal.decode.PgOutputBytes.Col.unchanged;

import java.util.ArrayList;
import java.util.List;
import java.util.function.Supplier;
import org.pgetl.core.internal.decode.PgOutputBytes.Col;
import org.pgetl.model.Lsn;

/** One valid message of every type and protocol variant, each with the decoder it needs. */
final class Samples {
  private Samples() {}

  static List<Sample> all() {
    List<Sample> out = new ArrayList<>();
    Supplier<PgOutputDecoder> v1 = () -> new PgOutputDecoder(1, StreamingMode.OFF);
    Supplier<PgOutputDecoder> v2 = () -> new PgOutputDecoder(2, StreamingMode.ON);
    Supplier<PgOutputDecoder> v3 = () -> new PgOutputDecoder(3, StreamingMode.ON);
    Supplier<PgOutputDecoder> v4 = () -> new PgOutputDecoder(4, StreamingMode.PARALLEL);
    Supplier<PgOutputDecoder> inBlock =
        () -> inStreamBlock(new PgOutputDecoder(2, StreamingMode.ON));

    out.add(new Sample("begin", PgOutputBytes.begin(0x1000, 1234, 55), v1));
    out.add(new Sample("commit", PgOutputBytes.commit(0x1000, 0x1040, 1234), v1));
    out.add(new Sample("origin", PgOutputBytes.origin(0x77, "origin_a"), v1));
    out.add(new Sample("relation", PgOutputBytes.relation(0, 16_384, "public", "t", 'd'), v1));
    out.add(new Sample("type", PgOutputBytes.type(0, 16_400, "public", "mood"), v1));
    out.add(
        new Sample(
            "insert",
            PgOutputBytes.insert(0, 16_384, text("1"), nul(), binary(0, 0, 0, 1), text("x")),
            v1));
    out.add(
        new Sample("update-none", PgOutputBytes.update(0, 16_384, (char) 0, null, text("1")), v1));
    out.add(
        new Sample(
            "update-key",
            PgOutputBytes.update(
                0, 16_384, 'K', new Col[] {text("1"), nul()}, text("2"), text("y")),
            v1));
    out.add(
        new Sample(
            "update-full-toast",
            PgOutputBytes.update(
                0, 16_384, 'O', new Col[] {text("1"), text("big")}, text("1"), unchanged()),
            v1));
    out.add(new Sample("delete-key", PgOutputBytes.delete(0, 16_384, 'K', text("1"), nul()), v1));
    out.add(
        new Sample("delete-full", PgOutputBytes.delete(0, 16_384, 'O', text("1"), text("z")), v1));
    out.add(new Sample("truncate", PgOutputBytes.truncate(0, 3, 16_384, 16_390), v1));
    out.add(
        new Sample(
            "message-tx",
            PgOutputBytes.logicalMessage(0, true, 0x99, "app", new byte[] {1, 2, 3}),
            v1));
    out.add(
        new Sample(
            "message-nontx", PgOutputBytes.logicalMessage(0, false, 0x99, "", new byte[0]), v1));
    out.add(new Sample("stream-start", PgOutputBytes.streamStart(900, true), v2));
    out.add(new Sample("stream-stop", PgOutputBytes.streamStop(), inBlock));
    out.add(new Sample("stream-commit", PgOutputBytes.streamCommit(900, 1, 2, 3), v2));
    out.add(new Sample("stream-abort", PgOutputBytes.streamAbort(900, 901), v2));
    out.add(
        new Sample(
            "stream-abort-v4", PgOutputBytes.streamAbortWithInfo(900, 900, 0x100, 1234), v4));
    out.add(
        new Sample(
            "stream-relation", PgOutputBytes.relation(900, 16_384, "public", "t", 'f'), inBlock));
    out.add(new Sample("stream-type", PgOutputBytes.type(900, 16_400, "", "mood"), inBlock));
    out.add(new Sample("stream-insert", PgOutputBytes.insert(901, 16_384, text("1")), inBlock));
    out.add(
        new Sample(
            "stream-update",
            PgOutputBytes.update(900, 16_384, 'K', new Col[] {text("1")}, text("2")),
            inBlock));
    out.add(
        new Sample("stream-delete", PgOutputBytes.delete(900, 16_384, 'O', text("1")), inBlock));
    out.add(new Sample("stream-truncate", PgOutputBytes.truncate(900, 1, 16_384), inBlock));
    out.add(
        new Sample(
            "stream-message",
            PgOutputBytes.logicalMessage(900, true, 0x99, "p", new byte[] {9}),
            inBlock));
    out.add(new Sample("begin-prepare", PgOutputBytes.beginPrepare(1, 2, 3, 4, "gid"), v3));
    out.add(new Sample("prepare", PgOutputBytes.prepare('P', 1, 2, 3, 4, "gid"), v3));
    out.add(new Sample("commit-prepared", PgOutputBytes.prepare('K', 1, 2, 3, 4, "gid"), v3));
    out.add(
        new Sample("rollback-prepared", PgOutputBytes.rollbackPrepared(1, 2, 3, 4, 5, "gid"), v3));
    out.add(new Sample("stream-prepare", PgOutputBytes.prepare('p', 1, 2, 3, 4, "gid"), v3));
    return out;
  }

  private static PgOutputDecoder inStreamBlock(PgOutputDecoder d) {
    byte[] start = PgOutputBytes.streamStart(900, true);
    d.decode(start, 0, start.length, Lsn.ZERO);
    return d;
  }

  /** A valid message and the decoder state it is valid in. */
  record Sample(String name, byte[] bytes, Supplier<PgOutputDecoder> decoderFactory) {
    PgOutputDecoder decoder() {
      return decoderFactory.get();
    }

    @Override
    public String toString() {
      return name;
    }
  }
}
