package org.pgetl.examples.crash;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.Writer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Random;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.pgetl.examples.ChildJvm;
import org.pgetl.model.TableId;
import org.pgetl.store.TableState;
import org.pgetl.store.postgres.PostgresStore;
import org.pgetl.testkit.TestDatabase;
import org.pgetl.testkit.WithPostgres;

/**
 * Kills the process that runs a pipeline (SIGKILL) at random points, again and again, while a
 * workload changes the source, then lets a last run catch up and checks that the destination
 * converged to the source with nothing lost and nothing doubled.
 *
 * <p>The pipeline runs in a child JVM ({@link CrashLoopChild}) from the source database into a
 * {@code PostgresMirrorDestination} in a second database of the same server, whose idempotency
 * bookkeeping commits with the rows, and keeps its state in a {@code PostgresStore} in the source
 * database: everything a restart needs survives the kill. The kill points are drawn from a seed,
 * printed at the start; {@code -Dpgetl.crash.seed=<seed>} replays the same plan and workload (where
 * a kill lands still depends on timing). {@code -Dpgetl.crash.kills=<n>} changes the number of
 * kills.
 *
 * <p>Kill points: right after the process starts; in the middle of a table copy (after a random
 * number of its batches were stored); up to half a second after a table's copy finished (in its
 * catch-up, or just after it, before its slot is dropped); while streaming; right after a large
 * transaction. The first four kills aim at the copies, and the test fails if no copy was actually
 * interrupted.
 */
@WithPostgres
@Timeout(value = 5, unit = TimeUnit.MINUTES)
class CrashLoopIT {
  private static final String PIPELINE = "crash";
  private static final int KILLS = Integer.getInteger("pgetl.crash.kills", 7);
  private static final Duration POLL = Duration.ofMillis(10);
  private static final Duration PHASE_WAIT = Duration.ofSeconds(60);

  /** Each table's rows as text, the same expression on both sides. */
  private static final Map<String, String> ROW_TEXT =
      Map.of(
          "accounts",
          "concat_ws('|', quote_nullable(id), quote_nullable(balance), quote_nullable(md5(note)),"
              + " quote_nullable(length(note)))",
          "orders",
          "concat_ws('|', quote_nullable(id), quote_nullable(account), quote_nullable(amount),"
              + " quote_nullable(status), quote_nullable(extract(epoch FROM updated_at)))",
          "audit_log",
          "concat_ws('|', quote_nullable(kind), quote_nullable(payload), quote_nullable(n))",
          "markers",
          "quote_nullable(id)");

  /** Where a kill is aimed. */
  enum KillPoint {
    AFTER_START,
    MID_COPY,
    CATCH_UP,
    STREAMING,
    BURST
  }

  /** One kill: where it was aimed, what it hit, and the table states it left behind. */
  record Kill(int n, KillPoint aimed, String landed, long afterSpawnMillis, String states) {
    @Override
    public String toString() {
      return String.format(
          "kill %d %-11s %5d ms after spawn: %s; left %s",
          n, aimed, afterSpawnMillis, landed, states);
    }
  }

  private TestDatabase db;
  private TestDatabase mirror;
  private Connection sourcePoll;
  private Connection mirrorPoll;
  private CrashWorkload workload;
  private ChildJvm child;
  private Path logs;
  private Path settings;
  private Path dir;
  private int runs;
  private String markerLsn;

  private boolean chunked;
  // the Iceberg variant: the warehouse the child writes into, else null (the PostgreSQL mirror)
  private Path iceberg;
  private boolean icebergChangelog;
  // the two tests share a server, where slots are not per database: a pipeline id each
  private String pipeline = PIPELINE;
  private int killCount = KILLS;

  @Test
  void theMirrorConvergesToTheSourceAfterRepeatedKills(TestDatabase db, @TempDir Path dir)
      throws Throwable {
    crashLoop(db, dir);
  }

