/* The finder's hand-off (IdleWorkers::found() in src/exec/idle_workers.cpp),
 * with the store buffer made explicit as in asym_fence.pml: a worker's push
 * is followed by a compiler barrier only (light_fence()), so its task may
 * sit in its store buffer while it reads the idle word.
 *
 * Three workers. P runs a task: it pushes task X (into its store buffer,
 * `pend`; the memory system moves it to `dq` whenever it likes), reads the
 * idle word and wakes S if S sleeps and nobody searches; then it waits for
 * X's effect without helping (a user's spin on a flag X sets: only another
 * worker can run X). F searches: it finds task Y (an outside thread's,
 * already in memory), decrements `searching` (found()'s RMW) and, while S
 * sleeps, makes a plain fence (its own buffer: nothing of P's drains),
 * reads the queues and wakes S if more tasks are queued than workers
 * search. If it was the last searcher and P may be running (the case in
 * which only a membarrier would make P's push visible to that read), it
 * hands its search on: it wakes S unless a worker searches by then. Then F
 * runs Y, which never ends (the process stops: F never searches again). S
 * is parked at the start; woken, it searches (reads memory), and finding
 * nothing it goes to sleep through the announcement: the seq_cst RMW, the
 * heavy fence if a worker runs (membarrier: P's buffer drains; the
 * deferred form of it is checked in asym_fence.pml -DDEFER), the rescan,
 * and a park or a cancel.
 *
 * Checked: when nothing can move (timeout), X has run. spin also reports a
 * process stuck outside an end state.
 *
 * -DHEAVY: found() as it was before the hand-off: the heavy fence (P's
 * buffer drains) when a worker other than F may be running, then the
 * read; no hand-off.
 * verify also: -DHEAVY
 *
 * -DBROKEN_NO_HANDOFF: the plain fence and the read, and no hand-off. P
 * read the word while F still searched, so it woke nobody; F's read missed
 * X in P's buffer; S sleeps on, and X is never run.
 */
#define NW 3

byte dq = 0;          /* P's deque, as memory holds it */
byte pend = 0;        /* P's push still in its store buffer */
byte y = 1;           /* an outside task, in memory */
byte searching = 1;   /* the idle word: F searches */
byte sleeping = 1;    /* ... and S sleeps */
bool listed = true;   /* S on the sleepers list */
bool permit = false;  /* S's Parker */
byte ran = 0;         /* X run */

active proctype memory() {
end:
  do
  :: atomic { pend > 0 -> dq = dq + pend; pend = 0 }
  od
}

active proctype P() {
  pend++;                                    /* push X: into the store buffer */
  /* light_fence(): a compiler barrier, nothing drains */
  if
  :: atomic {
       (searching == 0 && sleeping > 0 && listed) ->   /* notify_one(): wake S */
         listed = false; sleeping--; searching++;
         dq = dq + pend; pend = 0                /* the lock and the futex call drain */
     };
     permit = true
  :: else -> skip
  fi;
end_wait:
  (ran > 0)                                  /* waits for X without helping */
}

active proctype F() {
  byte s_after, sl_after;
  bool hand_off = false, wake_s = false;
  atomic { y > 0 -> y-- };                   /* the search finds Y */
  atomic {                                   /* found(): fetch_sub(kSearching) */
    searching--;
    s_after = searching; sl_after = sleeping
  };
  if
  :: sl_after == 0 -> goto run_y             /* nobody sleeps: nothing to do */
  :: else -> skip
  fi;
#ifdef HEAVY
  if
  :: s_after + sl_after + 1 < NW -> atomic { dq = dq + pend; pend = 0 }   /* heavy_fence() */
  :: else -> skip
  fi;
#endif
#ifndef BROKEN_NO_HANDOFF
#ifndef HEAVY
  hand_off = (s_after == 0 && s_after + sl_after + 1 < NW);
#endif
#endif
  /* the plain fence: F's own buffer, nothing of P's */
  atomic {                                   /* the ramp's read, and wake() under the lock */
    if
    :: dq > searching && listed -> wake_s = true
    :: else -> skip
    fi;
    if
    :: !wake_s && hand_off && searching == 0 && listed -> wake_s = true   /* wake(1, 0) */
    :: else -> skip
    fi;
    if
    :: wake_s -> listed = false; sleeping--; searching++
    :: else -> skip
    fi
  };
  if
  :: wake_s -> permit = true                 /* unpark after the lock */
  :: else -> skip
  fi;
run_y:
  skip                                       /* runs Y, which never returns */
}

active proctype S() {
  byte s_after, sl_after;
  bool was_listed;
end_park:
  permit;                                    /* parked */
  permit = false;
  /* woken: counted as searching by its waker; the search */
  if
  :: atomic { dq > 0 -> dq--; ran++; searching-- }; goto done
  :: else -> skip
  fi;
  atomic {                                   /* announce: the seq_cst RMW */
    listed = true; searching--; sleeping++;
    s_after = searching; sl_after = sleeping
  };
  if
  :: s_after + sl_after < NW -> atomic { dq = dq + pend; pend = 0 }   /* heavy_fence() */
  :: else -> skip
  fi;
  if
  :: dq > 0 ->                               /* the rescan saw work: cancel the sleep */
       atomic {
         if
         :: listed -> listed = false; sleeping--; searching++; was_listed = true
         :: else -> was_listed = false
         fi
       };
       if :: !was_listed -> permit; permit = false :: else -> skip fi;
       atomic {
         if
         :: dq > 0 -> dq--; ran++
         :: else -> skip
         fi;
         searching--
       }
  :: else -> goto end_park
  fi;
done:
  skip
}

active proctype monitor() {
  timeout -> assert(ran == 1)
}
