// docs/guide/async.md: the fan-out request handler written as coroutines —
// schedule(), co_await on a child task and on a future, when_all, a stop
// token, spawn and sync_wait.
#include <weft/weft.hpp>

#include <stdexcept>
#include <stop_token>
#include <string>
#include <vector>

#include "expect.hpp"

namespace {

// A stand-in for a lookup in one shard of an index: the count of matches.
weft::Task<long> lookup(int shard, std::string term) {
  if (shard < 0) throw std::invalid_argument("no shard " + std::to_string(shard));
  co_return static_cast<long>(term.size()) * (shard + 1);
}

// One request: fan out to the shards in parallel, fan in, then format.
weft::Task<std::string> handle(weft::ThreadPool& pool, std::string term) {
  co_await pool.schedule();                            // from here on, a worker runs it
  if ((co_await weft::current_stop_token()).stop_requested()) co_return term + ": cancelled";
  std::vector<weft::Task<long>> shards;
  for (int s = 0; s < 8; ++s) shards.push_back(lookup(s, term));
  std::vector<long> counts = co_await weft::when_all(std::move(shards));  // children run in parallel
  long total = 0;
  for (long c : counts) total += c;
  long cached = co_await pool.submit([] { return 0L; });  // a Future: suspends, blocks no thread
  co_return term + ": " + std::to_string(total + cached) + " matches";
}

weft::Task<bool> bad_shard_fails() {
  try {
    co_await lookup(-1, "x");                          // a child task: runs here, at once
  } catch (const std::invalid_argument&) {
    co_return true;                                    // its exception reached the awaiter
  }
  co_return false;
}

}  // namespace

int main() {
  weft::ThreadPool pool;

  std::string reply = weft::sync_wait(handle(pool, "weft"));  // from any thread, a worker too
  expect(reply == "weft: 144 matches", "when_all over tasks combines the shards in order");

  weft::Future<std::string> later = pool.spawn(handle(pool, "pool"));  // started on the pool
  expect(later.get() == "pool: 144 matches", "spawn gives the task's future");

  std::stop_source stop;
  weft::Task<std::string> dropped = handle(pool, "late");
  dropped.set_stop_token(stop.get_token());
  stop.request_stop();
  expect(weft::sync_wait(std::move(dropped)) == "late: cancelled", "a task reads its stop token");

  expect(weft::sync_wait(bad_shard_fails()), "a child's exception propagates to the awaiter");
  return 0;
}
