/*
 * acknowledgements.pml: the streaming acknowledgement protocol of one replication stream
 * (ARCHITECTURE.md §4 destination contract, §5 shutdown, §6 progress and feedback).
 *
 * The engine (the stream's owner thread) reads batches from the stream and dispatches them with
 * writeEvents, at most WINDOW in flight. It keeps the writes not yet known durable the way
 * org.pgetl.core.internal.apply.WriteWindow does. The destination answers every dispatched write
 * exactly once, in any order and at any time, with accepted, durable, fail or shutdown. The
 * engine persists progress (a monotonic upsert) and reports a flush LSN to the server in standby
 * status updates. The server keeps the greatest flush LSN it was told as the slot's
 * confirmed_flush_lsn. A crash may happen in any state, and the stream then restarts from
 * max(persisted progress, confirmed flush). So the invariants are checked after every step: each
 * one must hold whatever state a crash hits.
 *
 * LSNs: batch i (1..BATCHES) ends at LSN 2*i. A batch either completes a transaction, so its
 * commit end LSN is 2*i, or it stops in the middle of one (a large transaction cut by the batch
 * limits) and carries no commit LSN. LSN 2*i+1 is WAL with no events for this stream. The engine
 * sees it only through keepalives.
 *
 * Mutants (compile with -D<name>; spin must report a violation for each one):
 *   MUTANT_DURABLE_COVERS_UNANSWERED  a durable answer also covers earlier writes that are still
 *                                     unanswered, not only the ones answered accepted
 *   MUTANT_IDLE_IGNORES_DISCARD       the idle rule for the flush LSN forgets the work abandoned
 *                                     by a shutdown() answer, so the final status update confirms
 *                                     that work
 *   MUTANT_IDLE_IGNORES_CARRIED       the idle rule counts only unanswered writes (inFlight() == 0
 *                                     instead of isClear()), so a write answered accepted but not
 *                                     yet durable looks idle
 */

#ifndef BATCHES
#define BATCHES 4            /* batches the stream carries */
#endif
#ifndef WINDOW
#define WINDOW 3             /* writes in flight at most (the WriteWindow capacity) */
#endif

#define END(i) (2 * (i))     /* the LSN where batch i ends */

/* A destination's answer (org.pgetl.destination.AsyncResult.Outcome), and the engine's view of a write
   (WriteWindow.Status: PENDING, ACCEPTED, DURABLE). */
mtype = { NONE, ACCEPTED, DURABLE, FAILED, SHUTDOWN, PENDING };
/* How the stream's loop ended. */
mtype = { RUNNING, PAUSED, COMPLETED, ERRORED };
/* The LSNs the no-loss invariant is checked at. */
mtype = { DURABLE_POINT, PERSISTED_PROGRESS, CONFIRMED_FLUSH, RESTART_POINT };

/* An invariant with a message: the trail of a counterexample ends with the message. */
#define CHECK(c, msg) if :: !(c) -> printf(msg); assert(c) :: else -> skip fi

/* ---- the destination: what it answered, and what it really holds durably ---- */
mtype answer[BATCHES + 1];        /* the answer to each write; NONE = not answered yet */
bool stored[BATCHES + 1];         /* the write is durable in the destination */

/* Answers travel from the destination's threads to the owner thread in the order they were
   given: WriteWindow.track's callback appends them to a queue, and poll() drains it. */
chan answers = [WINDOW] of { byte, mtype };

/* ---- the engine ---- */
bool commits[BATCHES + 1];        /* batch i completes a transaction (commit end LSN END(i)) */
byte readCount;                   /* batches read from the stream */
byte recv;                        /* the last received LSN */
byte queued;                      /* the built batch waiting for room in the window; 0 = none */
byte sent;                        /* batches dispatched, in order: 1..sent */
byte inFlight;                    /* dispatched writes whose answer the owner has not applied */
/* WriteWindow: the entries head..sent with their status, and the collapsed accepted prefix */
mtype view[BATCHES + 1];
byte head = 1;
bool accPrefix;
byte accPrefixLsn;
byte durablePoint;                /* the greatest commit LSN known durable (in memory) */
bool shutdownRequested;           /* Shutdown.request() by the host */
bool abandoned;                   /* a write was answered shutdown() */
bool discarded;                   /* received events were dropped without delivery */
byte dropped;                     /* the batch dropped behind the abandoned write; 0 = none */
mtype loop = RUNNING;

/* ---- persisted, or on the server ---- */
byte progress;                    /* replication_progress.flush_lsn (a monotonic upsert) */
byte confirmedFlush;              /* the slot's confirmed_flush_lsn */

/* scratch, always 0 between steps */
byte i, j, lsn;
mtype out, what;

#define COMMIT_LSN(k) (commits[k] -> END(k) : 0)
#define OPEN_TX (readCount > 0 && !commits[readCount])
#define WINDOW_CLEAR (head > sent && !accPrefix)          /* WriteWindow.isClear() */
#define RESTART_LSN (progress > confirmedFlush -> progress : confirmedFlush)

