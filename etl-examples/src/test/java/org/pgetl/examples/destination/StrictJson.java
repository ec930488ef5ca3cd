package org.pgetl.examples.destination;

import java.math.BigDecimal;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * A strict JSON parser for tests (RFC 8259: no trailing commas, no comments, no raw control
 * characters in strings, no leading zeros): objects become {@link LinkedHashMap}s, arrays {@link
 * List}s, numbers {@link BigDecimal}s (their exact text), strings, booleans and null.
 */
final class StrictJson {
  private final String s;
  private int i;

  private StrictJson(String s) {
    this.s = s;
  }

  static Object parse(String text) {
    StrictJson p = new StrictJson(text);
    Object v = p.value();
    p.ws();
    if (p.i != text.length()) {
      throw p.error("trailing text");
    }
    return v;
  }

  @SuppressWarnings("unchecked")
  static Map<String, Object> object(String text) {
    return (Map<String, Object>) parse(text);
  }

  private Object value() {
    ws();
    if (i >= s.length()) {
      throw error("end of input");
    }
    char c = s.charAt(i);
    return switch (c) {
      case '{' -> obj();
      case '[' -> arr();
      case '"' -> str();
      case 't' -> literal("true", Boolean.TRUE);
      case 'f' -> literal("false", Boolean.FALSE);
      case 'n' -> literal("null", null);
      default -> num();
    };
  }

  private Map<String, Object> obj() {
    Map<String, Object> m = new LinkedHashMap<>();
    i++;
    ws();
    if (peek() == '}') {
      i++;
      return m;
    }
    while (true) {
      ws();
      if (peek() != '"') {
        throw error("expected a field name");
      }
      String k = str();
      ws();
      expect(':');
      if (m.containsKey(k)) {
        throw error("duplicate field " + k);
      }
      m.put(k, value());
      ws();
      if (peek() == ',') {
        i++;
      } else {
        expect('}');
        return m;
      }
    }
  }

  private List<Object> arr() {
    List<Object> l = new ArrayList<>();
    i++;
    ws();
    if (peek() == ']') {
      i++;
      return l;
    }
    while (true) {
      l.add(value());
      ws();
      if (peek() == ',') {
        i++;
      } else {
        expect(']');
        return l;
      }
    }
  }

  private String str() {
    expect('"');
    StringBuilder sb = new StringBuilder();
    while (true) {
      char c = s.charAt(i++);
      if (c == '"') {
        return sb.toString();
      }
      if (c < 0x20) {
        throw error("raw control character in a string");
      }
      if (c != '\\') {
        sb.append(c);
        continue;
      }
      char e = s.charAt(i++);
      switch (e) {
        case '"', '\\', '/' -> sb.append(e);
        case 'b' -> sb.append('\b');
        case 'f' -> sb.append('\f');
        case 'n' -> sb.append('\n');
        case 'r' -> sb.append('\r');
        case 't' -> sb.append('\t');
        case 'u' -> {
          sb.append((char) Integer.parseInt(s.substring(i, i + 4), 16));
          i += 4;
        }
        default -> throw error("bad escape \\" + e);
      }
    }
  }

  private BigDecimal num() {
    int start = i;
    if (peek() == '-') {
      i++;
    }
    if (peek() == '0') {
      i++;
    } else {
      digits();
    }
    if (peek() == '.') {
      i++;
      digits();
    }
    if (peek() == 'e' || peek() == 'E') {
      i++;
      if (peek() == '+' || peek() == '-') {
        i++;
      }
      digits();
    }
    return new BigDecimal(s.substring(start, i));
  }

  private void digits() {
    int start = i;
    while (i < s.length() && Character.isDigit(s.charAt(i))) {
      i++;
    }
    if (i == start) {
      throw error("expected a digit");
    }
  }

  private Object literal(String word, Object v) {
    if (!s.startsWith(word, i)) {
      throw error("expected " + word);
    }
    i += word.length();
    return v;
  }

  private void ws() {
    while (i < s.length() && " \t\n\r".indexOf(s.charAt(i)) >= 0) {
      i++;
    }
  }

  private char peek() {
    return i < s.length() ? s.charAt(i) : '\0';
  }

  private void expect(char c) {
    if (peek() != c) {
      throw error("expected '" + c + "'");
    }
    i++;
  }

  private IllegalArgumentException error(String what) {
    return new IllegalArgumentException(what + " at " + i + " in: " + s);
  }
}
