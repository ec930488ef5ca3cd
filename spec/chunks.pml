/*
 * chunks.pml: the chunked copy of one large table while the table streams (docs/design-decisions.md,
 * "Chunked copy: a snapshot per chunk, placed in the stream by a watermark").
 *
 * The table's changes stream from the start; its rows are copied chunk by chunk, each chunk under
 * its own short snapshot. A chunk attempt:
 *   1. SNAP   the copier opens a REPEATABLE READ transaction and takes its snapshot S (it records
 *             which transactions S sees: pg_current_snapshot()).
 *   2. PRE    in that transaction it writes a non-transactional logical message, the watermark
 *             PRE(chunk, attempt, S), to the WAL. Every transaction that commits after PRE in the
 *             WAL committed after S was taken, so S does not see it.
 *   3. CHECK  the apply worker meets PRE in the stream. If a transaction it has already passed
 *             (commit before PRE) is not visible in S, S misses a change that the stream has
 *             already sent (a commit whose WAL record came before PRE but which was not yet
 *             visible when S was taken): the attempt is abandoned and a new one starts. Otherwise
 *             S holds exactly the transactions before PRE: the chunk's rows under S are the
 *             table's state at PRE.
 *   4. ROWS   the copier writes the rows (parallel copy writes, upserts) once the stream's writes
 *             sent before PRE are durable. Until the rows are durable, the apply worker waits at a
 *             change that touches the chunk's keys (other changes flow).
 *   5. DONE   once the rows are durable, the chunk's completion is stored. A restart copies only
 *             chunks not stored as done, with new attempts; an old PRE met again is ignored.
 * Every change of the table is sent from the start, whatever chunk its key is in: a change before
 * its chunk's PRE is sent too (the rows that follow hold its effect again), so that a delete
 * removes a row an abandoned or crashed attempt may have written. A destination applies an update
 * that lacks its unchanged TOAST values to the row it has, and ignores it for a key it does not
 * have. One case needs more: a key-changing update that lacks TOAST values and moves a row from a
 * chunk not copied yet into a copied one (the destination has neither the old row nor the new
 * one): the new key is marked for a re-read, stored, and read again as a one-key chunk.
 *
 * The model: one table of two keys, 0 and 1, in two chunks, 0 and 1; chunks 2 and 3 are the
 * one-key re-reads of keys 0 and 1. Key 0 has a row before the copy starts (only the copy carries
 * it); key 1 has none. A row is (present, value, toast). Each source transaction makes one
 * change: an insert, an update with every value, an update that leaves the TOAST value unchanged
 * (the change carries no TOAST value), a delete, a key-changing update (with or without the TOAST
 * value) or a TRUNCATE. A transaction's commit record reaches the WAL before the transaction is
 * visible to new snapshots (a commit waits for its WAL flush and for synchronous standbys before
 * it leaves the proc array): between the two, a snapshot does not see it. Xids are the commit
 * order here; the check of step 3 compares them. The destination keeps what it applied across a
 * crash, and writes sent but not applied are lost. It applies stream writes in order and skips a
 * change it applied before a restart (it records the position of the last one, as the contract
 * asks: the PostgreSQL mirror in its progress table, a consumer by the event's sequence key);
 * copy writes come at any time.
 *
 * Invariant, checked when nothing can move any more (the source stopped, every chunk done, the
 * stream caught up): the destination equals the source.
 *
 * Mutants (compile with -D<name>; spin must report a violation for each one):
 *   MUTANT_NO_XID_CHECK        the apply worker accepts every PRE: the rows miss a transaction that
 *                              committed before PRE but was not visible to S, and overwrite the
 *                              change the stream sent
 *   MUTANT_NO_BARRIER          the rows are written before the stream's writes sent before PRE are
 *                              durable: an older change lands after the rows
 *   MUTANT_NO_WAIT             the apply worker does not wait at a change of a chunk whose rows
 *                              are not durable: the older rows land after the newer change
 *   MUTANT_WINDOW_DROP         the apply worker skips such a change instead of waiting for it
 *   MUTANT_DONE_BEFORE_DURABLE the chunk is stored as done when its rows are sent: a crash loses
 *                              them and no attempt copies them again
 *   MUTANT_NO_REREAD           a key-changing update without its TOAST value from a chunk not
 *                              copied into a copied one is sent as it is: the row is missing
 */

