/* TaskGroup counting in per-worker shards (include/weft/exec/task_group.hpp,
 * src/exec/task_group.cpp, docs/design/cancellation.md), checked with spin.
 *
 * The root word holds (units << 1) | WAITER. The builder's run()s count a
 * unit on the root; a run() on worker w adds 1 to shard w, and only its
 * 0 -> 1 adds a unit to the root. A finish (run or skipped) undoes what its
 * task's run() did: a unit off the root, or 1 off the task's shard, the
 * 1 -> 0 taking the shard's unit off the root. A take-back (cancel(), or
 * wait() on a cancelled group) empties the caller's own queue in one step,
 * takes each task off its shard, and the units so freed off the root in
 * one RMW. Each statement is one atomic step of the C++ code.
 *
 * Processes: main (the builder) runs NP parents into its queue and waits;
 * two workers take any queued task (their own or a steal). A parent run()s
 * one child from its worker (onto that worker's shard and queue) and may
 * then cancel the group and take back its worker's queue.
 *
 * Checked:
 *  - no count ever goes below zero (root units, shards);
 *  - wait() returns only when no task is queued, taken or running, and no
 *    thread is still to touch a shard or the root (the group may be
 *    destroyed then);
 *  - each task runs at most once, and wait() throws cancelled exactly when
 *    one was skipped;
 *  - no lost wake-up: at quiescence main has returned and nobody sleeps.
 *
 * -DSPURIOUS: the futex may also wake the waiter for no reason.
 *
 * -DBROKEN: a finish takes a unit off the root on every shard decrement,
 * not only on 1 -> 0 (a shard holding two tasks gives back two units);
 * spin must find the root going below zero or wait() returning early.
 * -DBROKEN_SHARD: a finish decrements the shard of the worker that ran the
 * task, not the shard the task was counted in; spin must find a shard
 * below zero or wait() returning early.
 */
#define NP 2            /* parents, run() by main */
#define NT 4            /* tasks: parents 0, 1; the child of parent p is NP + p */
#define WAITER 1
#define ROOT 0          /* counter[i]: 0 the root, w + 1 shard w */
#define MAINQ 2         /* where[i]: 0, 1 a worker's queue, 2 main's */

#define IDLE    0       /* not run() */
#define QUEUED  1
#define TAKEN   2       /* popped or taken back: claimed by one thread */
#define RUNNING 3
#define RAN     4
#define SKIPPED 5

short root = 0;         /* (units << 1) | WAITER */
short shard[2];
byte status[NT];
byte counter[NT];
byte where[NT];
byte runs[NT];
bool cancelled = false;
bool skipped_flag = false;
bool asleep = false;
bool returned = false;
byte touching = 0;      /* threads with a shard or root RMW still to do */

inline root_sub(n) {    /* take_units_off_root(n): fetch_sub(2n), wake if it left 0 with the bit */
  atomic {
    assert((root >> 1) >= n);
    if :: root == (2 * n | WAITER) -> asleep = false :: else -> skip fi;
    root = root - 2 * n;
    touching--
  }
}

/* finish_one(counter of task i), by worker me */
inline finish(i, me) {
  byte fs;
  short fold;
#ifdef BROKEN_SHARD
  fs = (counter[i] == ROOT -> ROOT : me + 1);
#else
  fs = counter[i];
#endif
  if
  :: fs == ROOT -> root_sub(1)
  :: else ->
     atomic {                                       /* fetch_sub(1): the last touch unless 1 -> 0 */
       fold = shard[fs - 1]; shard[fs - 1]--; assert(shard[fs - 1] >= 0);
#ifndef BROKEN
       if :: fold != 1 -> touching-- :: else -> skip fi
#endif
     };
#ifdef BROKEN
     root_sub(1)
#else
     if :: fold == 1 -> root_sub(1) :: else -> skip fi
#endif
  fi
}

/* take_back_queued() on queue q: one step takes them all; each comes off
 * its own count; the freed units off the root at once. */
