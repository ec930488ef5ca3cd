package org.pgetl.examples.crash;

import java.math.BigDecimal;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.List;
import java.util.Random;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.pgetl.testkit.TestDatabase;

/**
 * The source database of {@link CrashLoopIT} and the changes made to it while the pipeline is being
 * killed and restarted.
 *
 * <ul>
 *   <li>{@code accounts} (primary key): {@code note} is stored out of line (TOAST, {@code STORAGE
 *       EXTERNAL}, 3.2 kB) in every fifth row; most updates leave it unchanged, which pgoutput
 *       sends as an unchanged TOAST value (a partial update), some change the key;
 *   <li>{@code orders} (primary key): inserts, updates, deletes and key changes;
 *   <li>{@code audit_log}: no key, {@code REPLICA IDENTITY FULL}, few distinct values (equal rows);
 *   <li>{@code markers}: the row that says the final run caught up.
 * </ul>
 *
 * One thread (one connection) runs small transactions of one to five changes, a few milliseconds
 * apart, in an order drawn from the seed; {@link #burst()} runs one large transaction on the same
 * thread.
 */
final class CrashWorkload implements AutoCloseable {
  static final String PUBLICATION = "crash_pub";
  static final List<String> TABLES = List.of("accounts", "orders", "audit_log", "markers");

  static final int ACCOUNTS = 30_000;
  static final int ORDERS = 60_000;
  static final int AUDIT_ROWS = 10_000;

  private static final long PAUSE_MILLIS = 4;
  private static final String[] STATUSES = {"new", "paid", "shipped", "returned", "lost"};

  private final TestDatabase db;
  private final Random random;
  private final ScheduledExecutorService thread;
  private final AtomicLong transactions = new AtomicLong();
  private final AtomicLong changes = new AtomicLong();
  private final AtomicReference<Throwable> failure = new AtomicReference<>();
  private Connection conn;
  private long nextAccount = ACCOUNTS;
  private long nextOrder = ORDERS;
  private int bursts;

  CrashWorkload(TestDatabase db, long seed) {
    this.db = db;
    this.random = new Random(seed);
    this.thread =
        Executors.newSingleThreadScheduledExecutor(r -> new Thread(r, "crash-loop-workload"));
  }

  /** Creates the tables, their first rows and the publication. */
  static void createSource(TestDatabase db) {
    db.execute(
        "CREATE TABLE accounts (id bigint PRIMARY KEY, balance bigint NOT NULL, note text)",
        "ALTER TABLE accounts ALTER COLUMN note SET STORAGE EXTERNAL",
        "INSERT INTO accounts SELECT g, g * 10,"
            + " CASE WHEN g % 5 = 0 THEN repeat(md5(g::text), 100) ELSE 'note ' || g END"
            + " FROM generate_series(1, "
            + ACCOUNTS
            + ") g",
        "CREATE TABLE orders (id bigint PRIMARY KEY, account bigint NOT NULL,"
            + " amount numeric(12,2), status text, updated_at timestamptz)",
        "INSERT INTO orders SELECT g, 1 + g % "
            + ACCOUNTS
            + ", (g % 100000) / 100.0, 'new',"
            + " timestamptz '2024-01-01 00:00:00+00' + g * interval '1 second'"
            + " FROM generate_series(1, "
            + ORDERS
            + ") g",
        "CREATE TABLE audit_log (kind text, payload text, n int)",
        "ALTER TABLE audit_log REPLICA IDENTITY FULL",
        "INSERT INTO audit_log SELECT 'kind' || (g % 6), 'payload ' || (g % 4), g % 3"
            + " FROM generate_series(1, "
            + AUDIT_ROWS
            + ") g",
        "CREATE TABLE markers (id int PRIMARY KEY)",
        "CREATE PUBLICATION " + PUBLICATION + " FOR TABLE " + String.join(", ", TABLES),
        "ANALYZE accounts, orders, audit_log");
  }

  /** Starts the stream of small transactions. */
  void start() {
    thread.scheduleWithFixedDelay(this::step, 0, PAUSE_MILLIS, TimeUnit.MILLISECONDS);
  }

  /**
   * Runs one large transaction (thousands of updates, partial updates of TOASTed rows and inserts)
   * between two small ones.
   *
   * @return done when it committed
   */
  Future<?> burst() {
    return thread.submit(
        () -> {
          int k = bursts++ % 10;
          try {
            execute(
                "UPDATE orders SET amount = amount + 1, updated_at = now() WHERE id % 10 = " + k,
                "UPDATE accounts SET balance = balance + 1 WHERE id % 10 = " + k,
                "INSERT INTO audit_log SELECT 'burst', 'payload ' || (g % 3), g % 5"
                    + " FROM generate_series(1, 2000) g");
            conn.commit();
            transactions.incrementAndGet();
            changes.addAndGet(ORDERS / 10 + ACCOUNTS / 10 + 2000);
          } catch (SQLException e) {
            failure.compareAndSet(null, e);
            throw new IllegalStateException("the burst failed", e);
          }
          return null;
        });
  }

  /** Returns the number of committed transactions. */
  long transactions() {
    return transactions.get();
  }

