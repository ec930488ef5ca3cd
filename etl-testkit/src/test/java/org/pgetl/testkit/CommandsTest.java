package org.pgetl.testkit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

class CommandsTest {

  @Test
  void capturesOutputAndExitCode() {
    Commands.Result r =
        Commands.run(
            List.of("sh", "-c", "echo out; echo err >&2; echo $LC_ALL; exit 3"),
            Path.of("/"),
            Duration.ofSeconds(30));
    assertThat(r.exitCode()).isEqualTo(3);
    assertThat(r.ok()).isFalse();
    assertThat(r.output()).contains("out", "err", "C");
    assertThat(r.describe()).contains("exit code: 3");
  }

  @Test
  void programThatOverrunsIsKilled() {
    assertThatThrownBy(
            () -> Commands.run(List.of("sleep", "30"), Path.of("/"), Duration.ofMillis(300)))
        .isInstanceOf(TestkitException.class)
        .hasMessageContaining("did not finish within");
  }

  @Test
  void missingProgramIsNamed() {
    assertThatThrownBy(
            () ->
                Commands.run(
                    List.of("/nonexistent/pgetl-tool"), Path.of("/"), Duration.ofSeconds(5)))
        .isInstanceOf(TestkitException.class)
        .hasMessageContaining("cannot start '/nonexistent/pgetl-tool'");
  }

  @Test
  void shellQuotingSurvivesQuotes() {
    Commands.Result r =
        Commands.run(
            List.of("sh", "-c", "printf %s " + Commands.shellQuote("it's \"x\" $HOME")),
            Path.of("/"),
            Duration.ofSeconds(30));
    assertThat(r.output()).isEqualTo("it's \"x\" $HOME");
  }

  @Test
  void longOutputKeepsItsEnd() {
    String text = "a".repeat(Commands.MAX_OUTPUT_CHARS) + "THE END";
    assertThat(Commands.tail(text)).startsWith("[...]").endsWith("THE END");
  }

  @Test
  void findsProgramsInSbinToo() {
    assertThat(Commands.which("sh")).isPresent();
    assertThat(Commands.which("pgetl-no-such-program")).isEmpty();
  }
}
