// weft/detail/sync/wait.hpp — the one waiting engine: spin, announce, sleep.
//
// Every blocking wait in weft (Event, Parker, Future and TaskGroup waits,
// the queues' wait slots, ThreadPool::wait_idle and shutdown) runs
// wait_until(protocol, opts, deadline). The engine owns the policy (the
// adaptive spin of spin.hpp, the deadline, the futex sleep, feeding the
// outcome back to the spin tuner); the protocol owns its word and its
// states, and so its no-lost-wake-up argument. A protocol provides:
//
//   bool poll()            cheap check for the spin; if kPollDecides, a true
//                          poll ends the wait, else it says announce() now
//   WaitStep announce()    the decisive step: kDone (the wait is over; a
//                          permit is consumed here if there is one), kRetry
//                          (the word changed under a compare-exchange: call
//                          again), or kSleep with the value to sleep on —
//                          the notifier must see the announcement, or its
//                          change must make the word differ from that value
//   void woke()            after each futex return (undo a per-sleep count)
//   bool give_up()         the result when the deadline passes
//   bool helps()           whether this waiter helps: it then runs help()
//                          until poll() or no work, before each spin, and
//                          goes back to that after every futex return
//   bool help()            runs one piece of other work; true if it did
//   std::atomic<std::uint32_t>& word()
//   std::chrono::nanoseconds max_sleep() (zero: none) — a protocol whose
//                          notifier may skip the wake call sleeps in slices
//
// A wait may also carry a std::stop_token: wait_until(p, opts, deadline,
// stop) ends, returning give_up(), once a stop is requested, and a protocol
// used so provides one more hook:
//
//   void stop_wake()       run by a std::stop_callback on the thread that
//                          requests the stop: a release RMW that changes the
//                          word so that no sleeper's `expected` matches it any
//                          more, then a futex wake of its sleepers
//
// The engine registers the callback for the length of the wait and looks at
// the token after each announce() that says kSleep. No lost wake-up: if
// announce() read the word before stop_wake() changed it, the futex finds
// a different value or is woken; if it read the change or a later RMW (a
// release sequence), the stop request happens before the engine's look at
// the token, which then sees it. Other waiters on the word see a spurious
// wake-up and sleep again. No polling: without a stop the callback never
// runs, and a wait without a token registers none.
//
// sched_point() stands before announce() and before the futex call, the
// two steps whose interleaving with the notifier the protocols argue about.
#pragma once

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <stop_token>
#include <utility>

#include "weft/detail/sched_point.hpp"
#include "weft/detail/sync/futex.hpp"
#include "weft/detail/sync/spin.hpp"
#include "weft/sync/wait_options.hpp"

namespace weft::detail {

// A point in time a wait gives up at, or never.
class Deadline {
 public:
  Deadline() = default;  // never
  // `timeout` from now; zero or negative means no deadline (weft's timed
  // waits treat a non-positive timeout before they get here).
  static Deadline after(std::chrono::nanoseconds timeout) noexcept {
    Deadline d;
    if (timeout > std::chrono::nanoseconds::zero()) d.at_ns_ = now_ns() + timeout.count();
    return d;
  }
  [[nodiscard]] bool never() const noexcept { return at_ns_ == 0; }
  // How long the next sleep may last, at most `cap` (zero: no cap); zero
  // means no limit; negative means the deadline has passed.
  [[nodiscard]] std::int64_t next_sleep_ns(std::chrono::nanoseconds cap) const noexcept {
    if (never()) return cap.count();
    const std::int64_t left = at_ns_ - now_ns();
    if (left <= 0) return -1;
    return cap.count() > 0 ? std::min(left, cap.count()) : left;
  }

