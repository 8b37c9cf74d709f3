// docs/guide/queues.md: bounded queues, blocking and non-blocking.
#include <weft/weft.hpp>

#include <atomic>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "expect.hpp"

struct Message {
  int id = 0;
  std::string text;
};

int main() {
  weft::SpscQueue<Message> q(1024);   // one producer, one consumer
  std::thread producer([&] {
    for (int i = 1; i <= 10'000; ++i) q.push(Message{i, "hello"});   // blocks (spin, then sleep) while full
  });
  long sum = 0;
  for (int i = 1; i <= 10'000; ++i) {
    Message m = q.pop();              // blocks while empty
    expect(m.id == i, "one producer's messages arrive in order");
    sum += m.id;
  }
  producer.join();
  expect(sum == 10'000L * 10'001 / 2, "every message arrived once");

  Message msg{7, "try"};
  if (q.try_push(msg)) { /* never blocks */ }
  std::optional<Message> m2 = q.try_pop();
  expect(m2 && m2->id == 7, "try_pop() returns what try_push() stored");
  expect(!q.try_pop(), "try_pop() on an empty queue returns nothing");

  weft::MpmcQueue<int> jobs(256);     // any number of producers and consumers
  std::atomic<long> total{0};
  std::vector<std::thread> threads;
  for (int p = 0; p < 2; ++p) threads.emplace_back([&] { for (int i = 1; i <= 1000; ++i) jobs.push(i); });
  for (int c = 0; c < 2; ++c) threads.emplace_back([&] { for (int i = 0; i < 1000; ++i) total += jobs.pop(); });
  for (auto& t : threads) t.join();
  expect(total == 2 * 1000L * 1001 / 2, "every job was taken exactly once");
  return 0;
}
