package org.pgetl.bench;

import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.pgetl.PgConnectionConfig;
import org.pgetl.store.PipelineStore;
import org.pgetl.store.TableState;
import org.pgetl.testkit.EmbeddedPostgres;

/**
 * What every harness needs: connections, statements, waiting for tables, medians, output, load and
 * CPU time.
 */
final class Bench {
  private static final long POLL_MILLIS = 5;

  private Bench() {}

  /** Returns pgetl's connection config of a database of the harness's server, as its superuser. */
  static PgConnectionConfig config(EmbeddedPostgres pg, String db) {
    return PgConnectionConfig.builder()
        .host(pg.host())
        .port(pg.port())
        .database(db)
        .user(pg.superuser())
        .password(pg.password())
        .build();
  }

  /** Starts the harnesses' PostgreSQL 17 server: fsync on, a walsender timeout of 60 s. */
  static EmbeddedPostgres postgres17() {
    return EmbeddedPostgres.builder()
        .version(17)
        .setting("fsync", "on")
        .setting("wal_sender_timeout", "60s")
        .start();
  }

  /** Runs statements one by one. */
  static void exec(Connection c, String... sql) throws SQLException {
    try (Statement st = c.createStatement()) {
      for (String s : sql) {
        st.execute(s);
      }
    }
  }

  /**
   * Waits (at most ten minutes) until the store holds at least {@code tables} tables, all ready.
   */
  static void waitReady(PipelineStore store, int tables) throws InterruptedException {
    long deadline = System.nanoTime() + TimeUnit.MINUTES.toNanos(10);
    while (store.tableStates().size() < Math.max(1, tables)
        || !store.tableStates().values().stream()
            .allMatch(s -> s.type() == TableState.Type.READY)) {
      if (System.nanoTime() > deadline) {
        throw new IllegalStateException("tables not ready: " + store.tableStates());
      }
      TimeUnit.MILLISECONDS.sleep(POLL_MILLIS);
    }
  }

  /** Returns the median (the mean of the two middle values of an even count). */
  static double median(List<Double> values) {
    List<Double> sorted = new ArrayList<>(values);
    Collections.sort(sorted);
    int n = sorted.size();
    return n % 2 == 1 ? sorted.get(n / 2) : (sorted.get(n / 2 - 1) + sorted.get(n / 2)) / 2;
  }

  /** Formats a rate with thousands separators and no decimals. */
  static String fmt(double rate) {
    return String.format(Locale.ROOT, "%,.0f", rate);
  }

  /** Returns the machine's load average over the last minute. */
  static double load() {
    return ManagementFactory.getOperatingSystemMXBean().getSystemLoadAverage();
  }

  /** Returns the first line of {@code /proc/loadavg} (1, 5 and 15 minutes, ...), else "n/a". */
  /** Prints the harness's JVM, heap, CPUs and load, then {@code more} (may be empty). */
  static void printJvm(String more) {
    System.out.printf(
        Locale.ROOT,
        "JVM %s, max heap %d MiB, %d CPUs, load average %s%s%n",
        System.getProperty("java.vm.version"),
        Runtime.getRuntime().maxMemory() >> 20,
        Runtime.getRuntime().availableProcessors(),
        loadavg(),
        more);
  }

  static String loadavg() {
    try {
      return Files.readString(Path.of("/proc/loadavg")).trim();
    } catch (IOException | RuntimeException e) {
      return String.format(Locale.ROOT, "n/a (1 min %.2f)", load());
    }
  }

  /** Returns the CPU seconds this JVM (every thread of the process) used so far. */
  static double jvmCpuSeconds() {
    return ((com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean())
            .getProcessCpuTime()
        / 1e9;
  }

  /**
   * Returns the CPU seconds (utime + stime) a process used so far; -1 when not on Linux or gone.
   */
  static double processCpuSeconds(long pid) {
    try {
      String[] f = procStat(Path.of("/proc/" + pid));
      // utime and stime, fields 14 and 15 of the line, in clock ticks (100 a second on Linux)
      return (Long.parseLong(f[11]) + Long.parseLong(f[12])) / 100.0;
    } catch (IOException | RuntimeException e) {
      return -1;
    }
  }

  /**
   * Returns the CPU seconds the whole server used so far: the postmaster, its live children, and
   * the children it reaped (the backends of closed connections); -1 when not on Linux.
   */
  static double serverCpuSeconds(EmbeddedPostgres pg) {
    try {
      long postmaster = pg.pid();
      double total = 0;
      try (Stream<Path> procs = Files.list(Path.of("/proc"))) {
        for (Path proc : (Iterable<Path>) procs::iterator) {
          String name = proc.getFileName().toString();
          if (!name.chars().allMatch(Character::isDigit)) {
            continue;
          }
          String[] f;
          try {
            f = procStat(proc);
          } catch (IOException e) {
            continue; // gone meanwhile
          }
          long pid = Long.parseLong(name);
          long ppid = Long.parseLong(f[1]);
          if (pid == postmaster) {
            // utime, stime, cutime, cstime: fields 14 to 17, in clock ticks (100 a second)
            total +=
                (Long.parseLong(f[11])
                        + Long.parseLong(f[12])
                        + Long.parseLong(f[13])
                        + Long.parseLong(f[14]))
                    / 100.0;
          } else if (ppid == postmaster) {
            total += (Long.parseLong(f[11]) + Long.parseLong(f[12])) / 100.0;
          }
        }
      }
      return total;
    } catch (IOException | RuntimeException e) {
      return -1; // not Linux
    }
  }

  // the fields of /proc/<pid>/stat after the command name: f[0] is the state (field 3)
  private static String[] procStat(Path proc) throws IOException {
    String stat = Files.readString(proc.resolve("stat"));
    return stat.substring(stat.lastIndexOf(')') + 2).split(" ", -1);
  }
}
