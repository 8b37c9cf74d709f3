/* The seat (src/exec/seat.cpp): an outside thread that calls a blocking
 * algorithm computes as one of the pool's P threads while one parked worker
 * sits out, checked with spin on top of the sleep/wake protocol of
 * pool.pml (the workers, submitters and wake ramp below are that model's).
 *
 * The caller leases a listed sleeper (IdleWorkers::lease_sleeper(): under
 * the mutex, off the list and out of `sleeping`, its Parker untouched, so
 * no waker can wake it), or finds none and hands its call to the pool as
 * before (modelled as a submitter's pushes). Seated, it pushes NC tasks
 * through its own deque (push; fence; notify_one, as a worker pushes) and
 * helps: takes queued tasks, any number of times (its join runs what
 * nobody stole; a task it ran may have posted more, left queued). Then it
 * gives the worker back (IdleWorkers::return_sleeper(): under the mutex,
 * on the list and counted as sleeping, as the worker's own announcement
 * would), fences, and rescans: a task still queued gets a notify_one().
 *
 * Checked: when no process can move, no task is left queued, every task
 * ran, the counters match the list (pool.pml's end state), and a leased
 * worker never runs a task while its caller is seated (at most P threads
 * compute: the caller and P - 1 workers). A worker caught between its
 * announcement and its park when leased finds itself off the list and
 * waits for a permit, which only the lease's end can lead to.
 *
 * Sizes: NW = 2 workers, NS = 1 submitter of NT = 2 tasks, NC = 2 tasks of
 * the caller's (2.0M states, a few seconds, with the dead locals reset as
 * pool.pml says); NW=1 verifies too.
 *
 * -DBROKEN_SEAT: the caller gives the worker back without the rescan. spin
 * must find the lost wake-up (a task queued, every worker parked): with one
 * worker, leased, the pushes saw nobody to wake, and a caller that did not
 * run them leaves them queued.
 */
#ifndef NW
#ifdef BROKEN_SEAT
#define NW 1   /* the flaw needs every worker leased: nobody else to wake */
#else
#define NW 2
#endif
#endif
#ifndef NS
#define NS 1
#endif
#ifndef NT
#define NT 2
#endif
#ifndef NC
#define NC 2
#endif

byte queue = 0;
byte ran = 0;
byte searching = 0;
byte sleeping = 0;
bool listed[NW];
bool permit[NW];
bool leased[NW];
byte seated_lease = NW;   /* the leased worker while the caller is seated; NW: none */

/* notify_one(): after the push and the fence. The unpark happens after
 * the mutex is released, as in the code. */
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
              k = 0                             /* spent: see pool.pml, "Dead locals" */
         :: else -> skip
         fi
       };
       if :: idx < NW -> permit[idx] = true :: else -> skip fi
  :: else -> skip
  fi;
  d_step { idx = 0 }                            /* spent */
}

/* found()'s ramp: after the searcher's decrement and fence, read the
 * searchers and the queue, take up to (queued - searching) sleepers under
 * the mutex, unpark each after it. Without the code's searchers' bound
 * (search_room()), which pool.pml models: with nobody searching the bound
 * still lets one wake, and the seat's argument rests on that case. */
inline wake_ramp(want, k) {
  want = searching;
  if
  :: queue > want -> want = queue - want
  :: else -> want = 0
  fi;
  atomic {
    k = 0;
    do
    :: k < NW && want > 0 && listed[k] ->
         listed[k] = false;
#ifndef BROKEN_RAMP
         sleeping--; searching++;
#endif
         woke[k] = true; want--; k++
    :: k < NW && !(want > 0 && listed[k]) -> k++
    :: k >= NW -> break
    od
  };
  k = 0;
  do
  :: k < NW -> if :: woke[k] -> woke[k] = false; permit[k] = true :: else -> skip fi; k++
  :: else -> break
  od;
  atomic { want = 0; k = 0 }                    /* spent (atomic: the break may not jump into a d_step) */
}

