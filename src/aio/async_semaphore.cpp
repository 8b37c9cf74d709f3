// weft::AsyncSemaphore (weft/aio/async_mutex.hpp): a count and a FIFO of
// waiting coroutines under one lock; release() hands units to waiters.
#include <cstdint>
#include <exception>
#include <stdexcept>
#include <string>
#include <utility>

#include "weft/aio/async_mutex.hpp"
#include "weft/error.hpp"

namespace weft {

AsyncSemaphore::AsyncSemaphore(std::ptrdiff_t initial) : count_(initial) {
  if (initial < 0)
    throw std::invalid_argument("weft::AsyncSemaphore: the initial count is negative (" + std::to_string(initial) +
                                ")");
}

AsyncSemaphore::~AsyncSemaphore() {
  if (!waiters_.empty())
    report_error("weft::AsyncSemaphore destroyed while coroutines wait on it (they will never resume)",
                 std::make_exception_ptr(std::logic_error("weft::AsyncSemaphore: destroyed with waiters")));
}

bool AsyncSemaphore::try_acquire() noexcept {
  std::lock_guard lock(mu_);
  if (count_ == 0) return false;  // waiters only exist at 0
  --count_;
  return true;
}

std::ptrdiff_t AsyncSemaphore::available() const noexcept {
  std::lock_guard lock(mu_);
  return count_;
}

bool AsyncSemaphore::take_or_queue(detail::aio::Waiter& w) {
  std::lock_guard lock(mu_);
  if (count_ > 0) {
    --count_;
    return false;
  }
  w.owner = this;
  w.on_stop = &on_stop;
  waiters_.push_back(&w);
  return true;
}

void AsyncSemaphore::release(std::ptrdiff_t n) {
  release_upto(n, PTRDIFF_MAX, "weft::AsyncSemaphore::release");
}

void AsyncSemaphore::release_upto(std::ptrdiff_t n, std::ptrdiff_t limit, const char* who) {
  if (n < 0) throw std::invalid_argument(std::string(who) + ": a negative count (" + std::to_string(n) + ")");
  detail::aio::WakeList wake;
  {
    std::lock_guard lock(mu_);
    if (count_ > limit - n) {
      throw std::logic_error(std::string(who) +
                             (limit == 1 ? ": the mutex is not locked" : ": the count would overflow"));
    }
    // Units go to the waiters first, in line order; the rest to the count.
    for (; n > 0 && !waiters_.empty(); --n) wake.claim(waiters_.pop_front());
    count_ += n;
  }
  wake.resume();
}

void AsyncSemaphore::on_stop(detail::aio::Waiter* w) noexcept {
  auto* self = static_cast<AsyncSemaphore*>(w->owner);
  bool resume = false;
  {
    std::lock_guard lock(self->mu_);
    if (!w->linked) return;  // the unit was handed over first
    self->waiters_.erase(w);
    w->cancelled = true;
    resume = w->claim();
  }
  if (resume) w->resume();
}

}  // namespace weft
