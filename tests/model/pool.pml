/* The pool's sleep/wake protocol of src/exec/thread_pool.cpp, checked with spin.
 *
 * Model: `queue` counts queued tasks (the deques, collapsed into one count:
 * what matters is whether a rescan sees a task). `searching` and `sleeping`
 * are the two halves of idle_state_; `listed[w]` is the sleepers list
 * (guarded by a mutex in the code: here each critical section is one atomic
 * step); `permit[w]` is worker w's Parker. Statements are interleaved in
 * every order; the seq_cst fences of the code make these steps sequentially
 * consistent, which is what an interleaving model assumes. (A worker's push
 * and a sleeper's rescan may use the asymmetric pair of
 * src/include/weft/detail/sync/asymmetric_fence.hpp instead: a compiler
 * barrier on the push's side, membarrier(2) on the sleeper's, which orders
 * each side's store before its load as the two fences do. A sleeper that
 * defers its membarrier for a window is checked, store buffer explicit, in
 * asym_fence.pml -DDEFER; a finder that makes a plain fence and hands its
 * search on, in found_handoff.pml. Here the ramp's read is sequentially
 * consistent, which covers every push but a running worker's light one.)
 *
 * NS submitters each push NT tasks (push; fence; read the idle word; wake
 * one sleeper only if nobody searches). NW workers: take a task, else
 * search (count as searching; the spin may or may not find a task), else
 * announce sleep (list themselves, searching -> sleeping), rescan, and
 * either cancel the sleep (work appeared) or park.
 *
 * The wake ramp (IdleWorkers::found()): a worker that finds a task while
 * others sleep reads the searchers and the queue and wakes, in one step
 * under the mutex, up to (queued - searching) sleepers, each counted as
 * searching, and no more than the searchers' bound lets search (workers -
 * sleeping - 2 * searching); it unparks them after the lock. (With 3
 * workers the code's bound lets a ramp wake 2 only in a race: the model
 * caps by the room the word showed, not by the sleepers the queue read
 * saw; wider ramps need NW >= 4, past this model's size.)
 *
 * Two refinements need no step of their own: a worker that skips its
 * search because half the workers search already is the search that found
 * nothing (the nondeterministic spin below), and an outside submitter that
 * polls the idle word for a while before waking (IdleWorkers::wake_needed)
 * reads it later after the same fence, which the interleaving covers. Its
 * other way out, its own deque found empty (every task it pushed taken), is
 * modelled where the queue is that deque: with one submitter (NS == 1).
 *
 * Checked: when no process can move (`timeout`), no task is left queued —
 * every posted task is eventually run while a worker exists — and the
 * counters are consistent (nobody searching, `sleeping` equal to the
 * workers on the list). spin also reports any deadlock (a process stuck
 * outside an end state).
 *
 * -DBROKEN: the submitter reads the idle word before it publishes the task.
 * spin must find the lost wake-up (a task queued, every worker parked).
 * -DWITH_OWN_PUSH: the submitter is a worker pushing to its own deque
 * (IdleWorkers::notify_for_own_push()): with one submitter the queue is
 * that deque, whose size it reads after its push. It wakes whenever
 * notify_one() would, and also while fewer workers search than that size
 * and the searchers' bound lets one more search (a woken worker counts as
 * searching from its wake on, which on a VM can be a long while). A fork
 * of several tasks (invoke_fork()) pushes them all, then fences and runs
 * the wake rule once: after any push but the last the worker may go on to
 * the next push first.
 * verify also: -DWITH_OWN_PUSH
 *
 * (The code's nobody-searching branch only spares the size read: after a
 * push the size is at least 1, which wakes as well. So the broken variant
 * below needs both of its changes.) A task the worker took out of its
 * deque and pushed back (PoolCore::announce_own_push()) is announced the same
 * way: it is this push.
 *
 * -DBROKEN_OWN_PUSH: the worker's push drops notify_one()'s case and sizes
 * its deque before the push: with nobody searching it sees 0 tasks, wakes
 * nobody, and spin must find the task stranded with every worker parked.
 * -DBROKEN_FORK: a fork runs the wake rule after its first push and not
 * after the others (the fence before the fork's last push): spin must find
 * a later task stranded with every worker parked.
 * -DBROKEN_RAMP: the ramp takes its sleepers off the list but leaves them
 * counted as sleeping (the woken worker is to count itself as searching):
 * spin must find the counters out of step with the list.
 *
 * -DWITH_HAND_OFF: the submitter is an outside post() (PoolCore::push(),
 * IdleWorkers::hand_off()): when its read of the idle word shows every
 * worker asleep and nobody searching, it takes a sleeper off the list
 * under the mutex, if that is still so there, counted as running (neither
 * searching nor sleeping), leaves the task with it (`handed`) and unparks
 * it; otherwise it queues the task as ever. A worker back from a park
 * that finds a task handed to it runs it, owing no ramp; but one whose
 * rescan had seen work (a submitter that saw it searching may rely on that
 * rescan) first wakes a sleeper unless someone searches, as found() would.
 * A handed task may block its worker for good (once per run: a task that
 * waits for another): every other task must still run. Checked besides:
 * no task is handed to a worker that still holds one.
 * verify also: -DWITH_HAND_OFF
 * -DBROKEN_HAND_OFF: a worker whose rescan saw work, and whose permit came
 * from a waker that had taken it off the list, does not look for a handed
 * task (the code's second park site): spin must find the task stranded.
 * -DBROKEN_HAND_OFF_RESCAN: that worker runs the handed task without
 * waking a sleeper for the work its rescan saw: spin must find that work
 * stranded behind a handed task that blocks.
 *
 * Dead locals: a local whose value is spent (a scan's index, the ramp's
 * count, the index notify_one() found) is reset where it dies. It is
 * written again before it is read, so this changes no behaviour, but a
 * stale value would make two otherwise equal states differ: without the
 * resets the protocol took 78.8M states and 4 GB (147 s); with them 2.1M
 * (3 s), which leaves room for 3 tasks in the WITH_OWN_PUSH run (7.9M).
 */
