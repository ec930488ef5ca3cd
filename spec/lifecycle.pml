/*
 * lifecycle.pml: the per-destination operator lifecycle (active, paused, draining, retired)
 * around an in-flight write (ARCHITECTURE.md §8, with §6 for the flush LSN it reports).
 *
 * The source commits events. The engine reads them from the stream into a buffer and dispatches
 * the buffer as one write when none is in flight. The destination answers the write durable at
 * some later time. An operator changes the lifecycle row at any time, and the pipeline applies
 * each change:
 *   paused    no reading, no delivery. The buffer is discarded and the read position is rewound
 *             to the durable point (the stream must be re-read from there). A write already in
 *             flight may still complete. The slot and the state are kept.
 *   draining  no new intake. The buffer is flushed and awaited, then the pipeline idles.
 *   retired   like paused; then, once no write is in flight, the slot is dropped and the
 *             pipeline's state is deleted. Terminal: code refuses retired -> active.
 *   active    reading and delivery. Coming back from a pause, the stream is re-read from
 *             max(persisted progress, confirmed flush), once no write from before the pause is
 *             still in flight.
 * This is the race the reference project's TLA+ model found: a write is in flight, a pause
 * rewinds, and the write then completes durable. The completion must still advance progress
 * (a monotonic max), or the resume re-delivers a range the destination already holds durably.
 *
 * Events: event e (1..EVENTS) is its own transaction, with commit end LSN e. The destination
 * receives writes in order and holds a durable prefix 1..stored. This model has no crash (the
 * crash and restart are covered in acknowledgements.pml), so at-least-once gives no excuse for a
 * duplicate here.
 *
 * Mutants (compile with -D<name>; spin must report a violation for each one):
 *   MUTANT_LATE_DURABLE_IGNORED  a durable completion of a write dispatched before a pause no
 *                                longer advances the durable point and progress
 *   MUTANT_PAUSE_LOOKS_IDLE      the idle rule for the flush LSN forgets the work discarded by a
 *                                pause
 *   MUTANT_RESUME_WITHOUT_WAIT   resume re-reads at once, while the write from before the pause is
 *                                still in flight, so the re-read starts below the point that write
 *                                makes durable
 */

#ifndef EVENTS
#define EVENTS 4             /* events the source commits */
#endif
#ifndef CHANGES
#define CHANGES 6            /* lifecycle changes the operator makes */
#endif

mtype = { ACTIVE, PAUSED, DRAINING, RETIRED };

/* An invariant with a message: the trail of a counterexample ends with the message. */
#define CHECK(c, msg) if :: !(c) -> printf(msg); assert(c) :: else -> skip fi

mtype st = ACTIVE;        /* the lifecycle state the pipeline follows */
byte changes;             /* lifecycle changes made so far */
byte srcHead;             /* events committed at the source */

/* ---- the engine (the apply loop) ---- */
byte pos;                 /* the last event received; the stream sends pos+1 next */
byte bufFrom;             /* the buffer holds events bufFrom+1..pos */
byte flFrom, flTo;        /* the write in flight carries events flFrom+1..flTo; flTo == 0: none */
bool flPaused;            /* the write in flight was dispatched before a pause (for the mutant) */
byte durablePoint;        /* the greatest event known durable (in memory) */
bool rewound;             /* events were discarded: re-read the stream from the durable point */
bool retiredClean;        /* retired: the slot is dropped and the pipeline's state deleted */

/* ---- persisted, or on the server ---- */
byte progress;            /* replication_progress.flush_lsn */
byte confirmedFlush;      /* the slot's confirmed_flush_lsn */

/* ---- the destination ---- */
byte stored;              /* events 1..stored are durable in the destination */

/* §6: the flush LSN is the durable point; when fully idle, the last received LSN. Discarded work
   never looks idle: until the stream is re-read, the flush LSN stays at the durable point. */
#ifdef MUTANT_PAUSE_LOOKS_IDLE
#define IDLE (bufFrom == pos && flTo == 0)
#else
#define IDLE (bufFrom == pos && flTo == 0 && !rewound)
#endif
#define FEEDBACK (IDLE -> pos : durablePoint)
#define RESTART_LSN (progress > confirmedFlush -> progress : confirmedFlush)

inline checkInvariants() {
  /* Discarded events are never confirmed to the server: the confirmed flush LSN never passes
     what the destination holds durably. */
  CHECK(confirmedFlush <= stored, "violated: the confirmed flush covers events not delivered\n");
  CHECK(progress <= stored, "violated: progress covers events not delivered\n");
  CHECK(durablePoint <= stored, "violated: the durable point covers events not delivered\n")
}

/* Discard the buffer and rewind the read position to the durable point (paused, retired).
   A write in flight is left to finish. */