  /**
   * The same with every keyed table copied in chunks of 64 kB while its changes stream: kills land
   * in the chunked copies, each restart resumes them with the chunks done before the kill, and the
   * mirror still converges.
   */
  @Test
  void theMirrorConvergesAfterKillsDuringChunkedCopies(TestDatabase db, @TempDir Path dir)
      throws Throwable {
    chunked = true;
    pipeline = PIPELINE + "_chunked";
    killCount = Math.min(KILLS, 5);
    // a source database of its own: the class's database may hold the other test's tables
    String source = db.name() + "_chunked";
    db.server().createDatabase(source);
    crashLoop(new TestDatabase(db.server(), source), dir);
  }

  /**
   * The same into an {@code IcebergDestination} (a filesystem warehouse, upsert mode, commits every
   * 500 ms), with a {@code TRUNCATE} of the keyless table among the kills: after the last run, the
   * Iceberg tables, read back with Iceberg's generic reader (and loaded into the mirror database to
   * be checksummed by the same SQL), equal the source.
   */
  @Test
  void theIcebergTablesConvergeToTheSourceAfterRepeatedKills(TestDatabase db, @TempDir Path dir)
      throws Throwable {
    iceberg = dir.resolve("warehouse");
    pipeline = PIPELINE + "_iceberg";
    killCount = Math.min(KILLS, 6);
    String source = db.name() + "_iceberg";
    db.server().createDatabase(source);
    crashLoop(new TestDatabase(db.server(), source), dir);
  }

  /**
   * The same into changelog tables: the kills land in the copy and the stream, and each table's
   * changelog, folded by key ({@code IcebergTableReader.forEachFoldedRow}: key-changing updates
   * with unchanged TOAST values and the {@code TRUNCATE} included), equals the source: no change
   * lost, none written twice.
   */
  @Test
  void theIcebergChangelogFoldsToTheSourceAfterRepeatedKills(TestDatabase db, @TempDir Path dir)
      throws Throwable {
    iceberg = dir.resolve("warehouse");
    icebergChangelog = true;
    pipeline = PIPELINE + "_changelog";
    killCount = Math.min(KILLS, 5);
    String source = db.name() + "_changelog";
    db.server().createDatabase(source);
    crashLoop(new TestDatabase(db.server(), source), dir);
  }

  private void crashLoop(TestDatabase db, Path dir) throws Throwable {
    long seed = Long.getLong("pgetl.crash.seed", new SecureRandom().nextLong());
    System.out.println(
        "CrashLoopIT seed " + seed + " (replay with -Dpgetl.crash.seed=" + seed + ")");
    this.logs =
        Path.of(
            "target",
            "crash-loop",
            (chunked
                    ? "chunked-seed-"
                    : icebergChangelog
                        ? "changelog-seed-"
                        : iceberg != null ? "iceberg-seed-" : "seed-")
                + seed);
    if (iceberg != null) {
      // beside the child logs, so that a failure leaves the tables to look into
      iceberg = logs.resolve("warehouse").toAbsolutePath();
    }
    try {
      run(db, dir, seed);
    } catch (Throwable e) {
      throw new AssertionError(
          "crash loop failed with seed "
              + seed
              + " (replay with -Dpgetl.crash.seed="
              + seed
              + "); child logs in "
              + logs.toAbsolutePath(),
          e);
    }
  }