 private:
  std::int64_t at_ns_ = 0;
};

struct WaitStep {
  enum Kind { kDone, kRetry, kSleep } kind;
  std::uint32_t expected = 0;  // kSleep: the word's value to sleep on
  static WaitStep done() noexcept { return {kDone}; }
  static WaitStep retry() noexcept { return {kRetry}; }
  static WaitStep sleep(std::uint32_t v) noexcept { return {kSleep, v}; }
};

// Defaults for the hooks most protocols do not need.
struct WaitProtocolBase {
  static constexpr bool kPollDecides = true;
  static void woke() noexcept {}
  static bool help() noexcept { return false; }
  static bool helps() noexcept { return false; }
  static std::chrono::nanoseconds max_sleep() noexcept { return std::chrono::nanoseconds::zero(); }
};

// The loop of wait_until. kStoppable: `stop` may end it; otherwise `stop`
// is null and the loop is the plain one, with no look at any token.
template <bool kStoppable, class Protocol>
bool wait_loop(Protocol& p, const WaitOptions& opts, Deadline deadline, const std::stop_token* stop) noexcept {
  const auto stopped = [stop]() noexcept { return kStoppable && stop->stop_requested(); };
  for (;;) {
    while (p.helps() && !p.poll() && p.help()) {
    }
    const SpinOutcome spun = spin_until([&p, &stopped] { return p.poll() || stopped(); }, opts);
    // A spin ended by a stop goes on to announce(), which decides.
    if (Protocol::kPollDecides && spun.satisfied && (!kStoppable || p.poll())) {
      adapt(spun, opts, 0);
      return true;
    }
    for (;;) {
      sched_point();
      const WaitStep step = p.announce();
      if (step.kind == WaitStep::kDone) {
        adapt(spun, opts, spun.satisfied ? 0 : now_ns());
        return true;
      }
      if (step.kind == WaitStep::kRetry) continue;
      const std::int64_t sleep_ns = deadline.next_sleep_ns(p.max_sleep());
      if (sleep_ns < 0 || stopped()) {
        // The announcement stands without a sleep: undo it as a wake-up would.
        p.woke();
        adapt(spun, opts, now_ns());
        return p.give_up();
      }
      sched_point();
      // Sleeps only while the word still holds `expected`: a notifier that
      // changed it after our announcement makes the kernel return at once.
      futex_wait(p.word(), step.expected, std::chrono::nanoseconds(sleep_ns));
      p.woke();
      // A helping waiter goes back to helping: work it could run may have
      // been queued where no wake-up reaches it.
      if (p.helps()) {
        adapt(spun, opts, now_ns());
        break;
      }
    }
  }
}

// Returns true once the protocol's announce() said kDone; false only when
// `deadline` passed first (then the protocol's give_up() decides).
template <class Protocol>
bool wait_until(Protocol& p, const WaitOptions& opts, Deadline deadline = {}) noexcept {
  return wait_loop<false>(p, opts, deadline, nullptr);
}

// As above, and also ends (returning give_up()) once a stop is requested on
// `stop`; the protocol provides stop_wake() (see the top of this file).
template <class Protocol>
bool wait_until(Protocol& p, const WaitOptions& opts, Deadline deadline, const std::stop_token& stop) noexcept {
  if (!stop.stop_possible()) return wait_loop<false>(p, opts, deadline, nullptr);
  auto wake = [&p]() noexcept { p.stop_wake(); };
  // Runs wake() at once if the stop was already requested: a spare wake-up.
  const std::stop_callback<decltype(wake)> on_stop(stop, std::move(wake));
  return wait_loop<true>(p, opts, deadline, &stop);
}

// The waiter-bit protocol shared by Future and TaskGroup waits: the
// waiter sets `waiter_bit` in the word before it sleeps; whoever makes
// done() true changes the word with an RMW and futex-wakes when the old
// value had the bit. Either the RMW sees the bit (and wakes), or it comes
// first in the word's modification order, so the compare-exchange that
// would set the bit fails, or the futex finds a different value.
template <class Done>
struct WaiterBitWait : WaitProtocolBase {
  std::atomic<std::uint32_t>& w;
  Done done_now;  // bool(std::uint32_t word), reads only the word
  std::uint32_t waiter_bit;

  bool poll() const noexcept { return done_now(w.load(std::memory_order_acquire)); }  // acquire: the result
  WaitStep announce() noexcept {
    std::uint32_t v = w.load(std::memory_order_acquire);  // acquire: the completer's release
    if (done_now(v)) return WaitStep::done();
    if ((v & waiter_bit) == 0) {
      // relaxed: the bit only has to be in the word the completer's RMW
      // reads; the word's modification order does that.
      if (!w.compare_exchange_weak(v, v | waiter_bit, std::memory_order_relaxed, std::memory_order_relaxed))
        return WaitStep::retry();
      v |= waiter_bit;
    }
    return WaitStep::sleep(v);
  }
  bool give_up() const noexcept { return poll(); }
  std::atomic<std::uint32_t>& word() noexcept { return w; }
};

}  // namespace weft::detail
