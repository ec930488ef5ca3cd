package org.pgetl.core.internal.chunk;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import java.util.UUID;
import org.junit.jupiter.api.Test;
import org.pgetl.core.internal.chunk.ChunkTracker.Admission;
import org.pgetl.core.internal.chunk.ChunkTracker.ReadOutcome;
import org.pgetl.model.Lsn;
import org.pgetl.model.TableId;
import org.pgetl.store.MemoryStore;
import org.pgetl.store.PipelineStore.ChunkKind;
import org.pgetl.store.PipelineStore.ChunkRecord;

class ChunkTrackerTest {
  private static final TableId T = new TableId(42);
  private static final ChunkKey KEY = new ChunkKey(0, "id", 20);
  private static final UUID ATTEMPT = UUID.randomUUID();

  private final MemoryStore store = new MemoryStore("p");
  private final ChunkTracker tracker = new ChunkTracker(store);

  /** Three chunks: [.., 100), [100, 200), [200, ..). */
  private void activate() {
    store.planChunks(
        T,
        ATTEMPT,
        List.of(
            ChunkRecord.planned(ATTEMPT, 0, ChunkKind.RANGE, null, List.of("100")),
            ChunkRecord.planned(ATTEMPT, 1, ChunkKind.RANGE, List.of("100"), List.of("200")),
            ChunkRecord.planned(ATTEMPT, 2, ChunkKind.RANGE, List.of("200"), null)));
    tracker.activate(T, ATTEMPT, KEY, store.chunks(T));
  }

  private static Lsn lsn(long v) {
    return Lsn.of(v);
  }

  /** Takes the chunk holding no key yet taken, registers a read, meets its watermark. */
  private ChunkTracker.Read readToWatermark(PgSnapshot snapshot, long watermark) {
    ChunkTracker.Chunk c = tracker.take(T);
    ChunkTracker.Read r = tracker.register(T, c);
    tracker.snapshot(r, snapshot);
    tracker.watermark(r.id(), lsn(watermark));
    return r;
  }

  @Test
  void changesOfAChunkBeingWrittenAreHeldUntilItIsDone() throws Exception {
    activate();
    tracker.durable(lsn(10));
    ChunkTracker.Read r = readToWatermark(PgSnapshot.parse("500:500:"), 20); // chunk 0
    assertThat(tracker.await(r, () -> false)).isEqualTo(ReadOutcome.WRITE);
    assertThat(tracker.admit(T, lsn(30), 501, 5L, null, false)).isEqualTo(Admission.HOLD);
    assertThat(tracker.admit(T, lsn(30), 501, 150L, null, false)).isEqualTo(Admission.APPLY);
    // a key move out of the chunk being written is held too
    assertThat(tracker.admit(T, lsn(30), 502, 150L, 7L, false)).isEqualTo(Admission.HOLD);
    assertThat(tracker.admitTruncate(T, lsn(30), 503)).isEqualTo(Admission.HOLD);
    tracker.done(r);
    assertThat(tracker.admit(T, lsn(30), 501, 5L, null, false)).isEqualTo(Admission.APPLY);
    assertThat(tracker.progress(T)).containsExactly(1, 3);
  }

  @Test
  void aReplayedChangeBeforeADoneChunksWatermarkIsSkipped() {
    activate();
    store.completeChunk(T, ATTEMPT, 1, lsn(100), 10, 100);
    tracker.activate(T, ATTEMPT, KEY, store.chunks(T));
    assertThat(tracker.admit(T, lsn(50), 1, 150L, null, false)).isEqualTo(Admission.SKIP);
    assertThat(tracker.admit(T, lsn(150), 2, 150L, null, false)).isEqualTo(Admission.APPLY);
    // a key not in a done chunk: applied (its chunk, read later, holds it too)
    assertThat(tracker.admit(T, lsn(50), 3, 50L, null, false)).isEqualTo(Admission.APPLY);
    // a move from a done chunk's key to a pending one's: applied
    assertThat(tracker.admit(T, lsn(50), 4, 50L, 150L, false)).isEqualTo(Admission.APPLY);
  }

  @Test
  void aTransactionTheSnapshotDoesNotSeeSendsTheReadBack() throws Exception {
    activate();
    // the apply stream passed a change of transaction 900 before the watermark
    assertThat(tracker.admit(T, lsn(30), 900, 150L, null, false)).isEqualTo(Admission.APPLY);
    ChunkTracker.Read r = readToWatermark(PgSnapshot.parse("890:900:"), 40);
    assertThat(tracker.await(r, () -> false)).isEqualTo(ReadOutcome.RETRY);
    // the same with 900 running when the snapshot was taken
    ChunkTracker.Read again = readToWatermark(PgSnapshot.parse("890:905:900"), 41);
    assertThat(tracker.await(again, () -> false)).isEqualTo(ReadOutcome.RETRY);
    // a snapshot that sees it
    tracker.durable(lsn(50));
    ChunkTracker.Read ok = readToWatermark(PgSnapshot.parse("901:901:"), 42);
    assertThat(tracker.await(ok, () -> false)).isEqualTo(ReadOutcome.WRITE);
  }