/* §6: the flush LSN is the durable point. When the engine is fully idle (nothing buffered, in
   flight or carried, no open transaction), it is the last received LSN instead. Discarded work
   never looks idle. */
#if defined(MUTANT_IDLE_IGNORES_DISCARD)
#define IDLE (queued == 0 && !OPEN_TX && WINDOW_CLEAR)
#elif defined(MUTANT_IDLE_IGNORES_CARRIED)
#define IDLE (queued == 0 && !OPEN_TX && inFlight == 0 && !discarded)
#else
#define IDLE (queued == 0 && !OPEN_TX && WINDOW_CLEAR && !discarded)
#endif
#define FEEDBACK (IDLE -> recv : durablePoint)

/* No loss at LSN `lsn`: every batch that ends at or below it is durable in the destination. A
   restart from `lsn` then skips nothing that the destination does not hold. */
inline noLossAt() {
  i = 1;
  do
  :: i <= BATCHES ->
     if
     :: END(i) <= lsn && !stored[i] ->
        printf("violated: no loss: batch %d ends at %d <= %e %d but is not durable\n",
          i, END(i), what, lsn);
        assert(false)
     :: else -> skip
     fi;
     i++
  :: else -> break
  od;
  i = 0;
  lsn = 0;
  what = NONE
}

/* The invariants, checked after every step (a crash may come in any state). */
inline checkInvariants() {
  lsn = durablePoint; what = DURABLE_POINT; noLossAt();
  lsn = progress; what = PERSISTED_PROGRESS; noLossAt();
  lsn = confirmedFlush; what = CONFIRMED_FLUSH; noLossAt();
  lsn = RESTART_LSN; what = RESTART_POINT; noLossAt();
  /* Durable never covers an unanswered earlier write: every entry the engine holds durable is
     durable in the destination. */
  i = head;
  do
  :: i <= sent ->
     CHECK(view[i] != DURABLE || stored[i],
           "violated: the engine holds a write durable that the destination does not\n");
     i++
  :: else -> break
  od;
  i = 0;
  /* After shutdown() on a write, the batch queued behind it is never dispatched, so it is never
     acknowledged, and the loop exits paused. */
  CHECK(dropped == 0 || (sent < dropped && answer[dropped] == NONE),
        "violated: the batch behind an abandoned write is never dispatched\n");
  CHECK(!abandoned || loop == PAUSED, "violated: an abandoned stream exits paused\n")
}

/* WriteWindow.poll: the durable point moves to `lsn` (0 = no commit), and only forward. */
inline advance() {
  CHECK(lsn == 0 || lsn >= durablePoint, "violated: the durable point never moves back\n");
  if
  :: lsn > durablePoint -> durablePoint = lsn
  :: else -> skip
  fi;
  lsn = 0
}

/* WriteWindow.collapseHead: remove the answered writes at the head of the window. A durable
   write advances the durable point, unless an accepted write lies before it. In that case it
   joins the accepted prefix, which becomes durable as a whole when a later write is answered
   durable. */
inline collapseHead() {
  do
  :: head <= sent && view[head] != PENDING ->
     if
     :: view[head] == DURABLE && !accPrefix -> lsn = COMMIT_LSN(head); advance()
     :: else ->
        accPrefix = true;
        if
        :: COMMIT_LSN(head) > accPrefixLsn -> accPrefixLsn = COMMIT_LSN(head)
        :: else -> skip
        fi
     fi;
     head++
  :: else -> break
  od
}

/* The final standby status update at exit (§5). */
inline finalStatusUpdate() {
  if
  :: FEEDBACK > confirmedFlush -> confirmedFlush = FEEDBACK
  :: else -> skip
  fi
}

/* A write was answered shutdown() (§4): the stream stops for good. The batch queued behind the
   write is dropped. The window is forgotten, because the loop never awaits its writes again.
   Then the final status update is sent and the loop exits paused. */
inline abandon() {
  abandoned = true;
  if
  :: queued != 0 -> dropped = queued; queued = 0
  :: else -> skip
  fi;
  discarded = true;
  head = sent + 1;
  accPrefix = false;
  accPrefixLsn = 0;
  finalStatusUpdate();
  loop = PAUSED;
  printf("write abandoned: batch %d dropped, final flush %d, exit paused\n",
    dropped, confirmedFlush)
}

