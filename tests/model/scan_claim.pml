/* One window of parallel_inclusive_scan / parallel_exclusive_scan
 * (include/weft/exec/parallel_scan.hpp, scan_here(): run_round(), the same
 * for each of its two windows): who takes which chunk, checked with spin.
 *
 * Model: C chunks, 0..C-1. The scanner owns chunk 0 from the start and
 * takes chunks from the front; NF folders take chunks from the back; both
 * through one word holding the untaken chunks [lo, hi) (lo | hi << 32 in
 * the code), each take one CAS of the whole word from the value read
 * (lo + 1 at the front, hi - 1 at the back), no take once lo >= hi or once
 * `failed` is set. Any taker may fail instead of finishing a chunk (op
 * throws, or the stop gate says no): it sets `failed`, and the others take
 * nothing more. The join is the end of every process (parallel_invoke_n()'s
 * join).
 *
 * Checked: every chunk is taken at most once; and, when nothing failed,
 * at the join every chunk was taken, the scanner's chunks are exactly
 * [0, scanned) (its count, as the code keeps it) and the folders' exactly
 * [scanned, C): the next round gives the chunks from `scanned` on carries
 * made of their folded totals, so a chunk neither scanned nor folded, or
 * one folded below `scanned`, would be a wrong carry.
 *
 * -DBROKEN_SPLIT: a take reads the word and then writes it back changed
 * (a load and a store, not a CAS): two takers can take the same chunk.
 * -DBROKEN_NO_RESERVE: the word starts at lo = 0, while the scanner still
 * scans chunk 0 without taking it: a folder can fold chunk 0 too.
 */
#ifndef C
#define C 5
#endif
#ifndef NF
#define NF 2
#endif

byte lo = 1;
byte hi = C;
bool failed = false;
byte taken[C];       /* how many times each chunk was taken */
bool by_scanner[C];
byte scanned = 0;
byte done = 0;

inline take(c, scanner) {
  taken[c]++;
  assert(taken[c] == 1);
  by_scanner[c] = scanner
}

/* One CAS on the pair: from the (l, h) read to the next value; `got` is
 * the chunk taken, or C if none (the word moved on: read it again). */
inline claim(front, l, h, got) {
#ifdef BROKEN_SPLIT
  if
  :: front -> lo = l + 1; got = l
  :: else -> hi = h - 1; got = h - 1
  fi
#else
  atomic {
    if
    :: lo == l && hi == h ->
       if
       :: front -> lo = l + 1; got = l
       :: else -> hi = h - 1; got = h - 1
       fi
    :: else -> got = C
    fi
  }
#endif
}

proctype Scanner() {
  byte l, h, got;
  take(0, true);
  scanned = 1;
  /* the first chunk may fail too */
  if
  :: failed = true; goto out
  :: skip
  fi;
  do
  :: failed -> break
  :: else ->
     atomic { l = lo; h = hi };
     if
     :: l >= h -> break
     :: else ->
        claim(true, l, h, got);
        if
        :: got == C -> skip
        :: else ->
           take(got, true);
           if
           :: failed = true; break
           :: scanned = got + 1
           fi
        fi
     fi
  od;
out:
  done++
}

proctype Folder() {
  byte l, h, got;
  do
  :: failed -> break
  :: else ->
     atomic { l = lo; h = hi };
     if
     :: l >= h -> break
     :: else ->
        claim(false, l, h, got);
        if
        :: got == C -> skip
        :: else ->
           take(got, false);
           if
           :: failed = true; break
           :: skip
           fi
        fi
     fi
  od;
  done++
}

init {
  byte i;
#ifdef BROKEN_NO_RESERVE
  lo = 0;
#endif
  atomic {
    run Scanner();
    i = 0;
    do
    :: i < NF -> run Folder(); i++
    :: else -> break
    od
  };
  done == NF + 1;  /* the join */
  if
  :: !failed ->
     i = 0;
     do
     :: i < C ->
        assert(taken[i] == 1);
        assert(by_scanner[i] == (i < scanned));
        i++
     :: else -> break
     od
  :: else -> skip
  fi
}
