package org.pgetl.examples.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

class CliHelpTest {

  @ParameterizedTest
  @CsvSource({
    "'', pgetl, demo|replicate|check|lifecycle|tables|status",
    "demo, pgetl demo, --rows|--duration|--rate|--duckdb-file|--postgres-version|--plain|--verbose",
    "replicate, pgetl replicate,"
        + " --source-url|--publication|--create-publication|--destination|--pipeline-id"
        + "|--state-store|--store-schema|--status-every|--max-table-sync-workers"
        + "|--copy-connections|--instance-mode|--lease-check-interval|--takeover-delay|--verbose",
    "status, pgetl status, --store-url|--store-schema|--pipeline-id|--verbose",
    "check, pgetl check, --source-url|--publication|--pipeline-id|--state-store|--store-schema"
        + "|--max-table-sync-workers|--verbose",
    "lifecycle, pgetl lifecycle, show|pause|resume|drain|retire",
    "lifecycle show, pgetl lifecycle show,"
        + " --store-url|--store-schema|--pipeline-id|--destination-name",
    "lifecycle pause, pgetl lifecycle pause,"
        + " --store-url|--store-schema|--pipeline-id|--destination-name|--reason|--by",
    "lifecycle resume, pgetl lifecycle resume, --store-url|--reason|--by",
    "lifecycle drain, pgetl lifecycle drain, --store-url|--reason|--by",
    "lifecycle retire, pgetl lifecycle retire, docs/operations.md",
  })
  void helpOfEveryCommandListsItsOptionsAndExitsZero(
      String command, String usage, String expected) {
    String[] args = (command.isEmpty() ? "--help" : command + " --help").split(" ");
    CliRun.Finished r = CliRun.run(args);
    assertThat(r.exitCode()).isZero();
    assertThat(r.out()).startsWith("Usage: " + usage);
    for (String word : expected.split("\\|")) {
      assertThat(r.out()).as("help of '%s'", command).contains(word.strip());
    }
    assertThat(r.err()).isEmpty();
  }

  @ParameterizedTest
  @CsvSource(
      delimiter = ';',
      value = {
        "demo --bogus; Unknown option: '--bogus' (see 'pgetl demo --help')",
        "demo --rows lots; Invalid value for option '--rows': 'lots' is not a count",
        "demo --duration soon; Invalid value for option '--duration': 'soon' is not a duration",
        "demo --rows 5; --rows must be between 100 and 1,000,000,000, was 5",
        "demo --postgres-version 9; --postgres-version: ",
        "replicate --publication p; Missing required option: '--source-url=URL'",
        "replicate --source-url x --publication p --destination kafka;"
            + " 'kafka' is not a destination: use stdout, duckdb:PATH, postgres:JDBC_URL, iceberg:DIR or iceberg-changelog:DIR",
        "replicate --source-url x --publication p --state-store redis;"
            + " 'redis' is not a state store",
        "lifecycle pause --pipeline-id p --destination-name d;"
            + " Missing required option: '--store-url=URL'",
        "nonsense; Unmatched argument at index 0: 'nonsense'",
        "replicate --source-url jdbc:postgresql://localhost/x?user=u --publication p"
            + " --max-table-sync-workers 0; --max-table-sync-workers must be > 0, was 0",
        "replicate --source-url jdbc:postgresql://localhost/x?user=u --publication p"
            + " --copy-connections 65; --copy-connections must be <= 64, was 65",
        "replicate --source-url jdbc:postgresql://localhost/x?user=u --publication p"
            + " --takeover-delay 2s; --takeover-delay must be > 2 x --lease-check-interval",
        "replicate --source-url jdbc:postgresql://localhost/x?user=u --publication p"
            + " --instance-mode hot; Invalid value for option '--instance-mode'",
        "status --pipeline-id p; Missing required option: '--store-url=URL'",
        "check --source-url jdbc:postgresql://localhost/x?user=u --publication p"
            + " --max-table-sync-workers 0; --max-table-sync-workers must be > 0, was 0",
      })
  void badInputIsOneClearLineAndExitCodeTwo(String args, String message) {
    CliRun.Finished r = CliRun.run(args.split(" "));
    assertThat(r.exitCode()).isEqualTo(Main.EXIT_USAGE);
    assertThat(r.errLines()).hasSize(1);
    assertThat(r.errLines().get(0)).startsWith("error: ").contains(message);
    assertThat(r.out()).isEmpty();
  }

  @Test
  void aMalformedSourceUrlIsOneLineWithTheConfigErrorAndItsHint() {
    CliRun.Finished r =
        CliRun.run("replicate", "--source-url", "mysql://db/x", "--publication", "p");
    assertThat(r.exitCode()).isEqualTo(Main.EXIT_FAILURE);
    assertThat(r.errLines()).hasSize(1);
    assertThat(r.errLines().get(0))
        .startsWith("error: CONFIG_ERROR: source.url must start with jdbc:postgresql://")
        .contains("hint: ")
        .doesNotContain("Exception")
        .doesNotContain("\tat ");
  }

