package org.pgetl.core.internal.apply;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.function.UnaryOperator;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.pgetl.PipelineConfig;
import org.pgetl.core.internal.engine.StopSignal;
import org.pgetl.destination.WriteDurability;
import org.pgetl.error.ErrorKind;
import org.pgetl.error.EtlException;
import org.pgetl.model.Event;
import org.pgetl.model.Event.Kind;
import org.pgetl.model.Lsn;

/**
 * The apply loop without a server: scripted message sequences in, a destination answering as
 * scripted, and what comes out — the writes the destination received, the positions confirmed to
 * the source, the progress in the store. Time is a {@link
 * org.pgetl.core.internal.time.ManualTicker}: a batch never goes out "because time passed" unless
 * the test moved the ticker.
 */
class ApplyLoopTest {
  private static final long TABLE = 16_384;
  private static final Lsn START = Lsn.of(0x0F00);

  @TempDir Path spool;
  private LoopHarness h;

  @AfterEach
  void stopLoop() throws InterruptedException {
    if (h != null) {
      h.close();
    }
  }

  private LoopHarness harness(ScriptedDestination.Policy policy) {
    return harness(policy, b -> b);
  }

  private LoopHarness harness(
      ScriptedDestination.Policy policy, UnaryOperator<PipelineConfig.Builder> settings) {
    h = new LoopHarness(spool, START, policy, settings);
    return h;
  }

  /**
   * Queues a transaction whose WAL starts at {@code base}: Begin, a RELATION when asked, one insert
   * per value, Commit. Its commit LSN is {@code base + 0x100}, its end {@code base + 0x108}.
   *
   * @return the commit end LSN
   */
  private static Lsn transaction(ScriptedSource s, long base, boolean relation, String... values) {
    Lsn commit = Lsn.of(base + 0x100);
    List<byte[]> messages = new ArrayList<>();
    List<Lsn> starts = new ArrayList<>();
    messages.add(PgOutput.begin(commit, base));
    starts.add(Lsn.of(base));
    if (relation) {
      messages.add(PgOutput.relation(TABLE, "items"));
      starts.add(Lsn.of(base));
    }
    for (int i = 0; i < values.length; i++) {
      messages.add(PgOutput.insert(TABLE, i + 1, values[i]));
      starts.add(Lsn.of(base + 0x10 * (i + 1)));
    }
    messages.add(PgOutput.commit(commit, Lsn.of(base + 0x108)));
    starts.add(commit);
    // queued as one step: the server sends a small transaction's messages back to back
    s.messages(messages, starts);
    return Lsn.of(base + 0x108);
  }

  private static List<Kind> kinds(List<Event> events) {
    return events.stream().map(Event::kind).toList();
  }

  /** Every write but the last reached {@code max} bytes with its last event, and not before. */
  private static void assertCutAtLimit(List<ScriptedDestination.Write> writes, long max) {
    for (ScriptedDestination.Write w : writes.subList(0, writes.size() - 1)) {
      long bytes = w.events().stream().mapToLong(EventSizes::estimate).sum();
      long last = EventSizes.estimate(w.events().get(w.events().size() - 1));
      assertThat(bytes).as("a cut batch reached the limit").isGreaterThanOrEqualTo(max);
      assertThat(bytes - last).as("and was cut at the event that reached it").isLessThan(max);
    }
  }

  // ---- batching triggers

  @Test
  void aTransactionGoesOutWholeAsSoonAsTheStreamHasNothingMoreToRead() throws Exception {
    harness(ScriptedDestination.Policy.DURABLE);
    Lsn end = transaction(h.source, 0x1000, true, "a", "b");
    h.start();

    ScriptedDestination.Write w = h.destination.next();
    assertThat(w.kinds())
        .containsExactly(Kind.BEGIN, Kind.RELATION, Kind.INSERT, Kind.INSERT, Kind.COMMIT);
    assertThat(w.durability()).isEqualTo(WriteDurability.MAY_DEFER);
    assertThat(w.events()).extracting(Event::commitLsn).containsOnly(Lsn.of(0x1100));
    assertThat(w.events()).extracting(Event::txOrdinal).containsExactly(0L, 1L, 1L, 2L, 3L);
    await().untilAsserted(() -> assertThat(h.source.flushed()).isEqualTo(end));
    assertThat(h.storedProgress()).isEqualTo(end);
  }

