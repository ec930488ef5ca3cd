/*
 * handoff.pml: the hand-off of one table T between its table-sync worker and the apply worker
 * (ARCHITECTURE.md §3; org.pgetl.store.TableState).
 *
 *   Init -> DataSync -> FinishedCopy -> SyncWait(S) -> Catchup(max(S, apply position))
 *        -> SyncDone(lsn) -> Ready
 *
 * The table-sync worker asks the destination to drop what an earlier attempt wrote, stores
 * DataSync, and creates its slot at the consistent point S. It copies the snapshot at S, stores
 * FinishedCopy, and sets SyncWait(S). When the apply worker meets SyncWait, it sets
 * Catchup(max(S, its position)) and waits. The table-sync worker then streams its own slot from S
 * until it reaches that LSN, and stores SyncDone(lsn) at its position. The apply worker applies a
 * change of T only if T is Ready, or SyncDone(lsn) with lsn <= the transaction's commit LSN. It
 * stores Ready once its durable progress reaches lsn, or when it is idle with received >= lsn.
 * A crash may hit any step. SyncWait and Catchup live in memory only, and a restart from
 * DataSync or FinishedCopy copies the table again from scratch. The apply worker restarts from
 * max(its persisted progress, the confirmed flush of its slot).
 *
 * WAL: transaction i (1..TXS) touches T. Its change record ends at COMMIT(i) = 3i-1, which is
 * where its commit record starts (the commit LSN of BEGIN), and the commit record ends at
 * END(i) = 3i. A keepalive may report any flushed position, including COMMIT(i) while
 * transaction i is still open. A slot started at LSN x sends the transactions with commit LSN
 * >= x. The snapshot at S holds the transactions with END <= S. A destination write is durable
 * when answered (the answer variety is in acknowledgements.pml).
 *
 * Mutants (compile with -D<name>; spin must report a violation for each one):
 *   MUTANT_CATCHUP_SNAPSHOT_ONLY  Catchup(S) instead of Catchup(max(S, apply position)): the apply
 *                                 worker has already passed changes that nobody applies
 *   MUTANT_READY_BEFORE_DURABLE   the apply worker stores Ready when it sees SyncDone, before its
 *                                 durable progress reaches lsn: after a crash it re-applies what
 *                                 the table-sync worker applied
 *   MUTANT_OWNERSHIP_STRICT       the ownership rule uses lsn < commit LSN instead of <=
 */

#ifndef TXS
#define TXS 5                /* transactions that touch T */
#endif
#ifndef CRASHES
#define CRASHES 3            /* crashes (and restarts) of the whole pipeline */
#endif

#define COMMIT(i) (3 * (i) - 1)
#define END(i) (3 * (i))
#define MAX(a, b) ((a) > (b) -> (a) : (b))

/* An invariant with a message: the trail of a counterexample ends with the message. */
#define CHECK(c, msg) if :: !(c) -> printf(msg); assert(c) :: else -> skip fi

mtype = { INIT, DATA_SYNC, FINISHED_COPY, SYNC_WAIT, CATCHUP, SYNC_DONE, READY };   /* TableState */
mtype = { TS_DROP, TS_DATA_SYNC, TS_SLOT, TS_COPY, TS_FINISH, TS_WAIT, TS_STREAM, TS_DONE };
mtype = { A_IDLE, A_WAIT_COMMIT, A_FLUSH, A_WAIT_IDLE };

mtype = { NOBODY, APPLY_WORKER, TABLE_SYNC_WORKER };

/* ---- the source ---- */
byte committed;            /* transactions committed */
bool txOpen;               /* transaction committed+1 wrote its change but has not committed */
byte walEnd;               /* flushed WAL */

/* ---- the state store (survives a crash) ---- */
mtype storedState = INIT;
byte storedLsn;
byte applyProgress;        /* the apply worker's replication_progress */
byte applyFlush;           /* the apply slot's confirmed_flush_lsn */

/* ---- memory (lost in a crash) ---- */
mtype tableState = INIT;   /* the table's current state; SyncWait and Catchup exist only here */
byte tableLsn;
bool tsRunning;            /* a table-sync worker runs for T */
mtype tsStep;
byte tsSnapshot;           /* S: the consistent point of the table-sync slot */
byte tsNext;               /* the next transaction on the table-sync slot */
byte tsDoneLsn;
mtype aStep = A_IDLE;
byte aNext = 1;            /* the next transaction on the apply slot */

/* ---- the destination's copy of T ---- */
bool inCopy[TXS + 1];      /* transaction i's change came with the copy */
mtype appliedBy[TXS + 1];  /* who applied transaction i's change */
byte appliedIn[TXS + 1];   /* in which run (crashes so far) */
byte crashes;

byte i, j, lsn;            /* scratch, always 0 between steps */

/* Store a persisted state (the current state follows). */
inline store(s, l) {
  storedState = s; storedLsn = l;
  tableState = s; tableLsn = l
}

