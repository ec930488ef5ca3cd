package org.pgetl.core.internal.codec;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.ByteArrayOutputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.util.HexFormat;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.pgetl.error.ErrorKind;
import org.pgetl.error.EtlException;
import org.pgetl.model.TableRow;

/** COPY text and binary rows as the server sends them, one CopyData message at a time. */
class CopyParsersTest {
  private final TypeRegistry registry = new TypeRegistry();
  private final List<ValueCodec> intText = registry.codecs(23, 25);

  private static byte[] hex(String h) {
    return HexFormat.of().parseHex(h.replace(" ", ""));
  }

  private static void assertMalformed(Runnable r, String detail) {
    assertThatThrownBy(r::run)
        .isInstanceOfSatisfying(
            EtlException.class,
            e -> {
              assertThat(e.kind()).isEqualTo(ErrorKind.INVALID_DATA);
              assertThat(e.getMessage()).contains(detail);
            });
  }

  // ---------------------------------------------------------------- text

  @Test
  void textRowsSplitOnTabsAndReadNullMarkers() {
    CopyTextParser p = new CopyTextParser(intText);
    assertThat(p.parseRow(Values.utf8("1\tx\n"), 0, 4)).containsExactly(1, "x");
    assertThat(p.parseRow(Values.utf8("2\t\\N\n"), 0, 5)).containsExactly(2, null);
    assertThat(p.parseRow(Values.utf8("\\N\t\n"), 0, 4)).containsExactly(null, "");
    assertThat(p.lastRowSizeHint()).isPositive();
  }

  @Test
  void textEscapesAreUndone() {
    CopyTextParser p = new CopyTextParser(registry.codecs(25));
    byte[] m = Values.utf8("a\\tb\\nc\\\\d\\r\\b\\f\\v\\N\\101\\x42\\x4\\xg\\q\n");
    assertThat(p.parseRow(m, 0, m.length)).containsExactly("a\tb\nc\\d\r\b\f\u000BNAB\u0004xgq");
    byte[] utf8Octal = Values.utf8("\\303\\251\n"); // é written as two octal escapes
    assertThat(p.parseRow(utf8Octal, 0, utf8Octal.length)).containsExactly("é");
  }

  @Test
  void textFieldsAreDecodedFromTheMiddleOfABuffer() {
    CopyTextParser p = new CopyTextParser(intText);
    byte[] m = Values.utf8("junk42\thello\nmore");
    assertThat(p.parseRow(m, 4, 9)).containsExactly(42, "hello");
  }

  @Test
  void textEndMarkerIsNoRow() {
    CopyTextParser p = new CopyTextParser(intText);
    assertThat(p.parseRow(Values.utf8("\\.\n"), 0, 3)).isNull();
  }

  @Test
  void malformedTextRowsAreRejected() {
    CopyTextParser p = new CopyTextParser(intText);
    assertMalformed(() -> p.parseRow(Values.utf8("1\tx"), 0, 3), "newline");
    assertMalformed(() -> p.parseRow(Values.utf8("1\n"), 0, 2), "1 columns, expected 2");
    assertMalformed(() -> p.parseRow(Values.utf8("1\tx\ty\n"), 0, 6), "more than 2 columns");
    assertMalformed(() -> p.parseRow(Values.utf8("1\tx\\\n"), 0, 5), "lone backslash");
    assertMalformed(() -> p.parseRow(new byte[2], 1, 2), "bounds");
    assertThatThrownBy(() -> p.parseRow(Values.utf8("x\ty\n"), 0, 4))
        .isInstanceOfSatisfying(
            EtlException.class,
            e -> assertThat(e.description()).startsWith("column 1: ").contains("int4"));
  }

  @Test
  void zeroColumnTextRows() {
    CopyTextParser p = new CopyTextParser(List.of());
    assertThat(p.parseRow(Values.utf8("\n"), 0, 1)).isEmpty();
  }

  // ---------------------------------------------------------------- binary

  private static final String HEADER = "5047434f50590aff0d0a00 00000000 00000000";

  @Test
  void binaryHeaderComesWithTheFirstRowAndTheTrailerAlone() {
    CopyBinaryParser p = new CopyBinaryParser(intText);
    // messages captured from PostgreSQL 17 for (1,'x'), (2,NULL)
    assertThat(p.parseRow(hex(HEADER + "0002 00000004 00000001 00000001 78"), 0, 34))
        .containsExactly(1, "x");
    TableRow row = p.parse(hex("0002 00000004 00000002 ffffffff"));
    assertThat(row.values()).containsExactly(2, null);
    assertThat(row.sizeHintBytes()).isPositive();
    assertThat(p.parseRow(hex("ffff"), 0, 2)).isNull();
    p.finish();
  }