  @Test
  void aWatermarkMetBeforeTheSnapshotIsKnownIsCheckedWhenItIs() throws Exception {
    activate();
    tracker.admit(T, lsn(30), 900, 150L, null, false);
    ChunkTracker.Chunk c = tracker.take(T);
    ChunkTracker.Read r = tracker.register(T, c);
    tracker.watermark(r.id(), lsn(40));
    tracker.snapshot(r, PgSnapshot.parse("899:900:"));
    assertThat(tracker.await(r, () -> false)).isEqualTo(ReadOutcome.RETRY);
  }

  @Test
  void theRowsWaitForTheStreamsWritesBeforeTheWatermarkToBeDurable() throws Exception {
    activate();
    tracker.committed(lsn(35));
    ChunkTracker.Read r = readToWatermark(PgSnapshot.parse("500:500:"), 40);
    assertThat(tracker.awaitsDurability()).isTrue();
    assertThat(tracker.await(r, () -> true)).isEqualTo(ReadOutcome.STOP);
    tracker.durable(lsn(35));
    assertThat(tracker.awaitsDurability()).isFalse();
    assertThat(tracker.await(r, () -> false)).isEqualTo(ReadOutcome.WRITE);
  }

  @Test
  void aKeyMoveWithoutEveryValueIntoADoneChunkReadsTheNewKeyAgain() {
    activate();
    store.completeChunk(T, ATTEMPT, 0, lsn(100), 10, 100);
    tracker.activate(T, ATTEMPT, KEY, store.chunks(T));
    // from chunk 1 (not done) to key 5 in chunk 0 (done), values left out
    assertThat(tracker.admit(T, lsn(200), 7, 5L, 150L, true)).isEqualTo(Admission.APPLY);
    List<ChunkRecord> chunks = store.chunks(T);
    assertThat(chunks).hasSize(4);
    assertThat(chunks.get(3).kind()).isEqualTo(ChunkKind.KEY);
    assertThat(chunks.get(3).from()).containsExactly("5");
    assertThat(tracker.allDone(T)).isFalse();
    // the same move with every value, or into a chunk not done: no re-read
    tracker.admit(T, lsn(201), 8, 6L, 151L, false);
    tracker.admit(T, lsn(202), 9, 250L, 152L, true);
    assertThat(store.chunks(T)).hasSize(4);
  }

  @Test
  void aReplayedTruncateReopensTheChunksDoneAfterIt() {
    activate();
    store.completeChunk(T, ATTEMPT, 0, lsn(100), 10, 100);
    store.completeChunk(T, ATTEMPT, 1, lsn(300), 10, 100);
    tracker.activate(T, ATTEMPT, KEY, store.chunks(T));
    assertThat(tracker.admitTruncate(T, lsn(200), 5)).isEqualTo(Admission.APPLY);
    assertThat(store.chunks(T).stream().map(ChunkRecord::done)).containsExactly(true, false, false);
    assertThat(tracker.progress(T)).containsExactly(1, 3);
  }

  /**
   * A stream that restarts replays from before a watermark: a read waiting for its durability goes
   * back (it would wait for a change the stream holds), a read writing its rows stays.
   */
  @Test
  void aRestartedStreamSendsBackTheReadsThatWaitForItsDurability() throws Exception {
    activate();
    tracker.committed(lsn(35));
    ChunkTracker.Read first = readToWatermark(PgSnapshot.parse("500:500:"), 40); // chunk 0
    ChunkTracker.Read second = readToWatermark(PgSnapshot.parse("500:500:"), 41); // chunk 1
    tracker.durable(lsn(35));
    assertThat(tracker.await(second, () -> false)).isEqualTo(ReadOutcome.WRITE);
    tracker.committed(lsn(60));
    ChunkTracker.Read third = readToWatermark(PgSnapshot.parse("500:500:"), 70); // chunk 2
    assertThat(tracker.awaitsDurability()).isTrue();
    tracker.streamStarted(lsn(20));
    // the third waited for durability up to 60: sent back; the first two write their rows
    assertThat(tracker.await(third, () -> false)).isEqualTo(ReadOutcome.RETRY);
    assertThat(tracker.await(first, () -> false)).isEqualTo(ReadOutcome.WRITE);
    // the replayed change of a key of a chunk writing its rows is held
    assertThat(tracker.admit(T, lsn(30), 600, 150L, null, false)).isEqualTo(Admission.HOLD);
    assertThat(tracker.awaitsDurability()).isFalse();
  }