#define K 2                  /* keys of the table (the macros below spell out 2) */
#ifndef TXS
#define TXS 3                /* source transactions */
#endif
#ifndef CRASHES
#define CRASHES 1            /* crashes (and restarts) of the pipeline */
#endif
#ifndef LAGGING
#define LAGGING 1            /* transactions that may stay invisible after their commit record */
#endif
#ifndef ATTEMPTS
#define ATTEMPTS 4           /* chunk attempts in all (an attempt id is never reused) */
#endif

#define C 2                  /* chunks of the table */
#define NCH (C + K)          /* and one one-key re-read per key */
#define WALMAX (TXS + ATTEMPTS)
#define SMAX (TXS * (CRASHES + 1) + 1)
#define NONE 255

#define CHUNK(k) (k)
#define REREAD(k) (C + (k))
/* whether chunk c holds key k */
#define HOLDS(c, k) (((c) < C && CHUNK(k) == (c)) || (c) == REREAD(k))

/* Picks a chunk c (of NCH = 4) for which COND(c) holds; not executable when there is none. */
#define PICK(COND) \
  if \
  :: COND(0) -> c = 0 \
  :: COND(1) -> c = 1 \
  :: COND(2) -> c = 2 \
  :: COND(3) -> c = 3 \
  fi

#define CHECK(c, msg) if :: !(c) -> printf(msg); assert(c) :: else -> skip fi

/* WAL entries, and stream writes (the same kinds, plus the rows of a chunk on the copy side) */
mtype = { INS, UPD_FULL, UPD_PART, DEL, KEY_FULL, KEY_PART, TRUNC, PRE };
/* a chunk attempt, in memory */
mtype = { IDLE, PENDING, SNAPPED, PRE_WRITTEN, AT_PRE, ROWS_SENT, DURABLE, DONE };

/* ---- the source: the latest rows and the rows visible to a new snapshot ---- */
bool lp[K]; byte lv[K]; byte lt[K];
bool vp[K]; byte vv[K]; byte vt[K];
byte txs;                  /* transactions committed (in the WAL) */
byte visible;              /* transactions visible: txs or txs - 1 */
byte nextValue = 1;

/* ---- the WAL ---- */
mtype wKind[WALMAX];
byte wXid[WALMAX];         /* a change's xid (= its commit order) */
byte wK1[WALMAX]; byte wK2[WALMAX]; byte wV[WALMAX]; byte wT[WALMAX];
byte wChunk[WALMAX]; byte wAttempt[WALMAX];
byte walLen;

/* ---- the state store (survives a crash) ---- */
bool storedDone[C];        /* a chunk whose rows are durable */
bool storedReread[K];      /* a key to read again */
byte storedPos;            /* the apply worker's durable progress: the WAL entry to restart at */

/* ---- memory (lost in a crash) ---- */
mtype state[NCH];
byte attempt[NCH];         /* the chunk's current attempt */
byte snapVisible[NCH];     /* transactions visible to the attempt's snapshot */
bool rp[NCH * K]; byte rv[NCH * K]; byte rt[NCH * K];   /* the rows read under it */
byte preSent[NCH];         /* stream writes sent before its PRE */
byte ap;                   /* the apply worker's next WAL entry */
byte attempts;             /* attempt ids used (never reused) */
byte crashes;

/* ---- the destination ---- */
bool dp[K]; byte dv[K]; byte dt[K];
mtype sKind[SMAX]; byte sK1[SMAX]; byte sK2[SMAX]; byte sV[SMAX]; byte sT[SMAX];
byte sPos[SMAX];           /* the WAL entry a stream write came from */
byte sSent, sApplied;

byte dHigh;                /* the destination's own record of the stream: 1 + the WAL entry of
                              the last change it applied; it skips a change below (a replay) */
bool hp[K]; byte hv[K]; byte ht[K];   /* scratch: the source's rows at a WAL position */

byte i, j, k, c, x, y;     /* scratch, 0 between steps */