  /** Returns the number of row changes committed (an estimate for bursts). */
  long changes() {
    return changes.get();
  }

  /**
   * Stops the workload after the running transaction, and fails if any transaction failed.
   *
   * @throws Exception when the workload failed or did not stop
   */
  void stop() throws Exception {
    thread.shutdown();
    if (!thread.awaitTermination(30, TimeUnit.SECONDS)) {
      throw new TimeoutException("the workload did not stop within 30 s");
    }
    if (failure.get() != null) {
      throw new AssertionError("the workload failed", failure.get());
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

  // --- the small transactions

  private void step() {
    if (failure.get() != null) {
      return;
    }
    try {
      if (conn == null) {
        conn = db.connect();
        conn.setAutoCommit(false);
      }
      int n = 1 + random.nextInt(5);
      for (int i = 0; i < n; i++) {
        change();
      }
      conn.commit();
      transactions.incrementAndGet();
      changes.addAndGet(n);
    } catch (SQLException | RuntimeException e) {
      failure.compareAndSet(null, e);
    }
  }

  private void change() throws SQLException {
    int dice = random.nextInt(100);
    long account = 1 + (long) random.nextInt((int) nextAccount);
    long order = 1 + (long) random.nextInt((int) nextOrder);
    if (dice < 25) {
      // the TOASTed note stays as it is: an unchanged TOAST value for every fifth account
      update(
          "UPDATE accounts SET balance = balance + ? WHERE id = ?", random.nextInt(100), account);
    } else if (dice < 30) {
      // a short note becomes long and a long one short
      try (PreparedStatement ps =
          conn.prepareStatement(
              "UPDATE accounts SET note = CASE WHEN length(note) > 100 THEN 'short ' || ?"
                  + " ELSE repeat(md5(?), 100) END WHERE id = ?")) {
        String salt = Long.toString(random.nextLong(), 36);
        ps.setString(1, salt);
        ps.setString(2, salt);
        ps.setLong(3, account);
        ps.executeUpdate();
      }
    } else if (dice < 37) {
      long id = ++nextAccount;
      update(
          "INSERT INTO accounts VALUES (?, ?, CASE WHEN ? % 5 = 0 THEN repeat(md5(?::text), 100)"
              + " ELSE 'new ' || ? END)",
          id, random.nextInt(1000), id, id, id);
    } else if (dice < 40) {
      update("DELETE FROM accounts WHERE id = ?", account);
    } else if (dice < 43) {
      // a key change that leaves the TOASTed note unchanged
      update("UPDATE accounts SET id = ? WHERE id = ?", ++nextAccount, account);
    } else if (dice < 60) {
      try (PreparedStatement ps =
          conn.prepareStatement(
              "UPDATE orders SET status = ?, amount = ?, updated_at = now() WHERE id = ?")) {
        ps.setString(1, STATUSES[random.nextInt(STATUSES.length)]);
        ps.setBigDecimal(2, BigDecimal.valueOf(random.nextInt(10_000_000), 2));
        ps.setLong(3, order);
        ps.executeUpdate();
      }
    } else if (dice < 70) {
      update(
          "INSERT INTO orders VALUES (?, ?, ?, 'new', now())",
          ++nextOrder,
          account,
          BigDecimal.valueOf(random.nextInt(100_000), 2));
    } else if (dice < 75) {
      update("DELETE FROM orders WHERE id = ?", order);
    } else if (dice < 78) {
      update("UPDATE orders SET id = ? WHERE id = ?", ++nextOrder, order);
    } else if (dice < 88) {
      update(
          "INSERT INTO audit_log VALUES (?, ?, ?)",
          "kind" + random.nextInt(6),
          "payload " + random.nextInt(4),
          random.nextInt(3));
    } else if (dice < 95) {
      // one of several equal rows: a full-row match must change exactly one
      update(
          "UPDATE audit_log SET n = n + 1 WHERE ctid ="
              + " (SELECT ctid FROM audit_log WHERE kind = ? LIMIT 1)",
          "kind" + random.nextInt(6));
    } else {
      update(
          "DELETE FROM audit_log WHERE ctid = (SELECT ctid FROM audit_log WHERE kind = ? LIMIT 1)",
          "kind" + random.nextInt(6));
    }
  }

  private void update(String sql, Object... params) throws SQLException {
    try (PreparedStatement ps = conn.prepareStatement(sql)) {
      for (int i = 0; i < params.length; i++) {
        ps.setObject(i + 1, params[i]);
      }
      ps.executeUpdate();
    }
  }

  private void execute(String... sql) throws SQLException {
    if (conn == null) {
      conn = db.connect();
      conn.setAutoCommit(false);
    }
    try (Statement s = conn.createStatement()) {
      for (String statement : sql) {
        s.execute(statement);
      }
    }
  }

  /** Waits for a burst, rethrowing its failure. */
  static void await(Future<?> burst) throws InterruptedException, TimeoutException {
    try {
      burst.get(60, TimeUnit.SECONDS);
    } catch (ExecutionException e) {
      throw new AssertionError("the burst failed", e.getCause());
    }
  }
}