  @Test
  void aLoneTransactionAfterAQuietStreamGoesOutAtItsCommitWithoutWaitingForAnotherRead()
      throws Exception {
    harness(ScriptedDestination.Policy.DURABLE);
    h.source.quiet();
    transaction(h.source, 0x1000, true, "a");
    transaction(h.source, 0x2000, false, "b");
    Lsn end = transaction(h.source, 0x3000, false, "c");
    h.start();
    await().untilAsserted(() -> assertThat(h.source.flushed()).isEqualTo(end));

    // the first transaction followed a quiet read: it went out at its commit, alone; the next two
    // came back to back behind it, so they share a write cut when the stream had nothing more
    List<ScriptedDestination.Write> writes = h.destination.writes();
    assertThat(writes).hasSize(2);
    assertThat(writes.get(0).events()).extracting(Event::commitLsn).containsOnly(Lsn.of(0x1100));
    assertThat(writes.get(1).events())
        .extracting(Event::commitLsn)
        .containsOnly(Lsn.of(0x2100), Lsn.of(0x3100));
  }

  /**
   * A quiet stream reads with the idle bound (20 ms); after a second of quiet reads with a settled
   * role, with 100 ms; a role that is not settled, or a message, brings the idle bound back.
   */
  @Test
  void aSettledQuietStreamWaitsLongerBetweenItsChecks() throws Exception {
    long idle = 20_000_000L;
    long settled = 100_000_000L;
    harness(ScriptedDestination.Policy.DURABLE);
    h.role.settled = true;
    h.source.quiet();
    h.start();
    await().until(() -> h.source.readWaits().contains(idle));
    assertThat(h.source.readWaits()).doesNotContain(settled);
    // a second of quiet reads
    h.source.advance(Duration.ofMillis(1_000));
    await().until(() -> h.source.readWaits().contains(settled));
    // a table to copy: the loop checks as often as before
    h.role.settled = false;
    int before = h.source.readWaits().size();
    await().until(() -> h.source.readWaits().size() > before + 2);
    List<Long> waits = h.source.readWaits();
    assertThat(waits.subList(before + 1, waits.size())).containsOnly(idle);
    // settled again, then a transaction: its messages restart the quiet second
    h.role.settled = true;
    await().until(() -> h.source.readWaits().get(h.source.readWaits().size() - 1) == settled);
    Lsn end = transaction(h.source, 0x1000, true, "a");
    await().untilAsserted(() -> assertThat(h.source.flushed()).isEqualTo(end));
    int after = h.source.readWaits().size();
    await().until(() -> h.source.readWaits().size() > after + 2);
    waits = h.source.readWaits();
    assertThat(waits.subList(after, waits.size())).doesNotContain(settled);
  }

  @Test
  void aBatchIsCutAsSoonAsItReachesBatchMaxBytes() throws Exception {
    long max = 4_000;
    harness(ScriptedDestination.Policy.DURABLE, b -> b.batchMaxBytes(max));
    String[] values = new String[12];
    for (int i = 0; i < values.length; i++) {
      values[i] = String.valueOf((char) ('a' + i)).repeat(900);
    }
    Lsn end = transaction(h.source, 0x1000, true, values);
    h.start();
    await().untilAsserted(() -> assertThat(h.source.flushed()).isEqualTo(end));

    List<ScriptedDestination.Write> writes = h.destination.writes();
    assertThat(writes).hasSizeGreaterThan(2);
    assertCutAtLimit(writes, max);
    assertThat(kinds(h.destination.events()))
        .hasSize(values.length + 3)
        .startsWith(Kind.BEGIN, Kind.RELATION)
        .endsWith(Kind.COMMIT);
  }

