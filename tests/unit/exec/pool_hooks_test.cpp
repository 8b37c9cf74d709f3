// PoolOptions::on_worker_start / on_worker_stop.
#include "weft/exec/thread_pool.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "error_recorder.hpp"
#include "watchdog.hpp"

namespace {

struct HookLog {
  std::mutex mutex;
  std::vector<int> started;
  std::vector<int> stopped;
  std::vector<std::thread::id> start_threads;
  std::vector<bool> start_was_worker;
  std::vector<int> start_index_seen;
};

TEST(PoolHooks, EachWorkerRunsStartAndStopOnceOnItsOwnThread) {
  weft::test::Watchdog dog("worker hooks");
  HookLog log;
  std::vector<std::thread::id> task_threads;
  {
    weft::PoolOptions o;
    o.workers = 3;
    o.on_worker_start = [&](int i) {
      std::lock_guard lock(log.mutex);
      log.started.push_back(i);
      log.start_threads.push_back(std::this_thread::get_id());
      log.start_index_seen.push_back(weft::ThreadPool::current_worker_index());
    };
    o.on_worker_stop = [&](int i) {
      std::lock_guard lock(log.mutex);
      log.stopped.push_back(i);
      EXPECT_EQ(weft::ThreadPool::current_worker_index(), -1) << "worker " << i;
    };
    weft::ThreadPool pool(o);
    pool.post([] {});
    pool.wait_idle();
    EXPECT_TRUE(log.stopped.empty());  // nobody stops before shutdown
  }
  std::sort(log.started.begin(), log.started.end());
  std::sort(log.stopped.begin(), log.stopped.end());
  EXPECT_EQ(log.started, (std::vector<int>{0, 1, 2}));
  EXPECT_EQ(log.stopped, (std::vector<int>{0, 1, 2}));
  // On the worker itself: it knows its index, and it is not the test's thread.
  for (std::size_t k = 0; k < log.started.size(); ++k) EXPECT_NE(log.start_threads[k], std::this_thread::get_id());
  std::vector<int> seen = log.start_index_seen;
  std::sort(seen.begin(), seen.end());
  EXPECT_EQ(seen, (std::vector<int>{0, 1, 2}));
}

TEST(PoolHooks, StartHookRunsBeforeTheWorkersFirstTask) {
  weft::test::Watchdog dog("start hook before tasks");
  thread_local bool started_here = false;
  weft::PoolOptions o;
  o.workers = 2;
  o.on_worker_start = [](int) { started_here = true; };
  weft::ThreadPool pool(o);
  std::atomic<int> unprepared{0};
  for (int i = 0; i < 1000; ++i)
    pool.post([&] {
      if (!started_here) unprepared.fetch_add(1, std::memory_order_relaxed);
    });
  pool.wait_idle();
  EXPECT_EQ(unprepared.load(), 0);
}

TEST(PoolHooks, AThrowingHookIsReportedAndTheWorkerCarriesOn) {
  weft::test::Watchdog dog("throwing hooks");
  weft::test::ErrorRecorder errors;
  {
    weft::PoolOptions o;
    o.workers = 2;
    o.on_worker_start = [](int i) {
      if (i == 1) throw std::runtime_error("cannot name thread 1");
    };
    o.on_worker_stop = [](int i) {
      if (i == 0) throw std::runtime_error("cannot free arena 0");
    };
    weft::ThreadPool pool(o);
    std::atomic<int> n{0};
    for (int i = 0; i < 1000; ++i) pool.post([&] { n.fetch_add(1, std::memory_order_relaxed); });
    pool.wait_idle();
    EXPECT_EQ(n.load(), 1000);
    EXPECT_EQ(pool.size(), 2);
  }
  std::vector<weft::test::ErrorRecorder::Entry> e = errors.entries();
  std::sort(e.begin(), e.end(), [](const auto& a, const auto& b) { return a.where < b.where; });
  ASSERT_EQ(e.size(), 2U);
  EXPECT_NE(e[0].where.find("on_worker_start of worker 1"), std::string::npos) << e[0].where;
  EXPECT_EQ(e[0].what, "cannot name thread 1");
  EXPECT_NE(e[1].where.find("on_worker_stop of worker 0"), std::string::npos) << e[1].where;
  EXPECT_EQ(e[1].what, "cannot free arena 0");
}

}  // namespace
