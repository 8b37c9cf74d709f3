/* The injection slots' ready bits (src/include/weft/detail/exec/injection_slots.hpp,
 * src/exec/injection_slots.cpp) together with the pool's sleep protocol
 * (src/exec/thread_pool.cpp, src/exec/steal.cpp, src/exec/idle_workers.cpp), checked with spin.
 *
 * Model: NS submitters, each with its own slot (`dq[s]` counts its queued
 * tasks), in one group: bit s of `ready` is the slot's bit, `summary` the
 * group's bit. Statements interleave in every order; the code's seq_cst RMWs,
 * loads and fences make these steps sequentially consistent, which is what
 * an interleaving model assumes.
 *
 * A submitter: push (dq[s]++; then the fence); mark(): if its bit is clear
 * set it, and then the summary if that is clear; then notify_one() (wake
 * one sleeper only if nobody searches). A worker (thief) reads the summary,
 * then the ready bits, and steals from a marked slot; a slot it finds empty
 * loses its bit, and the thief looks at the deque again and marks it again
 * (then wakes as after a push) if it refilled; a thief that cleared the
 * group's last bit clears the summary and looks at the ready bits again
 * likewise. Finding nothing it searches, announces sleep, rescans through
 * the bits (anything_queued()) and parks or cancels, as in pool.pml.
 *
 * Every pass here clears (the code's thieves clear only after 16 empty
 * looks in a row): a pass that does not clear only reads the bits and
 * steals, and a bit it leaves set only over-states where work is.
 *
 * The worker's search spin is one steal pass (the loop's); each pass's
 * locals are reset after use, so that they do not multiply the states.
 *
 * Checked: when no process can move (`timeout`), no task is left queued and
 * every task ran once; spin also reports a process stuck outside an end state.
 *
 * -DBROKEN: a thief clears a slot's bit without looking at the deque again;
 * a push that raced in is then invisible to the bits: spin must find a task
 * left queued while every worker sleeps.
 * -DBROKEN_SUMMARY: a thief clears the group's summary bit without looking
 * at the ready bits again: the same, one level up.
 * -DTAKE_BACK (checked by check.sh with one slot and three tasks):
 * submitter 0 then takes its last task back, as below.
 * verify also: -DTAKE_BACK
 *
 * -DBROKEN_TAKE_BACK (implies TAKE_BACK): submitter 0, which takes its last task back to run it
 * itself (a submit() followed by get()), pushes the tasks it took with it
 * back without marking the slot and notifying: a thief that found the slot
 * empty meanwhile has cleared its bit and sleeps, and the pushed-back tasks
 * are never found (the hang of a stress test whose submitters exit).
 */
/* The take-back is checked on its own (check.sh's "verify also" line):
 * with the two slots of the rest the states run into the hundreds of
 * millions; one slot shows the window. */
#ifdef BROKEN_TAKE_BACK
#define TAKE_BACK
#endif
#ifdef TAKE_BACK
#ifndef NS
#define NS 1
#endif
#ifndef NT
#define NT 3
#endif
#endif
#ifndef NW
#define NW 2
#endif
#ifndef NS
#define NS 2
#endif
/* Submitter 0 pushes NT tasks (a second push can find its bit still set),
 * the others one each. */
#ifndef NT
#define NT 2
#endif

byte dq[NS];
byte ready = 0;      /* the group's ready word: bit s for slot s */
bool summary = false;
byte ran = 0;
byte searching = 0;
byte sleeping = 0;
bool listed[NW];
bool permit[NW];

inline notify_one(idx) {
  idx = NW;
  if
  :: (searching == 0 && sleeping > 0) ->
       atomic {
         if
         :: (searching == 0) ->
              byte k = 0;
              do
              :: k < NW && listed[k] -> idx = k; break
              :: k < NW && !listed[k] -> k++
              :: k >= NW -> break
              od;
              if
              :: idx < NW -> listed[idx] = false; sleeping--; searching++
              :: else -> skip
              fi;
              k = 0                       /* spent: stale locals multiply the states */
         :: else -> skip
         fi
       };
       if :: idx < NW -> permit[idx] = true :: else -> skip fi
  :: else -> skip
  fi
}

/* mark(): each test and each set its own step (load, then RMW). */
inline mark(s) {
  if
  :: (ready & (1 << s)) == 0 ->
       ready = ready | (1 << s);
       if :: !summary -> summary = true :: else -> skip fi
  :: else -> skip
  fi
}