#define SNAPPABLE(c) (attempts < ATTEMPTS && state[c] == PENDING)
#define IS_SNAPPED(c) (state[c] == SNAPPED)
#define IS_AT_PRE(c) (state[c] == AT_PRE)
#define ROWS_MAY_GO(c) (state[c] == AT_PRE && sApplied >= preSent[c])
#define IS_ROWS_SENT(c) (state[c] == ROWS_SENT)
/* The stream's durable progress: the WAL entry of the first write not applied, or, when every
   write is applied, the apply worker's position. */
#define DURABLE_POS (sApplied == sSent -> ap : sPos[sApplied])
#define STORABLE(c) (state[c] == DURABLE)

/* A change of key k must wait: a chunk holding k has passed PRE and its rows are not durable. */
#define WAITS(k) (state[CHUNK(k)] == AT_PRE || state[CHUNK(k)] == ROWS_SENT || \
                  state[REREAD(k)] == AT_PRE || state[REREAD(k)] == ROWS_SENT)
/* the destination has key k's state from the copy: its chunk (and its re-read) are durable */
#define COPIED(k) ((state[CHUNK(k)] == DURABLE || state[CHUNK(k)] == DONE) && \
                   (state[REREAD(k)] == IDLE || state[REREAD(k)] == DURABLE || \
                    state[REREAD(k)] == DONE))

inline commitChange(kind, k1, k2) {
  wKind[walLen] = kind; wXid[walLen] = txs + 1; wK1[walLen] = k1; wK2[walLen] = k2;
  wV[walLen] = nextValue; wT[walLen] = NONE;
  walLen++; txs++; nextValue++
}

/* Stream write of WAL entry ap (the apply worker sends it). */
inline send(kind, k1, k2, v, t) {
  sKind[sSent] = kind; sK1[sSent] = k1; sK2[sSent] = k2; sV[sSent] = v; sT[sSent] = t;
  sPos[sSent] = ap;
  sSent++
}

/* The destination applies a key-changing update: without its TOAST value, it moves the old row's
   (and ignores a key it does not have). */
inline applyKeyChange(k1, k2, v, t, partial) {
  if
  :: partial && dp[k1] -> dp[k2] = true; dv[k2] = v; dt[k2] = dt[k1]
  :: partial && !dp[k1] -> skip
  :: !partial -> dp[k2] = true; dv[k2] = v; dt[k2] = t
  fi;
  dp[k1] = false
}

/* The source's rows after the WAL entries before position `pos` (into hp, hv, ht). */
inline rowsAt(pos) {
  y = 0;
  do
  :: y < K -> hp[y] = false; hv[y] = 0; ht[y] = 0; y++
  :: else -> break
  od;
  hp[0] = true; hv[0] = 100; ht[0] = 100;   /* the rows before the copy (see init) */
  y = 0;
  do
  :: y < pos ->
     if
     :: wKind[y] == INS || wKind[y] == UPD_FULL ->
        hp[wK1[y]] = true; hv[wK1[y]] = wV[y]; ht[wK1[y]] = wT[y]
     :: wKind[y] == UPD_PART -> hv[wK1[y]] = wV[y]
     :: wKind[y] == DEL -> hp[wK1[y]] = false
     :: wKind[y] == KEY_FULL ->
        hp[wK1[y]] = false; hp[wK2[y]] = true; hv[wK2[y]] = wV[y]; ht[wK2[y]] = wT[y]
     :: wKind[y] == KEY_PART ->
        hp[wK1[y]] = false; hp[wK2[y]] = true; hv[wK2[y]] = wV[y]; ht[wK2[y]] = ht[wK1[y]]
     :: wKind[y] == TRUNC -> hp[0] = false; hp[1] = false
     :: wKind[y] == PRE -> skip
     fi;
     y++
  :: else -> break
  od;
  y = 0
}

/* Whenever the stream has caught up (every write sent is applied, and no replay after a restart
   is behind what the destination already applied), a key copied (its rows durable) holds the
   source's row at the apply worker's position. */
