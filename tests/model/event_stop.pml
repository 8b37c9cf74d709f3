/* A stop ending Event::wait(stop_token), checked with spin: the waiting
 * engine's stop path (include/weft/detail/sync/wait.hpp, wait_until with a
 * token) over Event's word (include/weft/sync/event.hpp, src/sync/event.cpp).
 *
 * The word: bit 0 SET, bit 1 WAITERS (someone may sleep; never with SET),
 * bits 2.. a count of stops (STOP each). futex_wait(v) sleeps only if the
 * word still holds v, atomically with the check; futex_wake wakes every
 * sleeper. Each statement is one atomic step of the C++ code.
 *
 * Processes:
 *   NW stoppable waiters share one std::stop_source. Each registers its
 *   std::stop_callback (which runs the callback at once, on the waiter, if
 *   the stop was already requested), spins, then loops: announce() (the
 *   compare-exchange that adds WAITERS to an unset word, or a load of a
 *   word that has it), the engine's look at the token, the futex sleep on
 *   the value announce() read. It returns true on SET, false on a stop.
 *   One plain waiter: wait() without a token, on the same word.
 *   The setter sets the event once, or does nothing (then only the stop
 *   can end the stoppable waits); with -DRESET it may also reset it.
 *   The stopper requests the stop: it sets the flag and takes the callbacks
 *   registered by then, in one step (libstdc++ does both under its lock),
 *   and runs each: stop_wake(), a fetch_add of STOP (release), then a
 *   futex wake if the old word had WAITERS.
 *   set() is a compare-exchange loop that sets SET and clears WAITERS,
 *   waking if WAITERS was there; reset() a fetch_and that clears SET.
 *
 * Checked: a waiter returns false only once the stop was requested and
 * true only on SET; when no process can move (`timeout`) every stoppable
 * waiter has returned (no lost wake-up: a waiter that parked is woken by
 * the stop), the plain waiter has returned if the event is set, and no
 * waiter sleeps on a set event.
 *
 * -DSPURIOUS: the futex may also wake a sleeper for no reason.
 *
 * -DRESET: a reset() racing the stop. With the old word (no stop count:
 * UNSET, SET, WAITERS + g, where a stop bumped g but left SET as it was)
 * spin found a lost stop here: a waiter announces WAITERS (value 2) and
 * looks at the token (no stop yet); set() makes the word SET; the stop's
 * stop_wake() sees SET, leaves it and makes no wake call; reset() makes it
 * UNSET; another waiter announces, making it 2 again; the first waiter's
 * futex_wait(2) now sleeps, and no stop is left to wake it (ABA). The stop
 * count, which set() and reset() keep, means the value cannot come back.
 * check.sh verifies this variant too.
 *
 * -DBROKEN: the old word's stop: stop_wake() leaves a SET word as it was
 * (no room for a count there) and bumps only an unset one. It implies
 * RESET, and spin must find the lost stop above.
 */
#ifdef BROKEN
#define RESET
#endif
#define UNSET   0
#define SET     1
#define WAITERS 2
#define STOP    4
#ifndef NW
#define NW 2
#endif
#define PLAIN NW  /* the plain waiter's index */

byte state = UNSET;
bool asleep[NW + 1];
bool stop = false;          /* stop_source: stop_requested() */
bool registered[NW];        /* a callback the stopper will run */
bool returned[NW + 1];

inline futex_wake_all() {
  atomic { byte wk = 0; do :: wk <= NW -> asleep[wk] = false; wk++ :: else -> break od }
}

inline futex_wait(id, v) {
  atomic { if :: state == v -> asleep[id] = true :: else -> skip fi };
#ifdef SPURIOUS
  if :: !asleep[id] -> skip :: asleep[id] -> asleep[id] = false fi
#else
  !asleep[id]
#endif
}

/* stop_wake(), run by the thread that runs the callback */
inline stop_wake(cb_s) {
#ifdef BROKEN
  atomic { cb_s = state; if :: cb_s & SET -> skip :: else -> state = state + STOP fi };
#else
  atomic { cb_s = state; state = state + STOP };   /* fetch_add, release */
#endif
  if :: cb_s & WAITERS -> futex_wake_all() :: else -> skip fi
}

/* announce()'s load and compare-exchange, shared by both kinds of waiter:
   leaves in s either a SET word or the value to sleep on */
inline announce_step(s) {
  do
  :: s = state;                                  /* acquire load */
     if
     :: s & (SET | WAITERS) -> break
     :: else -> atomic { if :: state == s -> state = s | WAITERS; s = state; break :: else -> skip fi }
     fi
  od
}

proctype stoppable(byte id) {
  byte s;
  byte cb_s;
  bool inline_cb = false;
  /* std::stop_callback's constructor */
  atomic { if :: stop -> inline_cb = true :: else -> registered[id] = true fi };
  if :: inline_cb -> stop_wake(cb_s) :: else -> skip fi;
  /* the spin: may see SET or the stop at any point, or give up; a spin
     ended by the stop goes on to announce(), which decides */
  if :: state & SET -> goto set :: true -> skip fi;
announce:
  announce_step(s);
  if :: s & SET -> goto set :: else -> skip fi;
  if :: stop -> goto stopped :: else -> skip fi;   /* the engine looks at the token */
  futex_wait(id, s);
  goto announce;
set:
  returned[id] = true;
  goto out;
stopped:
  assert(stop);
  returned[id] = true;
out:
  /* ~stop_callback: deregisters (waits for a callback in flight, which
     here runs to its end within the stopper's steps) */
  registered[id] = false
}

proctype plain() {
  byte s;
announce:
  announce_step(s);
  if :: s & SET -> goto done :: else -> skip fi;
  /* futex_wait(s); with no set (or a set hidden by the reset) it may
     sleep for good, a valid end */
  atomic { if :: state == s -> asleep[PLAIN] = true :: else -> skip fi };
#ifdef SPURIOUS
  if :: !asleep[PLAIN] -> skip :: asleep[PLAIN] -> asleep[PLAIN] = false fi;
#else
end_asleep:
  !asleep[PLAIN];
#endif
  goto announce;
done:
  returned[PLAIN] = true
}

proctype setter() {
  byte old;
  if
  :: skip
  :: atomic { old = state; state = (state | SET) & ~WAITERS };   /* set(): compare-exchange loop, release */
     if :: old & WAITERS -> futex_wake_all() :: else -> skip fi
#ifdef RESET
     ;
     state = state & ~SET                          /* reset(): fetch_and */
#endif
  fi
}

proctype stopper() {
  bool take[NW];
  byte k = 0;
  byte cb_s;
  /* request_stop(): the flag, and the callbacks registered by then */
  atomic {
    stop = true;
    do :: k < NW -> take[k] = registered[k]; registered[k] = false; k++ :: else -> break od
  };
  k = 0;
  do
  :: k < NW -> if :: take[k] -> stop_wake(cb_s) :: else -> skip fi; k++
  :: else -> break
  od
}

active proctype monitor() {
  timeout ->
    byte k = 0;
    do
    :: k < NW -> assert(returned[k]); k++
    :: else -> break
    od;
    assert(!(state & SET) || returned[PLAIN]);
    k = 0;
    do
    :: k <= NW -> assert(!(asleep[k] && (state & SET))); k++
    :: else -> break
    od
}

init {
  atomic {
    byte i = 0;
    do :: i < NW -> run stoppable(i); i++ :: else -> break od;
    run plain();
    run setter();
    run stopper()
  }
}