  @Test
  void aCopyThatStartsOverKeepsTheTableAndTheTransactionsItKnew() throws Exception {
    activate();
    tracker.admit(T, lsn(30), 900, 150L, null, false);
    ChunkTracker.Read r = readToWatermark(PgSnapshot.parse("500:500:"), 20);
    UUID next = UUID.randomUUID();
    store.planChunks(T, next, List.of(ChunkRecord.planned(next, 0, ChunkKind.RANGE, null, null)));
    tracker.replace(T, next, KEY, store.chunks(T));
    assertThat(tracker.isActive(T)).isTrue();
    assertThat(tracker.await(r, () -> false)).isEqualTo(ReadOutcome.RETRY);
    assertThat(tracker.progress(T)).containsExactly(0, 1);
    // transaction 900 is still known: a snapshot that does not see it is sent back
    ChunkTracker.Read again = readToWatermark(PgSnapshot.parse("890:900:"), 50);
    assertThat(tracker.await(again, () -> false)).isEqualTo(ReadOutcome.RETRY);
  }

  @Test
  void aDeactivatedTableReleasesItsReadersAndItsChanges() throws Exception {
    activate();
    ChunkTracker.Read r = readToWatermark(PgSnapshot.parse("500:500:"), 20);
    tracker.deactivate(T);
    assertThat(tracker.await(r, () -> false)).isEqualTo(ReadOutcome.RETRY);
    assertThat(tracker.isActive(T)).isFalse();
    assertThat(tracker.admit(T, lsn(30), 1, 5L, null, false)).isEqualTo(Admission.APPLY);
  }

  @Test
  void snapshotsWidenStreamIdsAndTellWhatTheySee() {
    PgSnapshot s = PgSnapshot.parse("4294967390:4294967400:4294967395");
    assertThat(s.widen(94)).isEqualTo(4294967390L);
    assertThat(s.widen(4294967290L)).isEqualTo(4294967290L);
    assertThat(s.sees(4294967389L)).isTrue();
    assertThat(s.sees(4294967395L)).isFalse();
    assertThat(s.sees(4294967396L)).isTrue();
    assertThat(s.sees(4294967400L)).isFalse();
    assertThat(s.anyRunning(new long[] {1, 4294967395L})).isTrue();
    assertThat(s.toString()).isEqualTo("4294967390:4294967400:4294967395");
  }

  @Test
  void aUuidKeyFindsItsChunkInPostgresOrder() throws Exception {
    ChunkKey key = new ChunkKey(0, "id", 2950);
    String split = "80000000-0000-0000-0000-000000000000";
    store.planChunks(
        T,
        ATTEMPT,
        List.of(
            ChunkRecord.planned(ATTEMPT, 0, ChunkKind.RANGE, null, List.of(split)),
            ChunkRecord.planned(ATTEMPT, 1, ChunkKind.RANGE, List.of(split), null)));
    tracker.activate(T, ATTEMPT, key, store.chunks(T));
    tracker.durable(lsn(10));
    ChunkTracker.Read r = readToWatermark(PgSnapshot.parse("500:500:"), 20); // chunk 0
    assertThat(tracker.await(r, () -> false)).isEqualTo(ReadOutcome.WRITE);
    // below the split by bytes (Java's signed UUID order would put the second one first)
    UUID low = UUID.fromString("7fffffff-ffff-ffff-ffff-ffffffffffff");
    UUID high = UUID.fromString("ff000000-0000-0000-0000-000000000000");
    assertThat(tracker.admit(T, lsn(30), 501, low, null, false)).isEqualTo(Admission.HOLD);
    assertThat(tracker.admit(T, lsn(30), 502, high, null, false)).isEqualTo(Admission.APPLY);
    assertThat(tracker.admit(T, lsn(30), 503, UUID.fromString(split), null, false))
        .isEqualTo(Admission.APPLY);
    tracker.done(r);
    // a key move without every value from the pending chunk into the done one: re-read by key
    assertThat(tracker.admit(T, lsn(40), 504, low, high, true)).isEqualTo(Admission.APPLY);
    assertThat(store.chunks(T))
        .anySatisfy(
            c -> {
              assertThat(c.kind()).isEqualTo(ChunkKind.KEY);
              assertThat(c.from()).containsExactly(low.toString());
            });
  }
}
