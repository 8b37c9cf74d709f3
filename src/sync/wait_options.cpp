#include "weft/sync/wait_options.hpp"

#include <sched.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <mutex>
#include <thread>
#include <vector>

#include "weft/detail/sync/futex.hpp"
#include "weft/detail/cache_line.hpp"
#include "weft/detail/sync/spin.hpp"
#include "weft/sync/cpu_relax.hpp"

namespace weft {

namespace {

constexpr std::int64_t kMaxSpinNs = 10'000'000;

std::int64_t initial_spin_ns() noexcept {
  if (const char* env = std::getenv("WEFT_SPIN_NS")) {
    char* end = nullptr;
    const long long v = std::strtoll(env, &end, 10);
    if (end != env && *end == '\0' && v >= 0) return std::min<std::int64_t>(v, kMaxSpinNs);
  }
  return WaitOptions::kDefaultSpin.count();
}

// relaxed everywhere: a lone configuration value; a waiter that reads the
// old budget for one more wait is harmless.
std::atomic<std::int64_t>& default_spin_ns() noexcept {
  static std::atomic<std::int64_t> value{initial_spin_ns()};
  return value;
}

double median_of(std::vector<double>& v) {
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

}  // namespace

std::chrono::nanoseconds WaitOptions::default_spin() noexcept {
  return std::chrono::nanoseconds(default_spin_ns().load(std::memory_order_relaxed));
}

// relaxed: see default_spin_ns().
void WaitOptions::set_default_spin(std::chrono::nanoseconds spin) noexcept {
  default_spin_ns().store(std::clamp<std::int64_t>(spin.count(), 0, kMaxSpinNs),
                          std::memory_order_relaxed);
}

void Backoff::snooze() noexcept {
  if (step_ <= kSpinLimit) {
    spin();
    return;
  }
  sched_yield();
  if (step_ <= kYieldLimit) ++step_;
}

namespace detail {
namespace {
// The cost of one cpu_relax(): the best of `batches` batches of `batch`, to
// skip preemptions (one inside a batch only makes it look slower).
double best_pause_ns(int batch, int batches) noexcept {
  double best = 1e9;
  for (int b = 0; b < batches; ++b) {
    const std::int64_t t0 = now_ns();
    for (int i = 0; i < batch; ++i) cpu_relax();
    best = std::min(best, static_cast<double>(now_ns() - t0) / batch);
  }
  return best;
}
}  // namespace

void yield_cpu() noexcept { sched_yield(); }

int pauses_for(std::int64_t ns) noexcept {
  static const double pause_ns = std::max(best_pause_ns(256, 4), 1.0);
  return std::max(1, static_cast<int>(static_cast<double>(ns) / pause_ns));
}

SpinTuner& this_thread_tuner() noexcept {
  thread_local SpinTuner tuner;
  return tuner;
}
}  // namespace detail

Calibration calibrate(int rounds) {
  rounds = std::max(rounds, 8);
  Calibration c;

  c.pause_ns = detail::best_pause_ns(2000, 5);

  // Two threads take turns sleeping on a futex and waking the other. Each
  // wake is timed from just before the waker's system call to just after
  // the sleeper's returns (CLOCK_MONOTONIC is one clock on every CPU).
  // The sleeper is asleep when woken: the waker first waits for the sleeper
  // to announce it (word = 1), then gives it a moment to get into the kernel.
  struct alignas(detail::kCacheLine) Side {
    std::atomic<std::uint32_t> word{0};  // 0 start, 1 about to sleep, 2 woken
    std::atomic<std::int64_t> woken_at{0};
  };
  Side side;
  std::vector<double> wake, notify;
  wake.reserve(static_cast<std::size_t>(rounds));
  notify.reserve(static_cast<std::size_t>(rounds));

  auto sleeper = [](Side& s) {
    // relaxed store then futex_wait: the waker only needs to see word == 1
    // eventually; the futex call itself rechecks the value atomically.
    s.word.store(1, std::memory_order_relaxed);
    while (s.word.load(std::memory_order_acquire) == 1) detail::futex_wait(s.word, 1);
    // release: hands the timestamp to the waker's acquire load of woken_at.
    s.woken_at.store(detail::now_ns(), std::memory_order_release);
  };

  std::thread other([&] {
    for (int r = 0; r < rounds; ++r) sleeper(side);
  });
  for (int r = 0; r < rounds; ++r) {
    // Wait until the other thread announced its sleep, then let it sleep.
    // The sleeper stores 1 only after its previous round is over, so this
    // also waits for that.
    while (side.word.load(std::memory_order_acquire) != 1) cpu_relax();
    const std::int64_t settle = detail::now_ns() + 200'000;
    while (detail::now_ns() < settle) std::this_thread::yield();
    // relaxed: the sleeper does not read it; it overwrites it after the
    // store of 2 below, which is sequenced after this.
    side.woken_at.store(0, std::memory_order_relaxed);
    const std::int64_t t0 = detail::now_ns();
    // release: the store of 2 is what the sleeper's acquire loop waits for.
    side.word.store(2, std::memory_order_release);
    detail::futex_wake(side.word, 1);
    const std::int64_t t1 = detail::now_ns();
    std::int64_t woke = 0;
    // acquire: pairs with the sleeper's release store of its timestamp.
    while ((woke = side.woken_at.load(std::memory_order_acquire)) == 0) cpu_relax();
    wake.push_back(static_cast<double>(woke - t0));
    notify.push_back(static_cast<double>(t1 - t0));
  }
  other.join();

  c.samples = static_cast<int>(wake.size());
  c.wake_min_ns = *std::min_element(wake.begin(), wake.end());
  c.wake_max_ns = *std::max_element(wake.begin(), wake.end());
  c.wake_ns = median_of(wake);
  c.notify_ns = median_of(notify);
  c.spin = std::chrono::nanoseconds(static_cast<std::int64_t>(c.wake_ns));
  return c;
}

const Calibration& calibrate_default() {
  static const Calibration c = [] {
    Calibration r = calibrate();
    WaitOptions::set_default_spin(r.spin);
    return r;
  }();
  return c;
}

}  // namespace weft
