// Parker and Event under load: exact counts, no lost wake-up, more threads
// than CPUs on purpose. Sizes from weft::test::stress_count (smaller under
// the sanitizers); a watchdog turns a lost wake-up into a failure.
#include <gtest/gtest.h>

#include <atomic>
#include <memory>
#include <random>
#include <thread>
#include <vector>

#include "stress.hpp"
#include "watchdog.hpp"
#include "weft/detail/cache_line.hpp"
#include "weft/sync/cpu_relax.hpp"
#include "weft/sync/event.hpp"
#include "weft/sync/parker.hpp"

namespace {

// Two threads hand a token back and forth through two Parkers; the token
// carries a plain (non-atomic) counter, so a missing happens-before edge is
// a data race ThreadSanitizer reports.
TEST(ParkerStress, PingPongHandoffsAreExact) {
  const std::int64_t rounds = weft::test::stress_count(1'000'000);
  weft::test::Watchdog dog("Parker ping-pong");
  weft::Parker a, b;
  std::int64_t plain = 0;
  std::thread other([&] {
    for (std::int64_t i = 0; i < rounds; ++i) {
      b.park();
      ++plain;
      a.unpark();
    }
  });
  for (std::int64_t i = 0; i < rounds; ++i) {
    ++plain;
    b.unpark();
    a.park();
  }
  other.join();
  EXPECT_EQ(plain, 2 * rounds);
}

// Many unparkers, one owner: every increment is followed by an unpark; the
// owner parks until it has seen them all. A lost wake-up hangs (watchdog).
TEST(ParkerStress, ManyUnparkersOneOwner) {
  constexpr int kThreads = 8;
  const std::int64_t per = weft::test::stress_count(200'000);
  weft::test::Watchdog dog("Parker with many unparkers");
  weft::Parker owner;
  std::atomic<std::int64_t> count{0};
  std::vector<std::thread> ts;
  for (int t = 0; t < kThreads; ++t)
    ts.emplace_back([&] {
      for (std::int64_t i = 0; i < per; ++i) {
        count.fetch_add(1, std::memory_order_relaxed);
        owner.unpark();
      }
    });
  std::int64_t parks = 0;
  while (count.load(std::memory_order_relaxed) < kThreads * per) {
    owner.park();
    ++parks;
  }
  for (auto& t : ts) t.join();
  EXPECT_EQ(count.load(), kThreads * per);
  EXPECT_GE(parks, 1);
}

// A token ring of Events with 2..8 threads on however many CPUs there are.
class EventRing : public ::testing::TestWithParam<int> {};

TEST_P(EventRing, EveryHopArrives) {
  const int n = GetParam();
  const std::int64_t hops = weft::test::stress_count(400'000);
  weft::test::Watchdog dog("Event ring of " + std::to_string(n));
  struct alignas(weft::detail::kCacheLine) Slot {
    weft::Event e;
    std::int64_t seen = 0;  // written by its owner only, read after join
  };
  auto slots = std::make_unique<Slot[]>(static_cast<std::size_t>(n));
  std::int64_t token = 0;  // plain: passed along the ring by set()/wait()
  std::vector<std::thread> ts;
  for (int i = 0; i < n; ++i)
    ts.emplace_back([&, i] {
      Slot& me = slots[static_cast<std::size_t>(i)];
      Slot& next = slots[static_cast<std::size_t>((i + 1) % n)];
      for (std::int64_t k = i; k < hops; k += n) {
        me.e.wait();
        me.e.reset();
        ++token;
        ++me.seen;
        next.e.set();
      }
    });
  slots[0].e.set();
  for (auto& t : ts) t.join();
  std::int64_t total = 0;
  for (int i = 0; i < n; ++i) total += slots[static_cast<std::size_t>(i)].seen;
  EXPECT_EQ(total, hops);
  EXPECT_EQ(token, hops);
}

INSTANTIATE_TEST_SUITE_P(Threads, EventRing, ::testing::Values(2, 3, 4, 8));

// Setters and resetters race waiters. Each waiter waits at least once and
// loops on wait() until told to finish; the run ends with a final set() and
// no reset after it, which must release every waiter (a reset must never
// strand a sleeper). The togglers start once every waiter is in its loop.
// (The waiters used to check `finish` before their first wait: a waiter
// scheduled late then never waited, and the count below came up short in
// one clang ASan run.)
TEST(EventStress, ResetRacesDoNotStrandWaiters) {
  const std::int64_t toggles = weft::test::stress_count(200'000);
  weft::test::Watchdog dog("Event reset races");
  weft::Event e;
  std::atomic<bool> finish{false};
  std::atomic<int> started{0};
  std::atomic<std::int64_t> wakeups{0};
  std::vector<std::thread> waiters;
  for (int w = 0; w < 4; ++w)
    waiters.emplace_back([&] {
      // relaxed: a count the main thread only waits on; nothing is published.
      started.fetch_add(1, std::memory_order_relaxed);
      do {
        e.wait();
        // relaxed: a count, read after the joins (which order it).
        wakeups.fetch_add(1, std::memory_order_relaxed);
      } while (!finish.load(std::memory_order_acquire));  // acquire: pairs with the release below
    });
  // relaxed: see above.
  while (started.load(std::memory_order_relaxed) < 4) std::this_thread::yield();
  std::vector<std::thread> togglers;
  for (int t = 0; t < 2; ++t)
    togglers.emplace_back([&, t] {
      std::minstd_rand rng(static_cast<unsigned>(t + 1));
      for (std::int64_t i = 0; i < toggles; ++i) {
        if (rng() % 2) {
          e.set();
        } else {
          e.reset();
        }
      }
    });
  for (auto& t : togglers) t.join();
  finish.store(true, std::memory_order_release);  // release: ends the waiters' loops after their last wait
  e.set();  // the last word: every waiter must get out
  for (auto& t : waiters) t.join();
  EXPECT_TRUE(e.is_set());
  EXPECT_GE(wakeups.load(), 4);  // each waiter came back from at least one wait
}

// Stops race set() and reset() (tests/model/event_stop.pml, -DRESET): each
// round, stoppable waiters loop on wait(token) while a toggler sets and
// resets the event and the main thread stops the waiters one by one. The
// toggler ends on reset(), so a waiter can only leave through its stop: a
// stop lost to the race leaves it asleep, and the watchdog fails the run.
TEST(EventStress, StopsRacingSetAndResetEndEveryStoppedWait) {
  constexpr int kWaiters = 4;
  const std::int64_t rounds = weft::test::stress_count(2'000, 500);
  weft::test::Watchdog dog("Event stops racing set and reset");
  std::minstd_rand rng(7);
  for (std::int64_t round = 0; round < rounds; ++round) {
    weft::Event e;
    std::stop_source src[kWaiters];
    std::atomic<int> stopped_returns{0};
    std::atomic<bool> toggling{true};
    const weft::WaitOptions opts{std::chrono::nanoseconds(round % 2 ? 0 : 2000), false};
    std::vector<std::thread> waiters;
    for (int w = 0; w < kWaiters; ++w)
      waiters.emplace_back([&, w] {
        while (e.wait(src[w].get_token(), opts)) {
        }
        EXPECT_TRUE(src[w].stop_requested()) << "round " << round << ": false without a stop";
        stopped_returns.fetch_add(1, std::memory_order_relaxed);
      });
    std::thread toggler([&, seed = rng()] {
      std::minstd_rand local(seed);
      while (toggling.load(std::memory_order_relaxed)) {
        if (local() % 2) {
          e.set();
        } else {
          e.reset();
        }
      }
      e.reset();  // from here on only the stops can end the waits
    });
    for (auto& s : src) {
      for (auto pauses = rng() % 4000; pauses > 0; --pauses) weft::cpu_relax();  // lands the stop anywhere
      s.request_stop();
    }
    toggling.store(false, std::memory_order_relaxed);
    toggler.join();
    for (auto& t : waiters) t.join();
    ASSERT_EQ(stopped_returns.load(), kWaiters) << "round " << round;
  }
}

}  // namespace
