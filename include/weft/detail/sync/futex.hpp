// weft/detail/sync/futex.hpp — the Linux futex on a 32-bit atomic word.
//
// weft parks on the futex directly rather than through std::atomic::wait:
// libstdc++ 12's wait spins by itself (12 pauses, 4 yields) before sleeping,
// which would stack a second, untunable spin policy under ours; it has no
// timed form, which Future::wait_for and Parker::park_for need; and its
// notify goes through a shared waiter table. Private futexes (the word is
// never shared between processes) skip the kernel's mm lookup.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>

namespace weft::detail {

// Sleeps while `*word == expected`. Returns on a wake, a signal, a spurious
// wake-up, when the word did not hold `expected` at the call, or when
// `timeout` (if positive) has passed. Callers re-check their condition.
// Returns false only when the timeout expired.
bool futex_wait(std::atomic<std::uint32_t>& word, std::uint32_t expected,
                std::chrono::nanoseconds timeout = std::chrono::nanoseconds::zero()) noexcept;

// Wakes up to `count` threads sleeping on `word`; returns how many woke.
int futex_wake(std::atomic<std::uint32_t>& word, int count) noexcept;

inline constexpr int kWakeAll = 0x7fffffff;

}  // namespace weft::detail
