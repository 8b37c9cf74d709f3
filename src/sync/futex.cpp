#include "weft/detail/sync/futex.hpp"

#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <ctime>

namespace weft::detail {

namespace {
// std::atomic<uint32_t> is a plain 32-bit word: the kernel may treat it as one.
static_assert(sizeof(std::atomic<std::uint32_t>) == sizeof(std::uint32_t));
static_assert(std::atomic<std::uint32_t>::is_always_lock_free);

std::uint32_t* word_address(std::atomic<std::uint32_t>& word) noexcept {
  return reinterpret_cast<std::uint32_t*>(&word);
}
}  // namespace

bool futex_wait(std::atomic<std::uint32_t>& word, std::uint32_t expected,
                std::chrono::nanoseconds timeout) noexcept {
  timespec ts{};
  timespec* tsp = nullptr;
  if (timeout > std::chrono::nanoseconds::zero()) {
    ts.tv_sec = static_cast<time_t>(timeout.count() / 1'000'000'000);
    ts.tv_nsec = static_cast<long>(timeout.count() % 1'000'000'000);
    tsp = &ts;  // FUTEX_WAIT takes a relative timeout
  }
  const long rc = syscall(SYS_futex, word_address(word), FUTEX_WAIT_PRIVATE, expected, tsp, nullptr, 0);
  return !(rc == -1 && errno == ETIMEDOUT);
}

int futex_wake(std::atomic<std::uint32_t>& word, int count) noexcept {
  const long rc = syscall(SYS_futex, word_address(word), FUTEX_WAKE_PRIVATE, count, nullptr, nullptr, 0);
  return rc < 0 ? 0 : static_cast<int>(rc);
}

}  // namespace weft::detail