  private void run(TestDatabase db, Path dir, long seed) throws Exception {
    long started = System.nanoTime();
    Random random = new Random(seed);
    createDatabases(db, dir);
    workload = new CrashWorkload(db, random.nextLong());
    workload.start();
    List<Kill> kills = new ArrayList<>();
    for (KillPoint aimed : plan(random, killCount)) {
      if (iceberg != null && kills.size() == 3) {
        db.execute("TRUNCATE audit_log"); // a TRUNCATE among the kills; the workload refills it
      }
      // a generator per kill: its delays do not depend on what earlier kills found
      kills.add(crashOnce(kills.size() + 1, aimed, new Random(random.nextLong())));
      System.out.println("CrashLoopIT " + kills.get(kills.size() - 1));
    }
    workload.stop();

    spawn(); // the last run
    Map<String, String> checksums = assertCatchesUpToTheSource();
    assertOnlyTheApplySlotIsLeftAndConfirmsNoMoreThanTheWalEnd();
    child.terminate();
    child.waitFor(2);
    saveLog();
    assertThat(child.text()).as("the last run's output").contains(CrashLoopChild.STOPPED);
    History history = assertNoTableErroredAndReadHistory();
    System.out.printf(
        "CrashLoopIT seed %d: %d kills %s, copies interrupted %d, catch-ups interrupted %d,"
            + " %d transactions (%d row changes), tables %s, took %.1f s%n",
        seed,
        kills.size(),
        kills.stream()
            .collect(Collectors.groupingBy(Kill::aimed, LinkedHashMap::new, Collectors.counting())),
        history.interruptedCopies(),
        history.interruptedCatchups(),
        workload.transactions(),
        workload.changes(),
        checksums,
        (System.nanoTime() - started) / 1e9);
    if (chunked) {
      long resumed = 0;
      try (var files = Files.list(logs)) {
        for (Path f : files.toList()) {
          resumed +=
              Files.readAllLines(f).stream()
                  .filter(l -> l.contains("chunked copy of") && l.contains(" resumes: "))
                  .count();
        }
      }
      System.out.println("CrashLoopIT chunked copies resumed after a kill: " + resumed);
      assertThat(resumed)
          .as(
              "chunked copies resumed with chunks kept (the kills missed the copy); kills: %s",
              kills)
          .isPositive();
      return;
    }
    assertThat(history.interruptedCopies())
        .as(
            "table copies interrupted by a kill (the kill points missed the copy); kills: %s",
            kills)
        .isPositive();
  }

  /** The source with its first rows, the empty mirror database, and the child's settings. */
  private void createDatabases(TestDatabase db, Path dir) throws Exception {
    this.db = db;
    this.dir = dir;
    Files.createDirectories(logs);
    String mirrorName = db.name() + "_mirror";
    db.server().createDatabase(mirrorName);
    mirror = new TestDatabase(db.server(), mirrorName);
    CrashWorkload.createSource(db);
    settings = writeSettings(dir, db, mirrorName, chunked);
    sourcePoll = db.connect();
    mirrorPoll = mirror.connect();
  }

  /**
   * Waits until every table is Ready and a marker row inserted after the workload stopped reached
   * the mirror, then compares each table's checksum.
   *
   * @return the checksums
   */
  private Map<String, String> assertCatchesUpToTheSource() throws Exception {
    assertThat(poll(PHASE_WAIT, this::allReady))
        .as("every table Ready in the last run (a stuck pipeline?); states %s", states())
        .isTrue();
    db.execute("INSERT INTO markers VALUES (1)");
    markerLsn = db.queryString("SELECT pg_current_wal_lsn()::text");
    assertThat(
            poll(
                PHASE_WAIT,
                () ->
                    iceberg != null
                        ? IcebergTables.count(iceberg, "markers") == 1
                        : exists(mirrorPoll, "public.markers")
                            && queryLong(mirrorPoll, "SELECT count(*) FROM public.markers") == 1))
        .as("the marker row reached the destination (a stuck pipeline?)")
        .isTrue();
    if (iceberg != null) {
      // Iceberg commits one table after another: the marker's table may commit before another
      // table's earlier changes do. Once the slot confirmed the marker, every table holds them.
      assertThat(poll(PHASE_WAIT, this::applySlotConfirmedTheMarker))
          .as("the apply slot confirmed the marker at %s", markerLsn)
          .isTrue();
      // the Iceberg tables, read with Iceberg's reader, become tables of the mirror database
      IcebergTables.load(iceberg, CrashWorkload.TABLES, sourcePoll, mirrorPoll);
    }
    Map<String, String> differences = new LinkedHashMap<>();
    Map<String, String> checksums = new LinkedHashMap<>();
    for (String t : CrashWorkload.TABLES) {
      String source = checksum(sourcePoll, t);
      String target = checksum(mirrorPoll, t);
      checksums.put(t, source);
      if (!source.equals(target)) {
        differences.put(t, "source " + source + ", mirror " + target + "\n" + diff(t));
      }
    }
    assertThat(differences).as("tables whose mirror differs from the source").isEmpty();
    return checksums;
  }

