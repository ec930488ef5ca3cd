package org.pgetl.core.internal.pg;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.StringWriter;
import java.nio.ByteBuffer;
import java.sql.Connection;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.pgetl.PgConnectionConfig;
import org.pgetl.error.ErrorKind;
import org.pgetl.error.EtlException;
import org.pgetl.model.Lsn;
import org.pgetl.model.TableId;
import org.postgresql.PGConnection;

@Timeout(value = 120, unit = TimeUnit.SECONDS)
class SlotIT {
  private static PgConnectionConfig config;
  private static PgConnector connector;
  private static Connection admin;
  private static SlotAdmin slots;

  @BeforeAll
  static void setUp() throws Exception {
    config = TestSource.freshDatabase("pgetl_slot_it");
    connector = new PgConnector(config);
    admin = TestSource.open(config);
    TestSource.exec(
        admin,
        "CREATE TABLE items (id int PRIMARY KEY, v text)",
        "CREATE PUBLICATION pub_items FOR TABLE items");
    slots = new SlotAdmin(connector.openPlain("pgetl:catalog:slot_it"));
  }

  @AfterAll
  static void tearDown() throws Exception {
    if (admin != null) {
      admin.close();
    }
  }

  private static long count(Connection c, String table) throws Exception {
    return Long.parseLong(TestSource.queryString(c, "SELECT count(*) FROM " + table));
  }

  @Test
  void noExportSlotIsCreatedAndLookedUp() {
    CreatedSlot created;
    try (ReplicationConnection repl = connector.openReplication("pgetl:apply:slot_it")) {
      created = repl.createSlot("pgetl_apply_noexport", SnapshotMode.NOEXPORT_SNAPSHOT);
    }
    assertThat(created.consistentPoint().isZero()).isFalse();
    assertThat(created.snapshotName()).isNull();

    SlotInfo info = slots.find("pgetl_apply_noexport").orElseThrow();
    assertThat(info.isPgoutput()).isTrue();
    assertThat(info.database()).isEqualTo("pgetl_slot_it");
    assertThat(info.temporary()).isFalse();
    assertThat(info.active()).isFalse();
    assertThat(info.activePid()).isZero();
    assertThat(info.confirmedFlushLsn()).isEqualTo(created.consistentPoint());
    assertThat(info.restartLsn()).isNotNull();
    assertThat(info.restartLsn().isAfter(created.consistentPoint())).isFalse();
    assertThat(info.walStatus()).isEqualTo("reserved");
    assertThat(info.isInvalidated()).isFalse();
    assertThat(slots.find("pgetl_apply_missing")).isEmpty();
  }

  @Test
  void aFailoverSlotIsOneInPgReplicationSlotsAndCanBeTurnedBackAndForth() throws Exception {
    try (ReplicationConnection repl = connector.openReplication("pgetl:apply:slot_it")) {
      if (!repl.serverVersion().supportsFailoverSlots()) {
        assertThatThrownBy(
                () ->
                    repl.createSlot(
                        "pgetl_apply_failover",
                        SnapshotMode.NOEXPORT_SNAPSHOT, /* failover */
                        true))
            .isInstanceOf(EtlException.class)
            .satisfies(e -> assertThat(((EtlException) e).kind()).isEqualTo(ErrorKind.CONFIG_ERROR))
            .hasMessageContaining("failoverSlots needs PostgreSQL 17");
        assertThat(slots.find("pgetl_apply_failover")).isEmpty();
        return;
      }
      repl.createSlot("pgetl_apply_failover", SnapshotMode.NOEXPORT_SNAPSHOT, true);
      repl.createSlot("pgetl_apply_ordinary", SnapshotMode.NOEXPORT_SNAPSHOT, false);
    }
    assertThat(failoverColumn("pgetl_apply_failover")).isEqualTo("true");
    assertThat(failoverColumn("pgetl_apply_ordinary")).isEqualTo("false");
    assertThat(slots.find("pgetl_apply_failover").orElseThrow().failover()).isTrue();

    try (ReplicationConnection repl = connector.openReplication("pgetl:apply:slot_it")) {
      SlotInfo ordinary = slots.find("pgetl_apply_ordinary").orElseThrow();
      assertThat(repl.matchFailover(ordinary, true)).isTrue();
      SlotInfo failover = slots.find("pgetl_apply_failover").orElseThrow();
      assertThat(repl.matchFailover(failover, true)).isFalse();
      assertThat(repl.matchFailover(failover, false)).isTrue();
    }
    assertThat(failoverColumn("pgetl_apply_ordinary")).isEqualTo("true");
    assertThat(failoverColumn("pgetl_apply_failover")).isEqualTo("false");
    slots.dropIfExists("pgetl_apply_failover", Duration.ZERO);
    slots.dropIfExists("pgetl_apply_ordinary", Duration.ZERO);
  }

  private static String failoverColumn(String slot) throws Exception {
    return TestSource.queryString(
        admin, "SELECT failover::text FROM pg_replication_slots WHERE slot_name = '" + slot + "'");
  }

