package org.pgetl.testing;

import java.io.IOException;
import java.lang.reflect.Modifier;
import java.net.URISyntaxException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.TreeSet;
import java.util.jar.JarFile;
import java.util.stream.Stream;

/**
 * The public API of one pgetl module as its tests see it: the public top-level types of the jar (or
 * classes folder) that holds a given class, outside any {@code internal} package. Each module's
 * {@code PublicApiTest} compares them with the list it allows.
 */
public final class PublicTypes {
  private PublicTypes() {}

  /**
   * Returns the public top-level types of the module that holds {@code anyType}, sorted.
   *
   * @param anyType a class of the module
   * @return the fully qualified names of its public top-level types outside {@code internal}
   */
  public static TreeSet<String> of(Class<?> anyType) throws IOException, ClassNotFoundException {
    TreeSet<String> names = new TreeSet<>();
    for (String file : classFiles(root(anyType))) {
      if (!file.startsWith("org/pgetl/")
          || file.contains("/internal/")
          || file.contains("$")
          || file.endsWith("package-info.class")
          || file.endsWith("module-info.class")) {
        continue;
      }
      String name = file.substring(0, file.length() - ".class".length()).replace('/', '.');
      if (Modifier.isPublic(load(name).getModifiers())) {
        names.add(name);
      }
    }
    return names;
  }

  /**
   * Returns the public methods of the module's public types whose parameters or result are of a
   * type in an {@code internal} package: the places where an implementation type leaks into the
   * API.
   *
   * @param anyType a class of the module
   * @return one line per leak, {@code Type.method uses InternalType}; empty when none
   */
  public static List<String> internalLeaks(Class<?> anyType)
      throws IOException, ClassNotFoundException {
    List<String> leaks = new ArrayList<>();
    for (String name : of(anyType)) {
      Class<?> type = load(name);
      for (var m : type.getMethods()) {
        if (!m.getDeclaringClass().getName().startsWith("org.pgetl")) {
          continue;
        }
        List<Class<?>> used = new ArrayList<>(List.of(m.getParameterTypes()));
        used.add(m.getReturnType());
        for (Class<?> c : used) {
          if (c.getName().startsWith("org.pgetl") && c.getName().contains(".internal.")) {
            leaks.add(type.getName() + "." + m.getName() + " uses " + c.getName());
          }
        }
      }
    }
    return leaks;
  }

  private static Class<?> load(String name) throws ClassNotFoundException {
    return Class.forName(name, false, PublicTypes.class.getClassLoader());
  }

  private static Path root(Class<?> type) {
    try {
      return Path.of(type.getProtectionDomain().getCodeSource().getLocation().toURI());
    } catch (URISyntaxException e) {
      throw new IllegalStateException("no location for " + type, e);
    }
  }

  private static List<String> classFiles(Path root) throws IOException {
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
    return classFiles;
  }
}
