package org.pgetl.examples.destination;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.sql.Connection;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.pgetl.Pipeline;
import org.pgetl.PipelineConfig;
import org.pgetl.destination.postgres.PostgresMirrorDestination;
import org.pgetl.store.MemoryStore;
import org.pgetl.store.TableState;
import org.pgetl.testing.destination.SqlRows;
import org.pgetl.testkit.PostgresServer;
import org.pgetl.testkit.TestDatabase;
import org.pgetl.testkit.WithPostgres;

/**
 * Issue #10 item 7: the PostgreSQL mirror follows schema changes of the source as a PostgreSQL
 * subscriber does, with the cases of PostgreSQL's own {@code
 * src/test/subscription/t/006_rewrite.pl} (a column added with a default while changes stream, and
 * columns whose type changes, both of which rewrite the source table without a change in the WAL
 * for the rows already there) and {@code 011_generated.pl} (generated columns, which pgoutput does
 * not publish). Each test runs a pipeline from a source database into a mirror database and reads
 * the mirror's tables.
 */
@WithPostgres
@Timeout(value = 5, unit = TimeUnit.MINUTES)
class MirrorSchemaChangesIT {
  private static final Duration WAIT = Duration.ofSeconds(90);
  private static final String PUBLICATION = "mirror_ddl_pub";

  /**
   * 006_rewrite.pl: {@code ALTER TABLE test1 ADD c int NOT NULL DEFAULT 0} while the pipeline
   * streams, then a row with {@code c = 33}. The rows copied and streamed before the change have
   * {@code c = 0} in the mirror, as in the source, though no change for them was ever sent.
   */
  @Test
  void aColumnAddedWithADefaultHasItsValueInTheRowsAlreadyThere(PostgresServer server)
      throws Exception {
    try (Run run = new Run(server, "mirror_default")) {
      run.source.execute(
          "CREATE TABLE test1 (a int, b text)",
          // no key, as in 006_rewrite.pl; the preflight wants an identity for UPDATE and DELETE
          "ALTER TABLE test1 REPLICA IDENTITY FULL",
          "CREATE TABLE keyed (id int PRIMARY KEY, v text)",
          "INSERT INTO keyed VALUES (1, 'a'), (2, 'b'), (3, 'c')");
      run.start(2);
      run.source.execute("INSERT INTO test1 (a, b) VALUES (1, 'one'), (2, 'two')");
      run.awaitMirror("SELECT a, b FROM test1 ORDER BY a", "1|one", "2|two");

      run.source.execute("ALTER TABLE test1 ADD c int NOT NULL DEFAULT 0");
      run.source.execute("INSERT INTO test1 (a, b, c) VALUES (3, 'three', 33)");
      run.awaitMirror("SELECT a, b, c FROM test1 ORDER BY a", "1|one|0", "2|two|0", "3|three|33");

      // several defaults at once, of other types and computed; one row changes afterwards
      run.source.execute(
          "ALTER TABLE keyed ADD n int NOT NULL DEFAULT 0, ADD label text DEFAULT 'n/a',"
              + " ADD big bigint DEFAULT 6 * 7, ADD at date DEFAULT '2026-01-31',"
              + " ADD plain text",
          "UPDATE keyed SET v = 'B', n = 5 WHERE id = 2");
      run.awaitMirror(
          "SELECT id, v, n, label, big, at, plain FROM keyed ORDER BY id",
          "1|a|0|n/a|42|2026-01-31|null",
          "2|B|5|n/a|42|2026-01-31|null",
          "3|c|0|n/a|42|2026-01-31|null");
      try (Connection c = run.mirror.connect()) {
        assertThat(SqlRows.query(c, "SELECT count(*) FROM test1 WHERE c = 0"))
            .as("a query on the added column")
            .containsExactly("2");
        assertThat(
                SqlRows.query(
                    c,
                    "SELECT count(*) FROM pg_attrdef WHERE adrelid IN ('public.test1'::regclass,"
                        + " 'public.keyed'::regclass)"))
            .as("mirror columns carry no defaults")
            .containsExactly("0");
      }
      run.assertNoFailures();
    }
  }

  /**
   * A volatile default computes a value per row at the source, by a rewrite that sends no change:
   * the mirror cannot know those values, so its rows already there hold NULL, and each row gets the
   * source's value with its next change.
   */
  @Test
  void aVolatileDefaultLeavesNullUntilTheRowChanges(PostgresServer server) throws Exception {
    try (Run run = new Run(server, "mirror_volatile")) {
      run.source.execute(
          "CREATE TABLE v (id int PRIMARY KEY, x text)", "INSERT INTO v VALUES (1, 'a'), (2, 'b')");
      run.start(1);
      run.source.execute(
          "ALTER TABLE v ADD r double precision DEFAULT random(), ADD s serial",
          "UPDATE v SET x = 'B' WHERE id = 2");
      String source2 = run.source.queryString("SELECT r || '|' || s FROM v WHERE id = 2");
      run.awaitMirror(
          "SELECT id, x, r || '|' || s FROM v ORDER BY id", "1|a|null", "2|B|" + source2);
      run.assertNoFailures();
    }
  }

