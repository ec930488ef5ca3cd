package org.pgetl.testkit.destination;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.pgetl.testkit.destination.Rows.row;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.pgetl.destination.AsyncResult;
import org.pgetl.destination.AsyncResult.Outcome;
import org.pgetl.destination.StreamId;
import org.pgetl.destination.TableCopyBatchId;
import org.pgetl.destination.TableCopyWrite;
import org.pgetl.destination.WriteDurability;
import org.pgetl.error.ErrorKind;
import org.pgetl.error.EtlException;
import org.pgetl.model.Event;
import org.pgetl.model.ReplicatedTableSchema;
import org.pgetl.model.TableRow;

@Timeout(value = 1, unit = TimeUnit.MINUTES)
class FaultyDestinationTest {
  static final ReplicatedTableSchema ITEMS = RecordingDestinationTest.ITEMS;
  static final ReplicatedTableSchema OTHER = RecordingDestinationTest.OTHER;
  static final Duration WAIT = Duration.ofSeconds(10);

  final RecordingDestination rec = RecordingDestination.create();
  final FaultyDestination faulty = FaultyDestination.wrap(rec);
  final InMemoryDestinationContext ctx = new InMemoryDestinationContext("test");
  final Transactions log = new Transactions();
  final ExecutorService threads = Executors.newCachedThreadPool();

  FaultyDestinationTest() {
    faulty.startup(ctx);
  }

  @AfterEach
  void stopThreads() {
    threads.shutdownNow();
  }

  AsyncResult write(List<Event> events) {
    AsyncResult r = AsyncResult.create();
    faulty.writeEvents(StreamId.APPLY, events, WriteDurability.MAY_DEFER, r);
    return r;
  }

  List<Event> insert(ReplicatedTableSchema t, long id) {
    return log.begin().relation(t).insert(t, id, "v" + id).commit();
  }

  AsyncResult batch(long seq) {
    AsyncResult r = AsyncResult.create();
    faulty.writeTableRows(
        ITEMS,
        new TableCopyWrite.Batch(
            new TableCopyBatchId(UUID.randomUUID(), seq), List.of(TableRow.of(seq, "b"))),
        r);
    return r;
  }

  @Test
  void withoutFaultsEveryCallReachesTheDelegateUnchanged() {
    AsyncResult r = write(insert(ITEMS, 1));

    assertThat(r.outcome()).contains(Outcome.DURABLE);
    assertThat(rec.rows(ITEMS.name())).containsExactly(row(1L, "v1"));
    assertThat(faulty.name()).isEqualTo(rec.name());
    assertThat(faulty.delegate()).isSameAs(rec);
    assertThat(rec.startupCount()).isEqualTo(1);
  }

  @Test
  void rejectThrowsWithoutDelegating() {
    Fault f = faulty.on(DestinationOperation.WRITE_EVENTS).reject(ErrorKind.DESTINATION_TIMEOUT);
    AsyncResult r = AsyncResult.create();

    assertThatThrownBy(
            () ->
                faulty.writeEvents(StreamId.APPLY, insert(ITEMS, 1), WriteDurability.MAY_DEFER, r))
        .isInstanceOf(EtlException.class)
        .satisfies(
            e -> assertThat(((EtlException) e).kind()).isEqualTo(ErrorKind.DESTINATION_TIMEOUT));
    assertThat(r.isAnswered()).isFalse();
    assertThat(rec.events()).isEmpty();
    assertThat(f.hits()).isEqualTo(1);
    assertThat(f.isArmed()).isFalse();
    assertThat(write(insert(ITEMS, 2)).outcome()).contains(Outcome.DURABLE);
  }

  @Test
  void rejectWithAGivenExceptionThrowsIt() {
    EtlException boom = new EtlException(ErrorKind.DESTINATION_QUERY_FAILED, "boom");
    faulty.on(DestinationOperation.DROP_TABLE_FOR_COPY).reject(boom);

    assertThatThrownBy(
            () -> faulty.dropTableForCopy(ITEMS, UUID.randomUUID(), AsyncResult.create()))
        .isSameAs(boom);
  }

  @Test
  void failAnswersFailWithoutDelegating() {
    faulty.on(DestinationOperation.WRITE_TABLE_ROWS).fail(ErrorKind.DESTINATION_CONNECTION_FAILED);

    AsyncResult r = batch(0);

    assertThat(r.outcome().orElseThrow().kind()).isEqualTo(Outcome.Kind.FAILED);
    assertThat(r.outcome().orElseThrow().error().kind())
        .isEqualTo(ErrorKind.DESTINATION_CONNECTION_FAILED);
    assertThat(rec.count(DestinationOperation.WRITE_TABLE_ROWS)).isZero();
  }

