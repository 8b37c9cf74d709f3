// Resuming many waiting coroutines at once from a thread that is not their
// pool's worker (the timer thread, the file completion thread): one task
// per pool, not one pool injection (and often one futex wake) per
// coroutine.
#pragma once

#include "weft/detail/aio/waiter.hpp"

namespace weft::detail::aio {

// Resumes every waiter of the chain (linked through Waiter::next, each
// already claimed by the caller, in the order they should run). Waiters of
// one pool go to it as one task, which a worker of that pool runs: it
// queues each on its own deque (no system call each; idle workers steal
// them). On a worker of their pool they are queued directly.
void resume_all(Waiter* chain) noexcept;

}  // namespace weft::detail::aio
