package org.pgetl;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.StringWriter;
import java.lang.module.ModuleDescriptor;
import java.lang.module.ModuleDescriptor.Exports;
import java.lang.module.ModuleFinder;
import java.net.URISyntaxException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.stream.Collectors;
import javax.tools.Diagnostic;
import javax.tools.DiagnosticCollector;
import javax.tools.JavaCompiler;
import javax.tools.JavaFileObject;
import javax.tools.StandardJavaFileManager;
import javax.tools.ToolProvider;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.pgetl.destination.Destination;

/**
 * The module {@code org.pgetl.core} exports its public packages and nothing of {@code
 * org.pgetl.core.internal}, except the one package it shares with the PostgreSQL store. The test
 * reads the compiled descriptor and compiles a small consumer module against the module on the
 * module path, as an application that {@code requires org.pgetl.core} would be compiled.
 */
class ModuleBoundaryTest {

  private static final String MODULE = "org.pgetl.core";

  private static List<Path> modulePath;

  @TempDir Path work;

  @BeforeAll
  static void locateModules() throws URISyntaxException {
    // the module, the destination API it requires transitively, and its other required modules
    modulePath =
        List.of(
            root(Pipeline.class),
            root(Destination.class),
            root(org.postgresql.Driver.class),
            root(org.slf4j.Logger.class));
  }

  @Test
  void theModuleExportsThePublicPackagesAndNoInternalOneToEveryone() {
    ModuleDescriptor descriptor = descriptor();

    Set<String> unqualified =
        descriptor.exports().stream()
            .filter(e -> !e.isQualified())
            .map(Exports::source)
            .collect(Collectors.toCollection(TreeSet::new));
    assertThat(unqualified)
        .as("packages of %s exported to every module", MODULE)
        .contains("org.pgetl", "org.pgetl.lifecycle", "org.pgetl.store")
        .noneMatch(p -> p.contains(".internal"));

    Map<String, Set<String>> qualified = new TreeMap<>();
    descriptor.exports().stream()
        .filter(Exports::isQualified)
        .forEach(e -> qualified.put(e.source(), new TreeSet<>(e.targets())));
    assertThat(qualified)
        .as("packages of %s exported to named modules only", MODULE)
        .containsExactlyEntriesOf(
            Map.of("org.pgetl.core.internal.pg", Set.of("org.pgetl.store.postgres")));
    assertThat(descriptor.opens()).as("packages open to reflection").isEmpty();
  }

  @Test
  void aConsumerCompilesAgainstThePublicApi() throws IOException {
    List<String> errors =
        compileConsumer(
            "import org.pgetl.Pipeline;\n"
                + "import org.pgetl.store.MemoryStore;\n"
                + "import org.pgetl.model.Lsn;\n"
                + "public class Consumer {\n"
                + "  Class<?>[] used = {Pipeline.class, MemoryStore.class, Lsn.class};\n"
                + "}\n");

    assertThat(errors).isEmpty();
  }

  @Test
  void aConsumerCannotSeeTheEngineInternals() throws IOException {
    List<String> errors =
        compileConsumer(
            "import org.pgetl.core.internal.engine.Engine;\n"
                + "public class Consumer {\n"
                + "  Class<?> used = Engine.class;\n"
                + "}\n");

    assertThat(errors)
        .anySatisfy(
            e ->
                assertThat(e)
                    .contains("package org.pgetl.core.internal.engine is not visible")
                    .contains("does not export it"));
  }

  @Test
  void aConsumerCannotSeeThePackageSharedWithTheStore() throws IOException {
    List<String> errors =
        compileConsumer(
            "import org.pgetl.core.internal.pg.Secrets;\n"
                + "public class Consumer {\n"
                + "  Class<?> used = Secrets.class;\n"
                + "}\n");

    assertThat(errors)
        .anySatisfy(
            e ->
                assertThat(e)
                    .contains("package org.pgetl.core.internal.pg is not visible")
                    .contains("does not export it to module consumer"));
  }

  private ModuleDescriptor descriptor() {
    return ModuleFinder.of(modulePath.toArray(Path[]::new))
        .find(MODULE)
        .orElseThrow(() -> new AssertionError(MODULE + " not found on " + modulePath))
        .descriptor();
  }

  /** Compiles module {@code consumer}, which requires the core module; returns javac's errors. */
  private List<String> compileConsumer(String consumerSource) throws IOException {
    Path src = Files.createDirectories(work.resolve("src/consumer/app"));
    Files.writeString(
        work.resolve("src/consumer/module-info.java"),
        "module consumer { requires " + MODULE + "; }\n");
    Files.writeString(src.resolve("Consumer.java"), "package app;\n" + consumerSource);
    Path out = Files.createDirectories(work.resolve("out"));

    JavaCompiler javac = ToolProvider.getSystemJavaCompiler();
    DiagnosticCollector<JavaFileObject> diagnostics = new DiagnosticCollector<>();
    try (StandardJavaFileManager files = javac.getStandardFileManager(diagnostics, null, null)) {
      Iterable<? extends JavaFileObject> units =
          files.getJavaFileObjects(
              work.resolve("src/consumer/module-info.java"), src.resolve("Consumer.java"));
      List<String> options =
          List.of(
              "--release",
              "17",
              "--module-path",
              modulePath.stream()
                  .map(Path::toString)
                  .collect(Collectors.joining(java.io.File.pathSeparator)),
              // not the test's own class path, where javac would find the same classes in the
              // unnamed module
              "--class-path",
              out.toString(),
              "-d",
              out.toString(),
              "-proc:none");
      StringWriter output = new StringWriter();
      boolean ok = javac.getTask(output, files, diagnostics, options, null, units).call();
      List<String> errors =
          diagnostics.getDiagnostics().stream()
              .filter(d -> d.getKind() == Diagnostic.Kind.ERROR)
              .map(d -> d.getMessage(null))
              .toList();
      assertThat(ok)
          .as("javac succeeded although it reported %s", errors)
          .isEqualTo(errors.isEmpty());
      return errors;
    }
  }

  private static Path root(Class<?> type) throws URISyntaxException {
    return Path.of(type.getProtectionDomain().getCodeSource().getLocation().toURI());
  }
}