  @Test
  void aBatchGoesOutWhenItWaitedBatchMaxFillWhileChangesKeepComing() throws Exception {
    harness(ScriptedDestination.Policy.DURABLE, b -> b.batchMaxFill(Duration.ofMillis(100)));
    Lsn commit = Lsn.of(0x1100);
    h.source.message(PgOutput.begin(commit, 7), Lsn.of(0x1000));
    h.source.message(PgOutput.relation(TABLE, "items"), Lsn.of(0x1000));
    h.source.message(PgOutput.insert(TABLE, 1, "a"), Lsn.of(0x1010));
    h.source.message(PgOutput.insert(TABLE, 2, "b"), Lsn.of(0x1020));
    h.source.advance(Duration.ofMillis(99)); // not yet
    h.source.message(PgOutput.insert(TABLE, 3, "c"), Lsn.of(0x1030));
    h.source.advance(Duration.ofMillis(1)); // the batch has waited 100 ms
    h.source.message(PgOutput.insert(TABLE, 4, "d"), Lsn.of(0x1040));
    h.source.message(PgOutput.insert(TABLE, 5, "e"), Lsn.of(0x1050));
    h.source.message(PgOutput.commit(commit, Lsn.of(0x1108)), commit);
    h.start();

    ScriptedDestination.Write first = h.destination.next();
    ScriptedDestination.Write second = h.destination.next();
    assertThat(first.kinds())
        .containsExactly(
            Kind.BEGIN, Kind.RELATION, Kind.INSERT, Kind.INSERT, Kind.INSERT, Kind.INSERT);
    assertThat(second.kinds()).containsExactly(Kind.INSERT, Kind.COMMIT);
    await().untilAsserted(() -> assertThat(h.source.flushed()).isEqualTo(Lsn.of(0x1108)));
  }

  @Test
  void aStreamedTransactionIsDeliveredFromTheSpoolInBatchesAtItsCommit() throws Exception {
    long max = 4_000;
    harness(ScriptedDestination.Policy.DURABLE, b -> b.batchMaxBytes(max)).streaming();
    long xid = 900;
    h.source.message(PgOutput.streamStart(xid, true), Lsn.of(0x1000));
    h.source.message(PgOutput.relation(TABLE, "items", xid), Lsn.of(0x1000));
    for (int i = 1; i <= 6; i++) {
      h.source.message(PgOutput.insert(TABLE, i, "s".repeat(900), xid), Lsn.of(0x1000 + i));
    }
    h.source.message(PgOutput.streamStop(), Lsn.of(0x1010));
    // a transaction committed while the streamed one runs goes out first
    Lsn otherEnd = transaction(h.source, 0x2000, true, "r");
    h.source.message(PgOutput.streamStart(xid, false), Lsn.of(0x3000));
    for (int i = 7; i <= 12; i++) {
      h.source.message(PgOutput.insert(TABLE, i, "s".repeat(900), xid), Lsn.of(0x3000 + i));
    }
    h.source.message(PgOutput.streamStop(), Lsn.of(0x3010));
    Lsn commit = Lsn.of(0x4000);
    Lsn end = Lsn.of(0x4008);
    h.source.message(PgOutput.streamCommit(xid, commit, end), commit);
    h.start();
    await().untilAsserted(() -> assertThat(h.source.flushed()).isEqualTo(end));

    List<Event> events = h.destination.events();
    assertThat(kinds(events.subList(0, 4)))
        .containsExactly(Kind.BEGIN, Kind.RELATION, Kind.INSERT, Kind.COMMIT);
    List<Event> streamed = events.subList(4, events.size());
    assertThat(kinds(streamed))
        .hasSize(15)
        .startsWith(Kind.BEGIN, Kind.RELATION)
        .endsWith(Kind.COMMIT);
    assertThat(streamed).extracting(Event::commitLsn).containsOnly(commit);
    assertThat(streamed.subList(2, 14)).extracting(Event::txOrdinal).isSorted().startsWith(1L);
    assertThat(h.destination.writes()).hasSizeGreaterThan(2);
    assertCutAtLimit(h.destination.writes(), max);
    // durable progress moved at the two commits only
    assertThat(h.source.confirmed()).containsExactly(otherEnd, end);
    h.close();
    try (var files = java.nio.file.Files.walk(spool)) {
      assertThat(files.filter(f -> f.toString().endsWith(".spool"))).isEmpty();
    }
  }

