package org.pgetl.examples;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

class EmbeddingExampleTest {

  @Test
  void theReadmeQuotesTheCompiledExampleVerbatim() throws Exception {
    String source =
        Files.readString(
            Path.of("src/main/java/org/pgetl/examples/EmbeddingExample.java"),
            StandardCharsets.UTF_8);
    String begin = "// embedding-example:begin\n";
    String end = "    // embedding-example:end";
    String body = source.substring(source.indexOf(begin) + begin.length(), source.indexOf(end));
    String readme = Files.readString(Path.of("..", "README.md"), StandardCharsets.UTF_8);
    assertThat(body.lines().count()).isLessThanOrEqualTo(10);
    String quoted =
        body.lines()
            .map(l -> l.startsWith("    ") ? l.substring(4) : l)
            .collect(Collectors.joining("\n", "```java\n", "\n```\n"));
    assertThat(readme).contains(quoted);
  }
}
