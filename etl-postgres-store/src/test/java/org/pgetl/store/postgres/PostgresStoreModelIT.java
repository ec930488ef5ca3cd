package org.pgetl.store.postgres;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.pgetl.destination.DestinationTableMetadataStore.TableMetadata;
import org.pgetl.error.ErrorKind;
import org.pgetl.error.EtlException;
import org.pgetl.error.RetryDirective;
import org.pgetl.lifecycle.LifecycleState;
import org.pgetl.model.ColumnSchema;
import org.pgetl.model.IdentityKind;
import org.pgetl.model.Lsn;
import org.pgetl.model.ReplicatedTableSchema;
import org.pgetl.model.TableId;
import org.pgetl.model.TableName;
import org.pgetl.model.TableSchema;
import org.pgetl.store.MemoryStore;
import org.pgetl.store.PipelineStore;
import org.pgetl.store.PipelineStore.ProgressKey;
import org.pgetl.store.TableState;

/**
 * A model-based property: random sequences of store calls applied to {@link MemoryStore} (the
 * model) and to {@link PostgresStore} give the same answers and leave the same observable state.
 * Runs as many sequences as fit in a fixed time budget; the seed is printed for replay (set {@code
 * -Dpgetl.model.seed=<seed>}).
 */
@Timeout(value = 3, unit = TimeUnit.MINUTES)
class PostgresStoreModelIT {
  private static final Duration BUDGET = Duration.ofSeconds(20);
  private static final int MAX_SEQUENCES = 200;
  private static final int OPS_PER_SEQUENCE = 40;
  private static final List<TableId> TABLES =
      List.of(new TableId(1), new TableId(16_384), new TableId(4_294_967_295L));
  private static final List<String> DESTINATIONS = List.of("lake", "warehouse");

  private static TestPostgres.Database db;

  @BeforeAll
  static void createDatabase() {
    db = TestPostgres.newDatabase("model");
  }

  @AfterAll
  static void dropDatabase() {
    if (db != null) {
      db.close();
    }
  }

  @Test
  void postgresStoreBehavesLikeMemoryStore() {
    long seed = Long.getLong("pgetl.model.seed", System.nanoTime());
    System.out.println("postgresStoreBehavesLikeMemoryStore seed=" + seed);
    Random random = new Random(seed);
    long deadline = System.nanoTime() + BUDGET.toNanos();
    int sequences = 0;
    while (sequences < MAX_SEQUENCES && System.nanoTime() < deadline) {
      String pipeline = "model-" + seed + "-" + sequences;
      try (PostgresStore pg = db.storeBuilder(pipeline).build()) {
        MemoryStore model = new MemoryStore(pipeline);
        List<String> trace = new ArrayList<>();
        for (int i = 0; i < OPS_PER_SEQUENCE; i++) {
          Op op = randomOp(random);
          trace.add(op.name);
          String context = "seed " + seed + ", sequence " + sequences + ", ops " + trace;
          assertThat(outcome(op.call, pg)).as(context).isEqualTo(outcome(op.call, model));
          assertThat(observe(pg)).as(context).isEqualTo(observe(model));
        }
        // A fresh instance of the persistent store sees the same.
        try (PostgresStore reopened = db.storeBuilder(pipeline).build()) {
          assertThat(observe(reopened)).isEqualTo(observe(model));
        }
      }
      sequences++;
    }
    System.out.println("postgresStoreBehavesLikeMemoryStore ran " + sequences + " sequences");
    assertThat(sequences).isPositive();
  }

  private record Op(String name, Function<PipelineStore, Object> call) {}

  /** What a call returned, or the kind of what it threw. */
  private static Object outcome(Function<PipelineStore, Object> call, PipelineStore store) {
    try {
      return Optional.ofNullable(call.apply(store));
    } catch (EtlException e) {
      return "EtlException " + e.kind();
    } catch (IllegalArgumentException e) {
      return "IllegalArgumentException";
    }
  }

