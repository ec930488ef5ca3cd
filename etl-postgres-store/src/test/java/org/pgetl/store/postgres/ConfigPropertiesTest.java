package org.pgetl.store.postgres;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.AlphaChars;
import net.jqwik.api.constraints.NumericChars;
import net.jqwik.api.constraints.StringLength;
import org.pgetl.error.EtlException;
import org.pgetl.model.TableName;

/**
 * Properties of the settings: no password leaks into a description, and every accepted schema name
 * is one PostgreSQL reads the same quoted or not. Each runs a fixed number of tries (well under a
 * second); jqwik prints the seed of each run.
 */
class ConfigPropertiesTest {

  @Property(tries = 300)
  void noPasswordShowsInADescription(
      @ForAll @AlphaChars @NumericChars @StringLength(min = 12, max = 40) String secret,
      @ForAll("paramNames") String param) {
    String url = "jdbc:postgresql://h:5432/db?a=1&" + param + "=" + secret + "&b=2";
    PostgresStore.Builder b = PostgresStore.builder().jdbcUrl(url).password(secret).pipelineId("p");

    assertThat(b.config().toString()).doesNotContain(secret).contains("a=1").contains("b=2");
    assertThat(b.toString()).doesNotContain(secret);
    assertThat(ConnectionSettings.redact(url)).doesNotContain(secret);
  }

  @net.jqwik.api.Provide
  net.jqwik.api.Arbitrary<String> paramNames() {
    return net.jqwik.api.Arbitraries.of("password", "PASSWORD", "sslpassword", "sslPassword");
  }

  @Property(tries = 1000)
  void anAcceptedSchemaNeedsNoEscaping(@ForAll @StringLength(max = 70) String schema) {
    PostgresStoreConfig c;
    try {
      c =
          PostgresStore.builder()
              .jdbcUrl("jdbc:postgresql://h/db")
              .pipelineId("p")
              .schema(schema)
              .config();
    } catch (EtlException rejected) {
      return;
    }
    assertThat(c.schema()).matches("[A-Za-z_][A-Za-z0-9_]{0,62}");
    assertThat(TableName.quoteIdentifier(c.schema())).isEqualTo('"' + c.schema() + '"');
    assertThat(c.schema().toLowerCase()).doesNotStartWith("pg_");
  }

  @Property(tries = 300)
  void aSchemaWithAnyOtherCharacterIsRejected(
      @ForAll @AlphaChars @StringLength(min = 1, max = 20) String name,
      @ForAll("notIdentifierChars") char bad) {
    assertThatThrownBy(
            () ->
                PostgresStore.builder()
                    .jdbcUrl("jdbc:postgresql://h/db")
                    .pipelineId("p")
                    .schema(name + bad)
                    .config())
        .isInstanceOf(EtlException.class);
  }

  @net.jqwik.api.Provide
  net.jqwik.api.Arbitrary<Character> notIdentifierChars() {
    return net.jqwik.api.Arbitraries.chars()
        .filter(ch -> !(Character.isLetterOrDigit(ch) && ch < 128) && ch != '_');
  }
}