  @Test
  void creatingAnExistingSlotFailsWithAlreadyExists() {
    try (ReplicationConnection repl = connector.openReplication("pgetl:apply:slot_it")) {
      repl.createSlot("pgetl_apply_twice", SnapshotMode.NOEXPORT_SNAPSHOT);
      assertThatThrownBy(() -> repl.createSlot("pgetl_apply_twice", SnapshotMode.NOEXPORT_SNAPSHOT))
          .isInstanceOf(EtlException.class)
          .satisfies(
              e ->
                  assertThat(((EtlException) e).kind())
                      .isEqualTo(ErrorKind.REPLICATION_SLOT_ALREADY_EXISTS))
          .hasMessageContaining("42710");
      assertThatThrownBy(() -> repl.createSlot("Bad-Name", SnapshotMode.NOEXPORT_SNAPSHOT))
          .isInstanceOf(EtlException.class)
          .hasMessageContaining("only a-z, 0-9 and _");
    }
  }

  @Test
  void exportedSnapshotIsImportedByAChildUntilTheNextCommand() throws Exception {
    TestSource.exec(
        admin, "CREATE TABLE exported (id int)", "INSERT INTO exported VALUES (1), (2)");
    try (ReplicationConnection repl = connector.openReplication("pgetl:sync:slot_it:1")) {
      CreatedSlot created = repl.createSlot("pgetl_sync_export_1", SnapshotMode.EXPORT_SNAPSHOT);
      assertThat(created.snapshotName()).isNotBlank();
      TestSource.exec(admin, "INSERT INTO exported VALUES (3)");
      try (Connection child =
          connector.openSnapshotChild("pgetl:copy:slot_it:1:0", created.snapshotName())) {
        assertThat(count(child, "exported")).isEqualTo(2);
        child.commit();
      }
      // The next command on the replication connection ends the exported snapshot.
      repl.walSenderTimeout();
      assertThatThrownBy(
              () -> connector.openSnapshotChild("pgetl:copy:slot_it:1:1", created.snapshotName()))
          .isInstanceOf(EtlException.class)
          .satisfies(
              e ->
                  assertThat(((EtlException) e).kind())
                      .isEqualTo(ErrorKind.SOURCE_SNAPSHOT_TOO_OLD));
    }
  }

  @Test
  void useSnapshotCopySeesExactlyTheRowsCommittedBeforeTheConsistentPoint() throws Exception {
    TestSource.exec(admin, "INSERT INTO items VALUES (1, 'a'), (2, 'b'), (3, 'c')");
    try (ReplicationConnection repl = connector.openReplication("pgetl:sync:slot_it:2")) {
      CreatedSlot created = repl.createSlot("pgetl_sync_use_2", SnapshotMode.USE_SNAPSHOT);
      assertThat(repl.inSnapshotTransaction()).isTrue();
      // Committed after the consistent point: the copy must not see them, the stream must.
      TestSource.exec(
          admin, "INSERT INTO items VALUES (4, 'd')", "INSERT INTO items VALUES (5, 'e')");

      StringWriter copied = new StringWriter();
      repl.jdbc()
          .unwrap(PGConnection.class)
          .getCopyAPI()
          .copyOut("COPY (SELECT id FROM items ORDER BY id) TO STDOUT", copied);
      assertThat(copied.toString()).isEqualTo("1\n2\n3\n");

      // Catalog queries run in the same snapshot, over the simple query protocol.
      PgCatalog inSnapshot = new PgCatalog(repl.jdbc());
      TableId items = inSnapshot.publicationTables("pub_items").get(0);
      assertThat(inSnapshot.tableSchema(items).name().name()).isEqualTo("items");
      assertThat(inSnapshot.publishedTable("pub_items", items)).isPresent();
      assertThat(inSnapshot.replicaIdentity(items).keyAttnums()).containsExactly(1);

      String snapshot = repl.exportSnapshot();
      try (Connection child = connector.openSnapshotChild("pgetl:copy:slot_it:2:0", snapshot)) {
        assertThat(count(child, "items")).isEqualTo(3);
        child.commit();
      }
      repl.endSnapshotTransaction();
      assertThat(repl.inSnapshotTransaction()).isFalse();

      ReplicationStream stream =
          repl.startStreaming(
              StreamOptions.of(
                  created.slotName(), created.consistentPoint(), List.of("pub_items")));
      List<String> streamed = new ArrayList<>();
      long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
      while (streamed.size() < 2 && System.nanoTime() < deadline) {
        ByteBuffer msg = stream.readNext(TimeUnit.MILLISECONDS.toNanos(100));
        if (msg != null && PgoutputProbe.type(msg) == 'I') {
          streamed.add(PgoutputProbe.insertFirstColumn(msg));
        }
      }
      assertThat(streamed).containsExactly("4", "5");
    }
  }