  /**
   * The type changes that rewrite the source table ({@code ALTER COLUMN ... TYPE}), of a key column
   * and of others, while changes stream: the mirror's columns get the source's new types, the rows
   * already there are converted, and new rows that need the new types arrive.
   */
  @Test
  void columnsWhoseTypeChangesAreConvertedInPlace(PostgresServer server) throws Exception {
    try (Run run = new Run(server, "mirror_retype")) {
      run.source.execute(
          "CREATE TABLE r (a int PRIMARY KEY, b int, c text, d numeric(6,2), e varchar(3))",
          "INSERT INTO r VALUES (1, 10, '100', 1.25, 'x'), (2, 20, '200', 2.50, 'yy')");
      run.start(1);
      run.source.execute("INSERT INTO r VALUES (3, 30, '300', 3.75, 'zzz')");
      run.awaitMirror("SELECT a FROM r ORDER BY a", "1", "2", "3");

      run.source.execute(
          "ALTER TABLE r ALTER a TYPE bigint, ALTER b TYPE text, ALTER c TYPE integer USING"
              + " c::integer, ALTER d TYPE numeric(9,3), ALTER e TYPE varchar(10)",
          "INSERT INTO r VALUES (5000000000, 'fifty', 500, 123456.789, 'longer one')",
          "UPDATE r SET c = c + 1 WHERE a = 1");
      run.awaitMirror(
          "SELECT a, b, c, d, e FROM r ORDER BY a",
          "1|10|101|1.250|x",
          "2|20|200|2.500|yy",
          "3|30|300|3.750|zzz",
          "5000000000|fifty|500|123456.789|longer one");
      String types =
          "SELECT attname || ' ' || format_type(atttypid, atttypmod) FROM pg_attribute"
              + " WHERE attrelid = 'public.r'::regclass AND attnum > 0 AND NOT attisdropped"
              + " ORDER BY attname";
      try (Connection c = run.mirror.connect()) {
        assertThat(SqlRows.query(c, types))
            .as("the mirror's column types")
            .containsExactlyElementsOf(
                run.source.queryRows(types).stream().map(r -> r.get(0)).toList());
        assertThat(SqlRows.query(c, "SELECT sum(c) FROM r")).containsExactly("1101");
      }
      run.assertNoFailures();
    }
  }

  /**
   * 011_generated.pl: {@code b int GENERATED ALWAYS AS (a * 2) STORED}, with rows copied and rows
   * streamed, inserts and an update of the key. The mirror has the column, computed by the mirror
   * from the source's expression, and queries that read it work. A generated column added while
   * changes stream is added to the mirror with its values for every row; one dropped is dropped.
   */
  @Test
  void generatedColumnsExistInTheMirrorAndFollowTheirRows(PostgresServer server) throws Exception {
    try (Run run = new Run(server, "mirror_generated")) {
      run.source.execute(
          "CREATE TABLE tab1 (a int PRIMARY KEY, b int GENERATED ALWAYS AS (a * 2) STORED)",
          "INSERT INTO tab1 (a) VALUES (1), (2), (3)");
      run.start(1);
      run.awaitMirror("SELECT a, b FROM tab1 ORDER BY a", "1|2", "2|4", "3|6");

      run.source.execute("INSERT INTO tab1 VALUES (4), (5)", "UPDATE tab1 SET a = 6 WHERE a = 5");
      run.awaitMirror("SELECT a, b FROM tab1 ORDER BY a", "1|2", "2|4", "3|6", "4|8", "6|12");
      try (Connection c = run.mirror.connect()) {
        assertThat(SqlRows.query(c, "SELECT a FROM tab1 WHERE b > 5 ORDER BY b"))
            .as("a query that reads the generated column")
            .containsExactly("3", "4", "6");
        assertThat(
                SqlRows.query(
                    c,
                    "SELECT attgenerated FROM pg_attribute WHERE attrelid = 'public.tab1'::regclass"
                        + " AND attname = 'b'"))
            .as("b is generated in the mirror too")
            .containsExactly("s");
      }

      run.source.execute(
          "ALTER TABLE tab1 ADD c int GENERATED ALWAYS AS (a * 10) STORED",
          "INSERT INTO tab1 VALUES (7)",
          "UPDATE tab1 SET a = 10 WHERE a = 1");
      run.awaitMirror(
          "SELECT a, b, c FROM tab1 ORDER BY a",
          "2|4|20",
          "3|6|30",
          "4|8|40",
          "6|12|60",
          "7|14|70",
          "10|20|100");

      run.source.execute("ALTER TABLE tab1 DROP COLUMN c", "INSERT INTO tab1 VALUES (8)");
      run.awaitMirror("SELECT count(*) FROM tab1 WHERE a = 8", "1");
      try (Connection c = run.mirror.connect()) {
        assertThat(
                SqlRows.query(
                    c,
                    "SELECT attname FROM pg_attribute WHERE attrelid = 'public.tab1'::regclass"
                        + " AND attnum > 0 AND NOT attisdropped ORDER BY attnum"))
            .containsExactly("a", "b");
      }
      run.assertNoFailures();
    }
  }