#ifndef NW
#define NW 3
#endif
#ifndef NS
#define NS 1
#endif
#ifndef NT
#define NT 3
#endif

byte queue = 0;
byte ran = 0;
byte searching = 0;
byte sleeping = 0;
bool listed[NW];
bool permit[NW];
bool handed[NW];
bool blocked_once = false;                      /* a handed task has blocked its worker for good */

/* notify_one(): after the push and the fence. The unpark happens after
 * the mutex is released, as in the code. */
inline notify_one(idx) {
  idx = NW;
  if
  :: (searching == 0 && sleeping > 0) ->
       atomic {
         if
         :: (searching == 0) ->
              byte k = 0;
              do
              :: k < NW && listed[k] -> idx = k; break
              :: k < NW && !listed[k] -> k++
              :: k >= NW -> break
              od;
              if
              :: idx < NW -> listed[idx] = false; sleeping--; searching++
              :: else -> skip
              fi;
              k = 0                             /* spent: see "Dead locals" above */
         :: else -> skip
         fi
       };
       if :: idx < NW -> permit[idx] = true :: else -> skip fi
  :: else -> skip
  fi;
  d_step { idx = 0 }                            /* spent */
}

/* notify_for_own_push(): a worker's push to its own deque (the queue, with
 * one submitter: NS == 1), after the same fence. As notify_one() when
 * nobody searches; else, when fewer search than the q tasks it saw in its
 * deque, one more, if still at most q - 1 search under the mutex. */