  /** Everything the SPI lets a caller see (lifecycle rows without their timestamps). */
  private static Map<String, Object> observe(PipelineStore store) {
    Map<String, Object> seen = new HashMap<>();
    seen.put("states", store.tableStates());
    for (TableId t : TABLES) {
      seen.put("state " + t, store.tableState(t));
      seen.put("history " + t, store.tableStateHistory(t));
      seen.put("schemas " + t, store.tableSchemas(t));
      seen.put("schema@0/150 " + t, store.tableSchema(t, Lsn.parse("0/150")));
      seen.put("metadata " + t, store.get(t));
      seen.put("progress " + t, store.progress(ProgressKey.tableSync(t)));
    }
    seen.put("progress apply", store.progress(ProgressKey.apply()));
    for (String d : DESTINATIONS) {
      seen.put(
          "lifecycle " + d,
          store
              .readLifecycle(d)
              .map(
                  r ->
                      List.of(
                          r.rawState(),
                          String.valueOf(r.reason()),
                          String.valueOf(r.updatedBy()))));
    }
    return seen;
  }

  private static Op randomOp(Random r) {
    TableId t = TABLES.get(r.nextInt(TABLES.size()));
    TableId u = TABLES.get(r.nextInt(TABLES.size()));
    int pick = r.nextInt(100);
    if (pick < 25) {
      TableState s = randomState(r);
      return new Op("update " + t + " " + s.type(), st -> run(() -> st.updateTableState(t, s)));
    } else if (pick < 32) {
      Map<TableId, TableState> m = new HashMap<>();
      m.put(t, randomState(r));
      m.put(u, randomState(r));
      return new Op("updateMany " + m.keySet(), st -> run(() -> st.updateTableStates(m)));
    } else if (pick < 40) {
      return new Op("rollback " + t, st -> st.rollbackTableState(t));
    } else if (pick < 44) {
      return new Op("reset " + t, st -> run(() -> st.resetTableState(t)));
    } else if (pick < 54) {
      ProgressKey key = r.nextBoolean() ? ProgressKey.apply() : ProgressKey.tableSync(t);
      Lsn lsn = Lsn.of(r.nextInt(4) == 0 ? r.nextLong() : r.nextInt(1000));
      return new Op("advance " + key + " " + lsn, st -> st.advanceProgress(key, lsn));
    } else if (pick < 57) {
      ProgressKey key = r.nextBoolean() ? ProgressKey.apply() : ProgressKey.tableSync(t);
      return new Op("deleteProgress " + key, st -> run(() -> st.deleteProgress(key)));
    } else if (pick < 67) {
      ReplicatedTableSchema s = randomSchema(r, t);
      return new Op(
          "storeSchema " + t + "@" + s.tableSchema().snapshotLsn(),
          st -> run(() -> st.storeTableSchema(s)));
    } else if (pick < 71) {
      Lsn lsn = Lsn.of(r.nextInt(5) * 0x80L);
      return new Op("prune " + t + "@" + lsn, st -> st.pruneTableSchemas(t, lsn));
    } else if (pick < 77) {
      TableMetadata m = new TableMetadata(randomText(r), Lsn.of(r.nextInt(500)), r.nextBoolean());
      return new Op("put " + t, st -> run(() -> st.put(t, m)));
    } else if (pick < 81) {
      return new Op("prepareForCopy " + t, st -> run(() -> st.prepareTableForCopy(t)));
    } else if (pick < 84) {
      return new Op("resetAll", st -> run(st::resetAllTablesForResync));
    } else if (pick < 88) {
      return new Op("deleteTable " + t, st -> run(() -> st.deleteTable(t)));
    } else if (pick < 89) {
      return new Op("deletePipelineState", st -> run(st::deletePipelineState));
    } else if (pick < 96) {
      String d = DESTINATIONS.get(r.nextInt(DESTINATIONS.size()));
      LifecycleState s = LifecycleState.values()[r.nextInt(LifecycleState.values().length)];
      String reason = r.nextBoolean() ? null : randomText(r);
      String by = r.nextBoolean() ? null : randomText(r);
      return new Op(
          "writeLifecycle " + d + " " + s, st -> run(() -> st.writeLifecycle(d, s, reason, by)));
    } else {
      return new Op("load", PipelineStore::loadTableStates);
    }
  }

