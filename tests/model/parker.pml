/* The Parker protocol of include/weft/sync/parker.hpp, checked with spin.
 *
 * One word: EMPTY (0), NOTIFIED (1), PARKED (255, i.e. EMPTY - 1 in the
 * code's unsigned arithmetic). park() takes a permit with one fetch_sub
 * (NOTIFIED -> EMPTY) or announces its sleep (EMPTY -> PARKED), then
 * sleeps on the futex while the word is PARKED and takes the permit with a
 * compare-exchange NOTIFIED -> EMPTY when woken (spurious wake-ups go round
 * again). unpark() exchanges in NOTIFIED and wakes the owner if the old
 * value was PARKED.
 *
 * Processes: NU unparkers each add one to `count` and unpark; the owner
 * parks until it has seen count == NU (the ParkerStress test's shape).
 *
 * Checked: when nothing can move (`timeout`), the owner has finished (it
 * is not asleep with a permit waiting). With -DSPURIOUS the futex may also
 * wake the owner for no reason (the code must absorb it); that run checks
 * the same property. Without it a lost wake-up cannot be hidden by a lucky
 * spurious one, which is how the broken variant is caught.
 *
 * -DBROKEN: unpark() loads the word, stores NOTIFIED, and wakes only if the
 * load saw PARKED (a load and a store instead of one exchange).
 */
#define EMPTY    0
#define NOTIFIED 1
#define PARKED   255
#ifndef NU
#define NU 2
#endif

byte state = EMPTY;
byte count = 0;
bool asleep = false;
bool owner_done = false;

inline unpark() {
  byte old;
#ifdef BROKEN
  old = state;
  state = NOTIFIED;
#else
  atomic { old = state; state = NOTIFIED };
#endif
  if :: old == PARKED -> asleep = false :: else -> skip fi   /* futex_wake(1) */
}

proctype unparker() {
  count++;
  unpark()
}

proctype owner() {
  byte old;
check:
  if :: count == NU -> goto done :: else -> skip fi;
  /* park(): the spin may or may not see the permit first; fetch_sub covers both */
  atomic { old = state; state = state - 1 };
  if
  :: old == NOTIFIED -> goto check
  :: else -> skip
  fi;
sleep:
  atomic { if :: state == PARKED -> asleep = true :: else -> skip fi };  /* futex_wait(PARKED) */
#ifdef SPURIOUS
  if
  :: !asleep -> skip
  :: asleep -> asleep = false          /* a spurious wake-up */
  fi;
#else
  !asleep;
#endif
  atomic { if :: state == NOTIFIED -> state = EMPTY; goto check :: else -> skip fi };
  goto sleep;
done:
  owner_done = true
}

active proctype monitor() {
  timeout -> assert(owner_done)
}

init {
  atomic {
    byte i = 0;
    run owner();
    do :: i < NU -> run unparker(); i++ :: else -> break od
  }
}
