package org.pgetl.testkit.destination;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Objects;
import java.util.UUID;
import java.util.concurrent.Future;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Consumer;
import java.util.function.Predicate;
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;
import org.pgetl.destination.AsyncResult;
import org.pgetl.destination.AsyncResult.Outcome;
import org.pgetl.destination.Destination;
import org.pgetl.destination.DestinationContext;
import org.pgetl.destination.StreamId;
import org.pgetl.destination.TableCopyWrite;
import org.pgetl.destination.WriteDurability;
import org.pgetl.error.ErrorKind;
import org.pgetl.error.EtlException;
import org.pgetl.model.Event;
import org.pgetl.model.ReplicatedTableSchema;

/**
 * A destination wrapper that injects faults at named points: wrap any destination (typically a
 * {@link RecordingDestination}), arm faults, and the wrapper misbehaves on the calls they match.
 *
 * <pre>{@code
 * FaultyDestination faulty = FaultyDestination.wrap(recording);
 * faulty.on(DestinationOperation.WRITE_EVENTS).times(2).fail(ErrorKind.DESTINATION_TIMEOUT);
 * faulty.on(DestinationOperation.WRITE_EVENTS)
 *     .matching(call -> call.hasInsertInto(orders))
 *     .answerShutdown();
 * HoldHandle held = faulty.holdNext(DestinationOperation.FINISH);
 * ...
 * assertThat(held.awaitReached(Duration.ofSeconds(10))).isTrue();
 * held.releaseDurable();
 * }</pre>
 *
 * <p>A fault fires on the next call of its operation ({@link FaultBuilder#times(int)} for the next
 * N, {@link FaultBuilder#always()} for every one), optionally only on calls matching a predicate
 * over the {@link DestinationCall}. When several faults match a call, the one armed first fires. A
 * call no fault matches goes to the wrapped destination unchanged. Thread-safe; predicates run
 * under the wrapper's lock and must be quick.
 */
public final class FaultyDestination implements Destination {
  private final Destination delegate;
  private final ReentrantLock lock = new ReentrantLock();
  private final List<Fault> faults = new ArrayList<>();
  private final AtomicLong sequence = new AtomicLong();

  /**
   * Wraps a destination.
   *
   * @param delegate the destination that does the work
   */
  public FaultyDestination(Destination delegate) {
    this.delegate = Objects.requireNonNull(delegate, "delegate");
  }

  /**
   * Wraps a destination.
   *
   * @param delegate the destination that does the work
   * @return the wrapper, with no fault armed
   */
  public static FaultyDestination wrap(Destination delegate) {
    return new FaultyDestination(delegate);
  }

  /**
   * Returns the wrapped destination.
   *
   * @return the delegate
   */
  public Destination delegate() {
    return delegate;
  }

  /**
   * Starts arming a fault on an operation; by default it fires on the next call only.
   *
   * @param operation the fault point
   * @return a builder; its action method arms the fault
   */
  public FaultBuilder on(DestinationOperation operation) {
    return new FaultBuilder(Objects.requireNonNull(operation, "operation"));
  }

  /**
   * Holds the next call of an operation; a shortcut for {@code on(operation).hold().held(0)}.
   *
   * @param operation the fault point
   * @return the handle of the call to come
   */
  public HoldHandle holdNext(DestinationOperation operation) {
    return on(operation).hold().held(0);
  }

  /**
   * Holds the next call of an operation that matches a predicate.
   *
   * @param operation the fault point
   * @param predicate which call to hold
   * @return the handle of the call to come
   */
  public HoldHandle holdNext(
      DestinationOperation operation, Predicate<? super DestinationCall> predicate) {
    return on(operation).matching(predicate).hold().held(0);
  }

  /**
   * Returns the faults that can still fire, in the order armed.
   *
   * @return a snapshot
   */
  public List<Fault> armedFaults() {
    lock.lock();
    try {
      List<Fault> out = new ArrayList<>();
      for (Fault f : faults) {
        if (f.isArmed()) {
          out.add(f);
        }
      }
      return List.copyOf(out);
    } finally {
      lock.unlock();
    }
  }

  /** Disarms every fault; calls already held stay held until released. */
  public void disarmAll() {
    lock.lock();
    try {
      for (Fault f : faults) {
        f.disarm();
      }
      faults.clear();
    } finally {
      lock.unlock();
    }
  }

  // ---------------------------------------------------------------- Destination

  /** Returns the wrapped destination's name. */
  @Override
  public String name() {
    return delegate.name();
  }