inline notify_own_push(idx, q, maxs) {
  idx = NW;
  maxs = 255;
#ifndef BROKEN_OWN_PUSH
  if :: searching == 0 -> maxs = 0 :: else -> skip fi;
#endif
  /* the extra wake only within the searchers' bound (search_room()) */
  if :: maxs == 255 && q > searching && 2 * searching < NW - sleeping -> maxs = q - 1 :: else -> skip fi;
  if
  :: (sleeping > 0 && maxs != 255) ->
       atomic {
         if
         :: (searching <= maxs) ->
              q = 0;                              /* reused as the scan's index */
              do
              :: q < NW && listed[q] -> idx = q; break
              :: q < NW && !listed[q] -> q++
              :: q >= NW -> break
              od;
              if
              :: idx < NW -> listed[idx] = false; sleeping--; searching++
              :: else -> skip
              fi
         :: else -> skip
         fi
       };
       if :: idx < NW -> permit[idx] = true :: else -> skip fi
  :: else -> skip
  fi;
  d_step { q = 0; maxs = 0; idx = 0 }   /* spent: not part of the state from here on */
}

/* found()'s ramp: after the searcher's decrement and fence, read the
 * searchers and the queue, take up to (queued - searching) sleepers under
 * the mutex, no more than the searchers' bound lets search (search_room():
 * workers - sleeping - 2 * searching), unpark each after it. */
inline wake_ramp(want, k) {
  d_step {                                /* one load of the idle word: the room, the searchers */
    if
    :: NW - sleeping > 2 * searching -> k = NW - sleeping - 2 * searching
    :: else -> k = 0
    fi;
    want = searching
  };
  d_step {                                /* the queues' count, then the least of the two */
    if
    :: queue > want -> want = queue - want
    :: else -> want = 0
    fi;
    if :: want > k -> want = k :: else -> skip fi;
    k = 0
  };
  atomic {
    k = 0;
    do
    :: k < NW && want > 0 && listed[k] ->
         listed[k] = false;
#ifndef BROKEN_RAMP
         sleeping--; searching++;
#endif
         woke[k] = true; want--; k++
    :: k < NW && !(want > 0 && listed[k]) -> k++
    :: k >= NW -> break
    od
  };
  k = 0;
  do
  :: k < NW -> if :: woke[k] -> woke[k] = false; permit[k] = true :: else -> skip fi; k++
  :: else -> break
  od;
  atomic { want = 0; k = 0 }                    /* spent (atomic: the break may not jump into a d_step) */
}

proctype submitter() {
  byte i = 0;
  byte idx;
  byte q;
  byte maxs;
  bool wake;
  do
  :: i < NT ->
#ifdef BROKEN
       wake = (searching == 0 && sleeping > 0);   /* looks before it publishes */
       queue++;
       if :: wake -> notify_one(idx) :: else -> skip fi;
#elif defined(BROKEN_OWN_PUSH)
       q = queue;                                 /* sizes its deque before the push */
       queue++;
       notify_own_push(idx, q, maxs);
#elif defined(WITH_OWN_PUSH) || defined(BROKEN_FORK)
       queue++;                                   /* a worker's push to its own deque */
#ifdef BROKEN_FORK
       if
       :: i == 0 -> q = queue; notify_own_push(idx, q, maxs)   /* after the fork's first push only */
       :: else -> skip
       fi;
#else
       if
       :: i + 1 < NT -> skip                      /* a fork's next push first: one fence for all (invoke_fork()) */
       :: true -> q = queue; notify_own_push(idx, q, maxs)   /* the fence, then the wake rule */
       fi;
#endif
#else
#if defined(WITH_HAND_OFF) || defined(BROKEN_HAND_OFF) || defined(BROKEN_HAND_OFF_RESCAN)
       idx = NW;
       if
       :: searching == 0 && sleeping == NW ->     /* all_asleep(): a hint */
            atomic {                              /* hand_off(), under the mutex */
              if
              :: searching == 0 && sleeping == NW ->
                   q = 0;
                   do
                   :: q < NW && listed[q] -> idx = q; break
                   :: q < NW && !listed[q] -> q++
                   :: q >= NW -> break
                   od;
                   if
                   :: idx < NW -> assert(!handed[idx]); listed[idx] = false; sleeping--; handed[idx] = true
                   :: else -> skip
                   fi;
                   q = 0
              :: else -> skip
              fi
            }
       :: else -> skip
       fi;
       if
       :: idx < NW -> permit[idx] = true; d_step { idx = 0 }   /* the unpark, after the lock */
       :: else ->
            d_step { idx = 0 };
#endif
       queue++;                                   /* push (then the seq_cst fence) */
       if
       :: NS == 1 && queue == 0 -> skip           /* the grace saw our task taken */
       :: true -> notify_one(idx)
       fi;
#if defined(WITH_HAND_OFF) || defined(BROKEN_HAND_OFF) || defined(BROKEN_HAND_OFF_RESCAN)
       fi;
#endif
#endif
       i++
  :: else -> break
  od
}