inline invariant() {
  if
  :: sApplied == sSent && ap >= dHigh ->
     rowsAt(ap);
     x = 0;
     do
     :: x < K ->
        if
        :: COPIED(x) && !WAITS(x) ->
           CHECK(dp[x] == hp[x] && (!hp[x] || (dv[x] == hv[x] && dt[x] == ht[x])),
                 "violated: a copied row differs from the source's at the stream's position\n")
        :: else -> skip
        fi;
        x++
     :: else -> break
     od;
     x = 0;
     y = 0;
     do
     :: y < K -> hp[y] = false; hv[y] = 0; ht[y] = 0; y++
     :: else -> break
     od;
     y = 0
  :: else -> skip
  fi
}

/* Forgets an attempt's snapshot and rows (the state space keeps no stale values). */
inline forget(c) {
  attempt[c] = 0; snapVisible[c] = 0; preSent[c] = 0;
  j = 0;
  do
  :: j < K -> rp[c * K + j] = false; rv[c * K + j] = 0; rt[c * K + j] = 0; j++
  :: else -> break
  od;
  j = 0
}

/* Resets a chunk's memory from the store (a restart, or the start). */
inline fromStore(c) {
  forget(c);
  if
  :: c < C && storedDone[c] -> state[c] = DONE
  :: c < C && !storedDone[c] -> state[c] = PENDING
  :: c >= C && storedReread[c - C] -> state[c] = PENDING
  :: c >= C && !storedReread[c - C] -> state[c] = IDLE
  fi
}