  @Test
  void aStreamedTransactionStillOpenLetsTheRoleSeeTheStreamIdleWithoutConfirmingPastItsStart()
      throws Exception {
    harness(ScriptedDestination.Policy.DURABLE).streaming();
    Lsn before = transaction(h.source, 0x1000, true, "a");
    long xid = 901;
    h.source.message(PgOutput.streamStart(xid, true), Lsn.of(0x2000));
    h.source.message(PgOutput.relation(TABLE, "items", xid), Lsn.of(0x2000));
    h.source.message(PgOutput.insert(TABLE, 2, "s", xid), Lsn.of(0x2010));
    // the role must not see the stream idle inside a stream block
    h.source.keepalive(Lsn.of(0x2015), false);
    h.source.message(PgOutput.streamStop(), Lsn.of(0x2020));
    h.source.keepalive(Lsn.of(0x6000), false);
    h.start();
    // between the blocks of a transaction that has not committed: everything committed up to the
    // last position is durable, which a table's hand-off needs, but its changes lie before it
    await().untilAsserted(() -> assertThat(h.role.idleAt).contains(Lsn.of(0x6000)));
    assertThat(h.role.idleAt)
        .as("no idle position inside the stream block")
        .allMatch(l -> l.compareTo(Lsn.of(0x2000)) < 0 || l.compareTo(Lsn.of(0x2020)) >= 0);
    assertThat(h.source.flushed()).isEqualTo(before);
    assertThat(h.source.confirmed()).containsExactly(before);

    Lsn commit = Lsn.of(0x7000);
    Lsn end = Lsn.of(0x7008);
    h.source.message(PgOutput.streamCommit(xid, commit, end), commit);
    await().untilAsserted(() -> assertThat(h.source.flushed()).isEqualTo(end));
    List<Kind> kinds = kinds(h.destination.events());
    assertThat(kinds).filteredOn(k -> k == Kind.INSERT).hasSize(2);
    assertThat(kinds).endsWith(Kind.INSERT, Kind.COMMIT);
  }

  // ---- acknowledgements

  @Test
  void acceptedWorkIsMadeDurableByABarrierOnceTheStreamWasQuietForBatchMaxFill() throws Exception {
    harness(ScriptedDestination.Policy.ACCEPTED);
    Lsn end = transaction(h.source, 0x1000, true, "a");
    h.start();
    ScriptedDestination.Write w = h.destination.next();
    await().until(h.source::drained);
    h.source.keepalive(Lsn.of(0x3000), false);
    await().until(h.source::drained);

    // accepted is not durable: nothing is confirmed, and no barrier before the stream was quiet
    assertThat(h.destination.nextWithin(Duration.ofMillis(100))).isNull();
    assertThat(h.source.confirmed()).isEmpty();

    h.ticker.advance(Duration.ofMillis(100));
    ScriptedDestination.Write barrier = h.destination.next();
    assertThat(barrier.events()).isEmpty();
    assertThat(barrier.durability()).isEqualTo(WriteDurability.REQUIRE_DURABLE);
    // the durable answer covers the accepted write; then the idle stream confirms what it received
    await()
        .untilAsserted(() -> assertThat(h.source.confirmed()).containsExactly(end, Lsn.of(0x3000)));
    assertThat(h.storedProgress()).isEqualTo(end);
  }

