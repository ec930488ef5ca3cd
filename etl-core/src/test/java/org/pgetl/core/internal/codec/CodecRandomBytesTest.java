package org.pgetl.core.internal.codec;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.pgetl.error.EtlException;
import org.pgetl.testing.Theories;
import org.quicktheories.core.Gen;
import org.quicktheories.generators.Generate;

/**
 * Random bytes fed to every codec, in both forms, and to the COPY parsers: the only exception that
 * may come out is {@link EtlException}. Each property runs for a fixed number of examples within a
 * time budget; a failure prints its seed, which {@code -Dpgetl.seed=...} replays.
 */
class CodecRandomBytesTest {
  private static final Duration BUDGET = Duration.ofSeconds(4);
  private static final TypeRegistry REGISTRY = new TypeRegistry();
  private static final List<Integer> OIDS = allCodecOids();

  private static List<Integer> allCodecOids() {
    List<Integer> oids = new ArrayList<>();
    for (String line : BuiltinTypes.TABLE.split("\n")) {
      String[] f = line.trim().split(" ");
      if (f.length >= 5) {
        oids.add(Integer.parseInt(f[0]));
      }
    }
    return oids;
  }

  /** Random bytes, and bytes shaped like each form: digits, punctuation, small headers. */
  private static Gen<byte[]> bytes() {
    Gen<byte[]> any = Theories.bytes(64);
    Gen<byte[]> textish =
        Theories.strings("0123456789-+.:eE ,{}()[]\"\\NaInfity/BCx abTZ", 0, 40).map(Values::utf8);
    Gen<byte[]> headerish =
        Generate.range(-2, 8)
            .zip(
                Theories.bytes(48),
                (n, tail) -> {
                  byte[] b = new byte[4 + tail.length];
                  b[3] = (byte) (int) n;
                  b[0] = (byte) (n >> 24);
                  System.arraycopy(tail, 0, b, 4, tail.length);
                  return b;
                });
    return Generate.oneOf(any, textish, headerish).describedAs(Theories::hex);
  }

  @Test
  void everyCodecRaisesOnlyEtlException() {
    Theories.qt(3000, BUDGET).forAll(bytes()).checkAssert(CodecRandomBytesTest::everyCodec);
  }

  private static void everyCodec(byte[] input) {
    for (int oid : OIDS) {
      ValueCodec c = REGISTRY.codec(oid);
      try {
        c.decodeText(input, 0, input.length);
      } catch (EtlException expected) {
        // the only allowed failure
      }
      try {
        c.decodeBinary(input, 0, input.length);
      } catch (EtlException expected) {
        // the only allowed failure
      }
    }
  }

  @Test
  void copyParsersRaiseOnlyEtlException() {
    Theories.qt(3000, BUDGET).forAll(bytes()).checkAssert(CodecRandomBytesTest::copyParsers);
  }

  private static void copyParsers(byte[] input) {
    List<ValueCodec> codecs =
        OIDS.stream().limit(12).map(REGISTRY::codec).collect(Collectors.toList());
    byte[] withNewline = java.util.Arrays.copyOf(input, input.length + 1);
    withNewline[input.length] = '\n';
    try {
      new CopyTextParser(codecs).parseRow(withNewline, 0, withNewline.length);
    } catch (EtlException expected) {
      // the only allowed failure
    }
    CopyBinaryParser binary = new CopyBinaryParser(codecs);
    byte[] header = HexFormatHolder.HEADER;
    byte[] withHeader = new byte[header.length + input.length];
    System.arraycopy(header, 0, withHeader, 0, header.length);
    System.arraycopy(input, 0, withHeader, header.length, input.length);
    try {
      binary.parseRow(withHeader, 0, withHeader.length);
      binary.finish();
    } catch (EtlException expected) {
      // the only allowed failure
    }
  }

  private static final class HexFormatHolder {
    static final byte[] HEADER =
        java.util.HexFormat.of().parseHex("5047434f50590aff0d0a000000000000000000");
  }
}