  private static Object run(Runnable r) {
    r.run();
    return "ok";
  }

  private static TableState randomState(Random r) {
    switch (r.nextInt(9)) {
      case 0:
        return TableState.INIT;
      case 1:
        return TableState.DATA_SYNC;
      case 2:
        return TableState.FINISHED_COPY;
      case 3:
        return TableState.READY;
      case 4:
        return new TableState.SyncDone(Lsn.of(r.nextLong()));
      case 5:
        // Memory-only: both stores must refuse it.
        return r.nextBoolean()
            ? new TableState.SyncWait(Lsn.of(r.nextInt(100)))
            : new TableState.Catchup(Lsn.of(r.nextInt(100)));
      default:
        ErrorKind kind = ErrorKind.values()[r.nextInt(ErrorKind.values().length)];
        return switch (r.nextInt(3)) {
          case 0 -> new TableState.Errored(kind, randomText(r), randomText(r), RetryDirective.NONE);
          case 1 ->
              new TableState.Errored(kind, randomText(r), randomText(r), RetryDirective.MANUAL);
          default ->
              new TableState.Errored(
                  kind,
                  randomText(r),
                  randomText(r),
                  RetryDirective.TIMED,
                  Instant.ofEpochSecond(r.nextInt(2_000_000_000), r.nextInt(1_000_000_000)),
                  r.nextInt(1000));
        };
    }
  }

  private static ReplicatedTableSchema randomSchema(Random r, TableId t) {
    List<ColumnSchema> cols = new ArrayList<>();
    int n = r.nextInt(4);
    for (int i = 0; i < n; i++) {
      cols.add(
          new ColumnSchema(
              randomText(r) + i,
              r.nextInt(),
              r.nextInt(3) - 1,
              randomText(r),
              i + 1 + r.nextInt(2),
              r.nextInt(3),
              r.nextBoolean(),
              r.nextBoolean() ? null : randomText(r)));
    }
    String name = randomText(r);
    TableSchema table =
        new TableSchema(
            t, new TableName("s" + name, "t" + name), cols, Lsn.of(r.nextInt(6) * 0x40L));
    // A random column list and a random identity among the published columns, in random order.
    boolean[] mask = new boolean[n];
    List<Integer> published = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      mask[i] = r.nextInt(4) > 0;
      if (mask[i]) {
        published.add(published.size());
      }
    }
    IdentityKind kind = IdentityKind.values()[r.nextInt(IdentityKind.values().length)];
    int[] identity = new int[0];
    if ((kind == IdentityKind.PRIMARY_KEY || kind == IdentityKind.INDEX) && !published.isEmpty()) {
      Collections.shuffle(published, r);
      identity =
          published.subList(0, 1 + r.nextInt(published.size())).stream()
              .mapToInt(Integer::intValue)
              .toArray();
    }
    return ReplicatedTableSchema.of(table, mask, kind, identity);
  }

  private static final String ALPHABET = "abcXYZ019 _-'\"\\/{}[]:,\n\tżółw€🐢";

  private static String randomText(Random r) {
    int len = r.nextInt(12);
    StringBuilder sb = new StringBuilder();
    for (int i = 0; i < len; i++) {
      sb.appendCodePoint(
          ALPHABET.codePointAt(
              ALPHABET.offsetByCodePoints(
                  0, r.nextInt(ALPHABET.codePointCount(0, ALPHABET.length())))));
    }
    return sb.toString();
  }
}
