package org.pgetl.model;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import org.junit.jupiter.api.Test;

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

  @Provide
  Arbitrary<String> identifiers() {
    return Arbitraries.strings()
        .withCharRange(' ', '~')
        .withChars('é', 'ß', '表', '"', '.')
        .ofMinLength(1)
        .ofMaxLength(20);
  }

  @Property(tries = 2000)
  void quotedFormParsesBack(
      @ForAll("identifiers") String schema, @ForAll("identifiers") String name) {
    TableName t = new TableName(schema, name);
    assertThat(TableName.parse(t.quoted())).isEqualTo(t);
  }
}
