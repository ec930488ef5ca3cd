package org.pgetl.core.internal.sync;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.quicktheories.generators.SourceDSL.integers;
import static org.quicktheories.generators.SourceDSL.lists;

import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.pgetl.error.ErrorKind;
import org.pgetl.error.EtlException;
import org.pgetl.error.RetryDirective;
import org.pgetl.model.Lsn;
import org.pgetl.model.TableId;
import org.pgetl.store.MemoryStore;
import org.pgetl.store.PipelineStore;
import org.pgetl.store.TableState;
import org.pgetl.testing.Theories;
import org.quicktheories.core.Gen;

/**
 * The table state machine against a model of its transitions: random sequences of every transition
 * (legal and not) on two tables, with store outages and restarts between them.
 */
class TableStateMachineTest {
  private static final TableId A = new TableId(16_401);
  private static final TableId B = new TableId(16_402);
  private static final List<TableId> TABLES = List.of(A, B);

  /** The transitions (and what happens around them) a step may take. */
  enum Op {
    ADD,
    REMOVE,
    START_COPY,
    COPY_FINISHED,
    AWAIT_CATCHUP,
    START_CATCHUP,
    SYNC_DONE,
    READY,
    ERROR,
    RETRY,
    RESET,
    REVERT,
    STORE_DOWN,
    STORE_UP,
    RESTART
  }

  /**
   * One step: {@code op} on a table, or, when {@code legal}, the {@code op.ordinal()}-th (modulo)
   * of the transitions the model allows from the table's state, so that random sequences reach the
   * deep states (a table in catch-up) as often as the shallow ones.
   */
  record Step(Op op, int table, long lsn, boolean legal) {
    Step(Op op, int table, long lsn) {
      this(op, table, lsn, false);
    }

    TableId tableId() {
      return TABLES.get(table);
    }

    @Override
    public String toString() {
      return (legal ? "legal#" + op.ordinal() : op.toString())
          + "("
          + tableId().oid()
          + (lsn > 0 ? ", " + lsn : "")
          + ")";
    }
  }

  private static Gen<Step> step() {
    Op[] ops = Op.values();
    return integers()
        .between(0, ops.length - 1)
        .zip(
            integers().between(0, 1),
            integers().between(1, 5),
            (o, t, l) -> new Step(ops[o], t, l));
  }

  /** What the model says a table's history is: newest first, with a memory-only head or not. */
  private static final class ModelTable {
    final List<TableState> history = new ArrayList<>(); // stored, newest first
    TableState memory; // the live state when it is memory-only, else null

    TableState current() {
      return memory != null ? memory : history.get(0);
    }
  }

  @Test
  void everyTransitionIsCheckedAndTheStoreNeverFallsBehindOrAheadOfTheMachine() {
    Theories.checkSequence(
        Theories.qt(3000, Duration.ofSeconds(15)),
        lists().of(step()).ofSizeBetween(1, 60),
        integers().between(0, 0),
        (steps, ignored) -> run(steps));
  }

  private static void run(List<Step> steps) {
    AtomicBoolean down = new AtomicBoolean();
    PipelineStore store = faulty(new MemoryStore("p"), down);
    List<String> heard = new ArrayList<>();
    TableStateMachine machine = newMachine(store, heard);
    Map<TableId, ModelTable> model = new HashMap<>();
    List<String> expectedHeard = new ArrayList<>();

    for (Step drawn : steps) {
      TableId t = drawn.tableId();
      ModelTable m = model.get(t);
      Step step = resolve(drawn, m);
      TableState before = m == null ? null : m.current();
      switch (step.op()) {
        case STORE_DOWN -> down.set(true);
        case STORE_UP -> down.set(false);
        case RESTART -> {
          if (!down.get()) {
            machine = newMachine(store, heard);
            // memory-only states do not survive a restart
            model.values().forEach(mt -> mt.memory = null);
          }
        }
        default -> {
          TableState expected = expectedAfter(step, m);
          boolean legal = expected != null || (step.op() == Op.REMOVE && m != null);
          boolean touchesStore = touchesStore(step.op(), legal);
          Throwable thrown = catching(machine, step);
          if (!legal) {
            if (step.op() == Op.REVERT) {
              assertThat(thrown).as("%s", step).isNull();
            } else if (step.op() == Op.REMOVE) {
              // removing a table that is not there is a no-op delete
              if (down.get()) {
                assertThat(thrown).isNotNull();
              } else {
                assertThat(thrown).as("%s", step).isNull();
              }
            } else {
              assertThat(thrown)
                  .as("%s from %s", step, before)
                  .isInstanceOf(EtlException.class)
                  .extracting(e -> ((EtlException) e).kind())
                  .isEqualTo(ErrorKind.INVALID_STATE);
            }
          } else if (touchesStore && down.get()) {
            assertThat(thrown).as("%s with the store down", step).isInstanceOf(EtlException.class);
            assertThat(((EtlException) thrown).kind())
                .isEqualTo(ErrorKind.SOURCE_CONNECTION_FAILED);
          } else {
            assertThat(thrown).as("%s from %s", step, before).isNull();
            apply(step, model, expected);
            TableState after = model.containsKey(t) ? model.get(t).current() : null;
            if (after == null ? before != null : !after.equals(before)) {
              expectedHeard.add(t.oid() + ":" + before + "->" + after);
            }
          }
        }
      }
      check(machine, store, model, down.get(), step);
    }
    assertThat(heard).isEqualTo(expectedHeard);
  }

