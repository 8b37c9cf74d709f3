/* The n-way join's group take-back (src/include/weft/detail/exec/deque.hpp:
 * take_newest_n(); used by invoke_join() in src/exec/invoke.cpp), checked
 * with spin against single-task thieves (steal()), on a worker's own deque.
 *
 * Model: the owner pushes OLD older tasks (numbered 1..OLD), then a fork of
 * K tasks (OLD+1..OLD+K) with one store of bottom (push_n()), then takes
 * the fork's K tasks back at once: store bottom = b - K, read top t (after
 * the seq_cst fence); if t < b - K they are all its own and it takes them;
 * otherwise it restores bottom = b and pops one at a time (pop(): store
 * bottom = b - 1, read top, the last task raced for through a CAS of top).
 * Then it pops until it finds the deque empty. NTH thieves steal one task
 * each: read top, read bottom (after their fence), read the slot, CAS top
 * t -> t + 1. The slots are read by the owner before its store (the
 * pointers it compares), which thieves never write, so the model leaves
 * them out. Indices do not wrap. Each load, store and CAS is one step; the
 * code's seq_cst fences and RMWs make these steps sequentially consistent,
 * which is what an interleaving model assumes.
 *
 * The hint the code reads before its store (top < b - K, relaxed) is one
 * step too, taken from top at any moment: a stale hint only sends the
 * owner to the store and the check, which decide.
 *
 * Checked: every task is taken exactly once (an assert at each take, and
 * at the end that all were taken). Sizes: OLD = 1 older task, a fork of
 * K = 3, NTH = 2 thieves (0.7 million states); and with two older tasks
 * under a fork of four (2.5 million):
 * verify also: -DOLD=2 -DK=4
 *
 * -DBROKEN: the owner takes the group when t <= b - K, the group's oldest
 * task included when it is the oldest queued (pop()'s contested last task,
 * which needs the CAS): spin must find a task a thief took as well.
 * -DBROKEN_NO_RESTORE: a failed group take leaves bottom lowered and pops
 * from there: the group's tasks no thief took are lost.
 */
#ifndef OLD
#define OLD 1
#endif
#ifndef K
#define K 3
#endif
#ifndef NTH
#define NTH 2
#endif
#define NT (OLD + K)
#define CAP 8

int top = 0;
int bottom = 0;
byte slot[CAP];
byte taken[NT + 1];
bool finished = false;
byte thieves_done = 0;

inline take(id) {
  taken[id]++;
  assert(taken[id] == 1)
}

/* pop(): the newest task, or none (x = 0) once the deque is empty. */
inline pop_one(x) {
  b = bottom - 1;
  bottom = b;
  t = top;             /* after the seq_cst fence */
  if
  :: t > b -> bottom = b + 1; x = 0
  :: t < b -> x = slot[b]
  :: t == b ->
    x = slot[b];
    atomic { if :: top == t -> top = t + 1 :: else -> x = 0 fi };
    bottom = b + 1
  fi
}

proctype Owner() {
  int b, t, nb, i;
  byte x;
  i = 1;
  do
  :: i <= OLD -> slot[bottom] = i; bottom = bottom + 1; i++
  :: else -> break
  od;
  /* push_n(): the fork's K slots, then one release of bottom */
  i = 0;
  do
  :: i < K -> slot[bottom + i] = OLD + 1 + i; i++
  :: else -> break
  od;
  bottom = bottom + K;
  /* take_newest_n(K) */
  b = bottom;
  nb = b - K;
  if
  :: nb <= top -> skip            /* the hint: one at a time */
  :: else ->
    bottom = nb;
    t = top;                      /* after the seq_cst fence */
#ifdef BROKEN
    if
    :: t <= nb ->
#else
    if
    :: t < nb ->
#endif
      i = 0;
      do
      :: i < K -> take(slot[nb + i]); i++
      :: else -> break
      od;
      goto drain
    :: else ->
#ifndef BROKEN_NO_RESTORE
      bottom = b;
#endif
      skip
    fi
  fi;
  /* one at a time (the join's pops), then the rest */
drain:
  do
  :: true ->
    pop_one(x);
    if
    :: x == 0 -> break
    :: else -> take(x)
    fi
  od;
  finished = true;
  thieves_done == NTH;
  i = 1;
  do
  :: i <= NT -> assert(taken[i] == 1); i++
  :: else -> break
  od
}

proctype Thief() {
  int t, b;
  byte x;
  do
  :: finished && top >= bottom -> break
  :: else ->
    t = top;
    b = bottom;        /* after the seq_cst fence */
    if
    :: t >= b -> skip
    :: else ->
      x = slot[t];
      atomic {
        if
        :: top == t -> top = t + 1; take(x)
        :: else -> skip
        fi
      }
    fi
  od;
  thieves_done++
}

init {
  atomic {
    run Owner();
    byte k = 0;
    do
    :: k < NTH -> run Thief(); k++
    :: else -> break
    od
  }
}
