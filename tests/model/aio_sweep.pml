/* weft::AsyncFile's completion signals (src/aio/async_file.cpp): a ring's
 * eventfd is off while its submitting thread takes completions itself
 * (Ring::submit_and_drain()), and the completion thread sweeps the rings
 * every 10 ms while operations are in the kernel (Rings::run(),
 * note_busy()).
 *
 * One operation that completes later (a read from the disk, a sync). The
 * submitter S, under the ring's lock: turns the eventfd off, submits,
 * drains (the operation is not there yet), turns it on, fences (seq_cst)
 * and drains once more; then, with the operation still in the kernel,
 * note_busy(): if the completion thread sleeps without a timeout, it pokes
 * it. The kernel K posts the completion with a store that may sit in its
 * store buffer (`kpend`; the memory process moves it to `cq` whenever it
 * likes) while it reads the flag: no full barrier between them in the
 * kernel, so K may read "off" and S's last drain may miss the completion.
 * If K read "on", its signal (a locked write: the buffer drains) wakes the
 * completion thread C. C, each round: says it sleeps untimed (seq_cst),
 * then looks under the ring's lock whether operations are in the kernel;
 * if so it sleeps with a timeout and sweeps (drains) when it passes or a
 * signal comes; if not it sleeps until a signal or a poke.
 *
 * Checked: when nothing can move (timeout), the operation was taken (its
 * coroutine resumed). spin also reports a process stuck outside an end
 * state.
 *
 * -DBROKEN_NO_SWEEP: C sleeps until a signal whatever is in the kernel.
 * The completion K posted while the flag read "off", and S's last drain
 * missed, is never taken.
 *
 * -DBROKEN_LOOK_FIRST: C looks at the rings before it says it sleeps
 * untimed. It sees nothing in the kernel, S submits and reads C's flag
 * still clear (no poke), C then sleeps untimed: with the signal lost as
 * above, never woken.
 */

bool locked = false;
bool sig_on = true;     /* the ring's eventfd signals (the CQ ring's flag) */
bool submitted = false;
byte in_kernel = 0;      /* under the lock */
byte kpend = 0;          /* the completion, in K's store buffer */
byte cq = 0;             /* the completion, in the ring as memory holds it */
bool efd = false;        /* the eventfd is readable */
bool poke = false;       /* the poke eventfd is readable */
bool untimed = false;    /* C sleeps (or is about to) without a timeout */
bool done = false;       /* the operation was taken */

inline take_lock() { atomic { !locked -> locked = true } }
inline drop_lock() { locked = false }
inline drain() {
  if
  :: cq > 0 -> cq = 0; in_kernel = 0; done = true
  :: else -> skip
  fi
}

active proctype memory() {
end:
  do
  :: atomic { kpend > 0 -> cq = cq + kpend; kpend = 0 }
  od
}

active proctype K() {
  bool ken;
end_wait:
  submitted;
  kpend = 1;                                 /* posts the completion (buffered) */
  ken = sig_on;                             /* reads the flag: may pass the buffered store */
  if
  :: ken -> atomic { cq = cq + kpend; kpend = 0; efd = true }   /* eventfd_signal() */
  :: else -> skip
  fi
}

active proctype S() {
  bool busy;
  take_lock();
  sig_on = false;                           /* set_eventfd(false) */
  atomic { in_kernel = 1; submitted = true };/* io_uring_submit(): not completed inline */
  drain();
  sig_on = true;                            /* set_eventfd(true), then the seq_cst fence */
  drain();                                   /* io_uring_cq_ready(): one more look */
  busy = in_kernel > 0;
  drop_lock();
  if
  :: busy -> atomic { if :: untimed -> untimed = false; poke = true :: else -> skip fi }   /* note_busy() */
  :: else -> skip
  fi
}

active proctype C() {
  bool busy;
end_loop:
  do
  :: done -> break
  :: !done ->
#ifdef BROKEN_LOOK_FIRST
     take_lock(); busy = in_kernel > 0; drop_lock();
     untimed = true;
#else
     untimed = true;                         /* seq_cst store */
     take_lock(); busy = in_kernel > 0; drop_lock(); /* any_busy() */
#endif
#ifdef BROKEN_NO_SWEEP
     busy = false;
#endif
     if
     :: busy -> untimed = false;
        /* epoll_wait(kSweepMs): a signal, or the timeout: sweep() */
        take_lock(); drain(); efd = false; drop_lock()
     :: else ->
end_sleep:
        if                                   /* epoll_wait(-1) */
        :: efd -> take_lock(); efd = false; drain(); drop_lock()
        :: poke -> poke = false
        fi
     fi
  od
}

active proctype check() {
end:
  timeout -> assert(done)
}