  /**
   * A generated column whose type changes is recreated with the new type and expression; a column
   * it uses may then be retyped too (PostgreSQL refuses to retype a column that a generated column
   * uses, so the source dropped and added it again).
   */
  @Test
  void aGeneratedColumnFollowsTheRetypeOfTheColumnItUses(PostgresServer server) throws Exception {
    try (Run run = new Run(server, "mirror_generated_retype")) {
      run.source.execute(
          "CREATE TABLE g (id int PRIMARY KEY, price numeric(6,2),"
              + " total numeric GENERATED ALWAYS AS (price * 2) STORED)",
          "INSERT INTO g VALUES (1, 1.50), (2, 2.25)");
      run.start(1);
      run.awaitMirror("SELECT id, total FROM g ORDER BY id", "1|3.00", "2|4.50");
      run.source.execute(
          "BEGIN; ALTER TABLE g DROP COLUMN total; ALTER TABLE g ALTER price TYPE numeric(10,3);"
              + " ALTER TABLE g ADD total numeric GENERATED ALWAYS AS (price * 3) STORED; COMMIT",
          "INSERT INTO g VALUES (3, 1234567.125)");
      run.awaitMirror(
          "SELECT id, price, total FROM g ORDER BY id",
          "1|1.500|4.500",
          "2|2.250|6.750",
          "3|1234567.125|3703701.375");
      run.assertNoFailures();
    }
  }

  /**
   * A generated column whose expression calls a function that exists in the source only cannot be
   * computed by the mirror: it is left out, and the table's other columns and rows are mirrored.
   */
  @Test
  void aGeneratedColumnTheMirrorCannotComputeIsLeftOut(PostgresServer server) throws Exception {
    try (Run run = new Run(server, "mirror_generated_source_only")) {
      run.source.execute(
          "CREATE FUNCTION plus_hundred(int) RETURNS int IMMUTABLE LANGUAGE sql"
              + " AS 'SELECT $1 + 100'",
          "CREATE TABLE f (id int PRIMARY KEY, g int GENERATED ALWAYS AS (plus_hundred(id)) STORED,"
              + " h int GENERATED ALWAYS AS (id * 10) STORED)",
          "INSERT INTO f (id) VALUES (1)");
      run.start(1);
      run.source.execute("INSERT INTO f (id) VALUES (2)");
      run.awaitMirror("SELECT * FROM f ORDER BY id", "1|10", "2|20");
      run.assertNoFailures();
    }
  }

  /** A source and a mirror database, and a pipeline between them once started. */
  private static final class Run implements AutoCloseable {
    private final PostgresServer server;
    final TestDatabase source;
    final TestDatabase mirror;
    private final MemoryStore store;
    private ObservedDestination destination;
    private Pipeline pipeline;

    Run(PostgresServer server, String name) {
      this.server = server;
      server.createDatabase(name + "_src");
      server.createDatabase(name + "_dst");
      source = new TestDatabase(server, name + "_src");
      mirror = new TestDatabase(server, name + "_dst");
      store = new MemoryStore(name);
    }

    /** Publishes every table, starts the pipeline and waits until the tables are copied. */
    void start(int tables) {
      source.execute("CREATE PUBLICATION " + PUBLICATION + " FOR ALL TABLES");
      PipelineConfig config =
          PipelineConfig.builder()
              .pipelineId(store.pipelineId())
              .publication(PUBLICATION)
              .source(Jdbc.config(source))
              .batchMaxFill(Duration.ofMillis(100))
              .build();
      destination =
          new ObservedDestination(
              new PostgresMirrorDestination(Jdbc.config(mirror), 2, Jdbc.config(source)),
              "none",
              "none");
      pipeline = Pipeline.create(config, store, destination);
      pipeline.start();
      await()
          .atMost(WAIT)
          .until(
              () ->
                  store.tableStates().size() == tables
                      && store.tableStates().values().stream()
                          .allMatch(s -> s.type() == TableState.Type.READY));
    }

    /** Waits until a query of the mirror returns these rows (SQL NULL as {@code null}). */
    void awaitMirror(String sql, String... rows) {
      await()
          .atMost(WAIT)
          .pollInterval(Duration.ofMillis(200))
          .ignoreExceptions()
          .untilAsserted(
              () -> {
                try (Connection c = mirror.connect()) {
                  assertThat(SqlRows.query(c, sql)).as(sql).containsExactly(rows);
                }
              });
    }

    void assertNoFailures() {
      assertThat(destination.failures).as("failures answered by the mirror").isEmpty();
    }

    @Override
    public void close() {
      try {
        if (pipeline != null) {
          pipeline.close();
        }
      } finally {
        server.dropDatabase(source.name());
        server.dropDatabase(mirror.name());
      }
    }
  }
}
