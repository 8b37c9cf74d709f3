// docs/guide/cancellation.md: cancelling a TaskGroup, stopping a parallel
// algorithm, and waits a std::stop_token can end.
#include <weft/weft.hpp>

#include <atomic>
#include <functional>
#include <optional>
#include <stop_token>
#include <thread>
#include <vector>

#include "expect.hpp"

int main() {
  weft::ThreadPool pool;

  // Search many candidates; the first hit cancels the rest of the group.
  std::atomic<int> found{-1};
  std::atomic<int> tried{0};
  weft::TaskGroup search(pool);
  for (int candidate = 0; candidate < 100'000; ++candidate)
    search.run([&, candidate] {
      tried.fetch_add(1, std::memory_order_relaxed);
      if (candidate == 1234) {
        found.store(candidate);
        search.cancel();              // tasks not started yet never run
      }
    });
  bool skipped = false;
  try {
    search.wait();                    // waits for the running tasks, then ...
  } catch (const weft::cancelled&) {  // ... says that some never ran
    skipped = true;
  }
  expect(found == 1234, "the task that found it ran to its end");
  expect(skipped && tried < 100'000, "the tasks after the hit were skipped");

  // A group tied to a stop token: request_stop() cancels it from anywhere.
  std::stop_source stop;
  weft::TaskGroup work(pool, stop.get_token());
  work.run([] { /* ... */ });
  stop.request_stop();
  expect(work.is_cancelled(), "a stop request cancels the group");
  try {
    work.wait();
  } catch (const weft::cancelled&) {
  }

  // Parallel algorithms take a token last: once it is stopped no new chunk
  // starts, and a call whose answer is not whole throws weft::cancelled.
  std::vector<double> samples(1'000'000, 1.0);
  std::stop_source enough;
  std::atomic<long> checked{0};
  auto is_negative = [&](double x) {
    if (checked.fetch_add(1) == 10'000) enough.request_stop();   // e.g. a deadline passed
    return x < 0;
  };
  bool gave_up = false;
  try {
    weft::parallel_find_if(pool, samples.begin(), samples.end(), is_negative, enough.get_token());
  } catch (const weft::cancelled&) {  // no match in the part searched, and the rest was not
    gave_up = true;
  }
  expect(gave_up && checked < 1'000'000, "the search stopped early without an answer");
  std::stop_source never;
  double sum = weft::parallel_reduce(pool, samples.begin(), samples.end(), 0.0, std::plus<>{}, never.get_token());
  expect(sum == 1'000'000.0, "a token never stopped changes nothing");

  // Blocking waits that a stop ends: the request wakes the sleeper.
  weft::MpmcQueue<int> jobs(64);
  weft::Event ready;
  std::stop_source shutdown;
  std::vector<int> done;
  std::thread consumer([&] {
    while (std::optional<int> job = jobs.pop(shutdown.get_token()))   // empty optional: stopped
      done.push_back(*job);
  });
  std::thread waiter([&] {
    bool was_set = ready.wait(shutdown.get_token());                  // false: stopped
    expect(!was_set, "the event was never set");
  });
  for (int i = 0; i < 10; ++i) jobs.push(i);
  while (!jobs.empty()) std::this_thread::yield();
  shutdown.request_stop();            // both threads wake and return
  consumer.join();
  waiter.join();
  expect(done.size() == 10, "the consumer took every job before it stopped");
  return 0;
}
