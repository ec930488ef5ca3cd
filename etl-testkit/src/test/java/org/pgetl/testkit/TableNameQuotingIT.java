package org.pgetl.testkit;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import org.pgetl.model.TableName;

/** {@link TableName#quoted()} and {@link TableName#parse} agree with a real server's catalog. */
@WithPostgres
@Timeout(value = 2, unit = TimeUnit.MINUTES)
class TableNameQuotingIT {

  static Stream<Arguments> names() {
    return Stream.of(
        Arguments.of("public", "plain"),
        Arguments.of("Sales", "Orders"),
        Arguments.of("with space", "table with  spaces"),
        Arguments.of("quote\"schema", "say \"hello\""),
        Arguments.of("dots.in.schema", "a.b.c"),
        Arguments.of("ünïcödé", "名前_テーブル"),
        Arguments.of("MiXeD", "ÄÖÜ ß \"q\" .x"),
        Arguments.of("semi;colon", "drop table x; --"));
  }

  @ParameterizedTest(name = "{0} / {1}")
  @MethodSource("names")
  void quotedNameRoundTripsThroughTheCatalog(String schema, String table, TestDatabase db) {
    TableName name = new TableName(schema, table);
    db.execute(
        "CREATE SCHEMA IF NOT EXISTS " + TableName.quoteIdentifier(schema),
        "CREATE TABLE " + name.quoted() + " (id int)");

    List<List<String>> rows =
        db.queryRows(
            "SELECT n.nspname, c.relname FROM pg_class c"
                + " JOIN pg_namespace n ON n.oid = c.relnamespace WHERE c.oid = ?::regclass",
            name.quoted());

    assertThat(rows).containsExactly(List.of(schema, table));
    assertThat(TableName.parse(name.quoted())).isEqualTo(name);
    // the server prints the name back in its own quoting; we read that too
    String printed = db.queryString("SELECT ?::regclass::text", name.quoted());
    assertThat(TableName.parse(printed)).isEqualTo(name);
  }

  @Test
  void unquotedNamesFoldToLowerCaseLikeTheServer(TestDatabase db) {
    db.execute("CREATE SCHEMA Inventory", "CREATE TABLE Inventory.StockItems (id int)");

    TableName parsed = TableName.parse("Inventory.StockItems");

    assertThat(parsed).isEqualTo(new TableName("inventory", "stockitems"));
    assertThat(
            db.queryLong(
                "SELECT count(*) FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace"
                    + " WHERE n.nspname = ? AND c.relname = ?",
                parsed.schema(),
                parsed.name()))
        .isEqualTo(1);
    assertThat(TableName.parse("Orders")).isEqualTo(new TableName("public", "orders"));
  }
}
