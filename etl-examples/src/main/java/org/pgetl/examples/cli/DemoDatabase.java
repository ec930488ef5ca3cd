package org.pgetl.examples.cli;

import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.List;
import org.pgetl.model.TableName;

/**
 * The demo's sample schema and data: a small shop with customers, products, orders and order items,
 * about {@code rows} rows in all, with the column types that make replication interesting —
 * numeric, timestamptz, date, uuid, boolean, jsonb, text and integer arrays, a composite key, and
 * product descriptions of 2.5 kB stored out of line (TOAST), so that an update that leaves them
 * alone sends them as "unchanged".
 */
final class DemoDatabase {
  /** The publication the demo replicates. */
  static final String PUBLICATION = "pgetl_demo";

  private final List<DemoTable> tables;

  private DemoDatabase(List<DemoTable> tables) {
    this.tables = tables;
  }

  /** The sample tables, in the order they are shown. */
  List<DemoTable> tables() {
    return tables;
  }

  /** How the total is split: customers 9%, products 1%, orders 30%, two items per order. */
  static Sizes sizes(long rows) {
    long orders = Math.max(1, rows * 30 / 100);
    long products = Math.max(1, rows / 100);
    long customers = Math.max(1, rows - products - 3 * orders);
    return new Sizes(customers, products, orders, 2 * orders);
  }

  /**
   * The row counts of each table.
   *
   * @param customers customers
   * @param products products
   * @param orders orders
   * @param items order items (two per order)
   */
  record Sizes(long customers, long products, long orders, long items) {
    long total() {
      return customers + products + orders + items;
    }
  }

  /**
   * Creates the schema, loads the data, analyzes it and creates the publication.
   *
   * @param c a connection to the demo database, auto-commit
   * @param rows about how many rows to load in all
   * @return the tables
   * @throws SQLException when a statement fails
   */
  static DemoDatabase create(Connection c, long rows) throws SQLException {
    Sizes n = sizes(rows);
    try (Statement s = c.createStatement()) {
      s.execute(
          """
          CREATE TABLE customers (
            id          bigint PRIMARY KEY,
            name        text NOT NULL,
            email       text,
            country     text,
            birth_date  date,
            signed_up   timestamptz NOT NULL,
            vip         boolean NOT NULL,
            tags        text[],
            profile     jsonb
          )""");
      s.execute(
          """
          CREATE TABLE products (
            id           integer PRIMARY KEY,
            sku          uuid NOT NULL,
            name         text NOT NULL,
            price        numeric(12,2) NOT NULL,
            stock        integer NOT NULL,
            description  text,
            updated_at   timestamptz NOT NULL
          )""");
      // out of line and uncompressed: every description is TOASTed
      s.execute("ALTER TABLE products ALTER COLUMN description SET STORAGE EXTERNAL");
      s.execute(
          """
          CREATE TABLE orders (
            id           bigint PRIMARY KEY,
            customer_id  bigint NOT NULL,
            status       text NOT NULL,
            total        numeric(14,2) NOT NULL,
            placed_at    timestamptz NOT NULL,
            product_ids  integer[] NOT NULL,
            note         text
          )""");
      s.execute(
          """
          CREATE TABLE order_items (
            order_id    bigint NOT NULL,
            line        integer NOT NULL,
            product_id  integer NOT NULL,
            quantity    integer NOT NULL,
            unit_price  numeric(12,2) NOT NULL,
            PRIMARY KEY (order_id, line)
          )""");
      s.execute(
          """
          INSERT INTO customers
          SELECT g,
                 'customer ' || g,
                 'customer' || g || '@example.com',
                 (ARRAY['FR','DE','US','JP','BR','IN','NG'])[1 + g % 7],
                 date '1950-01-01' + (g * 37 % 20000)::int,
                 timestamptz '2020-01-01 00:00:00+00' + g * interval '37.123457 seconds',
                 g % 50 = 0,
                 ARRAY['tag' || g % 7, 'tag' || g % 11],
                 jsonb_build_object('score', g % 100, 'newsletter', g % 2 = 0,
                                    'segment', 'segment ' || g % 5)
          FROM generate_series(1::bigint, {customers}) g"""
              .replace("{customers}", Long.toString(n.customers())));
      s.execute(
          """
          INSERT INTO products
          SELECT g,
                 md5('sku' || g)::uuid,
                 'product ' || g,
                 round((1 + g % 9973) / 7.0, 2),
                 g % 500,
                 repeat(md5('description' || g), 80),
                 timestamptz '2024-01-01 00:00:00+00' + g * interval '1 minute'
          FROM generate_series(1::bigint, {products}) g"""
              .replace("{products}", Long.toString(n.products())));
      s.execute(
          """
          INSERT INTO orders
          SELECT g,
                 1 + (g * 7919) % {customers},
                 (ARRAY['new','paid','shipped','delivered','returned'])[1 + g % 5],
                 round((g % 100000) / 3.0, 2),
                 timestamptz '2023-01-01 00:00:00+00' + g * interval '11.5 seconds',
                 ARRAY[1 + g % {products}, 1 + (g * 3) % {products}]::integer[],
                 CASE WHEN g % 10 = 0 THEN 'gift wrap, leave at the door' END
          FROM generate_series(1::bigint, {orders}) g"""
              .replace("{customers}", Long.toString(n.customers()))
              .replace("{products}", Long.toString(n.products()))
              .replace("{orders}", Long.toString(n.orders())));
      s.execute(
          """
          INSERT INTO order_items
          SELECT o, l,
                 1 + ((o * 3 + l) % {products})::int,
                 1 + ((o + l) % 5)::int,
                 round((1 + (o + l) % 9973) / 7.0, 2)
          FROM generate_series(1::bigint, {orders}) o, generate_series(1, 2) l"""
              .replace("{products}", Long.toString(n.products()))
              .replace("{orders}", Long.toString(n.orders())));
      s.execute("ANALYZE customers, products, orders, order_items");
      s.execute(
          "CREATE PUBLICATION "
              + PUBLICATION
              + " FOR TABLE customers, products, orders, order_items");
    }
    return new DemoDatabase(
        List.of(
            new DemoTable(
                new TableName("public", "customers"),
                List.of("id"),
                List.of(
                    "id",
                    "name",
                    "email",
                    "country",
                    "birth_date",
                    "signed_up",
                    "vip",
                    "tags",
                    "profile"),
                n.customers()),
            new DemoTable(
                new TableName("public", "products"),
                List.of("id"),
                List.of("id", "sku", "name", "price", "stock", "description", "updated_at"),
                n.products()),
            new DemoTable(
                new TableName("public", "orders"),
                List.of("id"),
                List.of("id", "customer_id", "status", "total", "placed_at", "product_ids", "note"),
                n.orders()),
            new DemoTable(
                new TableName("public", "order_items"),
                List.of("order_id", "line"),
                List.of("order_id", "line", "product_id", "quantity", "unit_price"),
                n.items())));
  }
}
