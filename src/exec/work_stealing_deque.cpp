#include "weft/detail/exec/deque.hpp"

#include <stdexcept>

#include "weft/detail/exec/fault_injection.hpp"

namespace weft::detail {

std::atomic<DequeGrowHook> g_deque_grow_hook{nullptr};

WorkStealingDeque::WorkStealingDeque(std::int64_t capacity) {
  if (capacity < 2 || (capacity & (capacity - 1)) != 0)
    throw std::invalid_argument("weft: deque capacity must be a power of two >= 2");
  arrays_.push_back(std::make_unique<Array>(capacity));
  array_.store(arrays_.back().get(), std::memory_order_relaxed);  // relaxed: not shared yet
}

WorkStealingDeque::~WorkStealingDeque() = default;

WorkStealingDeque::Array* WorkStealingDeque::grow(Array* a, std::int64_t t, std::int64_t b) {
  // relaxed: a test's hook, set before the pushes it is meant for.
  if (DequeGrowHook hook = g_deque_grow_hook.load(std::memory_order_relaxed)) hook();
  auto bigger = std::make_unique<Array>((a->mask + 1) * 2);
  // relaxed: the owner copies its own slots; the release store of array_
  // below publishes the copies to thieves.
  for (std::int64_t i = t; i < b; ++i)
    bigger->slot(i).store(a->slot(i).load(std::memory_order_relaxed), std::memory_order_relaxed);
  Array* raw = bigger.get();
  arrays_.push_back(std::move(bigger));
  // release: a thief that loads the new array (acquire) sees its slots.
  array_.store(raw, std::memory_order_release);
  return raw;
}

}  // namespace weft::detail