  private boolean applySlotConfirmedTheMarker() {
    return queryLong(
            sourcePoll,
            "SELECT count(*) FROM pg_replication_slots WHERE slot_name = ?"
                + " AND confirmed_flush_lsn >= ?::pg_lsn",
            applySlot(),
            markerLsn)
        == 1;
  }

  private void assertOnlyTheApplySlotIsLeftAndConfirmsNoMoreThanTheWalEnd() throws Exception {
    assertThat(poll(PHASE_WAIT, () -> slots().equals(List.of(applySlot()))))
        .as("replication slots of the source: %s", slots())
        .isTrue();
    assertThat(poll(PHASE_WAIT, this::applySlotConfirmedTheMarker))
        .as("the apply slot confirmed the marker at %s", markerLsn)
        .isTrue();
    assertThat(
            queryLong(
                sourcePoll,
                "SELECT count(*) FROM pg_replication_slots WHERE slot_name = ?"
                    + " AND confirmed_flush_lsn <= pg_current_wal_lsn()",
                applySlot()))
        .as("the apply slot's confirmed_flush_lsn is not beyond the server's WAL end")
        .isEqualTo(1);
  }

  /** What the state histories in the store show. */
  record History(int interruptedCopies, int interruptedCatchups) {}

  /**
   * Checks the store after the last run stopped: every table Ready, none ever Errored. Counts the
   * copies a kill interrupted: a {@code DataSync} followed by another {@code DataSync} (killed
   * while copying) or by {@code FinishedCopy} then {@code DataSync} (killed while catching up).
   */
  private History assertNoTableErroredAndReadHistory() {
    int copies = 0;
    int catchups = 0;
    List<String> errored = new ArrayList<>();
    try (PostgresStore store =
        PostgresStore.builder()
            .jdbcUrl(db.jdbcUrl())
            .user(db.user())
            .password(db.password())
            .pipelineId(pipeline)
            .build()) {
      assertThat(store.tableStates().values())
          .as("table states at the end")
          .hasSize(CrashWorkload.TABLES.size())
          .allMatch(s -> s.type() == TableState.Type.READY);
      for (String table : CrashWorkload.TABLES) {
        TableId id = new TableId(db.queryLong("SELECT ?::regclass::oid", "public." + table));
        List<TableState> history = new ArrayList<>(store.tableStateHistory(id));
        Collections.reverse(history); // oldest first
        for (int i = 0; i < history.size(); i++) {
          TableState.Type type = history.get(i).type();
          TableState.Type before = i == 0 ? null : history.get(i - 1).type();
          if (type == TableState.Type.ERRORED) {
            errored.add(table + ": " + history.get(i));
          } else if (type == TableState.Type.DATA_SYNC && before == TableState.Type.DATA_SYNC) {
            copies++;
          } else if (type == TableState.Type.DATA_SYNC && before == TableState.Type.FINISHED_COPY) {
            catchups++;
          }
        }
        System.out.println(
            "CrashLoopIT history of "
                + table
                + ": "
                + history.stream().map(s -> s.type().toString()).collect(Collectors.joining(" ")));
      }
    }
    assertThat(errored).as("tables that were Errored on the way").isEmpty();
    return new History(copies, catchups);
  }

  /**
   * The kill plan. The first four kills land while tables are still copying: right after the start
   * or mid-copy, then mid-copy twice and in catch-up, in random order. The rest include one kill
   * right after the start, one while streaming and one right after a burst, plus random ones, in
   * random order.
   */
  static List<KillPoint> plan(Random random, int kills) {
    List<KillPoint> plan = new ArrayList<>();
    plan.add(random.nextBoolean() ? KillPoint.AFTER_START : KillPoint.MID_COPY);
    List<KillPoint> copying =
        new ArrayList<>(List.of(KillPoint.MID_COPY, KillPoint.MID_COPY, KillPoint.CATCH_UP));
    Collections.shuffle(copying, random);
    plan.addAll(copying);
    List<KillPoint> rest =
        new ArrayList<>(List.of(KillPoint.AFTER_START, KillPoint.STREAMING, KillPoint.BURST));
    KillPoint[] all = KillPoint.values();
    while (plan.size() + rest.size() < kills) {
      rest.add(all[random.nextInt(all.length)]);
    }
    Collections.shuffle(rest, random);
    plan.addAll(rest);
    return plan.subList(0, kills);
  }

