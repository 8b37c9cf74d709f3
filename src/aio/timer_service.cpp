// The process's timer thread (weft/aio/sleep.hpp): a binary min-heap of
// waiting coroutines by deadline, one condition variable, nothing polling.
#include <sys/prctl.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>
#include <utility>
#include <vector>

#include "weft/aio/sleep.hpp"

namespace weft::detail::aio {
namespace {

using Clock = std::chrono::steady_clock;
constexpr std::size_t kNone = static_cast<std::size_t>(-1);

class TimerService {
 public:
  TimerService() : thread_([this] { run(); }) {}
  ~TimerService() {
    {
      std::lock_guard lock(mu_);
      stopping_ = true;
    }
    cv_.notify_one();
    thread_.join();
  }

  void add(TimerWaiter* w) {
    bool wake = false;
    {
      std::lock_guard lock(mu_);
      w->owner = this;
      w->on_stop = &on_stop;
      heap_.push_back(w);  // may throw bad_alloc: nothing queued yet
      place(heap_.size() - 1);
      sift_up(heap_.size() - 1);
      // Only a new earliest deadline needs the thread awake.
      wake = heap_.front() == w && w->deadline < sleeping_until_;
    }
    if (wake) cv_.notify_one();
  }

  std::size_t wakeups() const noexcept { return wakeups_.load(std::memory_order_relaxed); }

 private:
  static void on_stop(Waiter* base) noexcept {
    auto* w = static_cast<TimerWaiter*>(base);
    auto* self = static_cast<TimerService*>(w->owner);
    bool resume = false;
    {
      std::lock_guard lock(self->mu_);
      if (w->heap_index == kNone) return;  // fired already: the timer thread has it
      self->erase(w->heap_index);
      w->cancelled = true;
      resume = w->claim();
    }
    if (resume) w->resume();
  }

  void run() {
    // The kernel rounds a sleeping thread's timeouts up by its timer slack
    // (50 µs by default); a timer thread wants its deadlines as they are.
    ::prctl(PR_SET_TIMERSLACK, 1UL, 0UL, 0UL, 0UL);
    std::unique_lock lock(mu_);
    while (!stopping_) {
      if (heap_.empty()) {
        sleeping_until_ = Clock::time_point::max();
        cv_.wait(lock);
      } else if (Clock::time_point next = heap_.front()->deadline; next > Clock::now()) {
        sleeping_until_ = next;
        cv_.wait_until(lock, next);
      } else {
        // Take every due timer (in deadline order), then queue them with
        // the lock dropped.
        WakeList due;
        const Clock::time_point now = Clock::now();
        while (!heap_.empty() && heap_.front()->deadline <= now) {
          TimerWaiter* w = heap_.front();
          erase(0);
          due.claim(w);
        }
        lock.unlock();
        due.resume();
        lock.lock();
        continue;
      }
      sleeping_until_ = Clock::time_point::min();  // awake: nobody needs to notify
      // relaxed: a statistic.
      wakeups_.fetch_add(1, std::memory_order_relaxed);
    }
  }

  void place(std::size_t i) noexcept { heap_[i]->heap_index = i; }
  bool before(std::size_t a, std::size_t b) const noexcept { return heap_[a]->deadline < heap_[b]->deadline; }
  void swap_at(std::size_t a, std::size_t b) noexcept {
    std::swap(heap_[a], heap_[b]);
    place(a);
    place(b);
  }
  void sift_up(std::size_t i) noexcept {
    while (i > 0 && before(i, (i - 1) / 2)) {
      swap_at(i, (i - 1) / 2);
      i = (i - 1) / 2;
    }
  }
  void sift_down(std::size_t i) noexcept {
    for (;;) {
      std::size_t m = i;
      const std::size_t l = 2 * i + 1, r = l + 1;
      if (l < heap_.size() && before(l, m)) m = l;
      if (r < heap_.size() && before(r, m)) m = r;
      if (m == i) return;
      swap_at(i, m);
      i = m;
    }
  }
  // Removes the entry at `i` in O(log n).
  void erase(std::size_t i) noexcept {
    heap_[i]->heap_index = kNone;
    const std::size_t last = heap_.size() - 1;
    if (i != last) {
      heap_[i] = heap_[last];
      place(i);
    }
    heap_.pop_back();
    if (i < heap_.size()) {
      sift_up(i);
      sift_down(i);
    }
  }

  std::mutex mu_;
  std::condition_variable cv_;
  std::vector<TimerWaiter*> heap_;
  Clock::time_point sleeping_until_ = Clock::time_point::min();
  bool stopping_ = false;
  std::atomic<std::size_t> wakeups_{0};
  std::thread thread_;  // last: started once the rest exists
};

TimerService& service() {
  static TimerService s;
  return s;
}

}  // namespace

void add_timer(TimerWaiter* w) { service().add(w); }

}  // namespace weft::detail::aio

namespace weft {
std::size_t timer_thread_wakeups() noexcept { return detail::aio::service().wakeups(); }
}  // namespace weft