  private static final List<Op> TRANSITIONS =
      List.of(Op.values()).subList(Op.ADD.ordinal(), Op.REVERT.ordinal() + 1);

  private static Step resolve(Step drawn, ModelTable m) {
    if (!drawn.legal()) {
      return drawn;
    }
    List<Op> allowed = new ArrayList<>();
    for (Op op : TRANSITIONS) {
      Step candidate = new Step(op, drawn.table(), drawn.lsn());
      if (expectedAfter(candidate, m) != null || (op == Op.REMOVE && m != null)) {
        allowed.add(op);
      }
    }
    return new Step(allowed.get(drawn.op().ordinal() % allowed.size()), drawn.table(), drawn.lsn());
  }

  private static TableStateMachine newMachine(PipelineStore store, List<String> heard) {
    TableStateMachine machine = new TableStateMachine(store);
    machine.onChange((t, from, to) -> heard.add(t.oid() + ":" + from + "->" + to));
    return machine;
  }

  /** The state the model says the step leads to, or null when the step is illegal. */
  private static TableState expectedAfter(Step step, ModelTable m) {
    TableState s = m == null ? null : m.current();
    TableState.Type type = s == null ? null : s.type();
    Lsn lsn = Lsn.of(step.lsn() * 1000);
    return switch (step.op()) {
      case ADD -> s == null ? TableState.INIT : null;
      case REMOVE -> null;
      case START_COPY ->
          type == TableState.Type.INIT
                  || type == TableState.Type.DATA_SYNC
                  || type == TableState.Type.FINISHED_COPY
              ? TableState.DATA_SYNC
              : null;
      case COPY_FINISHED ->
          type == TableState.Type.DATA_SYNC ? new TableState.FinishedCopy() : null;
      case AWAIT_CATCHUP ->
          type == TableState.Type.FINISHED_COPY ? new TableState.SyncWait(lsn) : null;
      case START_CATCHUP -> type == TableState.Type.SYNC_WAIT ? new TableState.Catchup(lsn) : null;
      case SYNC_DONE -> type == TableState.Type.CATCHUP ? new TableState.SyncDone(lsn) : null;
      case READY -> type == TableState.Type.SYNC_DONE ? TableState.READY : null;
      case ERROR ->
          s != null && type != TableState.Type.READY && type != TableState.Type.ERRORED
              ? errored()
              : null;
      case RETRY -> type == TableState.Type.ERRORED ? m.history.get(1) : null;
      case RESET -> s != null ? TableState.INIT : null;
      case REVERT -> s != null ? m.history.get(0) : null;
      default -> throw new AssertionError(step);
    };
  }

  private static boolean touchesStore(Op op, boolean legal) {
    return switch (op) {
      case AWAIT_CATCHUP, START_CATCHUP, REVERT -> false;
      case REMOVE -> true;
      default -> legal;
    };
  }

  private static TableState.Errored errored() {
    return new TableState.Errored(
        ErrorKind.DESTINATION_QUERY_FAILED, "boom", "look", RetryDirective.MANUAL);
  }

  private static Throwable catching(TableStateMachine machine, Step step) {
    TableId t = step.tableId();
    Lsn lsn = Lsn.of(step.lsn() * 1000);
    try {
      switch (step.op()) {
        case ADD -> machine.add(t);
        case REMOVE -> machine.remove(t);
        case START_COPY -> machine.startCopy(t);
        case COPY_FINISHED -> machine.copyFinished(t);
        case AWAIT_CATCHUP -> machine.awaitCatchup(t, lsn);
        case START_CATCHUP -> machine.startCatchup(t, lsn);
        case SYNC_DONE -> machine.syncDone(t, lsn);
        case READY -> machine.ready(t);
        case ERROR -> machine.error(t, errored());
        case RETRY -> machine.retry(t);
        case RESET -> machine.reset(t);
        case REVERT -> machine.revert(t);
        default -> throw new AssertionError(step);
      }
      return null;
    } catch (RuntimeException e) {
      return e;
    }
  }

  private static void apply(Step step, Map<TableId, ModelTable> model, TableState expected) {
    TableId t = step.tableId();
    switch (step.op()) {
      case REMOVE -> model.remove(t);
      case ADD -> {
        ModelTable m = new ModelTable();
        m.history.add(0, expected);
        model.put(t, m);
      }
      case AWAIT_CATCHUP, START_CATCHUP -> model.get(t).memory = expected;
      case REVERT -> model.get(t).memory = null;
      case RETRY -> {
        ModelTable m = model.get(t);
        m.memory = null;
        m.history.remove(0);
      }
      case RESET -> {
        ModelTable m = model.get(t);
        m.memory = null;
        m.history.clear();
        m.history.add(TableState.INIT);
      }
      default -> {
        ModelTable m = model.get(t);
        m.memory = null;
        m.history.add(0, expected);
      }
    }
  }