  @Override
  public void checkTables(List<ReplicatedTableSchema> tables) {
    delegate.checkTables(tables);
  }

  @Override
  public void startup(DestinationContext context) {
    DestinationCall call = call(DestinationOperation.STARTUP, null, null, null, null);
    fireWithoutResult(select(call), call, () -> delegate.startup(context));
  }

  @Override
  public void dropTableForCopy(ReplicatedTableSchema table, UUID attemptId, AsyncResult result) {
    DestinationCall call =
        call(DestinationOperation.DROP_TABLE_FOR_COPY, table, null, attemptId, result);
    fire(select(call), call, result, r -> delegate.dropTableForCopy(table, attemptId, r));
  }

  @Override
  public void writeTableRows(
      ReplicatedTableSchema table, TableCopyWrite write, AsyncResult result) {
    DestinationOperation op =
        write instanceof TableCopyWrite.Batch
            ? DestinationOperation.WRITE_TABLE_ROWS
            : DestinationOperation.FINISH;
    DestinationCall call = call(op, table, write, null, result);
    fire(select(call), call, result, r -> delegate.writeTableRows(table, write, r));
  }

  @Override
  public void writeEvents(
      StreamId stream, List<Event> events, WriteDurability durability, AsyncResult result) {
    DestinationCall call =
        new DestinationCall(
            sequence.getAndIncrement(),
            DestinationOperation.WRITE_EVENTS,
            Thread.currentThread().getName(),
            null,
            null,
            events,
            durability,
            stream,
            null,
            result);
    fire(select(call), call, result, r -> delegate.writeEvents(stream, events, durability, r));
  }

  @Override
  public void shutdown() {
    DestinationCall call = call(DestinationOperation.SHUTDOWN, null, null, null, null);
    fireWithoutResult(select(call), call, delegate::shutdown);
  }

  // ---------------------------------------------------------------- internals

  /** A call without events: every operation but {@code writeEvents}. */
  private DestinationCall call(
      DestinationOperation op,
      @Nullable ReplicatedTableSchema table,
      @Nullable TableCopyWrite write,
      @Nullable UUID attemptId,
      @Nullable AsyncResult result) {
    return new DestinationCall(
        sequence.getAndIncrement(),
        op,
        Thread.currentThread().getName(),
        table,
        write,
        List.of(),
        null,
        null,
        attemptId,
        result);
  }

  private @Nullable Fault select(DestinationCall call) {
    lock.lock();
    try {
      for (Iterator<Fault> it = faults.iterator(); it.hasNext(); ) {
        Fault f = it.next();
        if (f.take(call)) {
          if (!f.isArmed()) {
            it.remove();
          }
          return f;
        }
      }
      return null;
    } finally {
      lock.unlock();
    }
  }

  private void fire(
      @Nullable Fault f, DestinationCall call, AsyncResult result, Consumer<AsyncResult> invoke) {
    if (f == null) {
      invoke.accept(result);
      return;
    }
    switch (f.action()) {
      case REJECT -> {
        f.recordHit(call);
        throw f.error();
      }
      case THROW -> {
        f.recordHit(call);
        throw f.throwIt();
      }
      case FAIL -> {
        result.fail(f.error());
        f.recordHit(call);
      }
      case FAIL_AFTER_WRITE -> {
        AsyncResult inner = AsyncResult.create();
        invoke.accept(inner);
        inner.completion().thenRun(() -> result.fail(f.error()));
        f.recordHit(call);
      }
      case HOLD -> {
        HoldHandle handle;
        lock.lock();
        try {
          handle = f.nextHold();
        } finally {
          lock.unlock();
        }
        AsyncResult inner = AsyncResult.create();
        invoke.accept(inner);
        handle.reach(call, result, inner);
        f.recordHit(call);
      }
      case DELAY -> {
        AsyncResult inner = AsyncResult.create();
        invoke.accept(inner);
        long nanos = f.delay().toNanos();
        inner
            .completion()
            .thenAccept(
                o -> {
                  // send() does not throw: the scheduled future has nothing to report
                  Future<?> unused =
                      Delays.SCHEDULER.schedule(() -> result.send(o), nanos, TimeUnit.NANOSECONDS);
                });
        f.recordHit(call);
      }
      case ANSWER_SHUTDOWN -> {
        result.shutdown();
        f.recordHit(call);
      }
      case ANSWER_SHUTDOWN_AFTER_WRITE -> {
        AsyncResult inner = AsyncResult.create();
        invoke.accept(inner);
        inner.completion().thenRun(result::shutdown);
        f.recordHit(call);
      }
      case ANSWER_ACCEPTED -> {
        AsyncResult inner = AsyncResult.create();
        invoke.accept(inner);
        inner
            .completion()
            .thenAccept(
                o ->
                    result.send(
                        o.kind() == Outcome.Kind.DURABLE || o.kind() == Outcome.Kind.ACCEPTED
                            ? Outcome.ACCEPTED
                            : o));
        f.recordHit(call);
      }
      case NEVER_ANSWER -> {
        invoke.accept(AsyncResult.create());
        f.recordHit(call);
      }
    }
  }

