package org.pgetl.core.internal.codec;

import java.util.ArrayList;
import java.util.List;
import java.util.stream.Collectors;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.lifecycle.AfterProperty;
import net.jqwik.api.lifecycle.BeforeProperty;
import org.pgetl.error.EtlException;

/**
 * Random bytes fed to every codec, in both forms, and to the COPY parsers: the only exception that
 * may come out is {@link EtlException}. Each property runs for a fixed number of tries and stops
 * doing work once its time budget is spent; jqwik prints the seed of every run.
 */
class CodecRandomBytesTest {
  private static final long BUDGET_NANOS = 4_000_000_000L;
  private static final TypeRegistry REGISTRY = new TypeRegistry();
  private static final List<Integer> OIDS = allCodecOids();

  private long deadline;

  @BeforeProperty
  void startClock() {
    deadline = System.nanoTime() + BUDGET_NANOS;
  }

  @AfterProperty
  void stopClock() {
    deadline = 0;
  }

  private boolean overBudget() {
    return System.nanoTime() - deadline > 0;
  }

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
  @Provide
  Arbitrary<byte[]> bytes() {
    Arbitrary<byte[]> any = Arbitraries.bytes().array(byte[].class).ofMaxSize(64);
    Arbitrary<byte[]> textish =
        Arbitraries.strings()
            .withChars("0123456789-+.:eE ,{}()[]\"\\NaInfity/BCx abTZ")
            .ofMaxLength(40)
            .map(Values::utf8);
    Arbitrary<byte[]> headerish =
        Combinators.combine(
                Arbitraries.integers().between(-2, 8),
                Arbitraries.bytes().array(byte[].class).ofMaxSize(48))
            .as(
                (n, tail) -> {
                  byte[] b = new byte[4 + tail.length];
                  b[3] = (byte) (int) n;
                  b[0] = (byte) (n >> 24);
                  System.arraycopy(tail, 0, b, 4, tail.length);
                  return b;
                });
    return Arbitraries.oneOf(any, textish, headerish);
  }

  @Property(tries = 3000)
  void everyCodecRaisesOnlyEtlException(@ForAll("bytes") byte[] input) {
    if (overBudget()) {
      return;
    }
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

  @Property(tries = 3000)
  void copyParsersRaiseOnlyEtlException(@ForAll("bytes") byte[] input) {
    if (overBudget()) {
      return;
    }
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
