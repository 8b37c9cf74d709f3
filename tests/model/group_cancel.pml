/* TaskGroup cancellation (include/weft/exec/task_group.hpp,
 * src/exec/task_group.cpp), checked with spin.
 *
 * The group's state word holds (pending << 1) | WAITER; `cancelled` is the
 * flag cancel() sets. Each statement below is one atomic step of the C++
 * code: run()'s look at the flag and its fetch_add, a worker's pop (the
 * deque hands each task to one thread), its read of the flag (the claim),
 * finish_one()'s fetch_sub and futex wake, and wait()'s load, its
 * compare-exchange of the waiter bit and the futex sleep (the kernel checks
 * the word and sleeps atomically).
 *
 * Processes: main runs NT tasks into the group, then wait(); NWK workers
 * take queued tasks; a canceller cancels at any moment (or never: its step
 * may come after everything else, which covers "cancel after all ran").
 *
 * Checked:
 *  - no task both skipped and run, and each one exactly one of them;
 *  - wait() returns only when no task is queued or running;
 *  - wait() throws cancelled exactly when a task was skipped;
 *  - no lost wake-up: at quiescence (`timeout`) main has returned and
 *    nobody sleeps (spin also reports any other blocked end state).
 *
 * -DSPURIOUS: the futex may also wake the waiter for no reason.
 *
 * -DBROKEN: wait() returns as soon as it sees the group cancelled, the
 * tempting "return promptly" shortcut; spin must find it returning while a
 * task still runs.
 */
#ifndef NT
#define NT 3
#endif
#ifndef NWK
#define NWK 2
#endif
#define WAITER 1

#define IDLE    0   /* not run() yet */
#define QUEUED  1
#define TAKEN   2   /* popped by a worker, flag not read yet */
#define RUNNING 3
#define RAN     4
#define SKIPPED 5

byte word = 0;          /* (pending << 1) | WAITER */
bool cancelled = false;
bool skipped_flag = false;
byte status[NT];
byte queued = 0;        /* tasks in the queue, for the workers' pops */
bool asleep = false;
bool returned = false;
bool threw = false;

inline finish_one() {
  byte old;
  atomic { old = word; word = word - 2 };           /* fetch_sub(2, acq_rel) */
  if :: old == (2 | WAITER) -> asleep = false       /* futex_wake */
     :: else -> skip
  fi
}

proctype worker() {
  byte i;
  do
  :: atomic {                                       /* pop: one task, one thread */
       queued > 0 ->
       i = 0;
       do :: status[i] == QUEUED -> break :: else -> i++ od;
       status[i] = TAKEN;
       queued--
     };
     if                                             /* the claim: one read of the flag */
     :: cancelled -> status[i] = SKIPPED; skipped_flag = true
     :: else -> status[i] = RUNNING; status[i] = RAN
     fi;
     finish_one()
  :: returned -> break
  od
}

proctype canceller() {
  cancelled = true
}

proctype main() {
  byte i = 0;
  byte v;
  bool any_skipped = false;
  do                                                /* run() NT times */
  :: i < NT ->
     if
     :: cancelled -> status[i] = SKIPPED; skipped_flag = true   /* skipped at once */
     :: else ->
        word = word + 2;                            /* fetch_add(2) */
        atomic { status[i] = QUEUED; queued++ }     /* push */
     fi;
     i++
  :: else -> break
  od;
loop:                                               /* wait(): block_on's WaiterBitWait */
#ifdef BROKEN
  if :: cancelled -> goto done :: else -> skip fi;
#endif
  v = word;                                         /* acquire load */
  if
  :: (v >> 1) == 0 -> goto done
  :: else -> skip
  fi;
  if
  :: (v & WAITER) == 0 ->
     atomic { if :: word == v -> word = v | WAITER :: else -> goto loop fi }  /* CAS */
     v = v | WAITER
  :: else -> skip
  fi;
  atomic { if :: word == v -> asleep = true :: else -> skip fi };         /* futex_wait(v) */
#ifdef SPURIOUS
  if :: !asleep -> skip :: asleep -> asleep = false fi;
#else
  !asleep;
#endif
  goto loop;
done:
  atomic { if :: word == WAITER -> word = 0 :: else -> skip fi };         /* clear our bit */
  i = 0;
  do
  :: i < NT -> assert(status[i] == RAN || status[i] == SKIPPED); i++   /* nothing queued or running */
  :: else -> break
  od;
  threw = skipped_flag;
  i = 0;
  do
  :: i < NT -> any_skipped = any_skipped || status[i] == SKIPPED; i++
  :: else -> break
  od;
  assert(threw == any_skipped);
  returned = true
}

active proctype monitor() {
  timeout ->
    assert(returned && !asleep)
}

init {
  atomic {
    byte k = 0;
    do :: k < NWK -> run worker(); k++ :: else -> break od;
    run canceller();
    run main()
  }
}
