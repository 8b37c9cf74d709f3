/* The Event protocol of include/weft/sync/event.hpp, checked with spin.
 *
 * One word `state`, bit 0 SET and bit 1 WAITERS (the stop count in the
 * upper bits is event_stop.pml's: no stop here, so it stays 0), and the
 * futex: futex_wait(v) sleeps only if the word still holds v, atomically
 * with the check; futex_wake wakes every sleeper. Each statement below is
 * one atomic step of the C++ code (the compare-exchange loop in set(), the
 * fetch_and in reset(), announce()'s load and compare-exchange, the futex
 * calls), interleaved in every possible order.
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
 * then a store, instead of one compare-exchange). spin must find the lost
 * wake-up.
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
  byte old;
#ifdef BROKEN
  old = state;                            /* look for sleepers ... */
  state = (state | SET) & ~WAITERS;       /* ... then publish: a waiter can announce in between */
#else
  atomic { old = state; state = (state | SET) & ~WAITERS };  /* compare-exchange loop */
#endif
  if :: old & WAITERS -> futex_wake_all() :: else -> skip fi
}

proctype waiter(byte id) {
  byte s;
  /* the spin phase may see SET at any point or give up: both paths are explored */
  if :: state & SET -> goto done :: true -> skip fi;
loop:
  s = state;                                   /* acquire load */
  if
  :: s & SET -> goto done
  :: s == UNSET ->
       atomic { if :: state == UNSET -> state = WAITERS; s = WAITERS :: else -> goto loop fi }  /* compare-exchange */
  :: s == WAITERS -> skip
  fi;
  atomic { if :: state == s -> asleep[id] = true :: else -> skip fi };            /* futex_wait(s) */
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
  state = state & ~SET;                        /* reset(): fetch_and */
  set()
}

active proctype monitor() {
  timeout ->
    byte k = 0;
    do
    :: k < NW -> assert(!(asleep[k] && (state & SET))); k++
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