proctype submitter() {
  byte i = 0;
  byte idx;
  bool wake;
  do
  :: i < NT ->
#ifdef BROKEN
       wake = (searching == 0 && sleeping > 0);   /* looks before it publishes */
       queue++;
       if :: wake -> notify_one(idx) :: else -> skip fi;
#else
       queue++;                                   /* push (then the seq_cst fence) */
       if
       :: NS == 1 && queue == 0 -> skip           /* the grace saw our task taken */
       :: true -> notify_one(idx)
       fi;
#endif
       i++
  :: else -> break
  od
}

proctype worker(byte id) {
  bool is_searching = false;
  bool was_listed;
  byte want;
  byte k;
  bool woke[NW];
loop:
  if
  :: atomic { queue > 0 -> queue-- } -> goto execute_task
  :: else -> skip
  fi;
  if :: !is_searching -> searching++; is_searching = true :: else -> skip fi;
  /* the search spin: finds a task, or runs out of budget (both explored) */
  if
  :: atomic { queue > 0 -> queue-- } -> goto found
  :: true -> skip
  fi;
  atomic { listed[id] = true; searching--; sleeping++ };   /* announce (seq_cst RMW), then fence */
  is_searching = false;
  if
  :: queue > 0 ->                                          /* the rescan saw work: cancel */
       atomic {
         if
         :: listed[id] -> listed[id] = false; sleeping--; searching++; was_listed = true
         :: else -> was_listed = false
         fi
       };
       /* Off the list: a waker's permit is on its way, or a caller leased
        * us, and we wait, parked, until the lease's end lists us again and a
        * waker takes us off: parked there is a valid end state. */
       if
       :: !was_listed ->
end_leased:
            permit[id]; permit[id] = false
       :: else -> skip
       fi;
       d_step { is_searching = true; was_listed = false };
       goto loop
  :: else ->
end_park:
       permit[id];                                         /* park */
       permit[id] = false;
       is_searching = true;                                /* the waker counted us as searching */
       goto loop
  fi;
found:
  atomic { searching--; want = sleeping };
  is_searching = false;
  if :: want > 0 -> wake_ramp(want, k) :: else -> skip fi;    /* nobody slept: later sleepers rescan */
execute_task:
  assert(!leased[id]);
  ran++;
  goto loop
}

proctype caller() {
  byte i = 0;
  byte idx;
  byte j;
  atomic {                                  /* lease_sleeper(): any listed worker */
    j = 0;
    do
    :: j < NW && listed[j] -> seated_lease = j; break
    :: j < NW && !listed[j] -> j++
    :: j >= NW -> break
    od;
    if
    :: seated_lease < NW -> listed[seated_lease] = false; leased[seated_lease] = true; sleeping--
    :: else -> skip
    fi;
    j = 0                                   /* spent */
  };
  do
  :: i < NC ->
       queue++;                             /* a push to its own deque, then the fence */
       notify_one(idx);
       i++
  :: else -> break
  od;
  if
  :: seated_lease < NW ->
       do                                   /* helping: take tasks, as often as it likes */
       :: atomic { queue > 0 -> queue-- }; ran++
       :: true -> break
       od;
       atomic {                             /* return_sleeper(): back on the list, counted */
         leased[seated_lease] = false;
         listed[seated_lease] = true;
         sleeping++
       };
#ifndef BROKEN_SEAT
       if                                   /* fence, then the rescan */
       :: queue > 0 -> notify_one(idx)
       :: else -> skip
       fi;
#endif
       seated_lease = NW
  :: else -> skip                           /* no sleeper: the hand-off pushed the tasks */
  fi
}

inline count_listed(n, k) {
  n = 0; k = 0;
  do
  :: k < NW -> if :: listed[k] -> n++ :: else -> skip fi; k++
  :: else -> break
  od
}

active proctype monitor() {
  byte n;
  byte k;
  timeout ->
    assert(queue == 0);
    assert(ran == NS * NT + NC);
    assert(searching == 0);
    count_listed(n, k);
    assert(sleeping == n)
}

init {
  atomic {
    byte i = 0;
    do :: i < NW -> run worker(i); i++ :: else -> break od;
    i = 0;
    do :: i < NS -> run submitter(); i++ :: else -> break od;
    run caller()
  }
}
