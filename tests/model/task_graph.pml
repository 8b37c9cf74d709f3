/* TaskGraph's runs (src/exec/task_graph.cpp), checked with spin: the
 * per-run join counters, the pending count that ends a run (with the
 * counts a thread hands on to the successor it runs next and keeps as
 * credit), and the queue of runs of one graph.
 *
 * Model: the graph S1 -> C, S2 -> {B, C}, {B, C} -> A (nodes 0..4: S1, S2,
 * A, B, C). S1 and S2 are the sources: a run pushes one range task holding
 * both, as the code's tree of source ranges does for a leaf. A and C have
 * two strong predecessors each (join counters); B has one (ready at once,
 * no counter). S2 hands B on to its own thread and pays for C with the
 * credit S1 left, so B and C can finish on two threads at once and race on
 * A's counter. W workers take tasks from one bag (the pool: any worker may
 * take any queued task), RUNS callers each queue one run of REPS
 * repetitions. Each load, store and read-modify-write is one step; the
 * code's acq_rel RMWs on join and pending, and the pool's push/pop, order
 * the plain data as an interleaving model assumes.
 *
 *   caller:   under the graph's mutex, append the request; the caller that
 *             found the queue empty starts the run (start_repetition).
 *   start_repetition: unless the counters are ready, A's and C's join = 2;
 *             then not ready; pending = 2 (the sources), push the range
 *             task.
 *   a task:   runs a chain per node it holds (the range: S1's, then S2's;
 *             a node task: its node's), with one `credit` for the task:
 *             - a node with a join counter sets it back to 2 as it starts
 *               (its predecessors have all finished);
 *             - run the node (here: check that each predecessor finished in
 *               this repetition and that the node has not run in it, then
 *               record it);
 *             - for each successor it readies (A: decrement its join in one
 *               RMW, ready if that brought it to 0; B and C: ready at once):
 *               the first becomes `next`, run after it on this thread, and
 *               takes over the node's count; each other one is paid for from
 *               credit if credit > 0, else by pending + 1, then pushed;
 *             - a node with no `next` leaves its count as credit + 1.
 *             - after its chains, the task may take further node tasks
 *               and run their chains with the same credit (the code takes
 *               only the nodes it pushed itself that are still at its
 *               deque's bottom; the model lets it take any queued node
 *               task, which covers those);
 *             At the task's end: pending - credit in one RMW; if that
 *             brought it to 0, finish.
 *   finish:   the thread that brought pending to 0: the counters are ready
 *             (every node ran, and set its own back as it started: the
 *             code's rule for a repetition that neither failed nor was
 *             stopped, of a graph without condition nodes); another repetition of
 *             the same request, or (under the mutex) pop the request,
 *             complete its future, and start the next request if any.
 *
 * Checked: within each repetition every node runs exactly once and only
 * after all its predecessors finished in that repetition (so repetitions and
 * runs never overlap); a repetition ends only after all its nodes ran; at
 * the end (every process blocked) all RUNS x REPS repetitions completed and
 * every node ran in each.
 *
 * -DBROKEN: a pushed successor is not paid for (neither from credit nor by
 * pending + 1); pending reaches 0 while it is still queued, and the run ends
 * early (spin finds a repetition ended without all its nodes, or the next
 * one overlapping it).
 * -DBROKEN_JOIN: a join is decremented and then read in two steps (a load
 * after the decrement instead of fetch_sub's result): both of A's
 * predecessors can read 0, and A runs twice.
 * -DBROKEN_TAKE_ANEW: a node task taken back starts a credit of its own and
 * drops the task's (as if the counts went with the task that ended): pending
 * never reaches 0 and the run never ends.
 * -DBROKEN_STALE_COUNTER: a node does not set its counter back as it starts,
 * and start_repetition still skips the reset after a whole repetition: the
 * next repetition finds the counters at 0, never readies C (nor A), and
 * never ends.
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
#define N 5
#define RANGE 9  /* the task that holds both sources */

