// weft/detail/exec/block_on.hpp — how the pool's waits wait.
//
// block_on(word, done, waiter_bit, ...) returns once done(word) holds. It
// helps first: on a worker thread it runs other queued tasks while the
// condition is false (so nested waits cannot deadlock a pool of one), then it
// spins within WaitOptions, then it sets `waiter_bit` in the word and sleeps
// on its futex. Whoever makes done() true must read the word with an RMW and
// futex-wake when the old value had `waiter_bit`.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>

#include "weft/detail/exec/task.hpp"
#include "weft/sync/wait_options.hpp"

namespace weft::detail {

class PoolCore;

using DonePredicate = bool (*)(std::uint32_t word) noexcept;

// Returns false only if `timeout` (when positive) expired first.
bool block_on(std::atomic<std::uint32_t>& word, DonePredicate done, std::uint32_t waiter_bit, bool help,
              std::chrono::nanoseconds timeout = std::chrono::nanoseconds::zero()) noexcept;

// Runs one queued task if the calling thread is a pool worker and finds one
// (its own deque first, then stealing). True if it ran one.
bool help_one() noexcept;

// On a thread seated in a pool (weft/detail/exec/seat.hpp): runs `root`, a
// task nobody queued, as the seat's worker would (counted pushed and run),
// then runs the pool's queued tasks until done(word) or none is found.
void run_in_seat(TaskNode* root, std::atomic<std::uint32_t>& word, DonePredicate done) noexcept;

// If `t` is the task the calling thread pushed last and no thief has taken
// it, takes it back and runs it here (a submit followed by get() then never
// leaves the thread). True if it ran.
bool run_if_still_queued(TaskNode* t) noexcept;

// The coroutine join's chain (weft/exec/coro.hpp): if the calling thread
// is a worker and the newest task in its own deque lies in the `bytes`
// from `first` (a join's children), takes it back (nullptr if not, or if a
// thief took it first) and counts it run (the caller resumes it inside the
// task it is running, whose own count keeps the pool from looking idle
// meanwhile).
TaskNode* take_own_newest_in(const void* first, std::size_t bytes) noexcept;
// A coroutine join's fork (weft/exec/coro.hpp): if the calling thread is a
// worker of `pool`, pushes the n tasks at first, first + stride bytes, ...
// onto its own deque, oldest first, with one release of the bottom, then
// one fence and one run of the wake rule, as parallel_invoke's fork does
// (invoke.cpp). False, with nothing pushed, on any other thread or if the
// deque cannot grow to hold them: the caller pushes them one by one.
bool push_own_n(PoolCore& pool, TaskNode* first, std::size_t stride, std::size_t n) noexcept;
// True if the calling thread is a worker of some weft pool.
bool on_worker_thread() noexcept;

}  // namespace weft::detail