  @Test
  void dropIfExistsDropsInactiveAndReportsMissing() {
    try (ReplicationConnection repl = connector.openReplication("pgetl:apply:slot_it")) {
      repl.createSlot("pgetl_apply_drop", SnapshotMode.NOEXPORT_SNAPSHOT);
    }
    assertThat(slots.dropIfExists("pgetl_apply_drop", Duration.ofSeconds(5))).isTrue();
    assertThat(slots.find("pgetl_apply_drop")).isEmpty();
    assertThat(slots.dropIfExists("pgetl_apply_drop", Duration.ofSeconds(5))).isFalse();
  }

  @Test
  void dropIfExistsTerminatesAnActiveWalsenderWithinTheBound() throws Exception {
    String slot = SlotNames.tableSync("slot_it", new TableId(77));
    ActiveStream active = ActiveStream.start(connector, slot);
    try {
      assertThat(slots.find(slot).orElseThrow().active()).isTrue();

      // A zero bound never terminates: the slot stays and the error says why.
      assertThatThrownBy(() -> slots.dropIfExists(slot, Duration.ZERO))
          .isInstanceOf(EtlException.class)
          .satisfies(
              e ->
                  assertThat(((EtlException) e).kind())
                      .isEqualTo(ErrorKind.REPLICATION_SLOT_DELETION_TIMEOUT))
          .hasMessageContaining(slot);
      assertThat(slots.find(slot)).isPresent();

      long start = System.nanoTime();
      assertThat(slots.dropIfExists(slot, Duration.ofSeconds(15))).isTrue();
      assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(Duration.ofSeconds(15));
      assertThat(slots.find(slot)).isEmpty();
      EtlException readerError = active.failure.get(30, TimeUnit.SECONDS);
      assertThat(readerError.kind())
          .isIn(ErrorKind.SOURCE_DATABASE_SHUTDOWN, ErrorKind.SOURCE_CONNECTION_FAILED);
    } finally {
      active.close();
    }
  }

  @Test
  void listsTableSyncSlotsOfOnePipelineByPrefix() {
    try (ReplicationConnection repl = connector.openReplication("pgetl:apply:slot_it")) {
      repl.createSlot(SlotNames.tableSync("lp", new TableId(10)), SnapshotMode.NOEXPORT_SNAPSHOT);
      repl.createSlot(SlotNames.tableSync("lp_2", new TableId(11)), SnapshotMode.NOEXPORT_SNAPSHOT);
    }
    List<SlotInfo> listed = slots.listByPrefix(SlotNames.tableSyncPrefix("lp"));
    List<Optional<TableId>> tables =
        listed.stream().map(s -> SlotNames.parseTableSync(s.slotName(), "lp")).toList();
    // lp_2's slot shares the text prefix but is not a table-sync slot of pipeline "lp".
    assertThat(tables).containsExactly(Optional.of(new TableId(10)), Optional.empty());
  }

  @Test
  void streamingAMissingSlotFailsWithSlotNotFound() {
    try (ReplicationConnection repl = connector.openReplication("pgetl:apply:slot_it")) {
      assertThatThrownBy(
              () ->
                  repl.startStreaming(
                      StreamOptions.of("pgetl_apply_nowhere", Lsn.ZERO, List.of("pub_items"))))
          .isInstanceOf(EtlException.class)
          .satisfies(
              e ->
                  assertThat(((EtlException) e).kind())
                      .isEqualTo(ErrorKind.REPLICATION_SLOT_NOT_FOUND));
    }
  }

  /** A slot streamed by a reader thread, as another pipeline process would hold it. */
  static final class ActiveStream implements AutoCloseable {
    final CompletableFuture<EtlException> failure = new CompletableFuture<>();
    private final Thread reader;
    private volatile boolean stop;

    private ActiveStream(PgConnector connector, String slot) throws InterruptedException {
      CountDownLatch streaming = new CountDownLatch(1);
      reader =
          new Thread(
              () -> {
                try (ReplicationConnection repl = connector.openReplication("pgetl:holder")) {
                  CreatedSlot created = repl.createSlot(slot, SnapshotMode.NOEXPORT_SNAPSHOT);
                  ReplicationStream s =
                      repl.startStreaming(
                          StreamOptions.of(slot, created.consistentPoint(), List.of("pub_items")));
                  streaming.countDown();
                  while (!stop) {
                    s.readNext(TimeUnit.MILLISECONDS.toNanos(50));
                  }
                  failure.complete(null);
                } catch (EtlException e) {
                  failure.complete(e);
                } catch (RuntimeException e) {
                  failure.completeExceptionally(e);
                } finally {
                  streaming.countDown();
                }
              },
              "it-slot-holder");
      reader.start();
      if (!streaming.await(30, TimeUnit.SECONDS)) {
        throw new IllegalStateException("the holder did not start streaming");
      }
    }

    static ActiveStream start(PgConnector connector, String slot) throws InterruptedException {
      return new ActiveStream(connector, slot);
    }

    @Override
    public void close() {
      stop = true;
      try {
        reader.join(TimeUnit.SECONDS.toMillis(30));
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }
  }
}