  private void fireWithoutResult(@Nullable Fault f, DestinationCall call, Runnable invoke) {
    if (f == null) {
      invoke.run();
      return;
    }
    switch (f.action()) {
      case REJECT, FAIL -> {
        f.recordHit(call);
        throw f.error();
      }
      case THROW -> {
        f.recordHit(call);
        throw f.throwIt();
      }
      case FAIL_AFTER_WRITE -> {
        invoke.run();
        f.recordHit(call);
        throw f.error();
      }
      case HOLD -> {
        HoldHandle handle;
        lock.lock();
        try {
          handle = f.nextHold();
        } finally {
          lock.unlock();
        }
        handle.reach(call, null, null);
        f.recordHit(call);
        Outcome release = handle.awaitRelease();
        if (release == null
            || release.kind() == Outcome.Kind.DURABLE
            || release.kind() == Outcome.Kind.ACCEPTED) {
          invoke.run();
        } else if (release.kind() == Outcome.Kind.FAILED) {
          throw Objects.requireNonNull(release.error(), "a FAILED outcome carries its error");
        }
        // SHUTDOWN: return without delegating
      }
      case DELAY -> {
        f.recordHit(call);
        long deadline = System.nanoTime() + f.delay().toNanos();
        for (long left = f.delay().toNanos(); left > 0; left = deadline - System.nanoTime()) {
          LockSupport.parkNanos(this, left);
        }
        invoke.run();
      }
      default ->
          throw new IllegalStateException(f.action() + " cannot fire on " + call.operation());
    }
  }

  /** Arms one fault: choose when it fires, then call an action method. */
  public final class FaultBuilder {
    private final DestinationOperation operation;
    private int times = 1;
    private @Nullable Predicate<? super DestinationCall> predicate; // null: every call

    private FaultBuilder(DestinationOperation operation) {
      this.operation = operation;
    }

    /**
     * Fires on the next {@code n} matching calls (the default is 1).
     *
     * @param n how many calls, at least 1
     * @return this builder
     */
    public FaultBuilder times(int n) {
      if (n < 1) {
        throw new IllegalArgumentException("times must be >= 1, was " + n);
      }
      this.times = n;
      return this;
    }

    /**
     * Fires on every matching call until disarmed.
     *
     * @return this builder
     */
    public FaultBuilder always() {
      this.times = -1;
      return this;
    }

    /**
     * Fires only on calls matching a predicate, for example {@code call ->
     * call.hasInsertInto(orders)}.
     *
     * @param predicate the condition; runs under the wrapper's lock, must be quick
     * @return this builder
     */
    public FaultBuilder matching(Predicate<? super DestinationCall> predicate) {
      this.predicate = Objects.requireNonNull(predicate, "predicate");
      return this;
    }

    /**
     * Arms: throw {@code EtlException(kind)} from the method, without delegating.
     *
     * @param kind the error kind
     * @return the armed fault
     */
    public Fault reject(ErrorKind kind) {
      return arm(FaultAction.REJECT, injected(kind, FaultAction.REJECT), null);
    }

    /**
     * Arms: throw this exception from the method, without delegating.
     *
     * @param error the exception
     * @return the armed fault
     */
    public Fault reject(EtlException error) {
      Objects.requireNonNull(error, "error");
      return arm(FaultAction.REJECT, () -> error, null);
    }

    /**
     * Arms: throw what the supplier gives (a fresh one per hit) from the method, without delegating
     * — any {@code RuntimeException} or {@code Error}, such as {@code new StackOverflowError()}.
     *
     * @param thrown makes the exception or error to throw
     * @return the armed fault
     */
    public Fault throwing(Supplier<? extends Throwable> thrown) {
      Objects.requireNonNull(thrown, "thrown");
      return arm(FaultAction.THROW, null, thrown, null);
    }

    /**
     * Arms: answer {@code fail(EtlException(kind))} without delegating.
     *
     * @param kind the error kind
     * @return the armed fault
     */
    public Fault fail(ErrorKind kind) {
      return arm(FaultAction.FAIL, injected(kind, FaultAction.FAIL), null);
    }

