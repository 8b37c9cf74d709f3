/* The Event protocol of include/weft/sync/event.hpp, checked with spin.
 *
 * One word `state` (UNSET, SET, WAITERS) and the futex: futex_wait(v) sleeps
 * only if the word still holds v, atomically with the check; futex_wake
 * wakes every sleeper. Each statement below is one atomic step of the C++
 * code (the exchange in set(), the compare-exchange in wait_slow(), the
 * load, the futex calls), interleaved in every possible order.
 *
 * Processes: NW waiters run wait(); one setter runs set(), reset(), set()
 * (a pulse, then a final set that is never reset).
 *
 * Checked: when no process can move (`timeout`), no waiter sleeps on an
 * event that is set — a lost wake-up would leave one asleep forever. And a
 * waiter returns only after it has seen SET.
 *
 * -DSPURIOUS: the futex may also wake a waiter for no reason.
 *
 * -DBROKEN: set() checks for sleepers before it publishes SET (a load,
 * then a store, instead of one exchange). spin must find the lost wake-up.
 */
#define UNSET   0
#define SET     1
#define WAITERS 2
#ifndef NW
#define NW 2
#endif

byte state = UNSET;
bool asleep[NW];
byte returned = 0;

inline futex_wake_all() {
  atomic { byte k = 0; do :: k < NW -> asleep[k] = false; k++ :: else -> break od }
}

inline set() {
#ifdef BROKEN
  byte old = state;          /* look for sleepers ... */
  state = SET;               /* ... then publish: a waiter can announce in between */
  if :: old == WAITERS -> futex_wake_all() :: else -> skip fi
#else
  byte old;
  atomic { old = state; state = SET };  /* exchange */
  if :: old == WAITERS -> futex_wake_all() :: else -> skip fi
#endif
}

proctype waiter(byte id) {
  byte s;
  /* the spin phase may see SET at any point or give up: both paths are explored */
  if :: state == SET -> goto done :: true -> skip fi;
loop:
  s = state;                                   /* acquire load */
  if
  :: s == SET -> goto done
  :: s == UNSET ->
       atomic { if :: state == UNSET -> state = WAITERS :: else -> goto loop fi }  /* compare-exchange */
  :: s == WAITERS -> skip
  fi;
  atomic { if :: state == WAITERS -> asleep[id] = true :: else -> skip fi };      /* futex_wait(WAITERS) */
#ifdef SPURIOUS
  if :: !asleep[id] -> skip :: asleep[id] -> asleep[id] = false fi;  /* woken, or spuriously */
#else
  !asleep[id];                                 /* blocks until woken */
#endif
  goto loop;
done:
  returned++
}

proctype setter() {
  set();
  atomic { if :: state == SET -> state = UNSET :: else -> skip fi };  /* reset(): CAS SET -> UNSET */
  set()
}

active proctype monitor() {
  timeout ->
    byte k = 0;
    do
    :: k < NW -> assert(!(asleep[k] && state == SET)); k++
    :: else -> break
    od;
    assert(returned == NW)
}

init {
  atomic {
    byte i = 0;
    do :: i < NW -> run waiter(i); i++ :: else -> break od;
    run setter()
  }
}
