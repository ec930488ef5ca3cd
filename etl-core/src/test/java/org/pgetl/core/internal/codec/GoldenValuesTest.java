package org.pgetl.core.internal.codec;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;
import org.pgetl.error.EtlException;

/**
 * Decodes the text and binary forms of values captured from a real server (golden-values.tsv) and
 * checks that both forms give the same Java value, of the documented Java type, and that the value
 * prints back to the server's text form.
 */
class GoldenValuesTest {
  private static final TypeRegistry REGISTRY = new TypeRegistry();

  record Golden(String expression, int oid, String text, byte[] binary) {
    @Override
    public String toString() {
      return expression;
    }
  }

  static Stream<Golden> golden() throws IOException {
    List<Golden> list = new ArrayList<>();
    try (BufferedReader r =
        new BufferedReader(
            new InputStreamReader(
                GoldenValuesTest.class.getResourceAsStream("golden-values.tsv"),
                StandardCharsets.UTF_8))) {
      String line;
      while ((line = r.readLine()) != null) {
        if (line.startsWith("#")) {
          continue;
        }
        String[] f = line.split("\t", -1);
        String bin = unescape(f[3]);
        list.add(
            new Golden(
                unescape(f[0]),
                Integer.parseInt(f[1]),
                unescape(f[2]),
                bin == null ? null : HexFormat.of().parseHex(bin)));
      }
    }
    return list.stream();
  }

  /** Undoes COPY text escaping (only what COPY TO writes). */
  private static String unescape(String s) {
    if (s.equals("\\N")) {
      return null;
    }
    StringBuilder sb = new StringBuilder();
    for (int i = 0; i < s.length(); i++) {
      char c = s.charAt(i);
      if (c != '\\') {
        sb.append(c);
        continue;
      }
      char e = s.charAt(++i);
      sb.append(
          switch (e) {
            case 't' -> '\t';
            case 'n' -> '\n';
            case 'r' -> '\r';
            case 'b' -> '\b';
            case 'f' -> '\f';
            case 'v' -> '\u000B';
            default -> e;
          });
    }
    return sb.toString();
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("golden")
  void textFormDecodesToTheDocumentedTypeAndPrintsBack(Golden g) {
    ValueCodec codec = REGISTRY.codec(g.oid());
    byte[] text = Values.utf8(g.text());
    Object value = codec.decodeText(text, 0, text.length);
    assertThat(value).isInstanceOf(Values.javaType(REGISTRY, g.oid()));
    assertThat(REGISTRY.formatText(value)).isEqualTo(g.text());
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("golden")
  void binaryFormDecodesToTheSameValueAsTheTextForm(Golden g) {
    ValueCodec codec = REGISTRY.codec(g.oid());
    byte[] text = Values.utf8(g.text());
    Object fromText = codec.decodeText(text, 0, text.length);
    if (g.binary() == null || !codec.canDecodeBinary()) {
      if (g.binary() != null) {
        assertThatThrownBy(() -> codec.decodeBinary(g.binary(), 0, g.binary().length))
            .isInstanceOf(EtlException.class);
      }
      return;
    }
    // decode from the middle of a larger buffer, as a decoder hands out slices
    byte[] padded = new byte[g.binary().length + 7];
    System.arraycopy(g.binary(), 0, padded, 3, g.binary().length);
    Object fromBinary = codec.decodeBinary(padded, 3, g.binary().length);
    assertThat(Values.same(fromBinary, fromText))
        .as("%s vs %s", Values.show(fromBinary), Values.show(fromText))
        .isTrue();
    assertThat(REGISTRY.formatText(fromBinary)).isEqualTo(g.text());
  }
}