  @Test
  void verboseAddsTheStackTrace() {
    CliRun.Finished r =
        CliRun.run("replicate", "--source-url", "mysql://db/x", "--publication", "p", "-v");
    assertThat(r.exitCode()).isEqualTo(Main.EXIT_FAILURE);
    assertThat(r.err()).startsWith("error: CONFIG_ERROR").contains("\tat org.pgetl.");
  }

  @Test
  void retireIsRefusedWithAPointerToTheOperatorsSql() {
    CliRun.Finished r =
        CliRun.run(
            "lifecycle",
            "retire",
            "--store-url",
            "jdbc:postgresql://localhost/x",
            "--pipeline-id",
            "p",
            "--destination-name",
            "duckdb");
    assertThat(r.exitCode()).isEqualTo(Main.EXIT_FAILURE);
    assertThat(r.errLines()).hasSize(1);
    assertThat(r.errLines().get(0)).contains("does not retire").contains("docs/operations.md");
  }

  /** The retire refusal points at a section of docs/operations.md: that section exists. */
  @Test
  void theRetirePointerNamesASectionOfTheOperationsGuide() throws Exception {
    CliRun.Finished r = CliRun.run("lifecycle", "retire");
    java.util.regex.Matcher m =
        java.util.regex.Pattern.compile("docs/operations\\.md, \"([^\"]+)\"").matcher(r.err());
    assertThat(m.find()).as("a section named in %s", r.err()).isTrue();
    String guide =
        java.nio.file.Files.readString(java.nio.file.Path.of("..", "docs", "operations.md"));
    assertThat(guide.lines()).contains("## " + m.group(1));
    CliRun.Finished help = CliRun.run("lifecycle", "retire", "--help");
    assertThat(help.out()).contains("\"" + m.group(1) + "\"");
  }

  @Test
  void withoutACommandTheUsageGoesToStderrWithExitCodeTwo() {
    CliRun.Finished r = CliRun.run();
    assertThat(r.exitCode()).isEqualTo(Main.EXIT_USAGE);
    assertThat(r.err()).startsWith("error: a command is missing").contains("Usage: pgetl");
  }

  @Test
  void thePostgresDestinationIsParsed() {
    CliRun.Finished r =
        CliRun.run(
            "replicate",
            "--source-url",
            "mysql://db/x",
            "--publication",
            "p",
            "--destination",
            "postgres:jdbc:postgresql://localhost/mirror");
    // parsed: the run gets as far as the malformed source URL
    assertThat(r.errLines().get(0)).startsWith("error: CONFIG_ERROR: source.url");
  }

  @ParameterizedTest
  @CsvSource({
    "30s, 30000",
    "500ms, 500",
    "2m, 120000",
    "1h30m, 5400000",
    "15, 15000",
    "PT5S, 5000"
  })
  void durationsAreReadAsPeopleWriteThem(String text, long millis) {
    assertThat(Converters.duration(text)).isEqualTo(Duration.ofMillis(millis));
  }

  @ParameterizedTest
  @ValueSource(strings = {"", "s", "5x", "5s3", "-5s", "1.5s"})
  void notADuration(String text) {
    assertThatThrownBy(() -> Converters.duration(text))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("is not a duration");
  }

  @ParameterizedTest
  @CsvSource({"20000, 20000", "1_000_000, 1000000", "'1,000', 1000", "20k, 20000", "1m, 1000000"})
  void countsAreReadAsPeopleWriteThem(String text, long count) {
    assertThat(Converters.count(text)).isEqualTo(count);
  }

  @Test
  void destinationSpecs() {
    assertThat(DestinationSpec.parse("stdout").kind()).isEqualTo(DestinationSpec.Kind.STDOUT);
    assertThat(DestinationSpec.parse("duckdb:/tmp/x.duckdb"))
        .isEqualTo(new DestinationSpec(DestinationSpec.Kind.DUCKDB, "/tmp/x.duckdb"));
    assertThat(DestinationSpec.parse("postgres:jdbc:postgresql://h/db"))
        .isEqualTo(new DestinationSpec(DestinationSpec.Kind.POSTGRES, "jdbc:postgresql://h/db"));
    assertThatThrownBy(() -> DestinationSpec.parse("duckdb:"))
        .hasMessageContaining("is not a destination");
  }

  @Test
  void jsonIsComparedWithoutWhiteSpaceOutsideStrings() {
    assertThat(TableChecksum.minifyJson("{\"a\": 1, \"b\": [1, 2], \"c\": \"x \\\" y\"}"))
        .isEqualTo("{\"a\":1,\"b\":[1,2],\"c\":\"x \\\" y\"}");
  }

  @Test
  void numbersAreComparedWithoutTrailingZeros() throws Exception {
    assertThat(TableChecksum.normal(new java.math.BigDecimal("12.50")))
        .isEqualTo(TableChecksum.normal(new java.math.BigDecimal("12.5")));
    assertThat(TableChecksum.normal(new java.math.BigDecimal("0.00"))).isEqualTo("0");
    assertThat(TableChecksum.normal(new Object[] {1, null, 3})).isEqualTo("{1\u0002\\N\u00023}");
  }
}