    /**
     * Arms: answer {@code fail(error)} without delegating.
     *
     * @param error the failure
     * @return the armed fault
     */
    public Fault fail(EtlException error) {
      Objects.requireNonNull(error, "error");
      return arm(FaultAction.FAIL, () -> error, null);
    }

    /**
     * Arms: delegate, then answer {@code fail(EtlException(kind))} once the delegate answered.
     *
     * @param kind the error kind
     * @return the armed fault
     */
    public Fault failAfterWrite(ErrorKind kind) {
      return arm(FaultAction.FAIL_AFTER_WRITE, injected(kind, FaultAction.FAIL_AFTER_WRITE), null);
    }

    /**
     * Arms: delegate, then answer {@code fail(error)} once the delegate answered.
     *
     * @param error the failure
     * @return the armed fault
     */
    public Fault failAfterWrite(EtlException error) {
      Objects.requireNonNull(error, "error");
      return arm(FaultAction.FAIL_AFTER_WRITE, () -> error, null);
    }

    /**
     * Arms: delegate, then hold the answer until the test releases it; see {@link Fault#held(int)}.
     *
     * @return the armed fault
     */
    public Fault hold() {
      return arm(FaultAction.HOLD, null, null);
    }

    /**
     * Arms: delegate, and forward the delegate's answer {@code delay} after it came, from a
     * scheduler thread.
     *
     * @param delay the delay
     * @return the armed fault
     */
    public Fault delay(Duration delay) {
      if (delay.isNegative()) {
        throw new IllegalArgumentException("delay must be >= 0, was " + delay);
      }
      return arm(FaultAction.DELAY, null, delay);
    }

    /**
     * Arms: answer {@code shutdown()} without delegating.
     *
     * @return the armed fault
     */
    public Fault answerShutdown() {
      return arm(FaultAction.ANSWER_SHUTDOWN, null, null);
    }

    /**
     * Arms: delegate, then answer {@code shutdown()} once the delegate answered.
     *
     * @return the armed fault
     */
    public Fault answerShutdownAfterWrite() {
      return arm(FaultAction.ANSWER_SHUTDOWN_AFTER_WRITE, null, null);
    }

    /**
     * Arms: delegate, and answer {@code accepted()} where the delegate answered {@code durable()}.
     *
     * @return the armed fault
     */
    public Fault answerAccepted() {
      return arm(FaultAction.ANSWER_ACCEPTED, null, null);
    }

    /**
     * Arms: delegate, and never answer the caller's result.
     *
     * @return the armed fault
     */
    public Fault neverAnswer() {
      return arm(FaultAction.NEVER_ANSWER, null, null);
    }

    /** A fresh exception per hit, so that no two failures share suppressed exceptions. */
    private Supplier<EtlException> injected(ErrorKind kind, FaultAction action) {
      Objects.requireNonNull(kind, "kind");
      DestinationOperation op = operation;
      return () ->
          new EtlException(
              kind,
              "injected fault: " + action + " on " + op,
              "armed on a FaultyDestination by a test");
    }

    private Fault arm(
        FaultAction action, @Nullable Supplier<EtlException> error, @Nullable Duration delay) {
      return arm(action, error, null, delay);
    }

    private Fault arm(
        FaultAction action,
        @Nullable Supplier<EtlException> error,
        @Nullable Supplier<? extends Throwable> thrown,
        @Nullable Duration delay) {
      if (!operation.hasResult() && !action.appliesWithoutResult()) {
        throw new IllegalArgumentException(action + " needs a result; " + operation + " has none");
      }
      Fault f = new Fault(lock, operation, action, predicate, times, error, thrown, delay);
      lock.lock();
      try {
        faults.add(f);
      } finally {
        lock.unlock();
      }
      return f;
    }
  }

  /** The scheduler of delayed answers: one daemon thread for the whole JVM, made on first use. */
  private static final class Delays {
    static final ScheduledThreadPoolExecutor SCHEDULER = scheduler();

    private static ScheduledThreadPoolExecutor scheduler() {
      ScheduledThreadPoolExecutor s =
          new ScheduledThreadPoolExecutor(
              1,
              r -> {
                Thread t = new Thread(r, "pgetl-testkit-delayed-answers");
                t.setDaemon(true);
                return t;
              });
      s.setRemoveOnCancelPolicy(true);
      return s;
    }
  }

  @Override
  public String toString() {
    return "FaultyDestination[" + delegate + "]";
  }
}
