package org.pgetl.model;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.pgetl.testing.Theories;
import org.quicktheories.core.Gen;

class TableNameTest {

  @Test
  void quotesEveryPart() {
    assertThat(new TableName("public", "orders").quoted()).isEqualTo("\"public\".\"orders\"");
    assertThat(new TableName("My Schema", "a\"b").quoted()).isEqualTo("\"My Schema\".\"a\"\"b\"");
    assertThat(TableName.quoteIdentifier("Ünïcødé")).isEqualTo("\"Ünïcødé\"");
  }

  @Test
  void parsesSqlNames() {
    assertThat(TableName.parse("orders")).isEqualTo(new TableName("public", "orders"));
    assertThat(TableName.parse("Sales.Orders")).isEqualTo(new TableName("sales", "orders"));
    assertThat(TableName.parse("\"Sales\".\"Or\"\"ders\""))
        .isEqualTo(new TableName("Sales", "Or\"ders"));
    assertThat(TableName.parse("\"a.b\".c")).isEqualTo(new TableName("a.b", "c"));
    for (String bad : new String[] {"", ".", "a.", ".a", "a.b.c", "\"a", "a b", "\"\".a"}) {
      assertThatThrownBy(() -> TableName.parse(bad))
          .as(bad)
          .isInstanceOf(IllegalArgumentException.class);
    }
  }

  /** Printable ASCII (quotes and dots included) and a few letters outside it. */
  private static Gen<String> identifiers() {
    StringBuilder alphabet = new StringBuilder();
    for (char c = ' '; c <= '~'; c++) {
      alphabet.append(c);
    }
    alphabet.append("éß表\"\"..");
    return Theories.strings(alphabet.toString(), 1, 20);
  }

  @Test
  void quotedFormParsesBack() {
    Theories.qt(2000, Duration.ofSeconds(5))
        .forAll(identifiers(), identifiers())
        .checkAssert(
            (schema, name) -> {
              TableName t = new TableName(schema, name);
              assertThat(TableName.parse(t.quoted())).isEqualTo(t);
            });
  }
}