  @Test
  void aDurableAnswerCoversAnEarlierWriteAnsweredAcceptedBeforeIt() throws Exception {
    harness(ScriptedDestination.Policy.HOLD);
    transaction(h.source, 0x1000, true, "a");
    h.start();
    ScriptedDestination.Write w1 = h.destination.next();
    Lsn end2 = transaction(h.source, 0x2000, false, "b");
    ScriptedDestination.Write w2 = h.destination.next();

    w1.result().accepted();
    w2.result().durable();

    await().untilAsserted(() -> assertThat(h.source.confirmed()).containsExactly(end2));
    assertThat(h.destination.writes()).hasSize(2); // no barrier was needed
  }

  @Test
  void aDurableAnswerGivenBeforeAnEarlierWritesAcceptedAnswerDoesNotCoverIt() throws Exception {
    harness(ScriptedDestination.Policy.HOLD);
    transaction(h.source, 0x1000, true, "a");
    h.start();
    ScriptedDestination.Write w1 = h.destination.next();
    Lsn end2 = transaction(h.source, 0x2000, false, "b");
    ScriptedDestination.Write w2 = h.destination.next();

    w2.result().durable(); // answered first: it cannot vouch for w1's later "accepted"
    w1.result().accepted();
    assertThat(h.destination.nextWithin(Duration.ofMillis(100))).isNull();
    assertThat(h.source.confirmed()).isEmpty();

    h.ticker.advance(Duration.ofMillis(100)); // quiet: the loop asks for durability
    ScriptedDestination.Write barrier = h.destination.next();
    assertThat(barrier.events()).isEmpty();
    assertThat(barrier.durability()).isEqualTo(WriteDurability.REQUIRE_DURABLE);
    assertThat(h.source.confirmed()).isEmpty();
    barrier.result().durable();
    await().untilAsserted(() -> assertThat(h.source.confirmed()).containsExactly(end2));
  }

  @Test
  void aFailedAnswerEndsTheLoopWithItsErrorAndConfirmsNothing() {
    harness(ScriptedDestination.Policy.HOLD);
    transaction(h.source, 0x1000, true, "a");
    h.source.keepalive(Lsn.of(0x5000), false);
    h.start();
    ScriptedDestination.Write w = h.destination.next();
    EtlException error = new EtlException(ErrorKind.DESTINATION_ERROR, "disk full");
    w.result().fail(error);

    assertThatThrownBy(h::awaitExit).isSameAs(error);
    assertThat(h.source.confirmed()).isEmpty();
    assertThat(h.storedProgress()).isNull();
  }

  @Test
  void anAcceptedAnswerToARequireDurableWriteFailsTheLoop() {
    harness(ScriptedDestination.Policy.HOLD);
    transaction(h.source, 0x1000, true, "a");
    h.start();
    h.destination.next().result().accepted();
    h.ticker.advance(Duration.ofMillis(100));
    ScriptedDestination.Write barrier = h.destination.next();
    barrier.result().accepted();

    assertThatThrownBy(h::awaitExit)
        .isInstanceOf(EtlException.class)
        .satisfies(
            e ->
                assertThat(((EtlException) e).kind())
                    .isEqualTo(ErrorKind.DESTINATION_CONTRACT_VIOLATION));
    assertThat(h.source.confirmed()).isEmpty();
  }

  // ---- feedback

  @Test
  void aKeepaliveAskingForAReplyGetsTheDurablePointNeverTheReceivedPosition() throws Exception {
    harness(ScriptedDestination.Policy.HOLD);
    Lsn end = transaction(h.source, 0x1000, true, "a");
    h.start();
    ScriptedDestination.Write w = h.destination.next();
    h.source.keepalive(Lsn.of(0x9000), true);
    await().until(() -> h.source.replies().size() == 1);
    assertThat(h.source.replies().get(0).flushed()).isEqualTo(START);
    assertThat(h.source.replies().get(0).received()).isEqualTo(Lsn.of(0x9000));

    w.result().durable();
    await().untilAsserted(() -> assertThat(h.source.flushed()).isEqualTo(Lsn.of(0x9000)));
    h.source.keepalive(Lsn.of(0xA000), true);
    await().until(() -> h.source.replies().size() == 2);
    assertThat(h.source.replies().get(1).flushed()).isEqualTo(Lsn.of(0x9000));
    // the durable point, then (idle) what had been received
    assertThat(h.source.confirmed()).startsWith(end, Lsn.of(0x9000));
    for (ScriptedSource.Status s : h.source.statuses()) {
      assertThat(s.flushed()).isLessThanOrEqualTo(s.received());
    }
  }

