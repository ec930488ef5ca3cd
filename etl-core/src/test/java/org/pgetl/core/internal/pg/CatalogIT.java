package org.pgetl.core.internal.pg;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.sql.Connection;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.pgetl.PgConnectionConfig;
import org.pgetl.core.internal.decode.ReplicaIdentity;
import org.pgetl.error.ErrorKind;
import org.pgetl.error.EtlException;
import org.pgetl.model.ColumnSchema;
import org.pgetl.model.IdentityKind;
import org.pgetl.model.Lsn;
import org.pgetl.model.ReplicatedTableSchema;
import org.pgetl.model.TableId;
import org.pgetl.model.TableName;
import org.pgetl.model.TableSchema;

@Timeout(value = 120, unit = TimeUnit.SECONDS)
class CatalogIT {
  private static Connection admin;
  private static Connection plain;
  private static PgCatalog catalog;

  @BeforeAll
  static void setUp() throws Exception {
    PgConnectionConfig config = TestSource.freshDatabase("pgetl_catalog_it");
    admin = TestSource.open(config);
    plain = new PgConnector(config).openPlain("pgetl:catalog:catalog_it");
    catalog = new PgCatalog(plain);
    TestSource.exec(
        admin,
        // root -> p1 (leaf), p2 (partitioned) -> p2a (leaf)
        "CREATE TABLE measurements (id int NOT NULL, reading int, note text) PARTITION BY RANGE (id)",
        "CREATE TABLE measurements_p1 PARTITION OF measurements FOR VALUES FROM (0) TO (100)",
        "CREATE TABLE measurements_p2 PARTITION OF measurements FOR VALUES FROM (100) TO (200)"
            + " PARTITION BY RANGE (id)",
        "CREATE TABLE measurements_p2a PARTITION OF measurements_p2 FOR VALUES FROM (100) TO (200)",
        "CREATE PUBLICATION pub_root FOR TABLE measurements WITH (publish_via_partition_root = true)",
        "CREATE PUBLICATION pub_leaves FOR TABLE measurements",
        "CREATE PUBLICATION pub_all FOR ALL TABLES",
        "CREATE TABLE items (id int PRIMARY KEY, v text, extra text)");
  }

  @AfterAll
  static void tearDown() throws Exception {
    if (plain != null) {
      plain.close();
    }
    if (admin != null) {
      admin.close();
    }
  }

  private static TableId oid(String table) throws Exception {
    return new TableId(
        Long.parseLong(TestSource.queryString(admin, "SELECT '" + table + "'::regclass::oid")));
  }

  @Test
  void serverFacts() throws Exception {
    ServerVersion v = catalog.serverVersion();
    assertThat(v.major()).isGreaterThanOrEqualTo(13);
    assertThat(catalog.walSenderTimeout())
        .isEqualTo(
            Duration.ofMillis(
                Long.parseLong(
                    TestSource.queryString(
                        admin,
                        "SELECT setting::bigint * CASE unit WHEN 's' THEN 1000 ELSE 1 END"
                            + " FROM pg_settings WHERE name = 'wal_sender_timeout'"))));
    Lsn before = catalog.currentWalLsn();
    TestSource.exec(admin, "CREATE TABLE wal_noise (x int)", "INSERT INTO wal_noise VALUES (1)");
    assertThat(catalog.currentWalLsn().isAfter(before)).isTrue();
  }

  @Test
  void publicationLookup() {
    assertThat(catalog.publication("pub_missing")).isEmpty();
    assertThatThrownBy(() -> catalog.requirePublication("pub_missing"))
        .isInstanceOf(EtlException.class)
        .satisfies(
            e -> assertThat(((EtlException) e).kind()).isEqualTo(ErrorKind.PUBLICATION_NOT_FOUND))
        .hasMessageContaining("pub_missing");
    PublicationInfo root = catalog.requirePublication("pub_root");
    assertThat(root.viaRoot()).isTrue();
    assertThat(root.allTables()).isFalse();
    assertThat(root.inserts() && root.updates() && root.deletes() && root.truncates()).isTrue();
    assertThat(catalog.requirePublication("pub_all").allTables()).isTrue();
    assertThat(catalog.requirePublication("pub_leaves").viaRoot()).isFalse();
  }

