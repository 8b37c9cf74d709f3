/* parallel_invoke's join on a worker (include/weft/detail/exec/invoke_task.hpp,
 * src/exec/invoke.cpp: invoke_fork, invoke_join or its halves
 * invoke_take_back and invoke_wait, InvokeTask::execute_stolen;
 * src/exec/help.cpp: block_on), checked with spin.
 *
 * The owner pushed N tasks, oldest first, onto its own deque; they live in
 * its stack frame. Each has a word: one unit (UNIT) and a waiter bit. The
 * owner runs its first function, then joins: newest first, it takes back
 * each task still at the bottom of its deque (pop_exactly(): the pop
 * decides against a thief) and runs it in place without touching
 * the word. For every task left (a thief took it, or it lies under one
 * that did not come back) it waits: while the unit is there it may help
 * (take its newest queued task and run it as a thief would), or set the
 * waiter bit (an RMW), look again, and sleep on the futex if the word is
 * still what the RMW left. Whoever runs a task it took off the deque runs
 * it, then takes the unit off with one RMW and wakes the futex if the old
 * value had the waiter bit. The owner returns (and its frame, with the
 * tasks, goes) once every unit is off; a finisher's wake after its RMW
 * uses only the word's address. Each statement is one atomic step of the
 * C++ code; the deque's pop and steal are one claim each (the deque has
 * its own model); two thieves take the oldest task, the owner the newest.
 * The first function may have posted a task of its own (either choice is
 * explored): it sits above the invoke tasks, so the owner's take-back stops
 * at once and its waits must help, running it and then its own tasks
 * through the finish a thief would do. (The code's take-back pops the
 * posted task and pushes it back, one step here: while it is out no thief
 * can take it, and the push-back is announced as any push is, which
 * tests/model/pool.pml checks.)
 *
 * Checked:
 *  - every task runs exactly once, and all have run when the owner returns;
 *  - nobody touches a task (its word) after the owner returned;
 *  - at the end nobody sleeps: the owner returned (no lost wake-up), also
 *    when the futex wakes for no reason (SPURIOUS).
 *
 * -DBROKEN_PEEK: the owner takes a task back when it sees it at the bottom,
 * without the claiming pop (a look, then the take, two steps); spin must
 * find a task run twice.
 * -DBROKEN_NO_WAKE: a finisher takes the unit off without looking at the
 * waiter bit; spin must find the owner asleep for ever.
 * -DBROKEN_TOUCH_AFTER: a finisher reads the waiter bit from the word again
 * after its RMW took the unit off (a load instead of the RMW's old value);
 * spin must find it touching a task after the owner returned.
 */
#define N 3

#define QUEUED 0
#define TAKEN  1      /* off the deque, running or about to */
#define DONE   2
#define NONE   3      /* the posted task: not posted */

byte status[N];
byte ran[N];
bool unit[N];
bool waiter[N];
byte posted = NONE;    /* the task the first function posted, newest in the deque */
bool asleep = false;   /* the owner sleeps on a task's futex */
bool returned = false;

#define ANY_QUEUED (status[0] == QUEUED || status[1] == QUEUED || status[2] == QUEUED || posted == QUEUED)

/* A task's run, by whichever thread took it */
inline run_task(i) {
  ran[i]++; assert(ran[i] == 1); status[i] = DONE
}

/* execute_stolen(): run, then fetch_sub(UNIT) and a wake if the old value had the bit */
inline finish(i) {
#ifdef BROKEN_TOUCH_AFTER
  atomic { assert(!returned); unit[i] = false };
  atomic {
    assert(!returned);                 /* reads the word again */
    if :: waiter[i] -> asleep = false :: else -> skip fi
  }
#else
  atomic {
    assert(!returned);                 /* the task is still in the owner's frame */
    unit[i] = false;
#ifndef BROKEN_NO_WAKE
    if :: waiter[i] -> asleep = false :: else -> skip fi
#endif
  }
#endif
}

/* Takes the oldest queued task (a thief) or the newest (the owner's
 * help, while `also` holds) into k: N for the posted one. Each is one step
 * whose first statement is its guard. */
inline take_oldest(k) {
  atomic {
    ANY_QUEUED;
    k = 0;
    do
    :: k < N && status[k] != QUEUED -> k++
    :: else -> break
    od;
    if :: k < N -> status[k] = TAKEN :: else -> posted = TAKEN fi
  }
}
inline take_newest(k, also) {
  atomic {
    also && ANY_QUEUED;
    if
    :: posted == QUEUED -> posted = TAKEN; k = N
    :: else ->
       k = N;
       do
       :: k > 0 && status[k - 1] != QUEUED -> k--
       :: else -> break
       od;
       k--; status[k] = TAKEN
    fi
  }
}
/* Runs what take_*() took, as a worker runs a task off the deque */
inline run_taken(k) {
  if
  :: k == N -> posted = DONE
  :: else -> run_task(k); finish(k)
  fi
}

proctype thief() {
  byte k;
  do
  :: take_oldest(k); run_taken(k)
  :: returned -> break
  od
}

proctype owner() {
  byte left = N;
  byte i, k;
  /* the first function runs here (it may have posted a task: init) */
  do                                   /* take back the newest, while it is ours */
  :: left > 0 ->
#ifdef BROKEN_PEEK
     if
     :: status[left - 1] == QUEUED && posted != QUEUED -> skip
     :: else -> break
     fi;
     status[left - 1] = TAKEN;
#else
     atomic {
       if
       :: status[left - 1] == QUEUED && posted != QUEUED -> status[left - 1] = TAKEN
       :: else -> break
       fi
     };
#endif
     run_task(left - 1);
     left--
  :: else -> break
  od;
  i = 0;
  do                                   /* block_on() each task left */
  :: i < left ->
     do
     :: !unit[i] -> break
     :: take_newest(k, unit[i]); run_taken(k)   /* help, while the unit is there */
     :: unit[i] ->                     /* set the bit, look again, sleep on the value */
        waiter[i] = true;
        atomic {
          if
          :: unit[i] -> asleep = true
          :: else -> skip
          fi
        };
        if
        :: !asleep -> skip
#ifdef SPURIOUS
        :: asleep -> asleep = false    /* the futex returns for no reason */
#endif
        fi
     od;
     i++
  :: else -> break
  od;
  atomic {
    i = 0;
    do
    :: i < N -> assert(ran[i] == 1); i++
    :: else -> break
    od;
    returned = true
  }
}

init {
  atomic {
    byte j = 0;
    do
    :: j < N -> status[j] = QUEUED; unit[j] = true; j++
    :: else -> break
    od;
    if
    :: posted = QUEUED
    :: skip
    fi;
    run owner();
    run thief();
    run thief()
  }
}