  @Test
  void anIdleStreamConfirmsWhatItReceivedWithoutWritingAnything() throws Exception {
    harness(ScriptedDestination.Policy.DURABLE);
    h.source.keepalive(Lsn.of(0x4000), false);
    h.start();
    await().untilAsserted(() -> assertThat(h.source.flushed()).isEqualTo(Lsn.of(0x4000)));
    h.stop.request(StopSignal.Mode.DRAIN);
    assertThat(h.awaitExit()).isEqualTo(ApplyLoop.Exit.PAUSED);

    assertThat(h.destination.writes()).isEmpty();
    assertThat(h.storedProgress()).as("the store holds durable progress only").isNull();
    assertThat(h.source.statuses())
        .last()
        .extracting(ScriptedSource.Status::why)
        .isEqualTo("forced");
  }

  @Test
  void aStreamWithAnOpenTransactionConfirmsNothingPastTheDurablePoint() throws Exception {
    harness(ScriptedDestination.Policy.DURABLE);
    Lsn end = transaction(h.source, 0x1000, true, "a");
    h.source.message(PgOutput.begin(Lsn.of(0x2100), 9), Lsn.of(0x2000));
    h.source.message(PgOutput.insert(TABLE, 2, "b"), Lsn.of(0x2010));
    h.source.keepalive(Lsn.of(0x6000), false);
    h.start();
    // the stream had nothing more to read after the second transaction's insert: one write
    ScriptedDestination.Write w = h.destination.next();
    assertThat(w.kinds())
        .containsExactly(
            Kind.BEGIN, Kind.RELATION, Kind.INSERT, Kind.COMMIT, Kind.BEGIN, Kind.INSERT);
    // a drain reads on towards the commit within the grace period; the commit never comes
    h.source.then(() -> h.stop.request(StopSignal.Mode.DRAIN));
    h.source.message(PgOutput.insert(TABLE, 3, "c"), Lsn.of(0x2020));
    h.source.advance(Duration.ofMillis(1_001));

    assertThat(h.awaitExit()).isEqualTo(ApplyLoop.Exit.PAUSED);
    // the open transaction's inserts went out and were durable, but only the first commit counts
    assertThat(kinds(h.destination.events())).endsWith(Kind.INSERT, Kind.INSERT);
    assertThat(h.source.confirmed()).containsExactly(end);
    assertThat(h.storedProgress()).isEqualTo(end);
  }

  @Test
  void durableProgressIsStoredAtMostEveryPersistInterval() throws Exception {
    harness(ScriptedDestination.Policy.DURABLE);
    Lsn end1 = transaction(h.source, 0x1000, true, "a");
    h.start();
    await().untilAsserted(() -> assertThat(h.storedProgress()).isEqualTo(end1));

    Lsn end2 = transaction(h.source, 0x2000, false, "b");
    await().untilAsserted(() -> assertThat(h.source.confirmed()).contains(end2));
    assertThat(h.storedProgress()).isEqualTo(end1);

    h.ticker.advance(Duration.ofNanos(BatchDispatcher.PERSIST_INTERVAL_NANOS));
    await().untilAsserted(() -> assertThat(h.storedProgress()).isEqualTo(end2));
  }

  // ---- stops