init {
  d_step {
    /* the table's rows before the copy starts: key 0, which only the copy carries */
    lp[0] = true; lv[0] = 100; lt[0] = 100;
    vp[0] = true; vv[0] = 100; vt[0] = 100;
    c = 0;
    do
    :: c < NCH -> fromStore(c); c++
    :: else -> break
    od;
    c = 0
  }
  do
  /* ======== the source ======== */
  /* A transaction commits (its record is in the WAL), once the previous one is visible. */
  :: atomic {
       txs < TXS && visible == txs ->
       if
       :: k = 0
       :: k = 1
       fi;
       if
       :: !lp[k] ->
          commitChange(INS, k, k);
          lp[k] = true; lv[k] = wV[walLen - 1]; lt[k] = wV[walLen - 1]; wT[walLen - 1] = lt[k]
       :: lp[k] ->
          commitChange(UPD_FULL, k, k);
          lv[k] = wV[walLen - 1]; lt[k] = wV[walLen - 1]; wT[walLen - 1] = lt[k]
       :: lp[k] ->
          commitChange(UPD_PART, k, k);
          lv[k] = wV[walLen - 1]
       :: lp[k] ->
          commitChange(DEL, k, k);
          lp[k] = false
       :: lp[k] && !lp[(k + 1) % K] ->
          j = (k + 1) % K;
          if
          :: commitChange(KEY_FULL, k, j);
             lt[j] = wV[walLen - 1]; wT[walLen - 1] = lt[j]
          :: commitChange(KEY_PART, k, j);
             lt[j] = lt[k]
          fi;
          lp[j] = true; lv[j] = wV[walLen - 1]; lp[k] = false;
          j = 0
       :: commitChange(TRUNC, 0, 0);
          j = 0;
          do
          :: j < K -> lp[j] = false; j++
          :: else -> break
          od;
          j = 0
       fi;
       printf("source: transaction %d commits %e of key %d (WAL %d)\n", txs, wKind[walLen - 1],
              k, walLen - 1);
       k = 0;
       if
       :: txs > LAGGING ->
          visible = txs;
          j = 0;
          do
          :: j < K -> vp[j] = lp[j]; vv[j] = lv[j]; vt[j] = lt[j]; j++
          :: else -> break
          od;
          j = 0
       :: else -> skip
       fi
     }
  /* It becomes visible to new snapshots (at once, after the first LAGGING transactions). */
  :: atomic {
       visible < txs ->
       visible = txs;
       j = 0;
       do
       :: j < K -> vp[j] = lp[j]; vv[j] = lv[j]; vt[j] = lt[j]; j++
       :: else -> break
       od;
       j = 0;
       printf("source: transaction %d is visible\n", visible)
     }

  /* ======== the copier of chunk c ======== */
  /* SNAP: a snapshot S and the chunk's rows under it. */
  :: atomic {
       PICK(SNAPPABLE);
       if
       :: true ->
          attempts++;
          attempt[c] = attempts;
          snapVisible[c] = visible;
          j = 0;
          do
          :: j < K ->
             rp[c * K + j] = HOLDS(c, j) && vp[j]; rv[c * K + j] = vv[j]; rt[c * K + j] = vt[j];
             j++
          :: else -> break
          od;
          j = 0;
          state[c] = SNAPPED;
          printf("copier: chunk %d attempt %d, snapshot sees %d transactions\n", c, attempts,
                 visible)
       fi;
       c = 0
     }
  /* PRE: the watermark, after the snapshot. */
  :: atomic {
       PICK(IS_SNAPPED);
       wKind[walLen] = PRE; wChunk[walLen] = c; wAttempt[walLen] = attempt[c]; wXid[walLen] = 0;
       walLen++;
       state[c] = PRE_WRITTEN;
       printf("copier: PRE of chunk %d attempt %d (WAL %d)\n", c, attempt[c], walLen - 1);
       c = 0
     }
  /* ROWS: written once the stream's writes before PRE are durable. */
  :: atomic {
#ifdef MUTANT_NO_BARRIER
       PICK(IS_AT_PRE);
#else
       PICK(ROWS_MAY_GO);
#endif
       state[c] = ROWS_SENT;
#ifdef MUTANT_DONE_BEFORE_DURABLE
       if
       :: c < C -> storedDone[c] = true
       :: else -> storedReread[c - C] = false
       fi;
#endif
       printf("copier: sends the rows of chunk %d\n", c);
       c = 0
     }

  /* ======== the destination ======== */
  /* It applies a chunk's rows (upserts of the rows under S) and answers them durable. */
  :: atomic {
       PICK(IS_ROWS_SENT);
       j = 0;
       do
       :: j < K ->
          if
          :: rp[c * K + j] -> dp[j] = true; dv[j] = rv[c * K + j]; dt[j] = rt[c * K + j]
          :: else -> skip
          fi;
          j++
       :: else -> break
       od;
       j = 0;
       state[c] = DURABLE;
       printf("destination: the rows of chunk %d are durable\n", c);
       c = 0;
       invariant()
     }
  /* It applies the next stream write. */
  :: atomic {
       sApplied < sSent ->
       i = sApplied;
       if
       :: sPos[i] < dHigh -> skip    /* applied before a restart: skipped */
       :: else ->
       dHigh = sPos[i] + 1;
       if
       :: sKind[i] == INS || sKind[i] == UPD_FULL ->
          dp[sK1[i]] = true; dv[sK1[i]] = sV[i]; dt[sK1[i]] = sT[i]
       :: sKind[i] == UPD_PART ->
          if
          :: dp[sK1[i]] -> dv[sK1[i]] = sV[i]
          :: else -> skip
          fi
       :: sKind[i] == DEL -> dp[sK1[i]] = false
       :: sKind[i] == KEY_FULL -> applyKeyChange(sK1[i], sK2[i], sV[i], sT[i], false)
       :: sKind[i] == KEY_PART -> applyKeyChange(sK1[i], sK2[i], sV[i], sT[i], true)
       :: sKind[i] == TRUNC ->
          j = 0;
          do
          :: j < K -> dp[j] = false; j++
          :: else -> break
          od;
          j = 0
       fi
       fi;
       sKind[i] = 0; sK1[i] = 0; sK2[i] = 0; sV[i] = 0; sT[i] = 0; sPos[i] = 0;
       sApplied++;
       i = 0;
       invariant()
     }

  /* ======== the engine ======== */
  /* The apply worker's durable progress is stored; so is the completion of a chunk whose rows
     are durable. */
  :: atomic {
       (DURABLE_POS > storedPos || STORABLE(0) || STORABLE(1) || STORABLE(2) || STORABLE(3)) ->
       if
       :: DURABLE_POS > storedPos -> storedPos = DURABLE_POS
       :: else -> skip
       fi;
       c = 0;
       do
       :: c < NCH ->
          if
          :: STORABLE(c) ->
             if
             :: c < C -> storedDone[c] = true; state[c] = DONE
             :: else -> storedReread[c - C] = false; state[c] = IDLE
             fi;
             forget(c);
             printf("engine: progress %d stored, chunk %d done\n", storedPos, c)
          :: else -> skip
          fi;
          c++
       :: else -> break
       od;
       c = 0
     }
  /* The apply worker meets a watermark. */
  :: atomic {
       ap < walLen && wKind[ap] == PRE ->
       c = wChunk[ap];
       if
       :: state[c] == PRE_WRITTEN && attempt[c] == wAttempt[ap] ->
          /* CHECK: every transaction before PRE is visible to S (xids are the commit order) */
          x = 0;
          j = 0;
          do
          :: j < ap -> if :: wXid[j] > x -> x = wXid[j] :: else -> skip fi; j++
          :: else -> break
          od;
          j = 0;
#ifdef MUTANT_NO_XID_CHECK
          x = 0;
#endif
          if
          :: x > snapVisible[c] ->
             state[c] = PENDING;
             forget(c);
             printf("apply: PRE of chunk %d: transaction %d passed but not in S; again\n", c, x)
          :: else ->
             state[c] = AT_PRE;
             preSent[c] = sSent;
             printf("apply: PRE of chunk %d: its rows are the state here\n", c)
          fi;
          x = 0
       :: else -> printf("apply: an old PRE of chunk %d, ignored\n", c)
       fi;
       ap++;
       c = 0;
       invariant()
     }
  /* The apply worker sends a change (or waits: see the guard). */
  :: atomic {
       ap < walLen && wKind[ap] != PRE &&
#if defined(MUTANT_NO_WAIT) || defined(MUTANT_WINDOW_DROP)
       true ->
#else
       (wKind[ap] == TRUNC ->
          !(WAITS(0) || WAITS(1)) : !(WAITS(wK1[ap]) || WAITS(wK2[ap]))) ->
#endif
#ifdef MUTANT_WINDOW_DROP
       if
       :: (wKind[ap] == TRUNC -> (WAITS(0) || WAITS(1))
                              : (WAITS(wK1[ap]) || WAITS(wK2[ap]))) ->
          printf("apply: skips the change at %d\n", ap);
          goto skipped
       :: else -> skip
       fi;
#endif
#ifndef MUTANT_NO_REREAD
       if
       :: wKind[ap] == KEY_PART && !COPIED(wK1[ap]) && COPIED(wK2[ap]) ->
          storedReread[wK2[ap]] = true;
          state[REREAD(wK2[ap])] = PENDING;
          printf("apply: key %d to read again\n", wK2[ap])
       :: else -> skip
       fi;
#endif
       send(wKind[ap], wK1[ap], wK2[ap], wV[ap], wT[ap]);
       printf("apply: sends the change at %d\n", ap);
#ifdef MUTANT_WINDOW_DROP
skipped:
#endif
       ap++;
       invariant()
     }

  /* ======== a crash ======== */
  :: atomic {
       crashes < CRASHES ->
       crashes++;
       c = 0;
       do
       :: c < NCH -> fromStore(c); c++
       :: else -> break
       od;
       c = 0;
       ap = storedPos;
       do                       /* writes sent but not applied are lost */
       :: sSent > sApplied ->
          sSent--;
          sKind[sSent] = 0; sK1[sSent] = 0; sK2[sSent] = 0; sV[sSent] = 0; sT[sSent] = 0;
          sPos[sSent] = 0
       :: else -> break
       od;
       printf("CRASH: restart at WAL %d\n", ap)
     }

  /* ======== nothing can move: the destination equals the source ======== */
  :: timeout ->
     if
     :: txs == TXS && visible == TXS && ap == walLen && sApplied == sSent &&
        state[0] == DONE && state[1] == DONE &&
        state[C] == IDLE && state[C + 1] == IDLE ->
        j = 0;
        do
        :: j < K ->
           printf("key %d: source %d/%d/%d, destination %d/%d/%d\n", j, lp[j], lv[j], lt[j],
                  dp[j], dv[j], dt[j]);
           CHECK(dp[j] == lp[j], "violated: the destination and the source differ in a row\n");
           CHECK(!lp[j] || (dv[j] == lv[j] && dt[j] == lt[j]),
                 "violated: the destination and the source differ in a row\n");
           j++
        :: else -> break
        od
     :: else ->
        /* only the bound of the model on attempts may stop the copy */
        CHECK(attempts == ATTEMPTS, "violated: the copy is stuck\n")
     fi;
     break
  od
}
