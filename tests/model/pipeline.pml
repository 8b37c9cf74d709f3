/* The serial_in_order hand-off of weft::parallel_pipeline
 * (include/weft/detail/exec/pipeline_gate.hpp, src/exec/pipeline.cpp),
 * checked with spin.
 *
 * A ring of R slots, each word 0 (empty) or seq + 1 (item seq parked), and
 * `turn`, the sequence number allowed to run. R tokens bound the items
 * alive: the producer makes item s (in order) only while a token is free,
 * and an item frees its token after it has passed the stage. Items reach
 * the stage in any order (each is its own process, as items leave a
 * parallel stage in any order).
 *
 * arrive(s): fast path if turn == s; else park (store s + 1), re-check the
 * turn, and if it is s race for the slot with a CAS (s + 1 -> 0).
 * pass(s): publish turn = s + 1, then CAS slot s + 1 (s + 2 -> 0); whoever
 * wins the CAS runs the item. Each statement is one atomic step of the
 * C++ code (the loads, the seq_cst store, the CAS).
 *
 * Checked: the stage runs one item at a time, in sequence order, and when
 * no process can move every item has run (none is left parked with nobody
 * to run it); a parked item never overwrites another (the ring is big
 * enough); every token comes back.
 *
 * -DBROKEN: pass() looks at the slot before it publishes the turn (no
 * re-check after the publish). spin must find an item parked forever.
 */
#ifndef N
#define N 4        /* items */
#endif
#ifndef R
#define R 2        /* tokens = ring slots */
#endif

byte turn = 0;
byte word[R];
byte tokens = R;
byte ran = 0;      /* items run so far; the next must have seq == ran */
byte inside = 0;   /* items running the stage now */

inline run_stage(s) {
  atomic { inside++; assert(inside == 1); assert(s == ran) };
  atomic { ran++; inside-- }
}

proctype item(byte s) {
  byte cur = s;
  bool took = false;
  /* arrive(s) */
  if
  :: turn == s -> goto go                  /* acquire load: our turn already */
  :: else -> skip
  fi;
  assert(word[s % R] == 0);                 /* nobody else parked in our slot */
  word[s % R] = s + 1;                      /* seq_cst store: park */
  if
  :: turn == s ->                           /* seq_cst load: re-check the turn */
       atomic { if :: word[s % R] == s + 1 -> word[s % R] = 0 :: else -> goto out fi };  /* CAS */
       goto go
  :: else -> goto out
  fi;
go:
  run_stage(cur);
  /* pass(cur) */
#ifdef BROKEN
  atomic { took = (word[(cur + 1) % R] == cur + 2); if :: took -> word[(cur + 1) % R] = 0 :: else -> skip fi };
  turn = cur + 1;
#else
  turn = cur + 1;                           /* seq_cst store: publish the turn */
  atomic { took = (word[(cur + 1) % R] == cur + 2); if :: took -> word[(cur + 1) % R] = 0 :: else -> skip fi };  /* CAS */
#endif
  tokens++;                                 /* cur goes on, and frees its token at the end */
  if
  :: took -> cur = cur + 1; took = false; goto go
  :: else -> skip
  fi;
out:
  skip
}

proctype producer() {
  byte s = 0;
  do
  :: s < N -> atomic { tokens > 0 -> tokens--; run item(s) }; s++
  :: else -> break
  od
}

active proctype monitor() {
  timeout ->
    assert(ran == N);
    assert(tokens == R)
}

init {
  run producer()
}