  @Test
  void aDrainReadsTheOpenTransactionToItsCommitAndStopsThere() throws Exception {
    harness(ScriptedDestination.Policy.DURABLE);
    Lsn commit = Lsn.of(0x1100);
    h.source.message(PgOutput.begin(commit, 7), Lsn.of(0x1000));
    h.source.message(PgOutput.relation(TABLE, "items"), Lsn.of(0x1000));
    h.source.message(PgOutput.insert(TABLE, 1, "a"), Lsn.of(0x1010));
    h.source.then(() -> h.stop.request(StopSignal.Mode.DRAIN));
    h.source.message(PgOutput.insert(TABLE, 2, "b"), Lsn.of(0x1020));
    h.source.message(PgOutput.commit(commit, Lsn.of(0x1108)), commit);
    transaction(h.source, 0x2000, false, "never read");
    h.start();

    assertThat(h.awaitExit()).isEqualTo(ApplyLoop.Exit.PAUSED);
    assertThat(kinds(h.destination.events()))
        .containsExactly(Kind.BEGIN, Kind.RELATION, Kind.INSERT, Kind.INSERT, Kind.COMMIT);
    assertThat(h.storedProgress()).isEqualTo(Lsn.of(0x1108));
    assertThat(h.source.confirmed()).last().isEqualTo(Lsn.of(0x1108));
    assertThat(h.stop.incompleteReason()).isNull();
  }

  @Test
  void aDiscardDropsWhatIsBufferedAndNeverConfirmsPastTheDurablePoint() throws Exception {
    harness(ScriptedDestination.Policy.HOLD, b -> b.maxInFlightWrites(1));
    Lsn end1 = transaction(h.source, 0x1000, true, "a");
    h.start();
    ScriptedDestination.Write w1 = h.destination.next();
    // the window is full: the next transaction is read into the buffer and waits there
    transaction(h.source, 0x2000, false, "b");
    h.source.keepalive(Lsn.of(0x5000), false);
    h.source.then(() -> h.stop.request(StopSignal.Mode.DISCARD));
    await().until(h.source::drained);
    w1.result().durable();

    assertThat(h.awaitExit()).isEqualTo(ApplyLoop.Exit.PAUSED);
    assertThat(h.destination.writes()).hasSize(1);
    assertThat(h.storedProgress()).isEqualTo(end1);
    assertThat(h.source.confirmed()).containsExactly(end1);
    assertThat(h.source.statuses())
        .allSatisfy(s -> assertThat(s.flushed()).isLessThanOrEqualTo(end1));
  }

  @Test
  void aStopWaitsForAnUnansweredWriteOnlyUntilTheGracePeriodEnds() throws Exception {
    harness(ScriptedDestination.Policy.HOLD, b -> b.shutdownTimeout(Duration.ofSeconds(1)));
    transaction(h.source, 0x1000, true, "a");
    h.start();
    h.destination.next(); // never answered
    h.stop.request(StopSignal.Mode.DRAIN);
    assertThat(h.destination.nextWithin(Duration.ofMillis(100))).isNull();
    assertThat(h.ended()).as("the loop waits for the answer within the grace period").isFalse();

    h.ticker.advance(Duration.ofMillis(1_001));
    assertThat(h.awaitExit()).isEqualTo(ApplyLoop.Exit.PAUSED);
    assertThat(h.stop.incompleteReason()).contains("1 writes unanswered");
    assertThat(h.source.confirmed()).isEmpty();
    assertThat(h.storedProgress()).isNull();
  }

  @Test
  void aStopMakesAcceptedWorkDurableWithALastBarrierBeforeItEnds() throws Exception {
    harness(ScriptedDestination.Policy.ACCEPTED);
    Lsn end = transaction(h.source, 0x1000, true, "a");
    h.start();
    h.destination.next();
    h.stop.request(StopSignal.Mode.DRAIN);
    ScriptedDestination.Write barrier = h.destination.next();
    assertThat(barrier.events()).isEmpty();
    assertThat(barrier.durability()).isEqualTo(WriteDurability.REQUIRE_DURABLE);

    assertThat(h.awaitExit()).isEqualTo(ApplyLoop.Exit.PAUSED);
    assertThat(h.storedProgress()).isEqualTo(end);
    assertThat(h.stop.incompleteReason()).isNull();
  }
}