  @Test
  void failAfterWriteDelegatesThenFails() {
    faulty.on(DestinationOperation.WRITE_EVENTS).failAfterWrite(ErrorKind.DESTINATION_ERROR);

    AsyncResult r = write(insert(ITEMS, 1));

    assertThat(r.outcome().orElseThrow().kind()).isEqualTo(Outcome.Kind.FAILED);
    assertThat(rec.rows(ITEMS.name())).containsExactly(row(1L, "v1"));
  }

  @Test
  void holdKeepsTheAnswerUntilReleasedWithoutBlockingTheCaller() {
    HoldHandle held = faulty.holdNext(DestinationOperation.WRITE_EVENTS);
    assertThat(held.isReached()).isFalse();
    assertThatThrownBy(held::releaseDurable)
        .isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("not reached");

    AsyncResult r = write(insert(ITEMS, 1)); // returns: the caller is not blocked

    assertThat(held.awaitReached(WAIT)).isTrue();
    assertThat(held.result()).isSameAs(r);
    assertThat(held.call().events()).hasSize(4);
    assertThat(held.delegateResult().outcome()).contains(Outcome.DURABLE);
    assertThat(r.isAnswered()).isFalse();
    assertThat(rec.rows(ITEMS.name())).containsExactly(row(1L, "v1"));

    assertThat(held.releaseAccepted()).isTrue();
    assertThat(r.outcome()).contains(Outcome.ACCEPTED);
    assertThat(held.releaseDurable()).isFalse();
    assertThat(held.isReleased()).isTrue();
  }

  @Test
  void releaseForwardsTheDelegatesAnswer() {
    rec.setAnswering(RecordingDestination.Answering.ACCEPTED);
    HoldHandle held = faulty.holdNext(DestinationOperation.WRITE_EVENTS);
    AsyncResult r = write(insert(ITEMS, 1));
    assertThat(held.awaitReached(WAIT)).isTrue();

    held.release();

    assertThat(r.outcome()).contains(Outcome.ACCEPTED);
  }

  @Test
  void releaseWithShutdownOrFailureAnswersSo() {
    Fault f = faulty.on(DestinationOperation.FINISH).times(2).hold();
    AsyncResult first = AsyncResult.create();
    AsyncResult second = AsyncResult.create();
    faulty.writeTableRows(ITEMS, new TableCopyWrite.Finish(UUID.randomUUID(), 0, 0), first);
    faulty.writeTableRows(ITEMS, new TableCopyWrite.Finish(UUID.randomUUID(), 0, 0), second);

    f.held(0).releaseShutdown();
    f.held(1).releaseFailed(ErrorKind.DESTINATION_TIMEOUT);

    assertThat(first.outcome()).contains(Outcome.SHUTDOWN);
    assertThat(second.outcome().orElseThrow().error().kind())
        .isEqualTo(ErrorKind.DESTINATION_TIMEOUT);
    assertThat(f.hits()).isEqualTo(2);
  }

  @Test
  void holdOfStartupBlocksTheCallerUntilReleased() throws Exception {
    RecordingDestination fresh = RecordingDestination.create();
    FaultyDestination wrapper = FaultyDestination.wrap(fresh);
    HoldHandle held = wrapper.holdNext(DestinationOperation.STARTUP);

    Future<?> starting = threads.submit(() -> wrapper.startup(ctx));

    assertThat(held.awaitReached(WAIT)).isTrue();
    assertThat(starting.isDone()).isFalse();
    assertThat(fresh.startupCount()).isZero();
    assertThat(held.result()).isNull();
    held.release();
    starting.get(10, TimeUnit.SECONDS);
    assertThat(fresh.startupCount()).isEqualTo(1);
  }

  @Test
  void holdOfShutdownReleasedAsFailedThrowsFromShutdown() throws Exception {
    HoldHandle held = faulty.holdNext(DestinationOperation.SHUTDOWN);
    Future<?> stopping = threads.submit(faulty::shutdown);
    assertThat(held.awaitReached(WAIT)).isTrue();

    held.releaseFailed(ErrorKind.DESTINATION_ERROR);

    assertThatThrownBy(() -> stopping.get(10, TimeUnit.SECONDS))
        .hasCauseInstanceOf(EtlException.class);
    assertThat(rec.shutdownCount()).isZero();
  }

