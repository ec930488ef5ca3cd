package org.pgetl.bench;

import java.lang.management.ManagementFactory;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.TimeUnit;
import org.pgetl.PgConnectionConfig;
import org.pgetl.store.PipelineStore;
import org.pgetl.store.TableState;
import org.pgetl.testkit.EmbeddedPostgres;

/** What every harness needs: connections, statements, waiting for tables, medians, output. */
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
}