  @Test
  void theSizeHintIsTheHeapOfTheDecodedRowNotItsWireBytes() {
    // (int8 7, numeric 1.25, 2000 ASCII chars): 8 + 12 + 2000 bytes on the wire
    CopyBinaryParser p = new CopyBinaryParser(registry.codecs(20, 1700, 25));
    StringBuilder row = new StringBuilder(HEADER + "0003 00000008 0000000000000007");
    row.append("0000000c 0002 0000 0000 0002 0001 09c4");
    row.append("000007d0").append("61".repeat(2000));
    byte[] m = hex(row.toString());
    Object[] values = p.parseRow(m, 0, m.length);
    assertThat(values[1]).hasToString("1.25");
    long wire = 8 + 12 + 2000;
    // a Long (24), a PgNumeric with its BigDecimal (64), a String and its byte[] (48 + 2000),
    // the row and its array
    assertThat(p.lastRowSizeHint()).isGreaterThanOrEqualTo(24 + 64 + 48 + 2000 + 3 * 8);
    assertThat(p.lastRowSizeHint() - wire).isGreaterThan(150);
  }

  @Test
  void binaryEmptyCopyIsHeaderAndTrailerInOneMessage() {
    CopyBinaryParser p = new CopyBinaryParser(intText);
    byte[] m = hex(HEADER + "ffff");
    assertThat(p.parseRow(m, 0, m.length)).isNull();
    p.finish();
  }

  @Test
  void binaryHeaderExtensionIsSkipped() {
    CopyBinaryParser p = new CopyBinaryParser(registry.codecs(23));
    byte[] m = hex("5047434f50590aff0d0a00 00000000 00000003 aabbcc 0001 00000004 0000002a");
    assertThat(p.parseRow(m, 0, m.length)).containsExactly(42);
  }

  @Test
  void binaryTextCastColumnsDecodeAsText() {
    // tsvector has no binary decoding: selected as col::text, its bytes are its text form
    assertThat(CopyBinaryParser.needsTextCast(registry.codec(3614))).isTrue();
    assertThat(CopyBinaryParser.needsTextCast(registry.codec(25))).isFalse();
    CopyBinaryParser p = new CopyBinaryParser(registry.codecs(3614));
    byte[] m = hex(HEADER + "0001 00000007 27612720276227");
    assertThat(p.parseRow(m, 0, m.length)).containsExactly("'a' 'b'");
  }

  @Test
  void malformedBinaryDataIsRejected() {
    assertMalformed(
        () -> new CopyBinaryParser(intText).parseRow(hex("5047434f5059"), 0, 6), "header");
    assertMalformed(
        () ->
            new CopyBinaryParser(intText)
                .parseRow(hex("5047434f50590aff0d0a01 00000000 00000000"), 0, 19),
        "signature");
    assertMalformed(
        () ->
            new CopyBinaryParser(intText)
                .parseRow(hex("5047434f50590aff0d0a00 00010000 00000000"), 0, 19),
        "flags");
    CopyBinaryParser p = new CopyBinaryParser(intText);
    p.parseRow(hex(HEADER), 0, 19);
    assertMalformed(() -> p.parseRow(hex("0001 00000004 00000001"), 0, 10), "1 columns");
    assertMalformed(() -> p.parseRow(hex("0002 00000004 000000"), 0, 9), "out of range");
    assertMalformed(
        () -> p.parseRow(hex("0002 00000004 00000001 ffffffff 0002"), 0, 16), "more than one row");
    assertMalformed(() -> p.parseRow(hex("ffff00"), 0, 3), "after the trailer");
    CopyBinaryParser q = new CopyBinaryParser(intText);
    q.parseRow(hex(HEADER), 0, 19);
    assertMalformed(q::finish, "no trailer");
    assertMalformed(() -> new CopyBinaryParser(intText).finish(), "no file header");
  }

  @Test
  void aBadValueNamesItsColumnAndType() {
    CopyBinaryParser p = new CopyBinaryParser(intText);
    byte[] m = hex(HEADER + "0002 00000002 0001 ffffffff");
    assertThatThrownBy(() -> p.parseRow(m, 0, m.length))
        .isInstanceOfSatisfying(
            EtlException.class,
            e -> {
              assertThat(e.kind()).isEqualTo(ErrorKind.INVALID_DATA);
              assertThat(e.description())
                  .isEqualTo("column 1: invalid binary value of type int4 (oid 23)");
            });
  }

  @Test
  void createPicksTheFormat() throws IOException {
    assertThat(CopyRowParser.create(true, intText)).isInstanceOf(CopyBinaryParser.class);
    assertThat(CopyRowParser.create(false, intText)).isInstanceOf(CopyTextParser.class);
    assertThat(CopyRowParser.create(false, intText).columnCount()).isEqualTo(2);
    ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    DataOutputStream out = new DataOutputStream(bytes);
    out.write(hex(HEADER));
    out.writeShort(2);
    out.writeInt(4);
    out.writeInt(-7);
    out.writeInt(0);
    byte[] m = bytes.toByteArray();
    assertThat(CopyRowParser.create(true, intText).parseRow(m, 0, m.length))
        .containsExactly(-7, "");
  }
}
