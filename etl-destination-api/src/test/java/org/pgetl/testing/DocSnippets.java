package org.pgetl.testing;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.stream.Collectors;

/**
 * Keeps the code in the docs compiled: a snippet lives in a test source between {@code //
 * <name>:begin} and {@code // <name>:end} lines, and a Markdown file quotes it verbatim in a {@code
 * java} block (its indentation removed).
 */
public final class DocSnippets {
  private DocSnippets() {}

  /**
   * Asserts that {@code markdown} quotes the snippet {@code name} of {@code source} verbatim, and
   * that the snippet is at most {@code maxLines} long.
   *
   * @param source the Java file holding the snippet, relative to the module
   * @param name the snippet's marker name
   * @param markdown the Markdown file, relative to the module
   * @param maxLines the longest the snippet may be
   */
  public static void assertQuoted(String source, String name, String markdown, int maxLines)
      throws IOException {
    String text = Files.readString(Path.of(source), StandardCharsets.UTF_8);
    int begin = text.indexOf("// " + name + ":begin\n");
    int end = text.indexOf("// " + name + ":end");
    assertThat(begin).as("snippet %s in %s", name, source).isNotNegative();
    assertThat(end).as("end of snippet %s in %s", name, source).isGreaterThan(begin);
    String body = text.substring(text.indexOf('\n', begin) + 1, text.lastIndexOf('\n', end) + 1);
    String indent = body.substring(0, body.length() - body.stripLeading().length());
    assertThat(body.lines().count()).as("lines of snippet %s", name).isLessThanOrEqualTo(maxLines);
    String quoted =
        body.lines()
            .map(l -> l.startsWith(indent) ? l.substring(indent.length()) : l)
            .collect(Collectors.joining("\n", "```java\n", "\n```\n"));
    assertThat(Files.readString(Path.of(markdown), StandardCharsets.UTF_8))
        .as("%s quotes snippet %s of %s verbatim", markdown, name, source)
        .contains(quoted);
  }
}
