package org.pgetl.store.postgres;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.quicktheories.generators.SourceDSL.strings;

import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.pgetl.error.EtlException;
import org.pgetl.model.TableName;
import org.pgetl.testing.Theories;
import org.quicktheories.core.Gen;
import org.quicktheories.generators.Generate;

/**
 * Properties of the settings: no password leaks into a description, and every accepted schema name
 * is one PostgreSQL reads the same quoted or not. Each runs a fixed number of examples (well under
 * a second) within a time budget; a failure prints its seed for {@code -Dpgetl.seed}.
 */
class ConfigPropertiesTest {
  private static final Duration BUDGET = Duration.ofSeconds(5);
  private static final String LETTERS = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ";
  private static final String DIGITS = "0123456789";

  @Test
  void noPasswordShowsInADescription() {
    Theories.qt(300, BUDGET)
        .forAll(
            Theories.strings(LETTERS + DIGITS, 12, 40),
            Generate.pick(List.of("password", "PASSWORD", "sslpassword", "sslPassword")))
        .checkAssert(
            (secret, param) -> {
              String url = "jdbc:postgresql://h:5432/db?user=u&" + param + "=" + secret;
              PostgresStore.Builder b =
                  PostgresStore.builder().jdbcUrl(url).password(secret).pipelineId("p");
              assertThat(b.toString()).doesNotContain(secret);
              String description;
              try {
                // password is a connection field; sslpassword is not, and is rejected
                description = b.config().toString();
              } catch (EtlException rejected) {
                description = rejected.getMessage();
              }
              assertThat(description).doesNotContain(secret);
            });
  }

  /**
   * Any text of the Basic Multilingual Plane, text made of identifier characters and a few others,
   * and such text after a {@code pg_} prefix: most of the first kind is rejected, so the other two
   * make sure that many accepted (and nearly accepted) names are tried.
   */
  private static Gen<String> schemas() {
    Gen<String> any = strings().basicMultilingualPlaneAlphabet().ofLengthBetween(0, 70);
    Gen<String> identifierLike = Theories.strings(LETTERS + DIGITS + "_" + "_-$ .\"é", 0, 70);
    Gen<String> reserved =
        Generate.pick(List.of("pg_", "PG_", "Pg_", "pG_"))
            .zip(Theories.strings(LETTERS + DIGITS + "_", 0, 60), String::concat);
    return Generate.oneOf(any, identifierLike, reserved);
  }

  @Test
  void anAcceptedSchemaNeedsNoEscaping() {
    Theories.qt(1000, BUDGET)
        .forAll(schemas())
        .checkAssert(
            schema -> {
              PostgresStoreConfig c;
              try {
                c =
                    PostgresStore.builder()
                        .jdbcUrl("jdbc:postgresql://h/db?user=u")
                        .pipelineId("p")
                        .schema(schema)
                        .config();
              } catch (EtlException rejected) {
                return;
              }
              assertThat(c.schema()).matches("[A-Za-z_][A-Za-z0-9_]{0,62}");
              assertThat(TableName.quoteIdentifier(c.schema())).isEqualTo('"' + c.schema() + '"');
              assertThat(c.schema().toLowerCase()).doesNotStartWith("pg_");
            });
  }

  /** A character that is neither an ASCII letter or digit nor an underscore. */
  private static Gen<Character> notIdentifierChars() {
    return Generate.characters(Character.MIN_VALUE, Character.MAX_VALUE)
        .assuming(ch -> !(Character.isLetterOrDigit(ch) && ch < 128) && ch != '_');
  }

  @Test
  void aSchemaWithAnyOtherCharacterIsRejected() {
    Theories.qt(300, BUDGET)
        .forAll(Theories.strings(LETTERS, 1, 20), notIdentifierChars())
        .checkAssert(
            (name, bad) ->
                assertThatThrownBy(
                        () ->
                            PostgresStore.builder()
                                .jdbcUrl("jdbc:postgresql://h/db?user=u")
                                .pipelineId("p")
                                .schema(name + bad)
                                .config())
                    .isInstanceOf(EtlException.class));
  }
}