  /** Starts the child, waits for the kill point, kills it, and records what the kill hit. */
  private Kill crashOnce(int n, KillPoint aimed, Random random) throws Exception {
    long sinceState = maxStateId();
    boolean copies = !nothingLeftToCopy();
    long spawned = spawn();
    String landed;
    switch (aimed) {
      case AFTER_START -> {
        long delay = 200 + random.nextInt(2300);
        pause(delay);
        landed = "right after the start";
      }
      case MID_COPY -> {
        int batches = 1 + random.nextInt(30);
        if (!copies) {
          landed = streamingKill(random, "nothing to copy");
        } else {
          String[] hit = {null};
          boolean inCopy =
              poll(
                  PHASE_WAIT,
                  () -> {
                    hit[0] = copyingTable(sinceState, batches);
                    return hit[0] != null || nothingLeftToCopy();
                  });
          assertThat(inCopy).as("a copy in progress or done; states %s", states()).isTrue();
          landed =
              hit[0] != null
                  ? "mid-copy of " + hit[0]
                  : "after the copies (too fast for " + batches + " batches)";
        }
      }
      case CATCH_UP -> {
        if (!copies) {
          landed = streamingKill(random, "nothing to copy");
        } else {
          boolean copied =
              poll(
                  PHASE_WAIT,
                  () ->
                      child.lines().stream().anyMatch(l -> l.contains(" rows of "))
                          || copyFinished(sinceState));
          assertThat(copied).as("a copy finished; states %s", states()).isTrue();
          // up to half a second: in the catch-up, or just after it (SyncDone, the slot's drop)
          int delay = random.nextInt(500);
          pause(delay);
          landed = delay + " ms after a copy finished";
        }
      }
      case STREAMING -> landed = streamingKill(random, "streaming");
      case BURST -> {
        awaitStreaming();
        Future<?> burst = workload.burst();
        CrashWorkload.await(burst);
        pause(random.nextInt(400));
        landed = "during a burst";
      }
      default -> throw new IllegalStateException(aimed.toString());
    }
    long after = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - spawned);
    kill();
    return new Kill(n, aimed, landed, after, states());
  }

  private String streamingKill(Random random, String what) throws Exception {
    awaitStreaming();
    pause(100 + random.nextInt(1400));
    return what;
  }

  /** Waits until this run's pipeline started and every table is Ready. */
  private void awaitStreaming() throws Exception {
    assertThat(poll(PHASE_WAIT, () -> started() && allReady()))
        .as(
            "the pipeline streaming with every table Ready (a stuck pipeline?); states %s",
            states())
        .isTrue();
  }

  // --- the child

  private long spawn() throws IOException {
    runs++;
    child = ChildJvm.start(dir, CrashLoopChild.class, List.of(settings.toString()));
    return System.nanoTime();
  }

  private boolean started() {
    return child.lines().stream().anyMatch(l -> l.contains(CrashLoopChild.STARTED));
  }

  private void kill() throws Exception {
    child.process.destroyForcibly();
    assertThat(child.process.waitFor(30, TimeUnit.SECONDS)).as("the child died").isTrue();
    saveLog();
  }

  private void saveLog() throws IOException {
    Path file = logs.resolve("run-" + runs + ".log");
    try (Writer w = Files.newBufferedWriter(file)) {
      w.write(child.text());
      w.write('\n');
    }
  }

  /** Waits until a condition holds; false at the deadline; fails when the child exits. */
  private boolean poll(Duration max, java.util.function.BooleanSupplier condition)
      throws Exception {
    long deadline = System.nanoTime() + max.toNanos();
    while (true) {
      if (condition.getAsBoolean()) {
        return true;
      }
      if (System.nanoTime() - deadline > 0) {
        return false;
      }
      if (child.process.waitFor(POLL.toMillis(), TimeUnit.MILLISECONDS)) {
        throw childEnded();
      }
    }
  }

  /** Lets the child run for a while; fails when it exits meanwhile. */
  private void pause(long millis) throws Exception {
    if (child.process.waitFor(millis, TimeUnit.MILLISECONDS)) {
      throw childEnded();
    }
  }

  private AssertionError childEnded() throws IOException {
    saveLog();
    List<String> lines = child.lines();
    return new AssertionError(
        "the pipeline process ended by itself (exit "
            + child.process.exitValue()
            + "); its last lines:\n"
            + String.join("\n", lines.subList(Math.max(0, lines.size() - 40), lines.size())));
  }

  @AfterEach
  void cleanUp() throws Exception {
    try {
      if (child != null && child.process.isAlive()) {
        child.process.destroyForcibly();
        child.process.waitFor(30, TimeUnit.SECONDS);
        saveLog(); // the run a failed assertion left running
      }
    } finally {
      if (workload != null) {
        workload.close();
      }
      for (Connection c : new Connection[] {sourcePoll, mirrorPoll}) {
        if (c != null) {
          c.close();
        }
      }
      if (mirror != null) {
        db.server().dropDatabase(mirror.name());
      }
    }
  }

  private Path writeSettings(Path dir, TestDatabase db, String mirrorName, boolean chunked)
      throws IOException {
    Properties p = new Properties();
    p.setProperty("chunked", Boolean.toString(chunked));
    if (iceberg != null) {
      p.setProperty("iceberg", iceberg.toAbsolutePath().toString());
      p.setProperty("iceberg.changelog", Boolean.toString(icebergChangelog));
    }
    p.setProperty("host", db.host());
    p.setProperty("port", Integer.toString(db.port()));
    p.setProperty("user", db.user());
    p.setProperty("password", db.password());
    p.setProperty("source", db.name());
    p.setProperty("target", mirrorName);
    p.setProperty("pipeline", pipeline);
    p.setProperty("publication", CrashWorkload.PUBLICATION);
    Path file = dir.resolve("child.properties");
    try (Writer w = Files.newBufferedWriter(file)) {
      p.store(w, null);
    }
    return file;
  }

  // --- the store and the mirror, read with SQL while the child runs

  private boolean storeExists() {
    return exists(sourcePoll, "etl.replication_state");
  }

  private long maxStateId() {
    return storeExists()
        ? queryLong(sourcePoll, "SELECT coalesce(max(id), 0) FROM etl.replication_state")
        : 0;
  }

  private boolean allReady() {
    return storeExists()
        && queryLong(
                sourcePoll,
                "SELECT count(*) FROM etl.replication_state WHERE pipeline_id = ? AND is_current"
                    + " AND state = 'ready'",
                pipeline)
            == CrashWorkload.TABLES.size();
  }

  /** Returns a table whose copy started in this run and stored at least {@code batches}. */
  private String copyingTable(long sinceState, int batches) {
    if (!storeExists() || (iceberg == null && !exists(mirrorPoll, "_pgetl.mirror_copy_batches"))) {
      return null;
    }
    Map<Long, String> copying = new HashMap<>();
    for (List<String> row :
        queryRows(
            sourcePoll,
            "SELECT s.table_id, c.relname FROM etl.replication_state s JOIN pg_class c"
                + " ON c.oid = s.table_id WHERE s.pipeline_id = ? AND s.is_current"
                + " AND s.state = 'data_sync' AND s.id > ?",
            pipeline,
            sinceState)) {
      copying.put(Long.parseLong(row.get(0)), row.get(1));
    }
    for (Map.Entry<Long, String> t : copying.entrySet()) {
      if (iceberg != null) {
        return t.getValue(); // Iceberg commits a copy at its end: any point of the copy will do
      }
      long stored =
          queryLong(
              mirrorPoll,
              "SELECT count(*) FROM _pgetl.mirror_copy_batches WHERE pipeline_id = ?"
                  + " AND table_oid = ?",
              pipeline,
              t.getKey());
      if (stored >= batches) {
        return t.getValue() + " after " + stored + " batches";
      }
    }
    return null;
  }

  /** True when no table has a copy to do (each is Ready or synced). */
  private boolean nothingLeftToCopy() {
    return storeExists()
        && queryLong(
                sourcePoll,
                "SELECT count(*) FROM etl.replication_state WHERE pipeline_id = ? AND is_current"
                    + " AND state IN ('sync_done', 'ready')",
                pipeline)
            == CrashWorkload.TABLES.size();
  }

  private boolean copyFinished(long sinceState) {
    return storeExists()
        && queryLong(
                sourcePoll,
                "SELECT count(*) FROM etl.replication_state WHERE pipeline_id = ? AND id > ?"
                    + " AND state IN ('finished_copy', 'sync_done')",
                pipeline,
                sinceState)
            > 0;
  }

  private String states() {
    if (!storeExists()) {
      return "{no store yet}";
    }
    Map<String, String> out = new LinkedHashMap<>();
    for (List<String> row :
        queryRows(
            sourcePoll,
            "SELECT c.relname, s.state FROM etl.replication_state s JOIN pg_class c"
                + " ON c.oid = s.table_id WHERE s.pipeline_id = ? AND s.is_current"
                + " ORDER BY c.relname",
            pipeline)) {
      out.put(row.get(0), row.get(1));
    }
    return out.toString();
  }

  private String applySlot() {
    return "pgetl_apply_" + pipeline;
  }

  /** This test's pipeline's slots. */
  private List<String> slots() {
    java.util.regex.Pattern mine =
        java.util.regex.Pattern.compile(
            "pgetl_(apply_" + pipeline + "|sync_" + pipeline + "_\\d+)");
    return db.replicationSlots().stream()
        .map(s -> s.slotName())
        .filter(n -> mine.matcher(n).matches())
        .sorted()
        .toList();
  }

  private static String checksum(Connection c, String table) {
    return queryRows(
            c,
            "SELECT count(*) || ' rows, md5 ' || md5(coalesce(string_agg(r, E'\\n' ORDER BY r"
                + " COLLATE \"C\"), '')) FROM (SELECT "
                + ROW_TEXT.get(table)
                + " AS r FROM public."
                + table
                + ") s")
        .get(0)
        .get(0);
  }

  /** The rows only one side has (ten at most per side). */
  private String diff(String table) {
    String sql = "SELECT " + ROW_TEXT.get(table) + " FROM public." + table;
    Map<String, Integer> counts = new HashMap<>();
    for (List<String> row : queryRows(sourcePoll, sql)) {
      counts.merge(row.get(0), 1, Integer::sum);
    }
    for (List<String> row : queryRows(mirrorPoll, sql)) {
      counts.merge(row.get(0), -1, Integer::sum);
    }
    List<String> missing = new ArrayList<>();
    List<String> extra = new ArrayList<>();
    counts.forEach(
        (row, n) -> {
          if (n > 0) {
            missing.add(row + (n > 1 ? " x" + n : ""));
          } else if (n < 0) {
            extra.add(row + (n < -1 ? " x" + -n : ""));
          }
        });
    Collections.sort(missing);
    Collections.sort(extra);
    return "  missing in the mirror ("
        + missing.size()
        + "): "
        + missing.subList(0, Math.min(10, missing.size()))
        + "\n  only in the mirror ("
        + extra.size()
        + "): "
        + extra.subList(0, Math.min(10, extra.size()));
  }

  private static boolean exists(Connection c, String relation) {
    return queryLong(
            c, "SELECT count(*) FROM (SELECT to_regclass(?) AS r) s WHERE r IS NOT NULL", relation)
        == 1;
  }

  private static long queryLong(Connection c, String sql, Object... params) {
    return Long.parseLong(queryRows(c, sql, params).get(0).get(0));
  }

  private static List<List<String>> queryRows(Connection c, String sql, Object... params) {
    try (PreparedStatement ps = c.prepareStatement(sql)) {
      for (int i = 0; i < params.length; i++) {
        ps.setObject(i + 1, params[i]);
      }
      try (ResultSet rs = ps.executeQuery()) {
        int n = rs.getMetaData().getColumnCount();
        List<List<String>> rows = new ArrayList<>();
        while (rs.next()) {
          List<String> row = new ArrayList<>(n);
          for (int i = 1; i <= n; i++) {
            row.add(rs.getString(i));
          }
          rows.add(row);
        }
        return rows;
      }
    } catch (SQLException e) {
      throw new IllegalStateException("query failed: " + sql, e);
    }
  }
}
