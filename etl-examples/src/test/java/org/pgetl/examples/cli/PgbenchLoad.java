package org.pgetl.examples.cli;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.util.Random;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.pgetl.testkit.TestDatabase;

/**
 * A load like pgbench's default (TPC-B like) script, on pgbench's four tables: each transaction
 * adds a random delta to one account, its teller and its branch, and appends a history row. One
 * connection runs transactions back to back, a millisecond apart, until {@link #stop()}.
 */
final class PgbenchLoad implements AutoCloseable {
  static final String PUBLICATION = "bench_pub";
  static final String[] TABLES = {
    "pgbench_accounts", "pgbench_tellers", "pgbench_branches", "pgbench_history"
  };

  /** Each table's rows as text, the same expression on both sides. */
  static String rowText(String table) {
    return switch (table) {
      case "pgbench_accounts" -> "concat_ws('|', aid, bid, abalance, rtrim(filler))";
      case "pgbench_tellers" -> "concat_ws('|', tid, bid, tbalance)";
      case "pgbench_branches" -> "concat_ws('|', bid, bbalance)";
      default -> "concat_ws('|', hid, tid, bid, aid, delta, extract(epoch FROM mtime))";
    };
  }

  private static final int BRANCHES = 2;
  private static final int TELLERS = 10 * BRANCHES;
  private static final int ACCOUNTS = 10_000 * BRANCHES;

  private final TestDatabase db;
  private final Random random = new Random(20_240_501);
  private final ScheduledExecutorService thread =
      Executors.newSingleThreadScheduledExecutor(r -> new Thread(r, "pgbench-load"));
  private final AtomicLong transactions = new AtomicLong();
  private final AtomicReference<Throwable> failure = new AtomicReference<>();
  private Connection conn;

  PgbenchLoad(TestDatabase db) {
    this.db = db;
  }

  /** Creates and fills the tables (as {@code pgbench -i -s 2}, scaled down) and the publication. */
  static void createSource(TestDatabase db) {
    db.execute(
        "CREATE TABLE pgbench_branches (bid int PRIMARY KEY, bbalance int, filler char(88))",
        "CREATE TABLE pgbench_tellers (tid int PRIMARY KEY, bid int, tbalance int,"
            + " filler char(84))",
        "CREATE TABLE pgbench_accounts (aid int PRIMARY KEY, bid int, abalance int,"
            + " filler char(84))",
        "CREATE TABLE pgbench_history (hid bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,"
            + " tid int, bid int, aid int, delta int, mtime timestamp, filler char(22))",
        "INSERT INTO pgbench_branches SELECT g, 0, '' FROM generate_series(1, " + BRANCHES + ") g",
        "INSERT INTO pgbench_tellers SELECT g, 1 + (g - 1) / 10, 0, ''"
            + " FROM generate_series(1, "
            + TELLERS
            + ") g",
        "INSERT INTO pgbench_accounts SELECT g, 1 + (g - 1) / 10000, 0, ''"
            + " FROM generate_series(1, "
            + ACCOUNTS
            + ") g",
        "CREATE PUBLICATION "
            + PUBLICATION
            + " FOR TABLE pgbench_accounts, pgbench_tellers, pgbench_branches, pgbench_history",
        "ANALYZE pgbench_accounts");
  }

  /** Starts the transactions. */
  void start() {
    thread.scheduleWithFixedDelay(this::transaction, 0, 1, TimeUnit.MILLISECONDS);
  }

  /** Returns how many transactions committed. */
  long transactions() {
    return transactions.get();
  }

  private void transaction() {
    if (failure.get() != null) {
      return;
    }
    int aid = 1 + random.nextInt(ACCOUNTS);
    int tid = 1 + random.nextInt(TELLERS);
    int bid = 1 + random.nextInt(BRANCHES);
    int delta = random.nextInt(10_001) - 5_000;
    try {
      if (conn == null) {
        conn = db.connect();
        conn.setAutoCommit(false);
      }
      update("UPDATE pgbench_accounts SET abalance = abalance + ? WHERE aid = ?", delta, aid);
      update("UPDATE pgbench_tellers SET tbalance = tbalance + ? WHERE tid = ?", delta, tid);
      update("UPDATE pgbench_branches SET bbalance = bbalance + ? WHERE bid = ?", delta, bid);
      update(
          "INSERT INTO pgbench_history (tid, bid, aid, delta, mtime)"
              + " VALUES (?, ?, ?, ?, CURRENT_TIMESTAMP)",
          tid,
          bid,
          aid,
          delta);
      conn.commit();
      transactions.incrementAndGet();
    } catch (SQLException | RuntimeException e) {
      failure.compareAndSet(null, e);
    }
  }

  private void update(String sql, int... params) throws SQLException {
    try (PreparedStatement ps = conn.prepareStatement(sql)) {
      for (int i = 0; i < params.length; i++) {
        ps.setInt(i + 1, params[i]);
      }
      ps.executeUpdate();
    }
  }

  /**
   * Stops after the running transaction and fails if a transaction failed.
   *
   * @throws Exception when the load failed or did not stop
   */
  void stop() throws Exception {
    thread.shutdown();
    if (!thread.awaitTermination(30, TimeUnit.SECONDS)) {
      throw new IllegalStateException("the load did not stop within 30 s");
    }
    if (failure.get() != null) {
      throw new AssertionError("the load failed", failure.get());
    }
  }

  @Override
  public void close() throws Exception {
    thread.shutdownNow();
    thread.awaitTermination(30, TimeUnit.SECONDS);
    if (conn != null) {
      conn.close();
    }
  }
}