byte join[N];      /* A's and C's join counters */
byte pending;
byte rep;          /* the repetition now running: 1, 2, ... */
byte queued;       /* requests queued; the front one is running */
byte reps_left;    /* of the front request */
byte finished[N];  /* the repetition each node last finished in */
byte runs_of[N];   /* how many times each node ran */
byte completed;    /* requests whose future completed */
bool ready_counters; /* every join counter holds 2 (start_repetition may skip the reset) */
bool mu;           /* the graph's mutex */
chan bag = [N + 2] of { byte };

inline lock() { atomic { !mu -> mu = true } }
inline unlock() { mu = false }

inline start_repetition() {
  if
  :: !ready_counters -> join[2] = 2; join[4] = 2
  :: else -> skip
  fi;
  ready_counters = false;
  rep++;
  pending = 2;
  bag!RANGE
}

inline start_front() {
  reps_left = REPS;
  start_repetition()
}

/* A successor `s` is ready: it becomes next, or is paid for and pushed. */
inline ready(s) {
  if
  :: next == 255 -> next = s
  :: else ->
#ifndef BROKEN
     if
     :: credit > 0 -> credit--
     :: else -> pending++
     fi;
#endif
     bag!s
  fi
}

/* A successor `s` with two predecessors: ready when its join reaches 0. */
inline ready_join(s) {
#ifdef BROKEN_JOIN
  join[s]--;
  last = (join[s] == 0);
#else
  atomic { join[s]--; last = (join[s] == 0) };
#endif
  if
  :: last -> ready(s)
  :: else -> skip
  fi
}

/* Runs node n and the nodes handed on to this thread after it. */
inline run_chain(first) {
  n = first;
  do
  :: n == 255 -> break
  :: else ->
     r = rep;
     if
     :: n == 2 -> assert(finished[3] == r && finished[4] == r)
     :: n == 3 -> assert(finished[1] == r)
     :: n == 4 -> assert(finished[0] == r && finished[1] == r)
     :: else -> skip
     fi;
     assert(finished[n] != r);
#ifndef BROKEN_STALE_COUNTER
     if
     :: n == 2 || n == 4 -> join[n] = 2
     :: else -> skip
     fi;
#endif
     finished[n] = r;
     runs_of[n]++;
     next = 255;
     if
     :: n == 0 -> ready_join(4)
     :: n == 1 -> ready(3); ready_join(4)
     :: n == 3 || n == 4 -> ready_join(2)
     :: else -> skip
     fi;
     if
     :: next == 255 -> credit++
     :: else -> skip
     fi;
     n = next
  od
}

inline finish() {
  /* the repetition is whole: every node ran in it */
  assert(finished[0] == rep && finished[1] == rep && finished[2] == rep && finished[3] == rep &&
         finished[4] == rep);
  ready_counters = true;
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

inline release() {
  atomic { pending = pending - credit; zero = (credit > 0 && pending == 0) };
  credit = 0;
  if
  :: zero -> finish()
  :: else -> skip
  fi
}

proctype worker() {
  byte t, n, next, r, credit;
  bool last, zero, more, took;
end:
  do
  :: bag?t ->
     credit = 0;
     if
     :: t == RANGE -> run_chain(0); run_chain(1)
     :: else -> run_chain(t)
     fi;
     /* take back node tasks and run them under this task's credit */
     do
     :: atomic {
          nempty(bag) -> bag?<t>;
          if
          :: t != RANGE -> bag?t; took = true
          :: else -> took = false
          fi
        };
        if
        :: took ->
#ifdef BROKEN_TAKE_ANEW
           credit = 0;
#endif
           run_chain(t)
        :: else -> break
        fi
     :: true -> break
     od;
     release()
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
  atomic {
    for (i : 1 .. W) { run worker() }
    for (i : 1 .. RUNS) { run caller() }
  }
  timeout ->
  assert(completed == RUNS && queued == 0);
  for (i : 0 .. N - 1) { assert(runs_of[i] == RUNS * REPS) }
}
