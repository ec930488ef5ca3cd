package org.pgetl.store;

import java.time.Instant;
import java.util.Objects;
import org.jspecify.annotations.Nullable;
import org.pgetl.error.ErrorKind;
import org.pgetl.error.RetryDirective;
import org.pgetl.model.Lsn;

/**
 * The replication state of one table of a pipeline.
 *
 * <pre>
 * Init → DataSync → FinishedCopy → SyncWait(lsn) → Catchup(lsn) → SyncDone(lsn) → Ready
 *   any state of a table-sync run → Errored(reason, hint, retry)
 * </pre>
 *
 * <p>{@code SyncWait} and {@code Catchup} live in memory only (the hand-off between a table-sync
 * worker and the apply worker); every other state is persisted with its history. {@code DataSync}
 * and {@code FinishedCopy} are not resume points: a restart copies the table again from scratch.
 * The apply worker applies a change of a table only when the table is {@code Ready}, or {@code
 * SyncDone(lsn)} with {@code lsn <=} the change's commit LSN.
 */
// The constants below are instances of nested records, and isSyncing() is a default method, so
// initializing a record would initialize TableState first: a deadlock only if one thread starts
// with a record's constructor while another starts with TableState. Main code makes these states
// only through the constants; making isSyncing() abstract would change the public interface. Its
// signatures carry @Nullable of org.jspecify, read at compile time only (requires static).
@SuppressWarnings({"ClassInitializationDeadlock", "exports"})
public sealed interface TableState
    permits TableState.Init,
        TableState.DataSync,
        TableState.FinishedCopy,
        TableState.SyncWait,
        TableState.Catchup,
        TableState.SyncDone,
        TableState.Ready,
        TableState.Errored {

  /** The type of a state, for switches and storage. */
  enum Type {
    /** {@link Init}. */
    INIT(true),
    /** {@link DataSync}. */
    DATA_SYNC(true),
    /** {@link FinishedCopy}. */
    FINISHED_COPY(true),
    /** {@link SyncWait}. */
    SYNC_WAIT(false),
    /** {@link Catchup}. */
    CATCHUP(false),
    /** {@link SyncDone}. */
    SYNC_DONE(true),
    /** {@link Ready}. */
    READY(true),
    /** {@link Errored}. */
    ERRORED(true);

    private final boolean persisted;

    Type(boolean persisted) {
      this.persisted = persisted;
    }

    /**
     * Returns true for the states a store keeps ({@code SyncWait} and {@code Catchup} are memory
     * only).
     *
     * @return whether the state is persisted
     */
    public boolean isPersisted() {
      return persisted;
    }
  }

  /** The state {@link Init}. */
  TableState INIT = new Init();

  /** The state {@link DataSync}. */
  TableState DATA_SYNC = new DataSync();

  /** The state {@link FinishedCopy}. */
  TableState FINISHED_COPY = new FinishedCopy();

  /** The state {@link Ready}. */
  TableState READY = new Ready();

  /**
   * Returns the type of this state.
   *
   * @return the type
   */
  Type type();

  /**
   * Returns true while the table still needs work by a table-sync worker (every state but {@code
   * Ready} and {@code Errored}).
   *
   * @return whether the table is syncing
   */
  default boolean isSyncing() {
    return type() != Type.READY && type() != Type.ERRORED;
  }

  /** The table needs a copy. */
  record Init() implements TableState {
    @Override
    public Type type() {
      return Type.INIT;
    }
  }

  /** The table is being copied; a restart copies it again from scratch. */
  record DataSync() implements TableState {
    @Override
    public Type type() {
      return Type.DATA_SYNC;
    }
  }

  /** The copy is complete and durable; a restart still copies the table again. */
  record FinishedCopy() implements TableState {
    @Override
    public Type type() {
      return Type.FINISHED_COPY;
    }
  }

  /**
   * Memory only: the copy was taken at the slot's consistent point {@code lsn}; the table-sync
   * worker waits for the apply worker.
   *
   * @param lsn the consistent point of the table-sync slot
   */
  record SyncWait(Lsn lsn) implements TableState {
    /** Validates the LSN. */
    public SyncWait {
      Objects.requireNonNull(lsn, "lsn");
    }

    @Override
    public Type type() {
      return Type.SYNC_WAIT;
    }
  }

  /**
   * Memory only: the apply worker waits while the table-sync worker streams its own slot up to
   * {@code lsn}.
   *
   * @param lsn the position the table must catch up to
   */
  record Catchup(Lsn lsn) implements TableState {
    /** Validates the LSN. */
    public Catchup {
      Objects.requireNonNull(lsn, "lsn");
    }

    @Override
    public Type type() {
      return Type.CATCHUP;
    }
  }

  /**
   * The table caught up to {@code lsn} durably: the apply worker owns its changes committed at or
   * after {@code lsn}.
   *
   * @param lsn the hand-off position
   */
  record SyncDone(Lsn lsn) implements TableState {
    /** Validates the LSN. */
    public SyncDone {
      Objects.requireNonNull(lsn, "lsn");
    }

    @Override
    public Type type() {
      return Type.SYNC_DONE;
    }
  }

  /** Steady state: the apply worker streams the table's changes. */
  record Ready() implements TableState {
    @Override
    public Type type() {
      return Type.READY;
    }
  }

  /**
   * The table's replication failed; it is skipped until retried per {@code retry}. Other tables go
   * on.
   *
   * <p>The retry is the failure's {@link RetryDirective}, made concrete for this table: {@code
   * TIMED} names when ({@code nextRetry}) and how many timed retries were already made ({@code
   * attempts}); {@code MANUAL} waits until an operator rolls the table state back ({@link
   * PipelineStore#rollbackTableState}) or resets it ({@link PipelineStore#resetTableState}); {@code
   * NONE} is final.
   *
   * @param kind the error kind of the failure
   * @param reason what failed
   * @param hint what an operator should do
   * @param retry when the table is tried again
   * @param nextRetry when a {@code TIMED} retry is due (also after a restart); null otherwise
   * @param attempts how many timed retries were already made for this failure, from 0
   */
  record Errored(
      ErrorKind kind,
      String reason,
      String hint,
      RetryDirective retry,
      @Nullable Instant nextRetry,
      int attempts)
      implements TableState {
    /** Validates the components. */
    public Errored {
      Objects.requireNonNull(kind, "kind");
      Objects.requireNonNull(reason, "reason");
      Objects.requireNonNull(hint, "hint");
      Objects.requireNonNull(retry, "retry");
      if ((retry == RetryDirective.TIMED) != (nextRetry != null)) {
        throw new IllegalArgumentException("exactly a TIMED retry names its time, was " + retry);
      }
      if (attempts < 0) {
        throw new IllegalArgumentException("attempts must be >= 0, was " + attempts);
      }
    }

    /**
     * Creates a state that waits for an operator ({@code MANUAL}) or is final ({@code NONE}).
     *
     * @param kind the error kind of the failure
     * @param reason what failed
     * @param hint what an operator should do
     * @param retry {@code MANUAL} or {@code NONE}
     */
    public Errored(ErrorKind kind, String reason, String hint, RetryDirective retry) {
      this(kind, reason, hint, retry, null, 0);
    }

    @Override
    public Type type() {
      return Type.ERRORED;
    }
  }
}