  private static void check(
      TableStateMachine machine,
      PipelineStore store,
      Map<TableId, ModelTable> model,
      boolean storeDown,
      Step step) {
    boolean anySyncing = false;
    for (TableId t : TABLES) {
      ModelTable m = model.get(t);
      TableState live = machine.get(t);
      assertThat(live)
          .as("state of %s after %s", t, step)
          .isEqualTo(m == null ? null : m.current());
      if (live != null && live.isSyncing()) {
        anySyncing = true;
      }
      if (!storeDown) {
        List<TableState> history = store.tableStateHistory(t);
        assertThat(history)
            .as("stored history of %s after %s", t, step)
            .isEqualTo(m == null ? List.of() : m.history);
        assertThat(history).allMatch(s -> s.type().isPersisted());
        if (live != null && live.type().isPersisted()) {
          assertThat(store.tableState(t)).as("stored state of %s", t).contains(live);
        }
      }
    }
    assertThat(machine.anySyncing()).as("anySyncing after %s", step).isEqualTo(anySyncing);
    assertThat(machine.snapshot().keySet()).isEqualTo(model.keySet());
  }

  /** A store whose every call fails as an outage while {@code down} is set. */
  private static PipelineStore faulty(PipelineStore real, AtomicBoolean down) {
    return (PipelineStore)
        Proxy.newProxyInstance(
            PipelineStore.class.getClassLoader(),
            new Class<?>[] {PipelineStore.class},
            (proxy, method, args) -> {
              if (down.get() && method.getDeclaringClass() != Object.class) {
                throw new EtlException(ErrorKind.SOURCE_CONNECTION_FAILED, "store down", "test");
              }
              try {
                return method.invoke(real, args);
              } catch (InvocationTargetException e) {
                throw e.getCause();
              }
            });
  }

  // ------------------------------------------------------------------ racing transitions

  @Test
  void racingTransitionsOfOneTableLeaveTheStoreAndTheMachineAgreeing() throws Exception {
    for (int round = 0; round < 200; round++) {
      PipelineStore store = new MemoryStore("p");
      TableStateMachine machine = new TableStateMachine(store);
      machine.add(A);
      machine.startCopy(A);
      CountDownLatch go = new CountDownLatch(1);
      AtomicReference<Throwable> copyResult = new AtomicReference<>();
      AtomicReference<Throwable> errorResult = new AtomicReference<>();
      Thread copier =
          new Thread(
              () -> {
                await(go);
                copyResult.set(catching(machine, new Step(Op.COPY_FINISHED, 0, 0)));
              });
      Thread failer =
          new Thread(
              () -> {
                await(go);
                errorResult.set(catching(machine, new Step(Op.ERROR, 0, 0)));
              });
      copier.start();
      failer.start();
      go.countDown();
      copier.join(10_000);
      failer.join(10_000);
      // both orders are legal (DataSync -> FinishedCopy -> Errored, DataSync -> Errored, then
      // copyFinished refused), and whichever happened the store holds what the machine shows
      assertThat(errorResult.get()).isNull();
      assertThat(machine.get(A).type()).isEqualTo(TableState.Type.ERRORED);
      assertThat(store.tableState(A)).contains(machine.get(A));
      List<TableState.Type> history =
          store.tableStateHistory(A).stream().map(TableState::type).toList();
      if (copyResult.get() == null) {
        assertThat(history)
            .containsExactly(
                TableState.Type.ERRORED,
                TableState.Type.FINISHED_COPY,
                TableState.Type.DATA_SYNC,
                TableState.Type.INIT);
      } else {
        assertThat(((EtlException) copyResult.get()).kind()).isEqualTo(ErrorKind.INVALID_STATE);
        assertThat(history)
            .containsExactly(
                TableState.Type.ERRORED, TableState.Type.DATA_SYNC, TableState.Type.INIT);
      }
    }
  }

  @Test
  void aRevertWhileTheStoreIsAwayGoesBackToTheLastStoredState() {
    AtomicBoolean down = new AtomicBoolean();
    PipelineStore store = faulty(new MemoryStore("p"), down);
    TableStateMachine machine = new TableStateMachine(store);
    machine.add(A);
    machine.startCopy(A);
    machine.copyFinished(A);
    machine.awaitCatchup(A, Lsn.of(100));
    down.set(true);
    assertThatThrownBy(() -> machine.error(A, errored())).isInstanceOf(EtlException.class);
    assertThat(machine.revert(A)).isEqualTo(new TableState.FinishedCopy());
    assertThat(machine.get(A)).isEqualTo(new TableState.FinishedCopy());
    assertThat(machine.revert(B)).isNull();
    assertThat(machine.snapshot().keySet()).isEqualTo(Set.of(A));
  }

  private static void await(CountDownLatch latch) {
    try {
      latch.await();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
