/* The Future state word of include/weft/exec/future.hpp, checked with spin:
 * cancel, claim, attach-continuation and complete racing on it.
 *
 * Two words. A is a submitted task's state; B is the state of the task that
 * then() made, whose continuation is attached to A. Bits as in the header:
 * the state in bits 0-1 (PENDING, CLAIMED, READY, CANCELLED), WAITER,
 * CONT (kContinuation: `next` holds the continuation), BLOCKED (B waits for
 * A). Each statement is one atomic step of the C++ code.
 *
 * Processes:
 *   workerA   pops A: claim (compare-exchange PENDING -> CLAIMED), run,
 *             complete (exchange to READY; wake if WAITER, fire if CONT)
 *   cancelA   Future::cancel() on A: the same claim as the worker's, then
 *             exchange to CANCELLED and wake/fire as the completer does
 *   attacher  then(): write `next`, then compare-exchange in CONT while A
 *             is not done; finding it done, fires the continuation itself
 *   waiterA   a waiter: sets WAITER with a compare-exchange, futex-sleeps
 *   cancelB   Future::cancel() on the continued future B
 *   claimB    a waiter on B running it in place: claim, refused while BLOCKED
 *   workerB   pops B once fire() has pushed it
 * fire() is ThenTask::fire_impl: clear BLOCKED (fetch_and), then push B
 * if it is still PENDING, or drop it (a cancel claimed it while it waited).
 *
 * Checked: A ran or was cancelled, exactly one of them; likewise B; the
 * continuation fired exactly once, after A was done and with `next`
 * written; B's callable ran only after A was done; no waiter sleeps on a
 * done word; no process is stuck (spin's invalid end states).
 *
 * -DBROKEN: attach() publishes CONT with a load and a plain store instead
 * of a compare-exchange. spin must find the continuation lost (A completes
 * between the load and the store, sees no CONT, and nobody fires).
 */
#define PENDING   0
#define CLAIMED   1
#define READY     2
#define CANCELLED 3
#define MASK      3
#define WAITER    4
#define CONT      8
#define BLOCKED   16

#define st(w)   ((w) & MASK)
#define done(w) (st(w) >= READY)

byte A = PENDING;
byte B = PENDING | BLOCKED;
bool next_written = false;
byte fired = 0;
bool queuedB = false;
byte ranA = 0, cancelledA = 0, ranB = 0, cancelledB = 0;
bool asleep = false;
bool waiter_done = false;

inline futex_wake_all() { asleep = false }

inline fire() {
  byte oldB;
  assert(done(A) && next_written);
  fired++;
  atomic { oldB = B; B = B & ~BLOCKED };            /* fetch_and(~kBlocked) */
  if
  :: st(oldB) == PENDING -> queuedB = true           /* push_continuation */
  :: else -> skip                                    /* claimed by a cancel: dropped */
  fi
}

/* What the completer and the canceller do with the old word. */
inline finished(old) {
  if :: old & WAITER -> futex_wake_all() :: else -> skip fi;
  if :: old & CONT -> fire() :: else -> skip fi
}

proctype workerA() {
  byte old;
  bool won = false;
  atomic { if :: st(A) == PENDING -> A = (A & ~MASK) | CLAIMED; won = true :: else -> skip fi };
  if
  :: won ->
       ranA++;
       atomic { old = A; A = READY };                /* exchange(kReady) */
       finished(old)
  :: else -> skip
  fi
}

proctype cancelA() {
  byte old;
  bool won = false;
  atomic { if :: st(A) == PENDING -> A = (A & ~MASK) | CLAIMED; won = true :: else -> skip fi };
  if
  :: won ->
       cancelledA++;                                 /* destroy the callable, store the error */
       atomic { old = A; A = CANCELLED };            /* exchange(kCancelled) */
       finished(old)
  :: else -> skip
  fi
}

proctype attacher() {
  byte w;
  next_written = true;                               /* next = c, before publishing CONT */
loop:
  w = A;                                             /* acquire load */
  if
  :: done(w) -> fire()                               /* already done: go on at once */
  :: else ->
#ifdef BROKEN
       A = w | CONT                                  /* plain store: may overwrite a completion */
#else
       atomic { if :: A == w -> A = w | CONT :: else -> goto loop fi }  /* compare-exchange */
#endif
  fi
}

proctype waiterA() {
  byte w;
loop:
  w = A;
  if
  :: done(w) -> goto out
  :: else ->
       atomic { if :: A == w -> A = w | WAITER :: else -> goto loop fi };   /* compare-exchange */
       atomic { if :: (A & WAITER) && !done(A) -> asleep = true :: else -> skip fi };  /* futex_wait */
       !asleep;
       goto loop
  fi;
out:
  waiter_done = true
}

inline claimB_step(won) {
  atomic { if :: st(B) == PENDING && !(B & BLOCKED) -> B = (B & ~MASK) | CLAIMED; won = true :: else -> skip fi }
}

inline runB() {
  assert(done(A));
  ranB++;
  B = (B & ~MASK) | READY
}

proctype cancelB() {
  bool won = false;
  /* cancel() claims even while BLOCKED */
  atomic { if :: st(B) == PENDING -> B = (B & ~(MASK | BLOCKED)) | CLAIMED; won = true :: else -> skip fi };
  if
  :: won -> cancelledB++; B = CANCELLED
  :: else -> skip
  fi
}

proctype claimB() {
  bool won = false;
  claimB_step(won);
  if :: won -> runB() :: else -> skip fi
}

proctype workerB() {
  bool won = false;
end_idle:
  queuedB;                                           /* never pushed if B was cancelled first */
  claimB_step(won);
  if :: won -> runB() :: else -> skip fi               /* a cancelled task is only dropped */
}

active proctype monitor() {
  timeout ->
    assert(ranA + cancelledA == 1);
    assert(fired == 1);
    assert(ranB + cancelledB == 1);
    assert(waiter_done && !asleep)
}

init {
  atomic {
    run workerA(); run cancelA(); run attacher(); run waiterA();
    run cancelB(); run claimB(); run workerB()
  }
}
