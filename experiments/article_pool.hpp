// The thread pool of the article "std::async+future vs thread pool" (Tkrzw
// author's blog, 2021), written as the article describes it, as a peer for
// weft's pool: one mutex, one condition_variable and one
// std::deque<std::function<void()>>. Workers pop under the lock; the
// submitter pushes under the lock and notify_one()s.
//
// wait_idle() is the benchmark's addition (the article's harness joined the
// workers instead): it lets a run end without destroying the pool, at the
// price of one branch under the lock a worker already holds.
#pragma once

#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace weft::xp {

class ArticlePool {
 public:
  explicit ArticlePool(int workers);
  ~ArticlePool();
  ArticlePool(const ArticlePool&) = delete;
  ArticlePool& operator=(const ArticlePool&) = delete;

  void submit(std::function<void()> task);
  // Returns when the queue is empty and no worker runs a task.
  void wait_idle();

 private:
  void work();

  std::mutex mutex_;
  std::condition_variable cv_;       // a task was queued, or stop
  std::condition_variable idle_cv_;  // the pool became idle
  std::deque<std::function<void()>> queue_;
  int running_ = 0;
  bool stop_ = false;
  std::vector<std::thread> threads_;
};

}  // namespace weft::xp