/* The destination applies transaction `i`'s change of T for worker w. Each change is applied
   exactly once, by one worker, in commit order after the copy. A replay by the same worker is
   allowed only after a crash (at-least-once; the destination dedupes on commit LSN). */
inline deliver(w) {
  printf("  %e applies transaction %d\n", w, i);
  CHECK(!inCopy[i], "violated: a change already in the copy is applied again\n");
  if
  :: appliedBy[i] != NOBODY ->
     CHECK(appliedBy[i] == w, "violated: both workers applied the same transaction\n");
     CHECK(appliedIn[i] < crashes, "violated: a transaction applied twice without a crash\n")
  :: else ->
     j = 1;
     do
     :: j < i ->
        CHECK(inCopy[j] || appliedBy[j] != NOBODY,
              "violated: a change is applied before an earlier one (a gap)\n");
        j++
     :: else -> break
     od;
     j = 0
  fi;
  appliedBy[i] = w;
  appliedIn[i] = crashes
}

/* The ownership rule (apply worker). */
#ifdef MUTANT_OWNERSHIP_STRICT
#define APPLY_OWNS(k) (tableState == READY || (tableState == SYNC_DONE && tableLsn < COMMIT(k)))
#else
#define APPLY_OWNS(k) (tableState == READY || (tableState == SYNC_DONE && tableLsn <= COMMIT(k)))
#endif

#ifdef MUTANT_CATCHUP_SNAPSHOT_ONLY
#define CATCHUP_LSN(pos) (tableLsn)
#else
#define CATCHUP_LSN(pos) MAX(tableLsn, pos)
#endif