  @Test
  void delayAnswersLaterFromAnotherThread() throws Exception {
    faulty.on(DestinationOperation.WRITE_EVENTS).delay(Duration.ofMillis(200));
    CompletableFuture<String> answeredOn = new CompletableFuture<>();
    AsyncResult r = AsyncResult.create();
    r.completion().thenRun(() -> answeredOn.complete(Thread.currentThread().getName()));

    long t0 = System.nanoTime();
    faulty.writeEvents(StreamId.APPLY, insert(ITEMS, 1), WriteDurability.MAY_DEFER, r);
    long returned = System.nanoTime() - t0;

    assertThat(Duration.ofNanos(returned)).isLessThan(Duration.ofMillis(150));
    assertThat(answeredOn.get(10, TimeUnit.SECONDS)).isEqualTo("pgetl-testkit-delayed-answers");
    assertThat(Duration.ofNanos(System.nanoTime() - t0))
        .isGreaterThanOrEqualTo(Duration.ofMillis(200));
    assertThat(r.outcome()).contains(Outcome.DURABLE);
  }

  @Test
  void answerShutdownWithAndWithoutDelegating() {
    faulty.on(DestinationOperation.WRITE_EVENTS).answerShutdown();
    faulty.on(DestinationOperation.WRITE_EVENTS).answerShutdownAfterWrite();

    AsyncResult abandoned = write(insert(ITEMS, 1));
    assertThat(abandoned.outcome()).contains(Outcome.SHUTDOWN);
    assertThat(rec.rows(ITEMS.name())).isEmpty();

    AsyncResult writtenThenAbandoned = write(insert(ITEMS, 2));
    assertThat(writtenThenAbandoned.outcome()).contains(Outcome.SHUTDOWN);
    assertThat(rec.rows(ITEMS.name())).containsExactly(row(2L, "v2"));
  }

  @Test
  void answerAcceptedTurnsDurableIntoAcceptedAndForwardsFailures() {
    faulty.on(DestinationOperation.WRITE_EVENTS).times(2).answerAccepted();
    AsyncResult r = AsyncResult.create();
    faulty.writeEvents(StreamId.APPLY, insert(ITEMS, 1), WriteDurability.REQUIRE_DURABLE, r);
    assertThat(r.outcome()).contains(Outcome.ACCEPTED);

    FaultyDestination inner = FaultyDestination.wrap(rec);
    inner.on(DestinationOperation.WRITE_EVENTS).fail(ErrorKind.DESTINATION_ERROR);
    FaultyDestination outer = FaultyDestination.wrap(inner);
    outer.on(DestinationOperation.WRITE_EVENTS).answerAccepted();
    AsyncResult failed = AsyncResult.create();
    outer.writeEvents(StreamId.APPLY, insert(ITEMS, 2), WriteDurability.MAY_DEFER, failed);
    assertThat(failed.outcome().orElseThrow().kind()).isEqualTo(Outcome.Kind.FAILED);
  }

  @Test
  void neverAnswerDelegatesAndDropsTheResult() {
    Fault f = faulty.on(DestinationOperation.WRITE_EVENTS).neverAnswer();

    AsyncResult r = write(insert(ITEMS, 1));

    assertThat(rec.rows(ITEMS.name())).containsExactly(row(1L, "v1"));
    assertThat(rec.calls(DestinationOperation.WRITE_EVENTS).get(0).outcome())
        .contains(Outcome.DURABLE);
    assertThat(r.isAnswered()).isFalse();
    assertThat(f.calls()).extracting(DestinationCall::result).containsExactly(r);
  }

  @Test
  void aFaultFiresOnTheNextCallOnlyByDefault() {
    faulty.on(DestinationOperation.WRITE_EVENTS).fail(ErrorKind.DESTINATION_ERROR);

    assertThat(write(insert(ITEMS, 1)).outcome().orElseThrow().kind())
        .isEqualTo(Outcome.Kind.FAILED);
    assertThat(write(insert(ITEMS, 2)).outcome()).contains(Outcome.DURABLE);
    assertThat(faulty.armedFaults()).isEmpty();
  }

  @Test
  void aFaultFiresOnTheNextNCalls() {
    Fault f = faulty.on(DestinationOperation.WRITE_EVENTS).times(3).answerShutdown();
    List<Outcome> outcomes = new ArrayList<>();
    for (int i = 1; i <= 5; i++) {
      outcomes.add(write(insert(ITEMS, i)).outcome().orElseThrow());
    }

    assertThat(outcomes)
        .containsExactly(
            Outcome.SHUTDOWN, Outcome.SHUTDOWN, Outcome.SHUTDOWN, Outcome.DURABLE, Outcome.DURABLE);
    assertThat(f.hits()).isEqualTo(3);
    assertThat(f.awaitHits(3, Duration.ZERO)).isTrue();
    assertThat(f.awaitHits(4, Duration.ofMillis(10))).isFalse();
  }

