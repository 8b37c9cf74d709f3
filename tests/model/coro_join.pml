/* The coroutine join's owner chain (include/weft/detail/exec/promise.hpp,
 * Join; include/weft/exec/coro.hpp, JoinChild::done_impl, start_join;
 * src/exec/help.cpp, break_chain, take_own_newest_in), checked with spin.
 *
 * when_all over N child tasks: the owner thread runs child 0 in place and
 * queues the others on its deque. While it runs the children one after
 * another in its resume loop (the chain), it counts their finishes in
 * `local` (here lcount), a field only it touches; when a child finishes in
 * the chain and the next one is still at the bottom of its deque it takes
 * it back and runs it next. While the join is on the chain `remaining`
 * holds one unit more than the children (the owner's reservation): no
 * other thread can bring it to zero, so the join, which lives in the
 * parent's frame, outlives everything the owner does with it. The chain
 * ends when the next child is not there (stolen), or when a child
 * suspended (its resumption ended without naming a successor: the loop
 * calls break_chain()); either way the owner publishes with one RMW,
 * remaining -= lcount + 1, and resumes the parent if that was the last.
 * A child finished anywhere else (a thief, or the owner outside the
 * chain, after it ended) takes 1 off `remaining`. Whoever brings
 * `remaining` to zero resumes the parent; if all N finished in the chain,
 * the owner resumes it with no RMW.
 *
 * Processes: the owner (its chain, then its worker loop) and a thief.
 * Any child may suspend once instead of finishing, and is then finished
 * later by whichever thread picks it up (the one it was resumed on): a
 * suspended coroutine can be resumed by another thread, and finish, before
 * the owner's loop sees that the resumption ended (two separate steps
 * here). Each statement is one atomic step of the C++ code; the deque's
 * pop and steal are one claim each (the deque has its own model).
 *
 * Checked:
 *  - the parent is resumed exactly once, and only after every child
 *    finished (its results are there);
 *  - remaining never goes below zero;
 *  - the owner never touches the join after the parent was resumed (its
 *    frame may be gone);
 *  - at the end nobody waits for ever: the parent was resumed.
 *
 * -DBROKEN_NO_RESERVE: no reservation, and a break publishes without
 * looking at the result (the first version of break_chain(), which held
 * that the suspended child was still to finish); spin must find the owner
 * touching a finished join, or the parent never resumed.
 * -DBROKEN_OWNER_THREAD: a finish on the owner thread counts in `lcount`
 * even outside the chain (the test is "the owner's thread", not "on its
 * chain"); spin must find the parent never resumed or resumed early.
 */
#define N 3

#define QUEUED    0     /* in the owner's deque (children 1..N-1) */
#define RUNNING   1
#define SUSPENDED 2     /* waiting to be resumed by either thread */
#define DONE      3
#define CLAIMED   4     /* taken to be run or resumed */

byte status[N];
bool susp[N];           /* suspended once already: the next run finishes it */
#ifdef BROKEN_NO_RESERVE
#define RESERVE 0
#else
#define RESERVE 1
#endif
short remaining = N + RESERVE;
byte lcount = 0;         /* the owner's, while on its chain */
bool on_chain = true;   /* the join is on the owner's chain */
byte resumed = 0;
byte finished = 0;

inline resume_parent() {
  assert(finished == N); resumed++; assert(resumed == 1)
}

/* A finish outside the chain: fetch_sub(1) */
inline finish_remote(i) {
  atomic {
    status[i] = DONE; finished++;
    remaining--; assert(remaining >= 0);
    if :: remaining == 0 -> resume_parent() :: else -> skip fi
  }
}

/* The chain ends (the next child is not at the bottom of the deque):
 * fetch_sub(lcount + 1) */
inline publish() {
  atomic {
    assert(resumed == 0);                  /* the join is still there */
    on_chain = false;
    remaining = remaining - lcount - RESERVE; assert(remaining >= 0);
    if :: remaining == 0 -> resume_parent() :: else -> skip fi
  }
}

/* break_chain(): a resumption in the chain ended without a successor */
inline break_chain() {
  atomic {
    assert(resumed == 0);                  /* the join is still there */
    on_chain = false;
    remaining = remaining - lcount - RESERVE; assert(remaining >= 0);
#ifndef BROKEN_NO_RESERVE
    if :: remaining == 0 -> resume_parent() :: else -> skip fi
#endif
  }
}

/* A finish on the owner's thread outside the chain */
inline finish_on_owner(i) {
#ifdef BROKEN_OWNER_THREAD
  atomic {
    status[i] = DONE; finished++; lcount++;
    if :: lcount == N -> resume_parent() :: else -> skip fi
  }
#else
  finish_remote(i)
#endif
}

/* A claimed child runs: it may suspend once, else it finishes */
inline run_claimed(i, on_owner) {
  if
  :: !susp[i] -> atomic { susp[i] = true; status[i] = SUSPENDED }
  :: on_owner -> finish_on_owner(i)
  :: !on_owner -> finish_remote(i)
  fi
}

/* A worker loop: resume a suspended child, or pop / steal a queued one */
inline work(on_owner) {
  do
  :: atomic { status[0] == SUSPENDED -> status[0] = CLAIMED; k = 0 }; run_claimed(k, on_owner)
  :: atomic { (status[1] == SUSPENDED || status[1] == QUEUED) -> status[1] = CLAIMED; k = 1 }; run_claimed(k, on_owner)
  :: atomic { (status[2] == SUSPENDED || status[2] == QUEUED) -> status[2] = CLAIMED; k = 2 }; run_claimed(k, on_owner)
  :: resumed == 1 -> break
  od
}

proctype owner() {
  byte i = 0;
  byte k;
chain:                                        /* child i runs in place, in the chain */
  if
  :: /* it finishes: done_impl's owner path */
     atomic { status[i] = DONE; finished++; lcount++ };
     if
     :: lcount == N -> atomic { on_chain = false; resume_parent() }; goto loop
     :: else -> skip
     fi;
     atomic {                                 /* take_own_newest_in(): the newest queued child */
       k = N - 1;
       do
       :: k > 0 && status[k] != QUEUED -> k--
       :: else -> break
       od;
       if :: k > 0 -> status[k] = RUNNING :: else -> skip fi
     };
     if
     :: k > 0 -> i = k; goto chain
     :: else -> publish()
     fi
  :: !susp[i] ->                              /* it suspends: no successor named */
     atomic { susp[i] = true; status[i] = SUSPENDED };
     break_chain()
  fi;
loop:
  work(true)
}

proctype thief() {
  byte k;
  work(false)
}

init {
  atomic {
    status[0] = RUNNING;                      /* child 0: run in place */
    status[1] = QUEUED;
    status[2] = QUEUED;
    run owner();
    run thief()
  }
}
