/* TaskGraph's runs (src/exec/task_graph.cpp), checked with spin: the
 * per-run join counters, the pending count that ends a run, and the queue
 * of runs of one graph.
 *
 * Model: the diamond A -> {B, C} -> D (nodes 0..3), W workers taking ready
 * nodes from one bag (the pool: any worker may take any queued node; the
 * code's "run the first ready successor on this thread" is one of the
 * interleavings where the same worker takes it), and RUNS callers that each
 * queue one run of REPS repetitions. Each load, store and read-modify-write
 * is one step; the code's acq_rel RMWs on join and pending, and the pool's
 * push/pop, order the plain data as an interleaving model assumes.
 *
 *   caller:   under the graph's mutex, append the request; the caller that
 *             found the queue empty starts the run (start_repetition).
 *   start_repetition: every join = its node's strong predecessors, pending =
 *             the sources (1: A), push A.
 *   worker:   take a node; reset its own join; run it (here: check that
 *             each predecessor finished in this repetition and that the node
 *             has not run in it yet, then record it); for each successor,
 *             decrement its join in one RMW, and if that brought it to 0,
 *             pending + 1, then push it; then pending - 1 in one RMW, and if
 *             that brought it to 0, finish.
 *   finish:   the thread that brought pending to 0: another repetition of
 *             the same request, or (under the mutex) pop the request,
 *             complete its future, and start the next request if any.
 *
 * Checked: within each repetition every node runs exactly once and only
 * after all its predecessors finished in that repetition (so repetitions and
 * runs never overlap); a run completes only after its last node; at the end
 * (every process blocked) all RUNS x REPS repetitions completed and every
 * node ran in each.
 *
 * -DBROKEN: a node counts itself out of pending before it readies its
 * successors; pending reaches 0 while a successor is still to be pushed, and
 * the run completes early (spin finds a completed run without D, or a next
 * repetition overlapping the last one).
 * -DBROKEN_JOIN: the successor's join is decremented and then read in two
 * steps (a relaxed load after the decrement instead of fetch_sub's result):
 * both of D's predecessors can read 0, and D is pushed twice.
 */
#ifndef W
#define W 2
#endif
#ifndef RUNS
#define RUNS 2
#endif
#ifndef REPS
#define REPS 2
#endif
#define N 4

byte strong[N];
byte join[N];
byte pending;
byte rep;          /* the repetition now running: 1, 2, ... */
byte queued;       /* requests queued; the front one is running */
byte reps_left;    /* of the front request */
byte finished[N];  /* the repetition each node last finished in */
byte runs_of[N];   /* how many times each node ran */
byte completed;    /* requests whose future completed */
bool mu;           /* the graph's mutex */
chan ready = [N * 2] of { byte };

inline lock() { atomic { !mu -> mu = true } }
inline unlock() { mu = false }

inline start_repetition() {
  join[0] = strong[0];
  join[1] = strong[1];
  join[2] = strong[2];
  join[3] = strong[3];
  rep++;
  pending = 1;
  ready!0
}

inline start_front() {
  reps_left = REPS;
  start_repetition()
}

inline ready_succ(s) {
#ifdef BROKEN_JOIN
  join[s]--;
  last = (join[s] == 0);
#else
  atomic { join[s]--; last = (join[s] == 0) }
#endif
  if
  :: last -> pending++; ready!s
  :: else -> skip
  fi
}

inline ready_successors(n) {
  if
  :: n == 0 -> ready_succ(1); ready_succ(2)
  :: n == 1 || n == 2 -> ready_succ(3)
  :: else -> skip
  fi
}

inline finish() {
  /* the repetition is whole: its last node (D) ran in it */
  assert(finished[3] == rep);
  reps_left--;
  if
  :: reps_left > 0 -> start_repetition()
  :: else ->
     lock();
     completed++;
     queued--;
     more = (queued > 0);
     unlock();
     if
     :: more -> start_front()
     :: else -> skip
     fi
  fi
}

inline node_done() {
  atomic { pending--; zero = (pending == 0) };
  if
  :: zero -> finish()
  :: else -> skip
  fi
}

proctype worker() {
  byte n, r;
  bool last, zero, more;
end:
  do
  :: ready?n ->
     r = rep;
     /* the node's predecessors finished in this repetition, and it has not */
     if
     :: n == 1 || n == 2 -> assert(finished[0] == r)
     :: n == 3 -> assert(finished[1] == r && finished[2] == r)
     :: else -> skip
     fi;
     assert(finished[n] != r);
     join[n] = strong[n];
     finished[n] = r;
     runs_of[n]++;
#ifdef BROKEN
     node_done();
     ready_successors(n);
#else
     ready_successors(n);
     node_done();
#endif
  od
}

proctype caller() {
  bool first;
  lock();
  queued++;
  first = (queued == 1);
  unlock();
  if
  :: first -> start_front()
  :: else -> skip
  fi
}

init {
  byte i;
  strong[0] = 0;
  strong[1] = 1;
  strong[2] = 1;
  strong[3] = 2;
  atomic {
    for (i : 1 .. W) { run worker() }
    for (i : 1 .. RUNS) { run caller() }
  }
  timeout ->
  assert(completed == RUNS && queued == 0);
  assert(runs_of[0] == RUNS * REPS && runs_of[1] == RUNS * REPS && runs_of[2] == RUNS * REPS &&
         runs_of[3] == RUNS * REPS)
}
