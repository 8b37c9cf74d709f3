// docs/guide/async.md: futures composed without blocking — then, when_all,
// when_any and cancel — in a fan-out request handler.
#include <weft/weft.hpp>

#include <atomic>
#include <cstddef>
#include <stdexcept>
#include <string>
#include <tuple>
#include <vector>

#include "expect.hpp"

namespace {

// A stand-in for a lookup in one shard of an index: the count of matches.
long lookup(int shard, const std::string& term) { return static_cast<long>(term.size()) * (shard + 1); }

}  // namespace

int main() {
  weft::ThreadPool pool;
  const std::string term = "weft";

  // Fan out: one task per shard; fan in: one future of every count.
  std::vector<weft::Future<long>> shards;
  for (int s = 0; s < 8; ++s) shards.push_back(pool.submit([s, &term] { return lookup(s, term); }));
  weft::Future<std::string> reply =
      weft::when_all(std::move(shards))                   // no thread waits for the shards
          .then([](std::vector<long> counts) {            // runs on the pool once all are in
            long total = 0;
            for (long c : counts) total += c;
            return total;
          })
          .then([&term](long total) { return term + ": " + std::to_string(total) + " matches"; });
  expect(reply.get() == "weft: 144 matches", "when_all + then combine the shards in order");

  // Different types at once: a tuple of their values.
  auto both = weft::when_all(pool.submit([] { return 2; }), pool.submit([] { return std::string("b"); }));
  auto [n, s] = both.get();
  expect(n == 2 && s == "b", "when_all of futures of different types");

  // Replicas: take whichever answers first; the others still run, unread.
  std::vector<weft::Future<long>> replicas;
  for (int r = 0; r < 3; ++r) replicas.push_back(pool.submit([r, &term] { return lookup(r, term); }));
  std::size_t first = weft::when_any(std::move(replicas)).get();
  expect(first < 3, "when_any gives the index of the first ready replica");

  // Failures skip the continuation and reach whoever waits.
  auto failed = pool.submit([]() -> long { throw std::runtime_error("shard 3 is down"); })
                    .then([](long count) { return count * 2; });  // not called
  bool caught = false;
  try {
    failed.get();
  } catch (const std::runtime_error&) {
    caught = true;
  }
  expect(caught, "the antecedent's exception travels through then");

  // Cancel work that is no longer wanted: it runs only if it had started.
  std::atomic<bool> ran{false};
  weft::Future<void> prefetch = pool.submit([&ran] { ran = true; });
  if (prefetch.cancel()) {
    try {
      prefetch.get();
    } catch (const weft::cancelled&) {
      // ran stays false: a cancelled task never runs
      expect(!ran, "a cancelled task never runs");
    }
  } else {
    prefetch.get();                                      // it had started: it finishes
  }
  pool.wait_idle();
  return 0;
}