inline take_back(q) {
  byte k;
  byte units = 0;
  byte took = 0;
  bool mine[NT];
  atomic {
    k = 0;
    do
    :: k < NT ->
       if :: status[k] == QUEUED && where[k] == q -> status[k] = SKIPPED; mine[k] = true; took++; touching++
          :: else -> mine[k] = false
       fi;
       k++
    :: else -> break
    od
  };
  k = 0;
  do
  :: k < NT ->
     if
     :: mine[k] && counter[k] == ROOT -> units++; atomic { touching-- }
     :: mine[k] && counter[k] != ROOT ->
        atomic {
          if :: shard[counter[k] - 1] == 1 -> units++ :: else -> skip fi;
          shard[counter[k] - 1]--; assert(shard[counter[k] - 1] >= 0);
          touching--
        }
     :: else -> skip
     fi;
     k++
  :: else -> break
  od;
  if :: took > 0 -> skipped_flag = true :: else -> skip fi;
  if :: units > 0 -> atomic { touching++ }; root_sub(units) :: else -> skip fi
}

proctype worker(byte me) {
  byte i;
  byte c;
  short old;
  do
  :: atomic {                                       /* pop or steal: one task, one thread */
       if
       :: status[0] == QUEUED -> i = 0
       :: status[1] == QUEUED -> i = 1
       :: status[2] == QUEUED -> i = 2
       :: status[3] == QUEUED -> i = 3
       fi;
       status[i] = TAKEN
     };
     if                                             /* the claim: one read of the flag */
     :: cancelled -> status[i] = SKIPPED; skipped_flag = true
     :: else ->
        status[i] = RUNNING;
        runs[i]++;
        if
        :: i < NP ->                                /* a parent: run(child) on this worker */
           c = NP + i;
           if
           :: cancelled -> status[c] = SKIPPED; skipped_flag = true
           :: else ->
              atomic { old = shard[me]; shard[me]++ };
              if :: old == 0 -> root = root + 2 :: else -> skip fi;
              atomic { counter[c] = me + 1; where[c] = me; status[c] = QUEUED }
           fi;
           if                                       /* and may cancel the group */
           :: cancelled = true; take_back(me)
           :: skip
           fi
        :: else -> skip
        fi;
        status[i] = RAN
     fi;
     atomic { touching++ };
     finish(i, me)
  :: returned -> break
  od
}

proctype main() {
  byte i = 0;
  short v;
  bool any_skipped = false;
  do                                                /* run() NP parents: the builder counts on the root */
  :: i < NP ->
     if
     :: cancelled -> status[i] = SKIPPED; skipped_flag = true
     :: else ->
        root = root + 2;
        atomic { counter[i] = ROOT; where[i] = MAINQ; status[i] = QUEUED }
     fi;
     i++
  :: else -> break
  od;
  if :: cancelled -> take_back(MAINQ) :: else -> skip fi;   /* wait() on a cancelled group */
loop:                                               /* block_on's WaiterBitWait on the root */
  v = root;
  if
  :: (v >> 1) == 0 -> goto done
  :: else -> skip
  fi;
  if
  :: (v & WAITER) == 0 ->
     atomic { if :: root == v -> root = v | WAITER :: else -> goto loop fi }
     v = v | WAITER
  :: else -> skip
  fi;
  atomic { if :: root == v -> asleep = true :: else -> skip fi };
#ifdef SPURIOUS
  if :: !asleep -> skip :: asleep -> asleep = false fi;
#else
  !asleep;
#endif
  goto loop;
done:
  atomic { if :: root == WAITER -> root = 0 :: else -> skip fi };
  assert(touching == 0);                            /* nobody is still to touch the group */
  i = 0;
  do
  :: i < NT ->
     assert(status[i] == IDLE || status[i] == RAN || status[i] == SKIPPED);
     assert(runs[i] <= 1);
     any_skipped = any_skipped || status[i] == SKIPPED;
     i++
  :: else -> break
  od;
  assert(skipped_flag == any_skipped);              /* throws cancelled exactly when one was skipped */
  returned = true
}

active proctype monitor() {
  timeout ->
    assert(returned && !asleep)
}

init {
  atomic {
    run worker(0);
    run worker(1);
    run main()
  }
}