  @Test
  void partitionedTableIsPublishedAsRootOrAsLeaves() throws Exception {
    TableId root = oid("measurements");
    TableId p1 = oid("measurements_p1");
    TableId p2a = oid("measurements_p2a");
    assertThat(catalog.publicationTables("pub_root")).containsExactly(root);
    assertThat(catalog.publicationTables("pub_leaves")).containsExactlyInAnyOrder(p1, p2a);
    assertThat(catalog.partitionLeaves(root)).containsExactlyInAnyOrder(p1, p2a);
    assertThat(catalog.partitionLeaves(p1)).containsExactly(p1);

    PublishedTable viaRoot = catalog.publishedTable("pub_root", p2a).orElseThrow();
    assertThat(viaRoot.table()).isEqualTo(p2a);
    assertThat(viaRoot.publishedAs()).isEqualTo(root);
    PublishedTable asLeaf = catalog.publishedTable("pub_leaves", p2a).orElseThrow();
    assertThat(asLeaf.publishedAs()).isEqualTo(p2a);
    assertThat(catalog.publishedTable("pub_root", oid("items"))).isEmpty();
  }

  /**
   * With {@code publish_via_partition_root} a partition is never a table of its own when an
   * ancestor of it is published too, however the publication lists them (PostgreSQL 14 lists both
   * when both are named); a partition whose ancestors are not published is one.
   */
  @Test
  void withViaRootAPartitionIsLeftOutWhenAnAncestorIsPublished() throws Exception {
    TableId root = oid("measurements");
    TableId p1 = oid("measurements_p1");
    TableId p2 = oid("measurements_p2");
    TableId p2a = oid("measurements_p2a");
    TestSource.exec(
        admin,
        "CREATE PUBLICATION pub_root_and_leaf FOR TABLE measurements, measurements_p2a"
            + " WITH (publish_via_partition_root = true)",
        "CREATE PUBLICATION pub_mid_and_leaf FOR TABLE measurements_p2, measurements_p2a"
            + " WITH (publish_via_partition_root = true)",
        "CREATE PUBLICATION pub_leaf_alone FOR TABLE measurements_p1"
            + " WITH (publish_via_partition_root = true)",
        "CREATE PUBLICATION pub_all_via_root FOR ALL TABLES"
            + " WITH (publish_via_partition_root = true)",
        "CREATE PUBLICATION pub_root_and_leaf_as_leaves FOR TABLE measurements, measurements_p2a");
    assertThat(catalog.publicationTables("pub_root_and_leaf")).containsExactly(root);
    assertThat(catalog.publicationTables("pub_mid_and_leaf")).containsExactly(p2);
    assertThat(catalog.publicationTables("pub_leaf_alone")).containsExactly(p1);
    assertThat(catalog.publicationTables("pub_all_via_root"))
        .contains(root)
        .doesNotContain(p1, p2, p2a);
    assertThat(catalog.publicationTables("pub_root_and_leaf_as_leaves"))
        .containsExactlyInAnyOrder(p1, p2a);

    assertThat(catalog.partitionAncestors(java.util.List.of(p2a, p1, root, oid("items"))))
        .containsOnly(
            java.util.Map.entry(p2a, java.util.List.of(p2, root)),
            java.util.Map.entry(p1, java.util.List.of(root)));
  }

  @Test
  void rowFilterAndColumnListFromThePublication() throws Exception {
    if (!catalog.serverVersion().supportsRowFiltersAndColumnLists()) {
      TestSource.exec(admin, "CREATE PUBLICATION pub_plain FOR TABLE items");
      PublishedTable plainEntry = catalog.publishedTable("pub_plain", oid("items")).orElseThrow();
      assertThat(plainEntry.rowFilter()).isNull();
      assertThat(plainEntry.columnNames()).isNull();
      return;
    }
    TestSource.exec(
        admin,
        "CREATE PUBLICATION pub_filtered FOR TABLE items (id, v) WHERE (id > 10)",
        "CREATE PUBLICATION pub_root_filtered FOR TABLE measurements (id, reading)"
            + " WHERE (reading > 0) WITH (publish_via_partition_root = true)",
        "CREATE PUBLICATION pub_unfiltered FOR TABLE items");
    TableId items = oid("items");
    PublishedTable filtered = catalog.publishedTable("pub_filtered", items).orElseThrow();
    assertThat(filtered.rowFilter()).isEqualTo("(id > 10)");
    assertThat(filtered.columnNames()).containsExactly("id", "v");
    PublishedTable unfiltered = catalog.publishedTable("pub_unfiltered", items).orElseThrow();
    assertThat(unfiltered.rowFilter()).isNull();
    assertThat(unfiltered.columnNames()).isNull();
    assertThat(catalog.publishedTable("pub_all", items).orElseThrow().columnNames()).isNull();

    // A leaf of a root published via the root gets the root's filter and column list.
    PublishedTable leaf =
        catalog.publishedTable("pub_root_filtered", oid("measurements_p2a")).orElseThrow();
    assertThat(leaf.publishedAs()).isEqualTo(oid("measurements"));
    assertThat(leaf.rowFilter()).isEqualTo("(reading > 0)");
    assertThat(leaf.columnNames()).containsExactly("id", "reading");

    ReplicatedTableSchema r = catalog.replicatedTableSchema(items, filtered.columnNames());
    assertThat(r.columns()).extracting(ColumnSchema::name).containsExactly("id", "v");
    assertThat(r.identity()).isEqualTo(IdentityKind.PRIMARY_KEY);
    assertThat(r.identityColumnIndexes()).containsExactly(0);
  }

