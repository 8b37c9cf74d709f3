/* The asymmetric fence pair of the pool's sleep protocol
 * (src/include/weft/detail/sync/asymmetric_fence.hpp, IdleWorkers::
 * dekker_fence() in src/exec/idle_workers.cpp), with the store buffer made
 * explicit: the interleaving models (pool.pml, seat.pml) assume that each
 * side's store comes before its load, and this one checks that the light
 * and heavy fences give that where it matters.
 *
 * Worker P runs a task: it pushes a task (the store goes into its store
 * buffer, `pend`, and reaches memory, `dq`, whenever the memory system
 * flushes it), issues the light fence (a compiler barrier: nothing drains),
 * reads the idle word and wakes S if S sleeps and nobody searches. Then
 * either it waits for the task's effect without helping (a user's spin on a
 * flag the task sets: only S can run it), or it goes searching (an RMW of
 * the idle word, which drains its buffer, as a release RMW publishes) and
 * runs what it finds.
 *
 * Worker S has searched in vain: it announces its sleep (an RMW of the idle
 * word: listed, searching -> sleeping), then dekker_fence(): the heavy
 * fence (membarrier: every running thread's buffer drains) if the word its
 * RMW returned shows a worker that is neither searching nor sleeping (P,
 * running), else a plain fence (its own buffer only, which holds nothing).
 * Then it rescans memory: work seen, it cancels its sleep (or, if a waker
 * took it off the list, takes the permit) and runs the task; none, it parks
 * until woken. A wake-up (P's lock and futex call) drains P's buffer.
 *
 * Checked: when nothing can move (timeout), the task has run. spin also
 * reports a process stuck outside an end state.
 *
 * -DBROKEN_PLAIN: dekker_fence() is always the plain fence (the light push
 * with no heavy partner): P's push is still in its buffer when S rescans,
 * P read the word before S announced, S parks, and the task is never run.
 *
 * -DDEFER: the sleeper defers the heavy fence (announce_sleep() with
 * may_defer): where it is needed, S makes the plain fence and rescans; if
 * that finds nothing, it parks for a window that a waker's permit or the
 * timeout ends. After the timeout it reads the word afresh (an RMW), makes
 * the heavy fence if a worker still runs, and rescans before it parks for
 * good. So a push that both sides missed waits for the window, no longer.
 * verify also: -DDEFER
 *
 * -DBROKEN_DEFER: as DEFER, but after the window S parks for good without
 * the heavy fence and the second rescan: the push both sides missed is
 * never run.
 */
#define NW 2

byte dq = 0;          /* tasks in P's deque, as memory holds them */
byte pend = 0;        /* P's pushes still in its store buffer */
byte searching = 1;   /* the idle word: S searches at the start */
byte sleeping = 0;
bool p_searching = false;
bool listed = false;  /* S on the sleepers list */
bool permit = false;  /* S's Parker */
byte ran = 0;

/* The memory system drains P's store buffer at some point. */
active proctype memory() {
end:
  do
  :: atomic { pend > 0 -> dq = dq + pend; pend = 0 }
  od
}

active proctype P() {
  pend++;                                   /* push: into the store buffer */
  /* light_fence(): a compiler barrier, nothing drains */
  if
  :: atomic {
       (searching == 0 && sleeping > 0 && listed) ->   /* notify_one(): wake S */
         listed = false; sleeping--; searching++;
         dq = dq + pend; pend = 0               /* the lock and the futex call drain */
     };
     permit = true
  :: else -> skip
  fi;
  if
  :: true ->
end_wait:
       (ran > 0)                            /* waits for the task without helping */
  :: true ->
       atomic { dq = dq + pend; pend = 0; searching++; p_searching = true };   /* release RMW */
       if
       :: atomic { dq > 0 -> dq--; ran++ }   /* its own task, or nothing: S took it */
       :: atomic { dq == 0 -> skip }
       fi;
       atomic { searching--; p_searching = false }
  fi
}

active proctype S() {
  byte s_after, sl_after;
  bool was_listed;
  bool deferred = false;
  atomic {                                  /* announce: the seq_cst RMW */
    listed = true; searching--; sleeping++;
    s_after = searching; sl_after = sleeping
  };
#ifndef BROKEN_PLAIN
  if
  :: s_after + sl_after < NW ->              /* a worker runs: heavy_fence() */
#if defined(DEFER) || defined(BROKEN_DEFER)
       deferred = true                       /* ... deferred: a plain fence now */
#else
       atomic { dq = dq + pend; pend = 0 }
#endif
  :: else -> skip                            /* a plain fence: nothing of P's drains */
  fi;
#endif
  if
  :: dq > 0 -> goto cancel                   /* the rescan saw work */
  :: else -> skip
  fi;
#if defined(DEFER) || defined(BROKEN_DEFER)
  if
  :: deferred ->
       if
       :: permit -> permit = false; goto take  /* a waker came within the window */
       :: true -> skip                        /* the window passed */
       fi;
#ifndef BROKEN_DEFER
       atomic { s_after = searching; sl_after = sleeping };   /* the fresh RMW read */
       if
       :: s_after + sl_after < NW -> atomic { dq = dq + pend; pend = 0 }   /* heavy_fence() */
       :: else -> skip
       fi;
       if
       :: dq > 0 -> goto cancel
       :: else -> skip
       fi
#endif
  :: else -> skip
  fi;
#endif
end_park:
  permit;                                    /* park */
  permit = false;
  goto take;
cancel:
  atomic {                                   /* cancel the sleep */
    if
    :: listed -> listed = false; sleeping--; searching++; was_listed = true
    :: else -> was_listed = false
    fi
  };
  if :: !was_listed -> permit; permit = false :: else -> skip fi;
take:
  atomic {                                   /* found it, or nothing: P took it */
    if
    :: dq > 0 -> dq--; ran++
    :: else -> skip
    fi;
    searching--
  }
}

active proctype monitor() {
  timeout -> assert(ran == 1)
}