  @Test
  void anAlwaysFaultFiresUntilDisarmed() {
    Fault f = faulty.on(DestinationOperation.WRITE_EVENTS).always().answerAccepted();
    assertThat(write(insert(ITEMS, 1)).outcome()).contains(Outcome.ACCEPTED);
    assertThat(write(insert(ITEMS, 2)).outcome()).contains(Outcome.ACCEPTED);
    assertThat(faulty.armedFaults()).containsExactly(f);

    f.disarm();

    assertThat(write(insert(ITEMS, 3)).outcome()).contains(Outcome.DURABLE);
    assertThat(f.isArmed()).isFalse();
  }

  @Test
  void aPredicateSelectsTheCallsAFaultFiresOn() {
    Fault f =
        faulty
            .on(DestinationOperation.WRITE_EVENTS)
            .matching(call -> call.hasInsertInto(OTHER.name()))
            .fail(ErrorKind.DESTINATION_ERROR);

    assertThat(write(insert(ITEMS, 1)).outcome()).contains(Outcome.DURABLE);
    assertThat(write(insert(OTHER, 1)).outcome().orElseThrow().kind())
        .isEqualTo(Outcome.Kind.FAILED);
    assertThat(write(insert(OTHER, 2)).outcome()).contains(Outcome.DURABLE);
    assertThat(f.calls())
        .singleElement()
        .satisfies(c -> assertThat(c.touches(OTHER.name())).isTrue());
  }

  @Test
  void theFaultArmedFirstWinsAndDisarmAllClearsEverything() {
    faulty.on(DestinationOperation.WRITE_EVENTS).always().answerShutdown();
    faulty.on(DestinationOperation.WRITE_EVENTS).always().fail(ErrorKind.DESTINATION_ERROR);

    assertThat(write(insert(ITEMS, 1)).outcome()).contains(Outcome.SHUTDOWN);

    faulty.disarmAll();

    assertThat(faulty.armedFaults()).isEmpty();
    assertThat(write(insert(ITEMS, 2)).outcome()).contains(Outcome.DURABLE);
  }

  @Test
  void faultsOnCopyBatchesAndTheBarrierAreSeparate() {
    faulty.on(DestinationOperation.FINISH).fail(ErrorKind.DESTINATION_ERROR);

    assertThat(batch(0).outcome()).contains(Outcome.DURABLE);
    AsyncResult fin = AsyncResult.create();
    faulty.writeTableRows(ITEMS, new TableCopyWrite.Finish(UUID.randomUUID(), 0, 0), fin);
    assertThat(fin.outcome().orElseThrow().kind()).isEqualTo(Outcome.Kind.FAILED);
  }

  @Test
  void actionsThatNeedAResultCannotBeArmedOnStartupOrShutdown() {
    assertThatThrownBy(() -> faulty.on(DestinationOperation.SHUTDOWN).answerShutdown())
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("needs a result");
    assertThatThrownBy(() -> faulty.on(DestinationOperation.STARTUP).neverAnswer())
        .isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> faulty.on(DestinationOperation.STARTUP).times(0))
        .isInstanceOf(IllegalArgumentException.class);
  }

  @Test
  void shutdownFailureAfterWriteDelegatesThenThrows() {
    faulty.on(DestinationOperation.SHUTDOWN).failAfterWrite(ErrorKind.DESTINATION_ERROR);

    assertThatThrownBy(faulty::shutdown).isInstanceOf(EtlException.class);
    assertThat(rec.shutdownCount()).isEqualTo(1);
  }

  @Test
  void aBoundedFaultFiresExactlyItsCountUnderConcurrentCalls() throws Exception {
    Fault f = faulty.on(DestinationOperation.WRITE_EVENTS).times(5).answerShutdown();
    AtomicInteger shutdowns = new AtomicInteger();
    List<List<Event>> writes = new ArrayList<>();
    for (int i = 0; i < 200; i++) {
      writes.add(log.begin().commit());
    }
    List<Future<?>> done = new ArrayList<>();
    for (int t = 0; t < 8; t++) {
      int from = t * 25;
      done.add(
          threads.submit(
              () -> {
                for (int i = from; i < from + 25; i++) {
                  if (write(writes.get(i)).outcome().orElseThrow() == Outcome.SHUTDOWN) {
                    shutdowns.incrementAndGet();
                  }
                }
              }));
    }
    for (Future<?> d : done) {
      d.get(30, TimeUnit.SECONDS);
    }

    assertThat(shutdowns.get()).isEqualTo(5);
    assertThat(f.hits()).isEqualTo(5);
    assertThat(rec.count(DestinationOperation.WRITE_EVENTS)).isEqualTo(195);
  }
}