  @Test
  void schemaSkipsDroppedAndGeneratedColumnsAndKeepsAttnumTypesAndDefaults() throws Exception {
    TestSource.exec(
        admin,
        "CREATE TABLE shaped (a int NOT NULL, b int, c int GENERATED ALWAYS AS (a * 2) STORED,"
            + " d varchar(10) NOT NULL DEFAULT 'x', e numeric(10,2)[], \"Mixed Case\" text,"
            + " PRIMARY KEY (d, a))",
        "ALTER TABLE shaped DROP COLUMN b");
    TableId id = oid("shaped");
    TableSchema s = catalog.tableSchema(id);
    assertThat(s.id()).isEqualTo(id);
    assertThat(s.name()).isEqualTo(new TableName("public", "shaped"));
    assertThat(s.snapshotLsn()).isEqualTo(Lsn.ZERO);
    assertThat(s.columns())
        .extracting(ColumnSchema::name)
        .containsExactly("a", "d", "e", "Mixed Case");
    assertThat(s.columns()).extracting(ColumnSchema::ordinalPosition).containsExactly(1, 4, 5, 6);
    ColumnSchema a = s.columns().get(0);
    assertThat(a.typeOid()).isEqualTo(23);
    assertThat(a.typeName()).isEqualTo("integer");
    assertThat(a.nullable()).isFalse();
    assertThat(a.primaryKeyOrdinal()).isEqualTo(2);
    ColumnSchema d = s.columns().get(1);
    assertThat(d.typeName()).isEqualTo("character varying(10)");
    assertThat(d.typeModifier()).isEqualTo(14);
    assertThat(d.defaultExpression()).isEqualTo("'x'::character varying");
    assertThat(d.primaryKeyOrdinal()).isEqualTo(1);
    ColumnSchema e = s.columns().get(2);
    assertThat(e.typeName()).isEqualTo("numeric(10,2)[]");
    assertThat(e.nullable()).isTrue();
    assertThat(e.defaultExpression()).isNull();
    assertThat(e.primaryKeyOrdinal()).isZero();

    TableIdentity ri = catalog.replicaIdentity(id);
    assertThat(ri.kind()).isEqualTo(IdentityKind.PRIMARY_KEY);
    assertThat(ri.keyAttnums()).containsExactly(4, 1);
    ReplicatedTableSchema r = catalog.replicatedTableSchema(id, null);
    assertThat(r.identityColumnIndexes()).containsExactly(1, 0);
  }

