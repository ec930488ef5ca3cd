package org.pgetl.core.internal.decode;

import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;

/**
 * Builds pgoutput messages byte by byte, the way PostgreSQL's {@code proto.c} writes them, for
 * tests. An {@code xid} argument of 0 means "not inside a stream block": no xid is written.
 */
final class PgOutputBytes {
  private final ByteArrayOutputStream out = new ByteArrayOutputStream();

  static PgOutputBytes message(char type) {
    return new PgOutputBytes().u8(type);
  }

  PgOutputBytes u8(int v) {
    out.write(v);
    return this;
  }

  PgOutputBytes i16(int v) {
    out.write(v >>> 8);
    out.write(v);
    return this;
  }

  PgOutputBytes i32(int v) {
    for (int shift = 24; shift >= 0; shift -= 8) {
      out.write(v >>> shift);
    }
    return this;
  }

  PgOutputBytes i64(long v) {
    for (int shift = 56; shift >= 0; shift -= 8) {
      out.write((int) (v >>> shift));
    }
    return this;
  }

  PgOutputBytes str(String s) {
    byte[] b = s.getBytes(StandardCharsets.UTF_8);
    out.write(b, 0, b.length);
    out.write(0);
    return this;
  }

  PgOutputBytes bytes(byte[] b) {
    out.write(b, 0, b.length);
    return this;
  }

  /** Writes the xid of a streamed data message, or nothing when {@code xid} is 0. */
  PgOutputBytes xid(long xid) {
    return xid == 0 ? this : i32((int) xid);
  }

  /** Writes TupleData: each column is null (SQL NULL), "\u0000u" (unchanged TOAST), or a value. */
  PgOutputBytes tuple(Col... columns) {
    i16(columns.length);
    for (Col c : columns) {
      u8(c.kind);
      if (c.value != null) {
        i32(c.value.length);
        bytes(c.value);
      }
    }
    return this;
  }

  byte[] build() {
    return out.toByteArray();
  }

  /** One column of a tuple to write. */
  record Col(char kind, byte[] value) {
    static Col nul() {
      return new Col('n', null);
    }

    static Col unchanged() {
      return new Col('u', null);
    }

    static Col text(String s) {
      return new Col('t', s.getBytes(StandardCharsets.UTF_8));
    }

    static Col binary(int... b) {
      byte[] bytes = new byte[b.length];
      for (int i = 0; i < b.length; i++) {
        bytes[i] = (byte) b[i];
      }
      return new Col('b', bytes);
    }
  }

  // ---- whole messages

  static byte[] begin(long finalLsn, long commitTime, int xid) {
    return message('B').i64(finalLsn).i64(commitTime).i32(xid).build();
  }

  static byte[] commit(long commitLsn, long endLsn, long commitTime) {
    return message('C').u8(0).i64(commitLsn).i64(endLsn).i64(commitTime).build();
  }

  static byte[] origin(long originLsn, String name) {
    return message('O').i64(originLsn).str(name).build();
  }

  static byte[] relation(long xid, int relid, String ns, String name, char identity) {
    return message('R')
        .xid(xid)
        .i32(relid)
        .str(ns)
        .str(name)
        .u8(identity)
        .i16(2)
        .u8(1)
        .str("id")
        .i32(20)
        .i32(-1)
        .u8(0)
        .str("name")
        .i32(1043)
        .i32(68)
        .build();
  }

  static byte[] type(long xid, int oid, String ns, String name) {
    return message('Y').xid(xid).i32(oid).str(ns).str(name).build();
  }

  static byte[] insert(long xid, int relid, Col... cols) {
    return message('I').xid(xid).i32(relid).u8('N').tuple(cols).build();
  }

  static byte[] update(long xid, int relid, char oldTag, Col[] old, Col... cols) {
    PgOutputBytes b = message('U').xid(xid).i32(relid);
    if (oldTag != 0) {
      b.u8(oldTag).tuple(old);
    }
    return b.u8('N').tuple(cols).build();
  }

  static byte[] delete(long xid, int relid, char oldTag, Col... old) {
    return message('D').xid(xid).i32(relid).u8(oldTag).tuple(old).build();
  }

  static byte[] truncate(long xid, int options, int... relids) {
    PgOutputBytes b = message('T').xid(xid).i32(relids.length).u8(options);
    for (int r : relids) {
      b.i32(r);
    }
    return b.build();
  }

  static byte[] logicalMessage(
      long xid, boolean transactional, long lsn, String prefix, byte[] content) {
    return message('M')
        .xid(xid)
        .u8(transactional ? 1 : 0)
        .i64(lsn)
        .str(prefix)
        .i32(content.length)
        .bytes(content)
        .build();
  }

  static byte[] streamStart(int xid, boolean first) {
    return message('S').i32(xid).u8(first ? 1 : 0).build();
  }

  static byte[] streamStop() {
    return message('E').build();
  }

  static byte[] streamCommit(int xid, long commitLsn, long endLsn, long commitTime) {
    return message('c').i32(xid).u8(0).i64(commitLsn).i64(endLsn).i64(commitTime).build();
  }

  static byte[] streamAbort(int xid, int subXid) {
    return message('A').i32(xid).i32(subXid).build();
  }

  static byte[] streamAbortWithInfo(int xid, int subXid, long abortLsn, long abortTime) {
    return message('A').i32(xid).i32(subXid).i64(abortLsn).i64(abortTime).build();
  }

  static byte[] beginPrepare(long prepareLsn, long endLsn, long time, int xid, String gid) {
    return message('b').i64(prepareLsn).i64(endLsn).i64(time).i32(xid).str(gid).build();
  }

  static byte[] prepare(char type, long prepareLsn, long endLsn, long time, int xid, String gid) {
    return message(type).u8(0).i64(prepareLsn).i64(endLsn).i64(time).i32(xid).str(gid).build();
  }

  static byte[] rollbackPrepared(
      long prepareEnd, long rollbackEnd, long prepareTime, long rollbackTime, int xid, String gid) {
    return message('r')
        .u8(0)
        .i64(prepareEnd)
        .i64(rollbackEnd)
        .i64(prepareTime)
        .i64(rollbackTime)
        .i32(xid)
        .str(gid)
        .build();
  }
}
