package org.pgetl.examples.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.jar.JarFile;
import org.junit.jupiter.api.Test;
import org.pgetl.testkit.TestDatabase;
import org.pgetl.testkit.WithPostgres;

/**
 * The packaged command line ({@code java -jar target/pgetl-examples.jar}) as a user runs it: its
 * class path names the jars in {@code target/lib} and no test framework, and it replicates a table
 * with nothing else on the class path.
 */
@WithPostgres
class CliJarIT {
  private static final Path JAR = Path.of("target", "pgetl-examples.jar");

  @Test
  void theJarShipsNoJUnitAndReplicatesOnItsOwnClassPath(TestDatabase db) throws Exception {
    List<String> classPath;
    try (JarFile jar = new JarFile(JAR.toFile())) {
      classPath =
          Arrays.asList(jar.getManifest().getMainAttributes().getValue("Class-Path").split(" "));
      assertThat(jar.stream().map(e -> e.getName())).noneMatch(n -> n.startsWith("org/junit/"));
    }
    assertThat(classPath).isNotEmpty().allMatch(p -> Files.isRegularFile(Path.of("target", p)));
    assertThat(classPath)
        .anyMatch(p -> p.startsWith("lib/etl-testkit-"))
        .noneMatch(
            p ->
                p.startsWith("lib/junit-")
                    || p.startsWith("lib/opentest4j-")
                    || p.startsWith("lib/apiguardian-")
                    || p.startsWith("lib/assertj-"));

    db.execute(
        "CREATE TABLE jar_notes (id int PRIMARY KEY, body text)",
        "INSERT INTO jar_notes VALUES (1, 'one'), (2, 'two')");
    Process p =
        new ProcessBuilder(
                Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-jar",
                JAR.toString(),
                "replicate",
                "--source-url",
                db.jdbcUrl() + "?user=" + db.user() + "&password=" + db.password(),
                "--publication",
                "jar_pub",
                "--create-publication",
                "public.jar_notes",
                "--pipeline-id",
                "jar",
                "--state-store",
                "memory")
            .redirectErrorStream(true)
            .start();
    List<String> lines = new ArrayList<>();
    try (BufferedReader r =
        new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8))) {
      String line;
      long copies = 0;
      while (copies < 2 && (line = r.readLine()) != null) {
        lines.add(line);
        if (line.contains("\"kind\":\"copy\"")) {
          copies++;
        }
      }
      assertThat(copies).as("copy lines; output:%n%s", String.join("\n", lines)).isEqualTo(2);
      p.toHandle().destroy(); // SIGTERM: a clean stop
      while ((line = r.readLine()) != null) {
        lines.add(line);
      }
    } finally {
      if (!p.waitFor(60, TimeUnit.SECONDS)) {
        p.destroyForcibly();
      }
    }
    assertThat(p.exitValue()).as("exit code; output:%n%s", String.join("\n", lines)).isZero();
    assertThat(lines).contains("pgetl: stopped cleanly");
    // a memory store's slots are temporary: the server drops them with their connections
    await()
        .atMost(Duration.ofSeconds(30))
        .until(
            () ->
                db.queryLong(
                        "SELECT count(*) FROM pg_replication_slots"
                            + " WHERE slot_name LIKE 'pgetl\\_%\\_jar%'")
                    == 0);
  }
}