proctype submitter(byte s) {
  byte i = 0;
  byte idx;
  byte held;
  do
  :: (s == 0 && i < NT) || (s > 0 && i < 1) ->
       dq[s]++;            /* push, then the seq_cst fence */
       mark(s);            /* then, if it set a bit, a fence again */
       notify_one(idx);
       d_step { idx = 0; i++ }   /* idx reset: stale locals multiply the states */
  :: else -> break
  od;
  i = 0;
  /* Submitter 0 then waits for its last task (submit().get()) and takes it
   * back if no worker has (run_if_still_queued(): pop_batched() claims
   * everything from the top down to it with one CAS, then pushes the
   * others back). While it holds them the slot looks empty: a thief may
   * clear the bit (and the summary) and go to sleep. */
#ifdef TAKE_BACK
  if
  :: s == 0 ->
       atomic { held = dq[s]; dq[s] = 0 };   /* the CAS of top_ past [t, b] */
       if
       :: held > 0 ->
            do                               /* push back all but the last */
            :: held > 1 -> dq[s]++; held--
            :: else -> break
            od;
#ifndef BROKEN_TAKE_BACK
            /* after the push-backs, as after a push: the fence, mark(), notify_one() */
            mark(s);
            notify_one(idx);
            idx = 0;
#endif
            ran++                            /* runs the task it waits for */
       :: else -> skip                       /* thieves took them all */
       fi
  :: else -> skip
  fi
#else
  skip
#endif
}

/* retire_group(): clear the summary bit, then read the word again. */
inline retire(rearmed) {
  summary = false;
#ifndef BROKEN_SUMMARY
  if :: ready != 0 -> summary = true; rearmed = true :: else -> skip fi
#endif
}

/* One pass of InjectionSlots::steal() over a snapshot of the ready word:
 * got = a task was taken; rearmed = a bit was set again (the caller then
 * wakes as after a push). */
inline steal(got, rearmed, s, bits, before) {
  if
  :: summary ->
       bits = ready;
       if
       :: bits == 0 -> retire(rearmed)
       :: else ->
            s = 0;
            do
            :: s < NS && (bits & (1 << s)) != 0 ->
                 if
                 :: atomic { dq[s] > 0 -> dq[s]--; got = true } -> break
                 :: else ->
                      atomic { before = ready; ready = ready & ~(1 << s) };   /* fetch_and, then the fence */
#ifndef BROKEN
                      if
                      :: dq[s] > 0 -> mark(s); rearmed = true      /* look again: refilled */
                      :: else ->
#else
                      if
                      :: true ->
#endif
                           if :: before == (1 << s) -> retire(rearmed) :: else -> skip fi
                      fi;
                      s++
                 fi
            :: s < NS && (bits & (1 << s)) == 0 -> s++
            :: s >= NS -> break
            od
       fi
  :: else -> skip
  fi
}

/* anything_queued() through the bits, in the sleeper's rescan. */
inline rescan(seen, s, bits) {
  seen = false;
  if
  :: summary ->
       bits = ready;
       s = 0;
       do
       :: s < NS && (bits & (1 << s)) != 0 && dq[s] > 0 -> seen = true; break
       :: s < NS && !((bits & (1 << s)) != 0 && dq[s] > 0) -> s++
       :: s >= NS -> break
       od
  :: else -> skip
  fi
}

proctype worker(byte id) {
  bool is_searching = false;
  bool was_listed;
  bool got;
  bool rearmed;
  bool seen;
  byte bits;
  byte before;
  byte s;
  byte idx;
loop:
  steal(got, rearmed, s, bits, before);
  if :: rearmed -> notify_one(idx) :: else -> skip fi;
  d_step { rearmed = false; s = 0; bits = 0; before = 0; idx = 0 };
  if :: got -> got = false; goto found :: else -> skip fi;
  if
  :: !is_searching -> searching++; is_searching = true; goto loop   /* search: one more pass */
  :: else -> skip
  fi;
  atomic { listed[id] = true; searching--; sleeping++ };   /* announce (seq_cst RMW), then fence */
  is_searching = false;
  rescan(seen, s, bits);
  skip;  /* the rescan's break lands here, not inside the d_step */
  d_step { s = 0; bits = 0 };
  if
  :: seen ->
       seen = false;                                               /* the rescan saw work: cancel */
       atomic {
         if
         :: listed[id] -> listed[id] = false; sleeping--; searching++; was_listed = true
         :: else -> was_listed = false
         fi
       };
       if :: !was_listed -> permit[id]; permit[id] = false :: else -> skip fi;
       was_listed = false;
       is_searching = true;
       goto loop
  :: else ->
end_park:
       permit[id];                                         /* park */
       permit[id] = false;
       is_searching = true;                                /* the waker counted us as searching */
       goto loop
  fi;
found:
  if :: is_searching -> searching--; is_searching = false :: else -> skip fi;
  ran++;
  goto loop
}

active proctype monitor() {
  byte k;
  timeout ->
    k = 0;
    do
    :: k < NS -> assert(dq[k] == 0); k++
    :: else -> break
    od;
    assert(ran == NT + NS - 1)
}

init {
  atomic {
    byte i = 0;
    do :: i < NW -> run worker(i); i++ :: else -> break od;
    i = 0;
    do :: i < NS -> run submitter(i); i++ :: else -> break od
  }
}
