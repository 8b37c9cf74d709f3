/* TaskGroup's local count (include/weft/exec/task_group.hpp, count_local();
 * src/exec/task_group.cpp; docs/design/cancellation.md), checked with spin.
 *
 * The builder's run()s under the frame it built the group in count on a
 * word only its thread writes (local), with a load and a store: no RMW. A
 * task so counted leaves the count where it finishes: popped back by the
 * builder's join, -1 on local (no RMW); anywhere else (a thief, a helping
 * wait), a unit off the root, which may so stand below zero. pending =
 * root units + local. The builder's wait() first runs its own queued tasks
 * (the join's fast path), then folds local into the root (flush: root +=
 * local, then local = 0) and sleeps on the root as block_on() does. A
 * thread other than the builder waits on root units + local: it reads
 * local first, then the root (local only falls while anyone waits, so the
 * sum can only over-count), sleeps with the OUTSIDE bit set, and is woken
 * by every root decrement and by the builder whenever it changes local
 * (note_local_change(): the builder's store, a fence, a load of the bit;
 * the waiter's bit, a fence, a load of local: one sees the other, here
 * sequentially consistent; asym_fence.pml checks the light/heavy fence
 * pair that gives that order on x86).
 *
 * Processes: the builder run()s tasks 0 and 1 (local count) into its
 * queue, then either waits itself or leaves the waiting to the outsider;
 * the outsider waits once the builder's run()s are done; a thief steals
 * from the builder's queue and runs its own. Task 0 run()s a child, task
 * 2, from whichever thread runs it: counted on the root (the builder's run()
 * inside a group task is not under its building frame), queued on that
 * thread. Each statement is one atomic step of the C++ code.
 *
 * Checked:
 *  - each task runs once; a wait returns only when every task ran (the
 *    builder's: with the root exact, units 0 and local 0);
 *  - no lost wake-up: at the end nobody sleeps (an invalid end state
 *    otherwise);
 *  - the root's units never go below -2 (the local count's tasks finished
 *    elsewhere) and never above what was run().
 *
 * -DBROKEN_READ_ORDER: the outsider reads the root before local; the
 * builder's flush between the two reads hides every pending task, and spin
 * must find the outsider returning early.
 * -DBROKEN_NO_NOTE: the builder's inline finish does not look for the
 * OUTSIDE bit; spin must find the outsider asleep for ever.
 * -DBROKEN_FINISH_WAKE: a root decrement wakes only the builder's kind of
 * waiter (old == 1 unit | WAITER); spin must find the outsider asleep.
 */
#define NT 3
#define BQ 0            /* where[i]: the builder's queue */
#define TQ 1            /* the thief's */
#define LOCAL 0         /* counter[i] */
#define ROOT 1
#define INLINE 2        /* a local-count task the builder's join took back */

#define IDLE    0
#define QUEUED  1
#define TAKEN   2
#define RAN     3

short units = 0;        /* the root: units, and its two bits */
bool waiter = false;
bool outside = false;
short lcount = 0;       /* the builder's local count ("local" is a keyword here) */
byte status[NT];
byte counter[NT];
byte where[NT];
byte runs[NT];
byte ran = 0;           /* tasks finished */
byte spawned = 0;
bool runs_done = false; /* the builder's run()s happened before the outsider's wait */
bool b_asleep = false;
bool o_asleep = false;
bool b_returned = false;
bool o_returned = false;
bool b_waits = false;

inline wake_all() { b_asleep = false; o_asleep = false }

/* take_units_off_root(1): fetch_sub, then a wake on what the old value says */
inline root_sub() {
  atomic {
#ifdef BROKEN_FINISH_WAKE
    if :: units == 1 && waiter && !outside -> wake_all() :: else -> skip fi;
#else
    if :: outside || (units == 1 && waiter) -> wake_all() :: else -> skip fi;
#endif
    units--;
    assert(units >= -2)
  }
}

/* The builder's thread, after it changed lcount: fence, load the bit; if
 * set, clear it (an RMW that changes the word) and wake. */
inline note_local_change() {
#ifdef BROKEN_NO_NOTE
  skip
#else
  atomic { if :: outside -> outside = false; wake_all() :: else -> skip fi }
#endif
}

