package org.pgetl.examples.cli;

import java.math.BigDecimal;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.time.Duration;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.util.SplittableRandom;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.jspecify.annotations.Nullable;

/**
 * The demo's live workload: one thread ({@code pgetl-demo-workload}) that inserts, updates and
 * deletes rows of the sample tables at a bounded rate, in small transactions, on its own
 * connection.
 *
 * <p>The mix: new orders with their items, order status changes, customer profile (jsonb) and tag
 * (array) changes, product price changes that leave the TOASTed description alone (so PostgreSQL
 * sends it as unchanged), new descriptions, key changes of order items, deleted orders, and new
 * customers. Ids are drawn from a seeded random generator; an update or delete of a row that is
 * already gone changes nothing.
 */
final class Workload implements AutoCloseable {
  private static final Duration TICK = Duration.ofMillis(50);

  private final Connection connection;
  private final DemoDatabase.Sizes sizes;
  private final int ratePerSecond;
  private final SplittableRandom random;
  private final AtomicLong changes = new AtomicLong();
  private final AtomicLong transactions = new AtomicLong();
  private final AtomicReference<SQLException> failure = new AtomicReference<>();
  private final ScheduledExecutorService thread =
      Executors.newSingleThreadScheduledExecutor(
          r -> {
            Thread t = new Thread(r, "pgetl-demo-workload");
            t.setDaemon(true);
            return t;
          });
  private long nextOrderId;
  private long nextCustomerId;
  private long lastTick;
  private double budget;

  /**
   * Creates a workload; nothing runs before {@link #start()}.
   *
   * @param connection its own connection to the demo database (closed by {@link #close()})
   * @param sizes the sample data's sizes (the ids in use)
   * @param ratePerSecond about how many transactions per second
   * @param seed the random generator's seed
   */
  Workload(Connection connection, DemoDatabase.Sizes sizes, int ratePerSecond, long seed) {
    this.connection = connection;
    this.sizes = sizes;
    this.ratePerSecond = ratePerSecond;
    this.random = new SplittableRandom(seed);
    this.nextOrderId = sizes.orders() + 1;
    this.nextCustomerId = sizes.customers() + 1;
  }

  /** Starts the workload thread. */
  void start() {
    lastTick = System.nanoTime();
    // tick() keeps its SQL failure for failure(); stop() ends the schedule
    Future<?> unused =
        thread.scheduleAtFixedRate(this::tick, 0, TICK.toMillis(), TimeUnit.MILLISECONDS);
  }

  /**
   * Stops the workload: the running transaction finishes, no new one starts.
   *
   * @throws InterruptedException when interrupted while waiting for the thread
   */
  void stop() throws InterruptedException {
    thread.shutdown();
    if (!thread.awaitTermination(30, TimeUnit.SECONDS)) {
      thread.shutdownNow();
    }
  }

  /** How many rows the workload changed (inserted, updated or deleted). */
  long changes() {
    return changes.get();
  }

  /** How many transactions the workload committed. */
  long transactions() {
    return transactions.get();
  }

  /** The error that stopped the workload, or null. */
  @Nullable SQLException failure() {
    return failure.get();
  }

  /** Stops the workload and closes its connection. */
  @Override
  public void close() throws SQLException {
    try {
      stop();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt(); // the caller sees the interrupt; the connection closes
    }
    connection.close();
  }

  private void tick() {
    if (failure.get() != null) {
      return;
    }
    long now = System.nanoTime();
    budget += ratePerSecond * ((now - lastTick) / 1e9);
    lastTick = now;
    budget = Math.min(budget, Math.max(1, ratePerSecond / 2.0)); // no burst after a stall
    try {
      while (budget >= 1 && !thread.isShutdown()) {
        budget -= 1;
        oneTransaction();
        transactions.incrementAndGet();
      }
    } catch (SQLException e) {
      failure.set(e);
      try {
        connection.rollback();
      } catch (SQLException ignored) {
        // the connection is probably gone; the failure is reported
      }
    }
  }

  private void oneTransaction() throws SQLException {
    connection.setAutoCommit(false);
    int pick = random.nextInt(100);
    if (pick < 30) {
      newOrder();
    } else if (pick < 48) {
      update("UPDATE orders SET status = ?, total = total + 1 WHERE id = ?", status(), anyOrder());
    } else if (pick < 62) {
      update(
          "UPDATE customers SET profile = jsonb_set(profile, '{score}', to_jsonb(?::int)),"
              + " tags = array_append(tags[1:2], ?) WHERE id = ?",
          random.nextInt(100),
          "seen" + random.nextInt(10),
          anyCustomer());
    } else if (pick < 77) {
      // leaves the TOASTed description alone: pgoutput sends it as "unchanged"
      update(
          "UPDATE products SET price = ?, stock = ?, updated_at = ? WHERE id = ?",
          BigDecimal.valueOf(100 + random.nextInt(100_000), 2),
          random.nextInt(500),
          now(),
          anyProduct());
    } else if (pick < 80) {
      update(
          "UPDATE products SET description = repeat(md5(?), 90), updated_at = ? WHERE id = ?",
          "new description " + random.nextLong(),
          now(),
          anyProduct());
    } else if (pick < 83) {
      // a key change: the destination finds the row by its old key
      update("UPDATE order_items SET line = line + 10 WHERE order_id = ? AND line = 1", anyOrder());
    } else if (pick < 95) {
      long order = anyOrder();
      update("DELETE FROM order_items WHERE order_id = ?", order);
      update("DELETE FROM orders WHERE id = ?", order);
    } else {
      long id = nextCustomerId++;
      update(
          "INSERT INTO customers VALUES (?, ?, ?, 'FR', NULL, ?, false, ARRAY['new'],"
              + " '{\"score\": 0, \"newsletter\": true, \"segment\": \"new\"}')",
          id,
          "customer " + id,
          "customer" + id + "@example.com",
          now());
    }
    connection.commit();
  }

  private void newOrder() throws SQLException {
    long id = nextOrderId++;
    int lines = 1 + random.nextInt(3);
    int product = anyProduct();
    update(
        "INSERT INTO orders VALUES (?, ?, 'new', ?, ?, ARRAY[?]::integer[], NULL)",
        id,
        anyCustomer(),
        BigDecimal.valueOf(random.nextInt(1_000_000), 2),
        now(),
        product);
    for (int line = 1; line <= lines; line++) {
      update(
          "INSERT INTO order_items VALUES (?, ?, ?, ?, ?)",
          id,
          line,
          line == 1 ? product : anyProduct(),
          1 + random.nextInt(5),
          BigDecimal.valueOf(100 + random.nextInt(100_000), 2));
    }
  }

  private void update(String sql, Object... params) throws SQLException {
    try (PreparedStatement ps = connection.prepareStatement(sql)) {
      for (int i = 0; i < params.length; i++) {
        ps.setObject(i + 1, params[i]);
      }
      changes.addAndGet(ps.executeUpdate());
    }
  }

  private long anyOrder() {
    return 1 + random.nextLong(nextOrderId - 1);
  }

  private long anyCustomer() {
    return 1 + random.nextLong(nextCustomerId - 1);
  }

  private int anyProduct() {
    return 1 + (int) random.nextLong(sizes.products());
  }

  private String status() {
    String[] all = {"new", "paid", "shipped", "delivered", "returned"};
    return all[random.nextInt(all.length)];
  }

  private static OffsetDateTime now() {
    return OffsetDateTime.ofInstant(Instant.now(), ZoneOffset.UTC);
  }
}
