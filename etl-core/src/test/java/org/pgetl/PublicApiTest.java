package org.pgetl;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.InputStream;
import java.lang.reflect.Modifier;
import java.net.URISyntaxException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.TreeSet;
import java.util.jar.JarFile;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.pgetl.destination.Destination;

/**
 * The public API of etl-core and etl-destination-api is the list in {@code api/public-types.txt}:
 * every public top-level type outside {@code org.pgetl.core.internal}. A type added or removed
 * fails this test until the list is changed with it, so that the API grows only on purpose; and the
 * list holds at most {@value #MAX_PUBLIC_TYPES} types, so that it grows by making room.
 */
class PublicApiTest {
  /** The most top-level public types etl-core and etl-destination-api may have together. */
  static final int MAX_PUBLIC_TYPES = 40;

  @Test
  void thePublicTopLevelTypesAreExactlyTheListedOnes() throws Exception {
    assertThat(actualPublicTypes())
        .as(
            "public top-level types of etl-core and etl-destination-api; a change of the API"
                + " updates src/test/resources/api/public-types.txt on purpose")
        .containsExactlyElementsOf(new TreeSet<>(listedPublicTypes()));
  }

  @Test
  void thereAreAtMostFortyPublicTopLevelTypes() throws Exception {
    assertThat(actualPublicTypes())
        .as(
            "public top-level types of etl-core and etl-destination-api; at most %d: nest a small"
                + " value type in the type it belongs to, or make room on purpose",
            MAX_PUBLIC_TYPES)
        .hasSizeLessThanOrEqualTo(MAX_PUBLIC_TYPES);
    assertThat(listedPublicTypes()).hasSizeLessThanOrEqualTo(MAX_PUBLIC_TYPES);
  }

  private static TreeSet<String> actualPublicTypes() throws Exception {
    TreeSet<String> actual = new TreeSet<>();
    actual.addAll(publicTypes(root(Pipeline.class)));
    actual.addAll(publicTypes(root(Destination.class)));
    return actual;
  }

  private static List<String> listedPublicTypes() throws IOException {
    try (InputStream in = PublicApiTest.class.getResourceAsStream("/api/public-types.txt")) {
      return new String(in.readAllBytes(), StandardCharsets.UTF_8)
          .lines()
          .map(String::trim)
          .filter(l -> !l.isEmpty() && !l.startsWith("#"))
          .toList();
    }
  }

  @Test
  void noInternalTypeLeaksThroughAPublicSignature() throws Exception {
    List<String> leaks = new ArrayList<>();
    for (Path root : List.of(root(Pipeline.class), root(Destination.class))) {
      for (String name : publicTypes(root)) {
        Class<?> type = Class.forName(name, false, PublicApiTest.class.getClassLoader());
        for (var m : type.getMethods()) {
          if (!m.getDeclaringClass().getName().startsWith("org.pgetl")) {
            continue;
          }
          List<Class<?>> used = new ArrayList<>(List.of(m.getParameterTypes()));
          used.add(m.getReturnType());
          for (Class<?> c : used) {
            if (c.getName().startsWith("org.pgetl.core.internal")) {
              leaks.add(type.getName() + "." + m.getName() + " uses " + c.getName());
            }
          }
        }
      }
    }
    assertThat(leaks).isEmpty();
  }

  private static Path root(Class<?> type) throws URISyntaxException {
    return Path.of(type.getProtectionDomain().getCodeSource().getLocation().toURI());
  }

  private static List<String> publicTypes(Path root) throws IOException, ClassNotFoundException {
    List<String> classFiles = new ArrayList<>();
    if (Files.isDirectory(root)) {
      try (Stream<Path> files = Files.walk(root)) {
        files
            .filter(f -> f.toString().endsWith(".class"))
            .forEach(f -> classFiles.add(root.relativize(f).toString().replace('\\', '/')));
      }
    } else {
      try (JarFile jar = new JarFile(root.toFile())) {
        jar.stream()
            .map(e -> e.getName())
            .filter(n -> n.endsWith(".class"))
            .forEach(classFiles::add);
      }
    }
    List<String> names = new ArrayList<>();
    for (String file : classFiles) {
      if (!file.startsWith("org/pgetl/")
          || file.contains("/internal/")
          || file.contains("$")
          || file.endsWith("package-info.class")
          || file.endsWith("module-info.class")) {
        continue;
      }
      String name = file.substring(0, file.length() - ".class".length()).replace('/', '.');
      Class<?> type = Class.forName(name, false, PublicApiTest.class.getClassLoader());
      if (Modifier.isPublic(type.getModifiers())) {
        names.add(name);
      }
    }
    return names;
  }
}