/* finish_one() of task i, by the builder (me == BQ) or the thief */
inline finish(i) {
  if
  :: counter[i] == INLINE ->
     atomic { lcount--; ran++; status[i] = RAN };   /* lcount.store(lcount - 1) */
     note_local_change()
  :: else ->
     atomic { ran++; status[i] = RAN };
     root_sub()
  fi
}

/* Runs task i on queue q's thread: task 0 run()s task 2 on the root. */
inline run_task(i, q) {
  runs[i]++;
  if
  :: i == 0 ->
     atomic { units++; spawned++; assert(units <= NT) };   /* count_on_root(): fetch_add */
     atomic { counter[2] = ROOT; where[2] = q; status[2] = QUEUED }
  :: else -> skip
  fi;
  finish(i)
}

proctype thief() {
  byte i;
  do
  :: atomic {                                 /* steal from the builder, or pop its own */
       if
       :: status[0] == QUEUED -> i = 0
       :: status[1] == QUEUED -> i = 1
       :: status[2] == QUEUED -> i = 2
       fi;
       status[i] = TAKEN
     };
     run_task(i, TQ)
  :: atomic { b_returned || o_returned || (ran == spawned && runs_done) } -> break
  od
}

proctype outsider() {
  short n;
  short u;
  short u0;
  runs_done;                                  /* ordered after the builder's run()s */
again:
  /* outside_done(): lcount first, then the root */
#ifdef BROKEN_READ_ORDER
  u = units;
  n = lcount;
#else
  n = lcount;
  u = units;
#endif
  if :: u + n == 0 -> goto done :: else -> skip fi;
  atomic { waiter = true; outside = true; u0 = units };   /* fetch_or (its result), then the heavy fence */
  n = lcount;
  u = units;
  if :: u + n == 0 -> goto done :: else -> skip fi;
  atomic {                                    /* futex_wait on the fetch_or's result: any change since wakes */
    if
    :: units == u0 && waiter && outside -> o_asleep = true
    :: else -> skip
    fi
  };
  !o_asleep;
  goto again;
done:
  assert(ran == spawned);
  o_returned = true
}

proctype builder() {
  byte i;
  short v;
  bool bo;
  /* run() twice under the building frame: the lcount count */
  lcount++;
  atomic { counter[0] = LOCAL; where[0] = BQ; status[0] = QUEUED; spawned++ };
  lcount++;
  atomic { counter[1] = LOCAL; where[1] = BQ; status[1] = QUEUED; spawned++ };
  runs_done = true;
  if
  :: b_waits = true
  :: skip                                     /* leaves the wait to the outsider */
  fi;
  if
  :: !b_waits -> goto quit
  :: else -> skip
  fi;
  /* the join's fast path: newest of its own queued tasks first */
  do
  :: units + lcount == 0 -> break             /* builder_done() */
  :: else ->
     atomic {
       if
       :: status[2] == QUEUED && where[2] == BQ -> i = 2
       :: else ->
          if
          :: status[1] == QUEUED -> i = 1
          :: else ->
             if :: status[0] == QUEUED -> i = 0 :: else -> i = NT fi
          fi
       fi;
       if :: i < NT -> status[i] = TAKEN; if :: counter[i] == LOCAL -> counter[i] = INLINE :: else -> skip fi
          :: else -> skip
       fi
     };
     if :: i == NT -> break :: else -> run_task(i, BQ) fi
  od;
  /* flush_local(): the root first, then lcount, then a look for an outsider */
  if
  :: lcount != 0 ->
     atomic { units = units + lcount };
     lcount = 0;
     note_local_change()
  :: else -> skip
  fi;
  /* block_on(): helps, then sleeps with the WAITER bit until units == 0 */
  do
  :: units == 0 -> break
  :: atomic {                                 /* help: a task still queued anywhere */
       if
       :: status[0] == QUEUED -> i = 0
       :: status[1] == QUEUED -> i = 1
       :: status[2] == QUEUED -> i = 2
       fi;
       status[i] = TAKEN
     };
     run_task(i, BQ)
  :: atomic { waiter = true; v = units; bo = outside };
     atomic {
       if
       :: units == v && v != 0 && waiter && outside == bo -> b_asleep = true
       :: else -> skip
       fi
     };
     !b_asleep
  od;
  assert(ran == spawned && lcount == 0 && units == 0);
  b_returned = true;
quit:
  skip
}

init {
  atomic {
    run builder();
    run thief();
    run outsider()
  }
}