init {
  d_step {  /* an mtype variable starts at 0, which names nothing: start every write at NONE */
    do
    :: i <= BATCHES -> answer[i] = NONE; view[i] = NONE; i++
    :: else -> break
    od;
    i = 0;
    out = NONE;
    what = NONE
  }
  do
  /* ======== the stream's owner thread ======== */

  /* Read the next batch. Intake pauses while a built batch waits for room in the window, and it
     stops at a shutdown request. The model chooses here whether the batch completes its
     transaction; the last batch of the run always does. */
  :: atomic {
       loop == RUNNING && !shutdownRequested && queued == 0 && readCount < BATCHES ->
       readCount++;
       if
       :: readCount == BATCHES -> commits[readCount] = true
       :: readCount < BATCHES -> commits[readCount] = true
       :: readCount < BATCHES -> commits[readCount] = false
       fi;
       recv = END(readCount);
       queued = readCount;
       printf("read batch %d (ends at %d, completes a transaction: %d)\n",
         readCount, recv, commits[readCount]);
       checkInvariants()
     }

  /* A keepalive reports WAL past the last event. This happens only between transactions. */
  :: atomic {
       loop == RUNNING && !shutdownRequested && queued == 0 && !OPEN_TX &&
         recv == END(readCount) ->
       recv++;
       printf("keepalive: received %d\n", recv);
       checkInvariants()
     }

  /* Dispatch the waiting batch when the window has room (WriteWindow.track, isFull). */
  :: atomic {
       loop == RUNNING && queued != 0 && inFlight < WINDOW ->
       sent = queued;
       view[sent] = PENDING;
       inFlight++;
       queued = 0;
       printf("dispatch batch %d\n", sent);
       checkInvariants()
     }

  /* Apply the next answer, in the order the answers were given (WriteWindow.poll). */
  :: atomic {
       loop == RUNNING && nempty(answers) ->
       answers ? j, out;
       printf("engine applies %e to batch %d\n", out, j);
       if
       :: view[j] == PENDING -> inFlight--
       :: else -> skip
       fi;
       if
       :: out == FAILED -> loop = ERRORED; printf("the stream fails\n")
       :: out == SHUTDOWN -> abandon()
       :: out == ACCEPTED -> view[j] = ACCEPTED
       :: out == DURABLE ->
          view[j] = DURABLE;
          /* the answer covers the earlier writes answered accepted, never an unanswered one */
          i = head;
          do
          :: i < j ->
             if
             :: view[i] == ACCEPTED -> view[i] = DURABLE
#ifdef MUTANT_DURABLE_COVERS_UNANSWERED
             :: view[i] == PENDING -> view[i] = DURABLE
#endif
             :: else -> skip
             fi;
             i++
          :: else -> break
          od;
          i = 0;
          /* the collapsed accepted prefix lies before every entry, so it is covered too */
          if
          :: accPrefix -> lsn = accPrefixLsn; advance(); accPrefix = false; accPrefixLsn = 0
          :: else -> skip
          fi
       fi;
       if
       :: loop == RUNNING -> collapseHead()
       :: else -> skip
       fi;
       j = 0;
       out = NONE;
       checkInvariants()
     }

  /* Persist progress: a monotonic upsert of the durable point (the store's progress upsert). */
  :: atomic {
       loop == RUNNING && progress < durablePoint ->
       progress = durablePoint;
       printf("persist progress %d\n", progress);
       checkInvariants()
     }

  /* A standby status update (a keepalive reply, the periodic one, or one after a durable
     advance). The server keeps the greatest flush LSN it was told. */
  :: atomic {
       loop == RUNNING && FEEDBACK > confirmedFlush ->
       confirmedFlush = FEEDBACK;
       printf("status update: flush %d\n", confirmedFlush);
       checkInvariants()
     }

  /* The host requests shutdown (§5). There is no new intake, and the loop drains below. */
  :: atomic {
       loop == RUNNING && !shutdownRequested ->
       shutdownRequested = true;
       printf("the host requests shutdown\n");
       checkInvariants()
     }

  /* Drained after the request: nothing is buffered and nothing is in flight. The final status
     update is sent and the loop exits paused. An accepted write is not awaited again; the next
     start replays it. */
  :: atomic {
       loop == RUNNING && shutdownRequested && queued == 0 && inFlight == 0 && empty(answers) ->
       finalStatusUpdate();
       loop = PAUSED;
       printf("drained: final flush %d, exit paused\n", confirmedFlush);
       checkInvariants()
     }

  /* The stream reached its end with everything durable (the Complete intent of a table-sync
     stream). The final status update is sent and the loop exits completed. */
  :: atomic {
       loop == RUNNING && !shutdownRequested && readCount == BATCHES && queued == 0 &&
         WINDOW_CLEAR ->
       finalStatusUpdate();
       loop = COMPLETED;
       printf("end of stream: final flush %d, exit completed\n", confirmedFlush);
       checkInvariants()
     }

  /* ======== the destination: any thread, any time, any order ======== */

  /* Answer a dispatched, unanswered write, once. durable() makes this write durable, and every
     earlier write answered accepted as well. It says nothing about an earlier write that is
     still unanswered. */
  :: atomic {
       select(j : 1 .. BATCHES);
       if
       :: j <= sent && answer[j] == NONE ->
          if
          :: answer[j] = ACCEPTED
          :: answer[j] = DURABLE;
             stored[j] = true;
             i = 1;
             do
             :: i < j ->
                if
                :: answer[i] == ACCEPTED -> stored[i] = true
                :: else -> skip
                fi;
                i++
             :: else -> break
             od;
             i = 0
          :: answer[j] = FAILED
          :: answer[j] = SHUTDOWN
          fi;
          printf("destination answers %e to batch %d\n", answer[j], j);
          answers ! j, answer[j];
          checkInvariants()
       :: else -> skip
       fi;
       j = 0
     }
  od
}
