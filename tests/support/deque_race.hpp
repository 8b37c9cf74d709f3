// The work-stealing deque under one owner and several thieves, for the
// stress and the interleaving tests: the owner pushes `items` tasks into a
// deque of initial capacity `capacity` (small: the array grows under the
// thieves), popping after every `pop_every`-th push and draining at the
// end, while `thieves` threads steal until it is done and empty. Returns how
// often each task was taken; every entry must be 1. `OwnerTakes` says how
// the owner pops and the thieves steal:
// - pop: pop() against steal();
// - batched: the thieves take batches (steal_batch, of 1 to kMaxBatch
//   tasks, varied) and the owner pops with pop_batched(), as for an
//   injection deque;
// - claim_if: the owner pops with claim_bottom_if(), whose test reads the
//   task (it keeps two tasks in three), while a thief writes to each task it
//   takes, as a thief that runs and frees a task would: a test that read a
//   task before claiming it would race that write (ThreadSanitizer says so).
//   The tasks it says no to are popped at the end.
// - take_n: the owner pushes the tasks in groups of 2 to 9 (push_n, as a
//   fork does) and takes a group back with take_newest_n(), one fence for
//   the group, as an n-way join does; where that says no (a thief reached
//   the group's oldest task, or the group is all that is queued) it pops
//   one at a time, as the join then does. Below each group the owner pushes
//   one task it leaves to the thieves, and every third group it leaves too
//   (`pop_every` is not used).
#pragma once

#include <algorithm>
#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <thread>
#include <vector>

#include "weft/detail/exec/deque.hpp"

namespace weft::test {

enum class OwnerTakes { pop, batched, claim_if, take_n };

inline void deque_race_keep(detail::TaskNode*) noexcept {}
inline void deque_race_leave(detail::TaskNode*) noexcept {}

inline std::vector<int> deque_race(std::int64_t items, std::int64_t capacity, int thieves, int pop_every,
                                   OwnerTakes mode = OwnerTakes::pop) {
  const bool batched = mode == OwnerTakes::batched;
  const auto n = static_cast<std::size_t>(items);
  std::vector<detail::TaskNode> tasks(n);
  for (std::size_t i = 0; i < n; ++i) tasks[i].execute = i % 3 == 0 ? &deque_race_leave : &deque_race_keep;
  // relaxed counts: read only after the threads that bump them are joined.
  auto taken = std::make_unique<std::atomic<int>[]>(n);
  auto take = [&](detail::TaskNode* t) {
    taken[static_cast<std::size_t>(t - tasks.data())].fetch_add(1, std::memory_order_relaxed);
  };
  // A thief's take: counted, then written to (see claim_if above).
  auto steal_take = [&](detail::TaskNode* t) {
    take(t);
    t->execute = nullptr;
  };
  detail::WorkStealingDeque d(capacity);
  std::atomic<bool> done{false};
  std::vector<std::thread> ts;
  for (int k = 0; k < thieves; ++k)
    ts.emplace_back([&, k] {
      detail::DequeThief thief(d);
      std::int64_t max = 1 + k;  // batch thieves ask for 1, 2, ... up to kMaxBatch, and again
      // acquire: pairs with the owner's release store of done.
      while (!done.load(std::memory_order_acquire) || !thief.empty()) {
        if (batched) {
          std::array<detail::TaskNode*, detail::WorkStealingDeque::kMaxBatch> got;
          std::int64_t n_got = 0;
          if (d.steal_batch(got.data(), max, n_got) == detail::Steal::success)
            for (std::int64_t i = 0; i < n_got; ++i) steal_take(got[static_cast<std::size_t>(i)]);
          max = max % detail::WorkStealingDeque::kMaxBatch + 1;
          continue;
        }
        detail::TaskNode* t = nullptr;
        if (thief.steal(t) == detail::Steal::success) steal_take(t);
      }
    });
  detail::DequeOwner owner(d);
  // Pushed-back tasks need no republishing here: the thieves poll.
  auto pop = [&] {
    bool pushed_back = false;
    if (mode == OwnerTakes::claim_if)
      return d.claim_bottom_if([](const detail::TaskNode* t) { return t->execute == &deque_race_keep; }, pushed_back);
    return batched ? d.pop_batched(pushed_back) : owner.pop();
  };
  if (mode == OwnerTakes::take_n) {
    std::size_t group = 0;
    for (std::size_t i = 0; i < n; ++group) {
      // One task alone below each group, for the thieves: the group's
      // oldest is then often one steal away from being the oldest queued.
      owner.push(&tasks[i++]);
      if (i == n) break;
      const std::size_t k = std::min<std::size_t>(2 + group % 8, n - i);
      const auto member = [&tasks, i](std::int64_t j) { return &tasks[i + static_cast<std::size_t>(j)]; };
      d.push_n(static_cast<std::int64_t>(k), member);
      if (group % 3 != 2) {
        bool restored = false;
        if (d.take_newest_n(static_cast<std::int64_t>(k), member, restored)) {
          for (std::size_t j = 0; j < k; ++j) take(&tasks[i + j]);
        } else {
          for (std::size_t j = 0; j < k; ++j)
            if (detail::TaskNode* t = owner.pop()) take(t);
        }
      }
      i += k;
    }
  } else {
    for (std::size_t i = 0; i < n; ++i) {
      owner.push(&tasks[i]);
      if (i % static_cast<std::size_t>(pop_every) == 0)
        if (detail::TaskNode* t = pop()) take(t);
    }
  }
  while (detail::TaskNode* t = pop()) take(t);
  if (mode == OwnerTakes::claim_if)
    while (detail::TaskNode* t = owner.pop()) take(t);  // what claim_if said no to
  done.store(true, std::memory_order_release);  // release: every push happens before a thief's last look
  for (auto& t : ts) t.join();
  std::vector<int> out(n);
  for (std::size_t i = 0; i < n; ++i) out[i] = taken[i].load(std::memory_order_relaxed);
  return out;
}

}  // namespace weft::test