init {
  d_step {  /* an mtype variable starts at 0, which names nothing */
    do
    :: i <= TXS -> appliedBy[i] = NOBODY; i++
    :: else -> break
    od;
    i = 0
  }
  do
  /* ======== the source ======== */
  :: atomic {
       !txOpen && committed < TXS ->
       txOpen = true;
       walEnd = COMMIT(committed + 1);
       printf("transaction %d writes its change of T (WAL at %d)\n", committed + 1, walEnd)
     }
  :: atomic {
       txOpen ->
       committed++;
       txOpen = false;
       walEnd = END(committed);
       printf("transaction %d commits at %d, ends at %d\n", committed, COMMIT(committed), walEnd)
     }

  /* ======== the table-sync worker ======== */

  /* The apply worker spawns a table-sync worker for a table that needs a copy. */
  :: atomic {
       !tsRunning &&
         (tableState == INIT || tableState == DATA_SYNC || tableState == FINISHED_COPY) ->
       tsRunning = true;
       tsStep = TS_DROP;
       printf("spawn table sync (T is %e)\n", tableState)
     }
  /* A copy always restarts from scratch: drop what an earlier attempt wrote. */
  :: atomic {
       tsRunning && tsStep == TS_DROP ->
       i = 1;
       do
       :: i <= TXS -> inCopy[i] = false; appliedBy[i] = NOBODY; appliedIn[i] = 0; i++
       :: else -> break
       od;
       i = 0;
       tsStep = TS_DATA_SYNC;
       printf("table sync: the destination drops T\n")
     }
  :: atomic {
       tsRunning && tsStep == TS_DATA_SYNC ->
       store(DATA_SYNC, 0);
       tsStep = TS_SLOT;
       printf("table sync: DataSync\n")
     }
  /* CREATE_REPLICATION_SLOT ... USE_SNAPSHOT: the consistent point is where no transaction is
     open. */
  :: atomic {
       tsRunning && tsStep == TS_SLOT && !txOpen ->
       tsSnapshot = walEnd;
       tsNext = committed + 1;
       tsStep = TS_COPY;
       printf("table sync: slot created, snapshot S = %d\n", tsSnapshot)
     }
  :: atomic {
       tsRunning && tsStep == TS_COPY ->
       i = 1;
       do
       :: i <= TXS -> inCopy[i] = (END(i) <= tsSnapshot); i++
       :: else -> break
       od;
       i = 0;
       tsStep = TS_FINISH;
       printf("table sync: copied the snapshot at %d\n", tsSnapshot)
     }
  /* The terminal barrier answered durable: FinishedCopy, then SyncWait(S) in memory. */
  :: atomic {
       tsRunning && tsStep == TS_FINISH ->
       store(FINISHED_COPY, 0);
       tableState = SYNC_WAIT;
       tableLsn = tsSnapshot;
       tsStep = TS_WAIT;
       printf("table sync: FinishedCopy, SyncWait(%d)\n", tsSnapshot)
     }
  /* Wait until the apply worker sets Catchup. */
  :: atomic {
       tsRunning && tsStep == TS_WAIT && tableState == CATCHUP ->
       tsStep = TS_STREAM;
       printf("table sync: catch up to %d\n", tableLsn)
     }
  /* Stream the table-sync slot from S: apply the next transaction. After its COMMIT, stop once
     END >= the catch-up LSN. */
  :: atomic {
       tsRunning && tsStep == TS_STREAM && tsNext <= committed ->
       i = tsNext;
       deliver(TABLE_SYNC_WORKER);
       i = 0;
       if
       :: END(tsNext) >= tableLsn -> tsDoneLsn = END(tsNext); tsStep = TS_DONE
       :: else -> tsNext++
       fi
     }
  /* Idle on the table-sync slot (everything committed was streamed): a keepalive's position
     completes the catch-up. */
  :: atomic {
       tsRunning && tsStep == TS_STREAM && tsNext > committed && walEnd >= tableLsn ->
       tsDoneLsn = walEnd;
       tsStep = TS_DONE;
       printf("table sync: idle at %d\n", walEnd)
     }
  /* After the durable flush: store SyncDone(position); the worker exits and drops its slot. */
  :: atomic {
       tsRunning && tsStep == TS_DONE ->
       store(SYNC_DONE, tsDoneLsn);
       tsRunning = false;
       tsDoneLsn = 0;
       printf("table sync: SyncDone(%d)\n", tableLsn)
     }

  /* ======== the apply worker ======== */

  /* Process the next transaction: BEGIN decides ownership, and the hook after COMMIT meets
     SyncWait: Catchup(max(S, END)), then wait. */
  :: atomic {
       aStep == A_IDLE && aNext <= committed ->
       printf("apply worker: transaction %d (T is %e)\n", aNext, tableState);
       if
       :: APPLY_OWNS(aNext) -> i = aNext; deliver(APPLY_WORKER); i = 0
       :: else -> skip
       fi;
       if
       :: tableState == SYNC_WAIT ->
          tableState = CATCHUP;
          tableLsn = CATCHUP_LSN(END(aNext));
          aStep = A_WAIT_COMMIT;
          printf("apply worker: Catchup(%d), waits\n", tableLsn)
       :: else -> aStep = A_FLUSH
       fi
     }
  :: atomic {
       aStep == A_WAIT_COMMIT && tableState == SYNC_DONE ->
       aStep = A_FLUSH;
#ifdef MUTANT_READY_BEFORE_DURABLE
       store(READY, 0);
       printf("apply worker: Ready (early)\n");
#endif
       printf("apply worker: resumes after SyncDone\n")
     }
  /* The durable flush of the transaction's batch: progress, then SyncDone(lsn) -> Ready once
     progress >= lsn. */
  :: atomic {
       aStep == A_FLUSH ->
       applyProgress = MAX(applyProgress, END(aNext));
       printf("apply worker: progress %d\n", applyProgress);
       if
       :: tableState == SYNC_DONE && applyProgress >= tableLsn ->
          store(READY, 0);
          printf("apply worker: Ready\n")
       :: else -> skip
       fi;
       aNext++;
       aStep = A_IDLE
     }
  /* Idle (everything committed was processed): the last received LSN is the flushed WAL. */
  :: atomic {
       aStep == A_IDLE && aNext > committed && tableState == SYNC_WAIT ->
       tableState = CATCHUP;
       tableLsn = CATCHUP_LSN(walEnd);
       aStep = A_WAIT_IDLE;
       printf("apply worker (idle at %d): Catchup(%d), waits\n", walEnd, tableLsn)
     }
  :: atomic {
       aStep == A_WAIT_IDLE && tableState == SYNC_DONE ->
       aStep = A_IDLE
     }
  :: atomic {
       aStep == A_IDLE && aNext > committed && tableState == SYNC_DONE && walEnd >= tableLsn ->
       store(READY, 0);
       printf("apply worker (idle at %d): Ready\n", walEnd)
     }
  /* A status update while idle confirms the last received LSN (not stored as progress). */
  :: atomic {
       (aStep == A_IDLE || aStep == A_WAIT_IDLE) && aNext > committed && walEnd > applyFlush ->
       applyFlush = walEnd;
       printf("apply worker: status update, flush %d\n", applyFlush)
     }

  /* ======== a crash, at any step ======== */
  :: atomic {
       crashes < CRASHES ->
       crashes++;
       tableState = storedState;
       tableLsn = storedLsn;
       tsRunning = false;
       tsStep = TS_DROP;
       tsSnapshot = 0;
       tsNext = 0;
       tsDoneLsn = 0;
       /* the apply slot sends the transactions with commit LSN >= max(progress, flush) */
       lsn = MAX(applyProgress, applyFlush);
       aNext = 1;
       do
       :: aNext <= TXS && COMMIT(aNext) < lsn -> aNext++
       :: else -> break
       od;
       lsn = 0;
       aStep = A_IDLE;
       printf("CRASH: restart with T %e, apply slot from transaction %d\n", tableState, aNext)
     }

  /* Nothing more can happen: T is Ready, and every change of T reached the destination once,
     by the copy or by exactly one worker. */
  :: timeout ->
     CHECK(committed == TXS && tableState == READY, "violated: T never became Ready\n");
     i = 1;
     do
     :: i <= TXS ->
        CHECK(inCopy[i] || appliedBy[i] != NOBODY, "violated: a change of T was never applied\n");
        i++
     :: else -> break
     od;
     i = 0;
     break
  od
}