proctype worker(byte id) {
  bool is_searching = false;
  bool was_listed;
  byte want;
  byte k;
  bool woke[NW];
loop:
  if
  :: atomic { queue > 0 -> queue-- } -> goto execute_task
  :: else -> skip
  fi;
  if :: !is_searching -> searching++; is_searching = true :: else -> skip fi;
  /* the search spin: finds a task, or runs out of budget (both explored) */
  if
  :: atomic { queue > 0 -> queue-- } -> goto found
  :: true -> skip
  fi;
  atomic { listed[id] = true; searching--; sleeping++ };   /* announce (seq_cst RMW), then fence */
  is_searching = false;
  if
  :: queue > 0 ->                                          /* the rescan saw work: cancel */
       atomic {
         if
         :: listed[id] -> listed[id] = false; sleeping--; searching++; was_listed = true
         :: else -> was_listed = false
         fi
       };
       if :: !was_listed -> permit[id]; permit[id] = false :: else -> skip fi;  /* consume the waker's permit */
#ifndef BROKEN_HAND_OFF
       if
       :: handed[id] ->
            d_step { handed[id] = false; is_searching = false; was_listed = false };
#ifndef BROKEN_HAND_OFF_RESCAN
            /* wake(1, 0): a sleeper for what the rescan saw, unless someone searches */
            atomic {
              if
              :: searching == 0 ->
                   k = 0;
                   do
                   :: k < NW && listed[k] -> listed[k] = false; sleeping--; searching++; woke[k] = true; break
                   :: k < NW && !listed[k] -> k++
                   :: k >= NW -> break
                   od
              :: else -> skip
              fi;
              k = 0
            };
            k = 0;
            do
            :: k < NW -> if :: woke[k] -> woke[k] = false; permit[k] = true :: else -> skip fi; k++
            :: else -> break
            od;
            k = 0;
#endif
            goto execute_handed
       :: else -> skip
       fi;
#endif
       d_step { is_searching = true; was_listed = false };
       goto loop
  :: else ->
end_park:
       permit[id];                                         /* park */
       permit[id] = false;
       if
       :: handed[id] -> handed[id] = false; goto execute_handed   /* counted as running by the waker */
       :: else -> skip
       fi;
       is_searching = true;                                /* the waker counted us as searching */
       goto loop
  fi;
found:
  atomic { searching--; want = sleeping };
  is_searching = false;
  if :: want > 0 -> wake_ramp(want, k) :: else -> skip fi;    /* nobody slept: later sleepers rescan */
execute_task:
  ran++;
  goto loop;
execute_handed:
  ran++;
  if
  :: !blocked_once -> blocked_once = true;
end_blocked:
       false                                      /* the task waits for good */
  :: true -> skip
  fi;
  goto loop
}

inline count_listed(n, k) {
  n = 0; k = 0;
  do
  :: k < NW -> if :: listed[k] -> n++ :: else -> skip fi; k++
  :: else -> break
  od
}

active proctype monitor() {
  byte n;
  byte k;
  timeout ->
    assert(queue == 0);
    assert(ran == NS * NT);
    k = 0;
    do
    :: k < NW -> assert(!handed[k]); k++
    :: else -> break
    od;
    assert(searching == 0);
    count_listed(n, k);
    assert(sleeping == n)
}

init {
  atomic {
    byte i = 0;
    do :: i < NW -> run worker(i); i++ :: else -> break od;
    i = 0;
    do :: i < NS -> run submitter(); i++ :: else -> break od
  }
}
