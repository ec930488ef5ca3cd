package org.pgetl.core.internal.apply;

import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import org.pgetl.model.Lsn;

/**
 * pgoutput messages of protocol versions 1 and 2, written the way the server writes them, for
 * scripted streams. Values are sent in text form.
 */
final class PgOutput {
  static final int INT4 = 23;
  static final int TEXT = 25;

  /** A fixed commit time, in microseconds since 2000-01-01. */
  private static final long COMMIT_TIME = 820_454_400_000_000L;

  private final ByteArrayOutputStream out = new ByteArrayOutputStream();

  private PgOutput(char type) {
    out.write(type);
  }

  static byte[] begin(Lsn finalLsn, long xid) {
    return new PgOutput('B').i64(finalLsn.value()).i64(COMMIT_TIME).i32((int) xid).bytes();
  }

  static byte[] commit(Lsn commitLsn, Lsn endLsn) {
    return new PgOutput('C')
        .u8(0)
        .i64(commitLsn.value())
        .i64(endLsn.value())
        .i64(COMMIT_TIME)
        .bytes();
  }

  /** A RELATION of {@code public.<name>} with a key column {@code id int4} and {@code v text}. */
  static byte[] relation(long oid, String name) {
    return relation(oid, name, 0);
  }

  /** The same RELATION inside a stream block of transaction {@code xid} (0: outside any block). */
  static byte[] relation(long oid, String name, long xid) {
    return new PgOutput('R')
        .xid(xid)
        .i32((int) oid)
        .str("public")
        .str(name)
        .u8('d')
        .i16(2)
        .u8(1)
        .str("id")
        .i32(INT4)
        .i32(-1)
        .u8(0)
        .str("v")
        .i32(TEXT)
        .i32(-1)
        .bytes();
  }

  /** An INSERT into a relation of {@link #relation}. */
  static byte[] insert(long oid, int id, String v) {
    return insert(oid, id, v, 0);
  }

  /** The same INSERT inside a stream block of transaction {@code xid} (0: outside any block). */
  static byte[] insert(long oid, int id, String v, long xid) {
    return new PgOutput('I')
        .xid(xid)
        .i32((int) oid)
        .u8('N')
        .i16(2)
        .text(Integer.toString(id))
        .text(v)
        .bytes();
  }

  /** Stream Start of a block of transaction {@code xid} (protocol 2). */
  static byte[] streamStart(long xid, boolean first) {
    return new PgOutput('S').i32((int) xid).u8(first ? 1 : 0).bytes();
  }

  /** Stream Stop. */
  static byte[] streamStop() {
    return new PgOutput('E').bytes();
  }

  /** Stream Commit of transaction {@code xid}. */
  static byte[] streamCommit(long xid, Lsn commitLsn, Lsn endLsn) {
    return new PgOutput('c')
        .i32((int) xid)
        .u8(0)
        .i64(commitLsn.value())
        .i64(endLsn.value())
        .i64(COMMIT_TIME)
        .bytes();
  }

  private PgOutput xid(long xid) {
    return xid == 0 ? this : i32((int) xid);
  }

  private PgOutput text(String s) {
    byte[] b = s.getBytes(StandardCharsets.UTF_8);
    u8('t').i32(b.length);
    out.write(b, 0, b.length);
    return this;
  }

  private PgOutput u8(int v) {
    out.write(v);
    return this;
  }

  private PgOutput i16(int v) {
    out.write(v >>> 8);
    out.write(v);
    return this;
  }

  private PgOutput i32(int v) {
    for (int shift = 24; shift >= 0; shift -= 8) {
      out.write(v >>> shift);
    }
    return this;
  }

  private PgOutput i64(long v) {
    for (int shift = 56; shift >= 0; shift -= 8) {
      out.write((int) (v >>> shift));
    }
    return this;
  }

  private PgOutput str(String s) {
    byte[] b = s.getBytes(StandardCharsets.UTF_8);
    out.write(b, 0, b.length);
    out.write(0);
    return this;
  }

  private byte[] bytes() {
    return out.toByteArray();
  }
}
