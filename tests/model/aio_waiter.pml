/* The aio waiter hand-shake, checked with spin: one coroutine waiting on a
 * queue (a semaphore's line, a channel's, the timer heap) while the event
 * it waits for and a stop race it (include/weft/detail/aio/waiter.hpp;
 * src/aio/async_semaphore.cpp, include/weft/aio/channel.hpp and
 * src/aio/timer_service.cpp use it the same way).
 *
 * Processes, each statement one atomic step of the C++ code:
 *   Coroutine   await_suspend: under the queue's lock, takes the unit if
 *               one is there (then goes on in place), else links itself
 *               into the line; then registers its std::stop_callback (which
 *               runs the callback at once, on this thread, if the stop was
 *               already requested); then arm(): fetch_or(ARMED), and goes
 *               on in place if CLAIMED was already set. After it resumes it
 *               destroys the waiter, but its stop_callback's destructor
 *               first waits for a callback running on another thread.
 *   Completer   release(): under the lock, unlinks the first waiter and
 *               claims it (fetch_or(CLAIMED)), or leaves the unit in the
 *               count; drops the lock; resumes the waiter if ARMED was set.
 *   Stopper     request_stop(): sets the flag and takes the callbacks
 *               registered by then in one step (libstdc++ does both under
 *               its lock); the callback: under the lock, if the waiter is
 *               still linked, unlinks it, marks it cancelled and claims it;
 *               drops the lock; resumes it if ARMED was set.
 *
 * Checked: the coroutine resumes exactly once (in place or by one
 * resume()), never while its await_suspend is still running; nobody
 * touches the waiter after it is destroyed; at the end the unit is either
 * the coroutine's (it resumed without `cancelled`) or still in the count —
 * no unit lost, none given twice; and nobody is left waiting (`timeout`
 * with the coroutine not finished is an error).
 *
 * -DBROKEN_NO_ARM: claim() resumes whether or not ARMED is set (no
 * hand-shake with await_suspend): spin must find a resumption while
 * await_suspend still runs.
 * -DBROKEN_STOP_UNCHECKED: the stop callback claims the waiter without
 * checking, under the lock, that it is still linked: spin must find a
 * unit lost (given to a waiter that then reports cancelled) or a double
 * resumption.
 */
#define ARMED   1
#define CLAIMED 2

bool lock = false;
byte units = 0;          /* the semaphore's count */
bool linked = false;     /* the waiter is in the line */
byte state = 0;          /* the waiter's atomic word */
bool cancelled = false;
bool in_suspend = false; /* await_suspend may still touch the waiter */
byte resumes = 0;        /* in-place continuations + resume() calls */
bool destroyed = false;
bool finished = false;
bool stop = false;
bool registered = false; /* the stop callback is registered */
byte cb_running = 0;     /* callbacks running on the stopper's thread */
bool got_unit = false;

inline acquire() { atomic { !lock -> lock = true } }
inline release() { lock = false }

inline do_resume() {
  assert(!in_suspend);    /* never while await_suspend runs */
  assert(!destroyed);
  resumes++;
  assert(resumes == 1);
}

/* claim(): fetch_or(CLAIMED), the caller resumes if ARMED was set. */
inline claim(need) {
  atomic {
    assert(!destroyed);
#ifdef BROKEN_NO_ARM
    need = true;
#else
    need = (state & ARMED) != 0;
#endif
    state = state | CLAIMED
  }
}

/* The stop callback's body, on whichever thread runs it. */
inline stop_callback(need) {
  acquire();
#ifdef BROKEN_STOP_UNCHECKED
  linked = false; cancelled = true; claim(need);
#else
  if
  :: linked -> linked = false; cancelled = true; claim(need)
  :: else -> need = false
  fi;
#endif
  release()
}

active proctype Coroutine() {
  bool need = false;
  bool inplace = false;
  in_suspend = true;
  acquire();
  if
  :: units > 0 -> units--; inplace = true
  :: else -> linked = true
  fi;
  release();
  if
  :: inplace -> skip
  :: else ->
    /* stop_cb.emplace: runs the callback here if the stop came first */
    atomic {
      if
      :: stop -> skip
      :: else -> registered = true
      fi
    };
    if
    :: stop && !registered -> stop_callback(need); assert(!need)  /* not armed yet: nobody resumes but us */
    :: else -> skip
    fi;
    /* arm(): fetch_or(ARMED) */
    /* the last touch of the waiter by await_suspend: from here on a
       resume() elsewhere may run the coroutine */
    atomic {
      inplace = (state & CLAIMED) != 0;
      state = state | ARMED;
      in_suspend = false
    }
  fi;
  in_suspend = false;
  if
  :: inplace -> do_resume()
  :: else -> resumes > 0   /* wait for someone's resume() */
  fi;
  got_unit = !cancelled;
  /* the awaiter dies: ~stop_callback waits for a running callback */
  atomic { cb_running == 0 -> registered = false; destroyed = true };
  finished = true
}

active proctype Completer() {
  bool need = false;
  acquire();
  if
  :: linked -> linked = false; claim(need)
  :: else -> units++
  fi;
  release();
  if
  :: need -> do_resume()
  :: else -> skip
  fi
}

active proctype Stopper() {
  bool need = false;
  bool go = false;
  atomic { stop = true; go = registered; if :: go -> cb_running++ :: else -> skip fi };
  if
  :: go -> stop_callback(need);
    if
    :: need -> do_resume()
    :: else -> skip
    fi;
    cb_running--
  :: else -> skip
  fi
}

/* At the end (every process done or blocked): the coroutine finished, and
 * the one unit is either its own or still counted. */
active proctype Check() {
  timeout ->
  assert(finished);
  assert(resumes == 1);
  assert((got_unit && units == 0) || (!got_unit && units == 1))
}
