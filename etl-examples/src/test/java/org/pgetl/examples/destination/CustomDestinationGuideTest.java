package org.pgetl.examples.destination;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.pgetl.destination.AsyncResult;
import org.pgetl.destination.Destination;
import org.pgetl.destination.StreamId;
import org.pgetl.destination.TableCopyWrite;
import org.pgetl.destination.WriteDurability;
import org.pgetl.model.Event;
import org.pgetl.model.ReplicatedTableSchema;
import org.pgetl.testkit.tck.DestinationConformanceTests;

/**
 * Keeps the code of {@code docs/custom-destination.md} compiling: its conformance-kit example is
 * the class between the markers below, quoted verbatim by the guide, and its listing of the {@code
 * Destination} interface matches the declarations in {@code Destination.java}.
 */
class CustomDestinationGuideTest {
  private static final Path GUIDE = Path.of("..", "docs", "custom-destination.md");

  @Test
  void theGuideQuotesTheCompiledConformanceExampleVerbatim() throws Exception {
    String source =
        Files.readString(
            Path.of("src/test/java/org/pgetl/examples/destination/CustomDestinationGuideTest.java"),
            StandardCharsets.UTF_8);
    String begin = "// custom-destination:begin\n";
    String end = "    // custom-destination:end";
    // the last occurrences: the first ones are these literals
    String body =
        source.substring(source.lastIndexOf(begin) + begin.length(), source.lastIndexOf(end));
    String quoted =
        body.lines()
            .map(l -> l.startsWith("    ") ? l.substring(4) : l)
            .collect(Collectors.joining("\n", "```java\n", "\n```\n"));
    assertThat(Files.readString(GUIDE, StandardCharsets.UTF_8)).contains(quoted);
  }

  @Test
  void theGuideListsTheDestinationInterfaceAsDeclared() throws Exception {
    String guide = Files.readString(GUIDE, StandardCharsets.UTF_8);
    String start = "```java\npublic interface Destination {\n";
    int from = guide.indexOf(start);
    assertThat(from).as("the interface listing in the guide").isNotNegative();
    String listing = guide.substring(from + start.length(), guide.indexOf("\n}\n```", from));
    String declared =
        collapse(
            Files.readString(
                Path.of(
                    "..",
                    "etl-destination-api/src/main/java/org/pgetl/destination/Destination.java"),
                StandardCharsets.UTF_8));
    List<String> methods = new ArrayList<>();
    for (String declaration : collapse(listing).split("(?<=;|\\{\\})")) {
      // a default body's closing brace stands alone after its last statement
      if (!declaration.isBlank() && !declaration.strip().equals("}")) {
        methods.add(declaration.strip());
      }
    }
    assertThat(methods).hasSize(8);
    assertThat(methods).allSatisfy(m -> assertThat(declared).contains(m));
    // and nothing more: every abstract or default method of the interface is listed
    assertThat(
            java.util.Arrays.stream(Destination.class.getDeclaredMethods())
                .filter(m -> !java.lang.reflect.Modifier.isStatic(m.getModifiers()))
                .map(m -> m.getName())
                .sorted()
                .toList())
        .allSatisfy(name -> assertThat(listing).contains(" " + name + "("));
  }

  /** The text without comments, with each run of white space as one space. */
  private static String collapse(String java) {
    return java.replaceAll("(?s)/\\*.*?\\*/", " ")
        .replaceAll("//[^\n]*", " ")
        .replaceAll("\\s+", " ")
        .replace("( ", "(");
  }

  /** What the guide's example passes to its destination. */
  private String settingsForATestInstance() {
    return "settings of a test instance";
  }

  /**
   * The guide's example, compiled but never run: {@code MyDestination} stands for the reader's
   * destination, and a local class is not a test class of its own.
   */
  @SuppressWarnings("unused")
  private void conformanceKitExample() {
    // custom-destination:begin
    class MyDestinationConformanceTest extends DestinationConformanceTests<MyDestination> {
      @Override
      protected MyDestination newDestination() {
        return new MyDestination(settingsForATestInstance());
      }

      @Override
      protected List<List<Object>> contents(MyDestination d, ReplicatedTableSchema table) {
        return d.readAll(table); // the table's rows, values in the schema's column order
      }
    }
    // custom-destination:end
  }

  /** The reader's destination, in the guide's example: every call is left to the reader. */
  static final class MyDestination implements Destination {
    private final String settings;

    MyDestination(String settings) {
      this.settings = settings;
    }

    List<List<Object>> readAll(ReplicatedTableSchema table) {
      throw new UnsupportedOperationException("your destination reads " + table.name());
    }

    @Override
    public String name() {
      return "my-destination (" + settings + ")";
    }

    @Override
    public void dropTableForCopy(ReplicatedTableSchema table, UUID attemptId, AsyncResult result) {
      throw new UnsupportedOperationException("your destination drops " + table.name());
    }

    @Override
    public void writeTableRows(
        ReplicatedTableSchema table, TableCopyWrite write, AsyncResult result) {
      throw new UnsupportedOperationException("your destination copies " + table.name());
    }

    @Override
    public void writeEvents(
        StreamId stream, List<Event> events, WriteDurability durability, AsyncResult result) {
      throw new UnsupportedOperationException("your destination applies " + events.size());
    }
  }
}
