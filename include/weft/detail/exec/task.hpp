// weft/detail/exec/task.hpp — the type-erased unit of work the pool queues.
//
// A task is one allocation holding a header and the callable (and, for
// submit(), the future's result): deques and queues hold TaskNode pointers.
// Nodes come from weft's per-thread PoolResource, so posting a small
// callable touches no global allocator: the submitting thread takes a block
// from its own free list, and the worker that ran the task hands it back
// through the owner's remote-free list.
#pragma once

#include <cstddef>
#include <new>

#include "weft/mem/pool_resource.hpp"

namespace weft::detail {

struct TaskNode {
  // Runs the task and releases the queue's hold on it (frees it, or drops a
  // reference for future tasks). Never throws: the callable's exception is
  // captured by the task kind.
  void (*execute)(TaskNode*) noexcept;
  // Releases the queue's hold without running it (a push that failed).
  void (*discard)(TaskNode*) noexcept;
};

[[gnu::always_inline]] inline void* allocate_task(std::size_t size, std::size_t align) {
  return default_resource().allocate_fast(size, align);
}
[[gnu::always_inline]] inline void free_task(void* p, std::size_t size, std::size_t align) noexcept {
  default_resource().deallocate_fast(p, size, align);
}

template <class T, class... Args>
T* new_task(Args&&... args) {
  void* mem = allocate_task(sizeof(T), alignof(T));
  try {
    return ::new (mem) T(std::forward<Args>(args)...);
  } catch (...) {
    free_task(mem, sizeof(T), alignof(T));
    throw;
  }
}
template <class T>
void delete_task(T* t) noexcept {
  t->~T();
  free_task(t, sizeof(T), alignof(T));
}

}  // namespace weft::detail
