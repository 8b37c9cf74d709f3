/* The batch steal from an injection deque (src/include/weft/detail/exec/deque.hpp:
 * steal_batch() and pop_batched(); used by InjectionSlots::steal() and by
 * the submitter's take-backs in src/exec/injector.cpp), checked with spin.
 * This is the deque level of the injection protocol: injection.pml checks
 * the bits and the sleep protocol over a count of queued tasks, and a batch
 * does not change that argument (a worker that moves a batch into its own
 * deque is awake, and pushes, fences and looks at the idle word as any push).
 *
 * Model: one owner (the submitter) pushes NT tasks, numbered 1..NT, into the
 * deque `slot[top..bottom)` and then pops until it finds the deque empty;
 * NTH thieves take batches of k = min(B, ceil((bottom - top) / 2)) tasks
 * (B stands for kMaxBatch, scaled down) with one CAS of top from the top
 * they read. Indices do not wrap (the array is large enough), so the model
 * is about who takes what, not about the ring buffer. Each load, store and
 * CAS is one step; the code's seq_cst fences and RMWs make these steps
 * sequentially consistent, which is what an interleaving model assumes.
 *
 * pop_batched(): store bottom = b (= bottom - 1), read top t; empty if
 * t > b; if b - t >= B no batch can reach slot b and the owner takes it
 * without a CAS; otherwise it claims [t, b] through top (CAS t -> b + 1,
 * reloading t on failure, empty if t passes b), keeps slot b and pushes the
 * others back in their order.
 *
 * Checked: every task is taken exactly once (an assert at each take, and at
 * the end that all were taken).
 *
 * -DBROKEN: the owner pops as plain Chase-Lev does (no CAS unless the task is
 * the last one, b == t): a thief that read top and bottom before the owner's
 * pops takes a batch that reaches a task the owner took; spin must find a
 * task taken twice.
 */
#ifndef NT
#define NT 5
#endif
#ifndef NTH
#define NTH 2
#endif
#ifndef B
#define B 2
#endif
#define CAP 16

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

inline push(id) {
  slot[bottom] = id;
  bottom = bottom + 1   /* release: the slot is written before */
}

proctype Owner() {
  int b, t, i, n;
  byte x;
  byte rest[B];
  byte next = 1;
  do
  :: next <= NT -> push(next); next++
  :: next > NT -> break
  od;
  /* pop until the deque is empty */
  do
  :: true ->
    b = bottom - 1;
    bottom = b;
    t = top;           /* after the seq_cst fence */
    if
    :: t > b -> bottom = b + 1; break     /* empty */
    :: else ->
      x = slot[b];
#ifdef BROKEN
      if
      :: b - t >= 1 -> take(x)
      :: else ->
        atomic { if :: top == t -> top = t + 1; take(x) :: else -> skip fi };
        bottom = b + 1
      fi
#else
      if
      :: b - t >= B -> take(x)
      :: else ->
        /* claim [t, b] through top: CAS t -> b + 1, reloading t */
        do
        :: atomic { top == t -> top = b + 1 }; break
        :: atomic { top != t -> t = top };
          if
          :: t > b -> x = 0; break     /* thieves took them all, ours too */
          :: else -> skip
          fi
        od;
        if
        :: x == 0 -> bottom = b + 1
        :: else ->
          n = b - t;
          i = 0;
          do
          :: i < n -> rest[i] = slot[t + i]; i++
          :: else -> break
          od;
          bottom = b + 1;
          i = 0;
          do
          :: i < n -> push(rest[i]); i++
          :: else -> break
          od;
          take(x)
        fi
      fi
#endif
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
  int t, b, k, i;
  byte got[B];
  do
  :: finished && top >= bottom -> break
  :: else ->
    t = top;
    b = bottom;        /* after the seq_cst fence */
    if
    :: t >= b -> skip
    :: else ->
      k = (b - t + 1) / 2;
      if :: k > B -> k = B :: else -> skip fi;
      i = 0;
      do
      :: i < k -> got[i] = slot[t + i]; i++
      :: else -> break
      od;
      atomic {
        if
        :: top == t ->
          top = t + k;
          i = 0;
          do
          :: i < k -> take(got[i]); i++
          :: else -> break
          od
        :: else -> skip
        fi
      }
    fi;
    /* the pass's locals reset, so they do not multiply the states */
    t = 0; b = 0; k = 0; i = 0;
    do
    :: i < B -> got[i] = 0; i++
    :: else -> i = 0; break
    od
  od;
  thieves_done++
}

init {
  byte j = 0;
  atomic {
    run Owner();
    do
    :: j < NTH -> run Thief(); j++
    :: else -> break
    od
  }
}
