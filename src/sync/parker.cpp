#include "weft/sync/parker.hpp"

#include "weft/detail/sync/futex.hpp"
#include "weft/detail/sync/wait.hpp"

namespace weft {

namespace {
using PW = detail::ParkerWord;

// Parker's side of the engine (state table in parker.hpp).
struct ParkWait : detail::WaitProtocolBase {
  std::atomic<std::uint32_t>& state;
  bool announced = false;

  // A permit seen by the spin is still to be taken (by announce()).
  static constexpr bool kPollDecides = false;
  // relaxed poll: the acquire that orders the unparker's writes is the
  // fetch_sub / compare-exchange in announce() that consumes the permit.
  bool poll() const noexcept { return state.load(std::memory_order_relaxed) == PW::kNotified; }
  detail::WaitStep announce() noexcept {
    if (!announced) {
      announced = true;
      // kNotified -> kEmpty (take the permit) or kEmpty -> kParked (announce
      // the sleep), in one step. acquire: pairs with unpark()'s release exchange.
      return state.fetch_sub(1, std::memory_order_acquire) == PW::kNotified ? detail::WaitStep::done()
                                                                           : detail::WaitStep::sleep(PW::kParked);
    }
    std::uint32_t expected = PW::kNotified;
    // After a futex return. acquire: pairs with unpark()'s release. Failure
    // (still kParked) is a spurious wake-up or a time slice: sleep again.
    return state.compare_exchange_strong(expected, PW::kEmpty, std::memory_order_acquire, std::memory_order_relaxed)
               ? detail::WaitStep::done()
               : detail::WaitStep::sleep(PW::kParked);
  }
  bool give_up() noexcept {
    // Withdraw the announcement. If an unpark() landed meanwhile the word
    // is kNotified and we take that permit instead of timing out.
    // acquire: as above, when it was kNotified.
    return state.exchange(PW::kEmpty, std::memory_order_acquire) == PW::kNotified;
  }
  std::atomic<std::uint32_t>& word() noexcept { return state; }
};
}  // namespace

bool Parker::park_slow(const WaitOptions& opts, std::chrono::nanoseconds timeout) noexcept {
  ParkWait p{{}, state_};
  return detail::wait_until(p, opts, detail::Deadline::after(timeout));
}

void Parker::wake_slow() noexcept { detail::futex_wake(state_, 1); }

}  // namespace weft