  @Test
  void replicaIdentityKinds() throws Exception {
    TestSource.exec(
        admin,
        "CREATE TABLE ri_default_pk (id int PRIMARY KEY, v text)",
        "CREATE TABLE ri_default_nopk (id int, v text)",
        "CREATE TABLE ri_full (id int PRIMARY KEY, v text)",
        "ALTER TABLE ri_full REPLICA IDENTITY FULL",
        "CREATE TABLE ri_nothing (id int PRIMARY KEY, v text)",
        "ALTER TABLE ri_nothing REPLICA IDENTITY NOTHING",
        "CREATE TABLE ri_index (id int PRIMARY KEY, a int NOT NULL, b int NOT NULL)",
        "CREATE UNIQUE INDEX ri_index_ba ON ri_index (b, a)",
        "ALTER TABLE ri_index REPLICA IDENTITY USING INDEX ri_index_ba");
    TableIdentity pk = catalog.replicaIdentity(oid("ri_default_pk"));
    assertThat(pk.setting()).isEqualTo(ReplicaIdentity.DEFAULT);
    assertThat(pk.kind()).isEqualTo(IdentityKind.PRIMARY_KEY);
    assertThat(pk.keyAttnums()).containsExactly(1);
    TableIdentity noPk = catalog.replicaIdentity(oid("ri_default_nopk"));
    assertThat(noPk.setting()).isEqualTo(ReplicaIdentity.DEFAULT);
    assertThat(noPk.kind()).isEqualTo(IdentityKind.NOTHING);
    TableIdentity full = catalog.replicaIdentity(oid("ri_full"));
    assertThat(full.setting()).isEqualTo(ReplicaIdentity.FULL);
    assertThat(full.kind()).isEqualTo(IdentityKind.FULL);
    assertThat(full.keyAttnums()).isEmpty();
    TableIdentity nothing = catalog.replicaIdentity(oid("ri_nothing"));
    assertThat(nothing.setting()).isEqualTo(ReplicaIdentity.NOTHING);
    assertThat(nothing.kind()).isEqualTo(IdentityKind.NOTHING);
    TableIdentity index = catalog.replicaIdentity(oid("ri_index"));
    assertThat(index.setting()).isEqualTo(ReplicaIdentity.INDEX);
    assertThat(index.kind()).isEqualTo(IdentityKind.INDEX);
    assertThat(index.keyAttnums()).containsExactly(3, 2);
    assertThat(catalog.replicatedTableSchema(oid("ri_index"), null).identityColumnIndexes())
        .containsExactly(2, 1);
  }

  @Test
  void includeColumnsOfAKeyIndexAreNotPartOfTheIdentity() throws Exception {
    TestSource.exec(
        admin,
        "CREATE TABLE tab_include (a int, b text, CONSTRAINT covering PRIMARY KEY (a) INCLUDE (b))",
        "CREATE TABLE tab_include_index (a int NOT NULL, b int NOT NULL, c text)",
        "CREATE UNIQUE INDEX tab_include_index_ba ON tab_include_index (b) INCLUDE (a, c)",
        "ALTER TABLE tab_include_index REPLICA IDENTITY USING INDEX tab_include_index_ba");
    TableId pk = oid("tab_include");
    assertThat(catalog.replicaIdentity(pk).keyAttnums()).containsExactly(1);
    assertThat(catalog.tableSchema(pk).columns())
        .extracting(ColumnSchema::primaryKeyOrdinal)
        .containsExactly(1, 0);
    ReplicatedTableSchema r = catalog.replicatedTableSchema(pk, null);
    assertThat(r.identity()).isEqualTo(IdentityKind.PRIMARY_KEY);
    assertThat(r.identityColumnIndexes()).containsExactly(0);

    TableId index = oid("tab_include_index");
    TableIdentity ri = catalog.replicaIdentity(index);
    assertThat(ri.kind()).isEqualTo(IdentityKind.INDEX);
    assertThat(ri.keyAttnums()).containsExactly(2);
    assertThat(catalog.replicatedTableSchema(index, null).identityColumnIndexes())
        .containsExactly(1);
  }

  @Test
  void sizeEstimatesBeforeAndAfterAnalyze() throws Exception {
    TestSource.exec(
        admin,
        "CREATE TABLE sized (id int, pad text) WITH (autovacuum_enabled = false)",
        "INSERT INTO sized SELECT g, repeat('x', 100) FROM generate_series(1, 5000) g");
    TableId id = oid("sized");
    TableSize before = catalog.tableSize(id);
    if (catalog.serverVersion().atLeast(14)) {
      assertThat(before.estimatedRows()).isEqualTo(-1);
    }
    assertThat(before.relPages()).isZero();
    assertThat(before.blocks()).isGreaterThan(10);
    TestSource.exec(admin, "ANALYZE sized");
    TableSize after = catalog.tableSize(id);
    assertThat(after.estimatedRows()).isEqualTo(5000);
    assertThat(after.relPages()).isEqualTo(after.blocks());

    TableSize partitioned = catalog.tableSize(oid("measurements"));
    assertThat(partitioned.blocks()).isZero();
  }

  @Test
  void missingTableIsASchemaError() {
    TableId missing = new TableId(4_000_000_000L);
    assertThatThrownBy(() -> catalog.tableSchema(missing))
        .isInstanceOf(EtlException.class)
        .satisfies(
            e -> assertThat(((EtlException) e).kind()).isEqualTo(ErrorKind.SOURCE_SCHEMA_ERROR))
        .hasMessageContaining("4000000000");
    assertThatThrownBy(() -> catalog.tableSize(missing))
        .satisfies(
            e -> assertThat(((EtlException) e).kind()).isEqualTo(ErrorKind.SOURCE_SCHEMA_ERROR));
  }
}
