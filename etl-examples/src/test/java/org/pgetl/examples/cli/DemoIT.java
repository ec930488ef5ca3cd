package org.pgetl.examples.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.pgetl.examples.ChildJvm;

/**
 * Runs {@code pgetl demo} as a user does, in a child JVM with its own embedded PostgreSQL, and
 * reads what it prints.
 */
@Timeout(value = 6, unit = TimeUnit.MINUTES)
class DemoIT {
  private static final Pattern VERIFIED_TABLE =
      Pattern.compile("^\\s+public\\.\\w+\\s+[\\d,]+\\s+[\\d,]+\\s+\\w{12}\\s+\\w{12}\\s+(\\S+)$");

  @TempDir Path dir;

  @Test
  void replicatesTheSampleDataWithALiveWorkloadAndEveryTableMatches() throws Exception {
    ChildJvm demo = demo("--rows", "20000", "--duration", "10s");
    int code = demo.waitFor(4);
    List<String> out = demo.lines();
    String text = String.join("\n", out);
    assertThat(code).as(text).isZero();
    assertThat(verified(out)).as(text).hasSize(4).containsOnly("match");
    assertThat(text)
        .contains("All 4 tables match")
        .contains("pipeline stopped cleanly")
        .contains("caught up: the server confirms every change")
        .contains("metrics: pgetl.rows.copied")
        // not a terminal: plain lines, no cursor movement
        .doesNotContain("\033[");
    assertThat(out.stream().filter(l -> l.startsWith("copy public.")).count()).isGreaterThan(4);
    assertThat(out.stream().filter(l -> l.startsWith("  live  events")).count()).isPositive();
  }

  @Test
  void aSigtermDuringTheLiveStreamStopsCleanlyAndStillVerifies() throws Exception {
    ChildJvm demo = demo("--rows", "5000", "--duration", "10m");
    assertThat(demo.awaitLine(l -> l.startsWith("  live  events"), 3)).as(demo.text()).isTrue();
    assertThat(demo.process.isAlive()).as(demo.text()).isTrue();
    demo.terminate(); // SIGTERM, handled like Ctrl-C
    int code = demo.waitFor(3);
    String text = demo.text();
    assertThat(code).as(text).isZero();
    assertThat(text).contains("stopping early on request").contains("All 4 tables match");
  }

  private ChildJvm demo(String... args) throws Exception {
    List<String> all = new ArrayList<>();
    all.add("demo");
    all.add("--duckdb-file");
    all.add(dir.resolve("demo.duckdb").toString());
    all.addAll(List.of(args));
    return ChildJvm.start(dir, Main.class, all);
  }

  private static List<String> verified(List<String> out) {
    List<String> results = new ArrayList<>();
    for (String line : out) {
      var m = VERIFIED_TABLE.matcher(line);
      if (m.matches()) {
        results.add(m.group(1));
      }
    }
    return results;
  }
}