inline discard() {
  printf("  discard %d buffered events (received %d, durable %d, in flight up to %d)\n",
    pos - bufFrom, pos, durablePoint, flTo);
  bufFrom = pos;
  if
  :: pos > durablePoint -> rewound = true
  :: else -> skip
  fi;
  flPaused = (flTo != 0)
}

init {
  do
  /* ======== the source ======== */
  :: atomic {
       srcHead < EVENTS ->
       srcHead++;
       printf("source commits event %d\n", srcHead)
     }

  /* ======== the operator (any time; code never writes retired, an operator does) ======== */
  :: atomic {
       changes < CHANGES && st != RETIRED ->
       changes++;
       if
       :: st != ACTIVE -> st = ACTIVE          /* never from retired: see the guard */
       :: st != PAUSED -> st = PAUSED
       :: st != DRAINING -> st = DRAINING
       :: st = RETIRED
       fi;
       printf("operator sets %e\n", st);
       if
       :: st == PAUSED || st == RETIRED -> discard()
       :: else -> skip
       fi;
       checkInvariants()
     }

  /* ======== the engine ======== */

  /* Read the next event (active only, and only once a rewound stream was re-read). */
  :: atomic {
       st == ACTIVE && !rewound && pos < srcHead ->
       pos++;
       printf("read event %d\n", pos);
       checkInvariants()
     }

  /* Dispatch the buffer as one write when none is in flight (active, or draining: flush out).
     No event at or below the destination's durable point is delivered again. */
  :: atomic {
       (st == ACTIVE || st == DRAINING) && flTo == 0 && pos > bufFrom ->
       CHECK(bufFrom >= stored, "violated: an event already durable is delivered again\n");
       flFrom = bufFrom;
       flTo = pos;
       bufFrom = pos;
       printf("dispatch events %d..%d\n", flFrom + 1, flTo);
       checkInvariants()
     }

  /* The destination answers the write durable, whatever the lifecycle state is by then, and the
     engine applies the answer: the durable point and progress advance (a monotonic max), even
     after a pause. */
  :: atomic {
       flTo != 0 ->
       CHECK(flFrom <= stored, "violated: the destination received a gap\n");
       if
       :: flTo > stored -> stored = flTo
       :: else -> skip
       fi;
       printf("destination answers durable to events %d..%d\n", flFrom + 1, flTo);
#ifdef MUTANT_LATE_DURABLE_IGNORED
       if
       :: flPaused -> printf("  (ignored: dispatched before the pause)\n")
       :: else ->
#endif
       if
       :: flTo > durablePoint -> durablePoint = flTo
       :: else -> skip
       fi;
       if
       :: durablePoint > progress -> progress = durablePoint
       :: else -> skip
       fi;
#ifdef MUTANT_LATE_DURABLE_IGNORED
       fi;
#endif
       flFrom = 0;
       flTo = 0;
       flPaused = false;
       checkInvariants()
     }

  /* Resume: re-read the stream from max(progress, confirmed flush), once the write from before
     the pause has been answered. */
  :: atomic {
#ifdef MUTANT_RESUME_WITHOUT_WAIT
       st == ACTIVE && rewound ->
#else
       st == ACTIVE && rewound && flTo == 0 ->
#endif
       pos = RESTART_LSN;
       bufFrom = pos;
       rewound = false;
       printf("resume: re-read from %d\n", pos);
       checkInvariants()
     }

  /* A standby status update (also while paused: the owner keeps the connection alive). */
  :: atomic {
       !retiredClean && FEEDBACK > confirmedFlush ->
       confirmedFlush = FEEDBACK;
       printf("status update: flush %d\n", confirmedFlush);
       checkInvariants()
     }

  /* Retired: once no write is in flight, drop the slot and delete the pipeline's state. */
  :: atomic {
       st == RETIRED && !retiredClean && flTo == 0 ->
       retiredClean = true;
       progress = 0;
       confirmedFlush = 0;
       printf("retired: slot dropped, state deleted\n");
       checkInvariants()
     }

  /* Nothing more can happen (the source and the operator are done). Bounded liveness: if the
     state ended active, everything committed was delivered and confirmed. A drain ended clean,
     and a retirement left no state behind. */
  :: timeout ->
     CHECK(st != ACTIVE || (stored == EVENTS && confirmedFlush == EVENTS),
           "violated: active at the end, but not every event was delivered and confirmed\n");
     CHECK(st != DRAINING || (bufFrom == pos && flTo == 0),
           "violated: the drain did not flush out\n");
     CHECK(st != RETIRED || (retiredClean && progress == 0),
           "violated: retired, but state is left behind\n");
     break
  od
}

/* The same liveness as an LTL property: if the state ends active and stays there, every event
   is eventually delivered durably. */
ltl delivered { <>[] (st == ACTIVE) -> <> (stored == EVENTS) }
